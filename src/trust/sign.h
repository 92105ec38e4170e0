/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Signed manifests: Ed25519 (libsodium) over the manifest text.
 *
 * A signed manifest is a manifest whose last line is
 *
 *   signature ed25519 KEYID BASE64
 *
 * KEYID: the first 16 hex digits of the SHA-256 of the raw 32-byte public
 * key; BASE64: the 64-byte signature of every byte before that line. No
 * byte may follow the line but its newline: nothing can be appended to a
 * signed text. The parser (manifest.h) ignores the line as a key it does
 * not know, so a client without keys reads a signed manifest as before.
 *
 * Keys are PEM files (PKCS#8 and SubjectPublicKeyInfo, RFC 8410), as
 * `openssl genpkey -algorithm ed25519` writes
 * them (or `ramboot keygen`); the client trusts the public keys
 * (NAME.pub) in SIGN_KEYDIR and SIGN_KEYDIR_LTSP.
 */
#ifndef RAMBOOT_SIGN_H
#define RAMBOOT_SIGN_H

#include <stdbool.h>
#include <stddef.h>

#define SIGN_KEYDIR "/etc/ramboot/keys"   /* below the root prefix */
/* LTSP: `ltsp initrd` copies /etc/ltsp into ltsp.img; keys put beside the
 * hook on the server are found there in the initramfs too. */
#define SIGN_KEYDIR_LTSP "/etc/ltsp/ramboot/keys"
#define SIGN_KEYID_LEN 16                 /* hex digits */
#define SIGN_LEN 64                       /* bytes of an Ed25519 signature */
#define SIGN_LINE_MAX 128                 /* the signature line, newline included */
#define SIGN_KEYFILE_MAX (16 * 1024)      /* a PEM key is a few hundred bytes */

struct sign_line {
	char keyid[SIGN_KEYID_LEN + 1];
	unsigned char sig[SIGN_LEN];
};

/* Who signed: the key file's name (without .pub) and the key id. */
struct sign_who {
	char name[64];
	char keyid[SIGN_KEYID_LEN + 1];
};

/*
 * Find the signature line of buf[0..len). 1 with *body_len (the bytes it
 * signs) and *line filled; 0 when the text has no signature line (then
 * *body_len = len); -EINVAL with a message in err when a signature line
 * is malformed, repeated, or followed by anything.
 */
int sign_split(const char *buf, size_t len, size_t *body_len, struct sign_line *line,
	       char *err, size_t errlen);

/*
 * Check the signature of buf[0..len) against the public keys in keydir
 * (a path as it is; NULL: SIGN_KEYDIR and SIGN_KEYDIR_LTSP below the root
 * prefix). 0 and *who when a
 * trusted key signed it. -ENODATA: no signature line; -ENOKEY: signed by
 * no key in keydir; -EKEYREJECTED: the signature does not match;
 * -EINVAL: malformed; -ENOENT: keydir holds no usable key. A message in
 * err for each.
 */
int sign_check(const char *buf, size_t len, const char *keydir, struct sign_who *who,
	       char *err, size_t errlen);

/*
 * Read the manifest at path once, check its signature (sign_check) and
 * parse it, chunks kept (manifest_load_checked; manifest_free() after):
 * 0 with *m and *who, or the error of either, with a message.
 */
struct manifest;
int sign_manifest_load(const char *path, const char *keydir, struct manifest *m,
		       struct sign_who *who, char *err, size_t errlen);

/* How many usable public keys keydir (as for sign_check) holds; 0 when
 * there is no such directory. */
int sign_keys_count(const char *keydir);

/*
 * Sign buf[0..len) (without a signature line; a trailing one is
 * replaced) with the private key in keyfile (PEM). Writes the signed
 * text to out (up to outlen) and returns its length, or -errno with a
 * message in err.
 */
long sign_text(const char *buf, size_t len, const char *keyfile, char *out, size_t outlen,
	       char *err, size_t errlen);

/*
 * Read the public key file name (relative to dirfd, or a path with
 * AT_FDCWD) into buf (cap bytes, *len read, *st its fstat): a regular file,
 * never through a symbolic link (-ELOOP), holding an Ed25519 public key
 * (0 and keyid). A private key is -EPERM: it must never be packed or
 * trusted where a public key belongs. -EINVAL for anything else. A message
 * that names the file in err.
 */
struct stat;
int sign_pubkey_read(int dirfd, const char *name, char *buf, size_t cap, size_t *len,
		     struct stat *st, char keyid[SIGN_KEYID_LEN + 1], char *err, size_t errlen);

/* The key id of the public key in a PEM file (public or private). */
int sign_keyid_file(const char *path, char keyid[SIGN_KEYID_LEN + 1], char *err, size_t errlen);

#endif
