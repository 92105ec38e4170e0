/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of signed manifests share (keys.c, sign.c, sign_cmd.c):
 * an Ed25519 key, the DER around it, reading a key file, the trusted
 * keys one at a time.
 */
#ifndef RAMBOOT_SIGNINT_H
#define RAMBOOT_SIGNINT_H

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include <sodium.h>

#include "trust/sign.h"

#define SIGN_PREFIX "signature ed25519 "
#define SIGN_B64_LEN 88             /* base64 of 64 bytes, "==" included */
#define KEYFILE_MAX SIGN_KEYFILE_MAX
#define SIGN_TEXT_MAX (16 * 1024 * 1024)

/*
 * The DER of an Ed25519 key (RFC 8410) is fixed but for its 32 key bytes:
 * SubjectPublicKeyInfo is SEQUENCE { SEQUENCE { OID 1.3.101.112 }
 * BIT STRING (the key) }, a PKCS#8 PrivateKeyInfo (version 0, as OpenSSL
 * writes it) is SEQUENCE { INTEGER 0, SEQUENCE { OID }, OCTET STRING {
 * OCTET STRING (the seed) } }. Version 1 (RFC 5958) adds the public key.
 */
extern const unsigned char der_pub[12];
extern const unsigned char der_priv[16];

#define PEM_PUB  "PUBLIC KEY"
#define PEM_PRIV "PRIVATE KEY"

/* An Ed25519 key: the public half always, the secret (seed and public
 * key, as libsodium keeps it) when the file was a private key. */
struct edkey {
	unsigned char pub[crypto_sign_PUBLICKEYBYTES];
	unsigned char sk[crypto_sign_SECRETKEYBYTES];
	bool priv;
};

static inline void edkey_wipe(struct edkey *k)
{
	sodium_memzero(k, sizeof(*k));
}

/* A regular file of at most cap - 1 bytes; flags: O_NOFOLLOW or 0. *st
 * (may be NULL) gets its fstat. */
struct stat;
int read_small(int dirfd, const char *path, int flags, char *buf, size_t cap, size_t *len,
	       struct stat *stp);
/*
 * An Ed25519 key from PEM text. 0 with *k; -EPERM when want_private is
 * false and the text is a private key (a trusted key must be a public
 * one: a private key where a public one belongs is on its way to every
 * client); -EINVAL when it is no Ed25519 key of the kind wanted.
 */
int key_from_pem(const char *pem, size_t len, bool want_private, struct edkey *k);
void keyid_of(const struct edkey *k, char keyid[SIGN_KEYID_LEN + 1]);
/* PEM text of der[0..n) under label into buf: its length (snprintf's). */
size_t pem_write(char *buf, size_t cap, const char *label, const unsigned char *der, size_t n);

/* The usable keys of keydir (NULL: SIGN_KEYDIR and SIGN_KEYDIR_LTSP),
 * one at a time: each call gives the next (name without .pub, key id,
 * key) or NULL at the end. */
struct keyiter {
	DIR *d;
	char dirs[2][PATH_MAX];
	int ndirs, di;
	char name[64];
	char keyid[SIGN_KEYID_LEN + 1];
	char *pem;
	struct edkey key;
};
int keyiter_open(struct keyiter *it, const char *keydir);
const struct edkey *keyiter_next(struct keyiter *it);
void keyiter_close(struct keyiter *it);

#endif
