// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Ed25519 keys (signint.h, sign.h): PEM and DER, key IDs, the key files
 * and the trusted keys' directories.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "lib/sha256.h"

#include "lib/base64.h"
#include "lib/fdio.h"
#include "lib/hex.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "trust/sign.h"
#include "trust/signint.h"

/* The DER around an Ed25519 key: signint.h. */
const unsigned char der_pub[12] = {
	0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
};
const unsigned char der_priv[16] = {
	0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70,
	0x04, 0x22, 0x04, 0x20,
};
static const unsigned char der_priv_v1[16] = {
	0x30, 0x51, 0x02, 0x01, 0x01, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70,
	0x04, 0x22, 0x04, 0x20,
};
static const unsigned char der_priv_v1_pub[3] = { 0x81, 0x21, 0x00 };

int read_small(int dirfd, const char *path, int flags, char *buf, size_t cap, size_t *len,
	       struct stat *stp)
{
	/* O_NONBLOCK: a FIFO planted there must not hang a boot. */
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | flags);
	struct stat sb, *st = stp ? stp : &sb;
	ssize_t n;
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0)
		rc = -errno;
	else if (!S_ISREG(st->st_mode))
		rc = -EINVAL;
	else if ((n = read_full(fd, buf, cap)) < 0)
		rc = (int)n;
	else if ((size_t)n == cap)
		rc = -EFBIG;
	else
		*len = (size_t)n;
	if (close_checked(fd) < 0 && rc == 0)
		rc = -EIO;
	return rc;
}

/* One "-----BEGIN label-----" ... "-----END label-----" block in
 * pem[0..len): where the BEGIN line starts, the base64 between the
 * lines, and what follows the END line. */
struct pem_block {
	const char *begin, *body, *end, *after;
};

/* 0, -ENOENT (no BEGIN line) or -EINVAL (no END line after it). */
static int pem_find(const char *pem, size_t len, const char *label, struct pem_block *blk)
{
	char begin[64], endl[64];
	size_t bl, el;

	bl = (size_t)snprintf(begin, sizeof(begin), "-----BEGIN %s-----", label);
	el = (size_t)snprintf(endl, sizeof(endl), "-----END %s-----", label);
	blk->begin = memmem(pem, len, begin, bl);
	if (!blk->begin)
		return -ENOENT;
	blk->body = blk->begin + bl;
	blk->end = memmem(blk->body, len - (size_t)(blk->body - pem), endl, el);
	if (!blk->end)
		return -EINVAL;
	blk->after = blk->end + el;
	return 0;
}

/* The base64 between "-----BEGIN label-----" and its END line, decoded. */
static long pem_body(const char *pem, size_t len, const char *label, unsigned char *der,
		     size_t cap)
{
	struct pem_block blk;
	int rc = pem_find(pem, len, label, &blk);

	if (rc == -ENOENT || (blk.begin != pem && blk.begin[-1] != '\n'))
		return -ENOENT;
	if (rc < 0)
		return rc;
	return b64_decode(der, cap, blk.body, (size_t)(blk.end - blk.body));
}

static bool all_blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\n' && p[i] != '\r')
			return false;
	return true;
}

/* pem[0..len) is one "-----BEGIN label-----" ... "-----END label-----"
 * block and blanks. */
static bool pem_alone(const char *pem, size_t len, const char *label)
{
	struct pem_block blk;

	if (pem_find(pem, len, label, &blk) < 0 || !all_blank(pem, (size_t)(blk.begin - pem)))
		return false;
	/* Between the lines: base64 only, no other block's marker. */
	if (memmem(blk.body, (size_t)(blk.end - blk.body), "-----", 5))
		return false;
	return all_blank(blk.after, len - (size_t)(blk.after - pem));
}

int key_from_pem(const char *pem, size_t len, bool want_private, struct edkey *k)
{
	unsigned char der[128], seed[32];
	long n;
	int rc = -EINVAL;

	memset(k, 0, sizeof(*k));
	if (memchr(pem, '\0', len))
		return -EINVAL;
	n = pem_body(pem, len, PEM_PRIV, der, sizeof(der));
	if (n >= 0 || n == -EINVAL) {
		if (!want_private)
			return -EPERM;
		if (n == sizeof(der_priv) + 32 && !memcmp(der, der_priv, sizeof(der_priv))) {
			memcpy(seed, der + sizeof(der_priv), 32);
			rc = 0;
		} else if (n == sizeof(der_priv_v1) + 32 + 3 + 32 &&
			   !memcmp(der, der_priv_v1, sizeof(der_priv_v1)) &&
			   !memcmp(der + 48, der_priv_v1_pub, 3)) {
			memcpy(seed, der + sizeof(der_priv_v1), 32);
			rc = 0;
		}
		if (rc == 0 && (sodium_init() < 0 || crypto_sign_seed_keypair(k->pub, k->sk, seed)))
			rc = -EINVAL;
		/* Version 1 names its public key: it must be the seed's. */
		if (rc == 0 && n == 83 && memcmp(der + 51, k->pub, 32))
			rc = -EINVAL;
		k->priv = rc == 0;
		sodium_memzero(seed, sizeof(seed));
		sodium_memzero(der, sizeof(der));
		return rc;
	}
	if (want_private)
		return -EINVAL;
	/* A public key file goes to every client as it is: nothing in it
	 * but the one PEM block (blanks around it), and nothing that says
	 * PRIVATE in any form (an OpenSSH or an encrypted key, say). */
	if (memmem(pem, len, "PRIVATE", 7))
		return -EPERM;
	if (!pem_alone(pem, len, PEM_PUB))
		return -EINVAL;
	n = pem_body(pem, len, PEM_PUB, der, sizeof(der));
	if (n != sizeof(der_pub) + 32 || memcmp(der, der_pub, sizeof(der_pub)))
		return -EINVAL;
	memcpy(k->pub, der + sizeof(der_pub), 32);
	return 0;
}

void keyid_of(const struct edkey *k, char keyid[SIGN_KEYID_LEN + 1])
{
	unsigned char md[SHA256_DIGEST_LENGTH];

	SHA256(k->pub, sizeof(k->pub), md);
	hex_encode(md, SIGN_KEYID_LEN / 2, keyid);
}

size_t pem_write(char *buf, size_t cap, const char *label, const unsigned char *der,
		 size_t n)
{
	char b64[128];

	b64_encode(b64, der, n);
	return (size_t)snprintf(buf, cap, "-----BEGIN %s-----\n%s\n-----END %s-----\n", label,
				b64, label);

}

int sign_keyid_file(const char *path, char keyid[SIGN_KEYID_LEN + 1], char *err, size_t errlen)
{
	char *pem = malloc(KEYFILE_MAX);
	struct edkey k;
	size_t len = 0;
	int rc;

	if (!pem)
		return rb_errfmt(err, errlen, -ENOMEM, "out of memory");
	rc = read_small(AT_FDCWD, path, 0, pem, KEYFILE_MAX, &len, NULL);
	if (rc < 0) {
		rb_errfmt(err, errlen, rc, "%s: %s", path, strerror(-rc));
		goto out;
	}
	/* A private key names its public key too. */
	rc = key_from_pem(pem, len, false, &k);
	if (rc == -EPERM)
		rc = key_from_pem(pem, len, true, &k);
	if (rc < 0)
		rc = rb_errfmt(err, errlen, -EINVAL, "%s: not an Ed25519 key in PEM form", path);
	else
		keyid_of(&k, keyid);
	edkey_wipe(&k);
out:
	sodium_memzero(pem, KEYFILE_MAX);
	free(pem);
	return rc;
}

int sign_pubkey_read(int dirfd, const char *name, char *buf, size_t cap, size_t *len,
		     struct stat *st, char keyid[SIGN_KEYID_LEN + 1], char *err, size_t errlen)
{
	struct edkey k;
	int rc = read_small(dirfd, name, O_NOFOLLOW, buf, cap, len, st);

	if (rc == -ELOOP)
		return rb_errfmt(err, errlen, rc, "%s: a symbolic link, not a key file", name);
	if (rc == -EINVAL)
		return rb_errfmt(err, errlen, rc, "%s: not a regular file", name);
	if (rc == -EFBIG)
		return rb_errfmt(err, errlen, -EINVAL, "%s: too big for a public key", name);
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "%s: %s", name, strerror(-rc));
	rc = key_from_pem(buf, *len, false, &k);
	if (rc == -EPERM) {
		sodium_memzero(buf, cap);
		return rb_errfmt(err, errlen, -EPERM, "%s: a PRIVATE key, where a public key "
				 "belongs (make one with: openssl pkey -in %s -pubout)", name, name);
	}
	if (rc < 0)
		return rb_errfmt(err, errlen, -EINVAL, "%s: not an Ed25519 public key in PEM form",
				 name);
	keyid_of(&k, keyid);
	return 0;
}

int keyiter_open(struct keyiter *it, const char *keydir)
{
	int rc = -ENOENT;

	memset(it, 0, sizeof(*it));
	if (keydir) {
		snprintf(it->dirs[it->ndirs++], PATH_MAX, "%s", keydir);
	} else {
		if (rb_path(it->dirs[it->ndirs], PATH_MAX, "%s", SIGN_KEYDIR) == 0)
			it->ndirs++;
		if (rb_path(it->dirs[it->ndirs], PATH_MAX, "%s", SIGN_KEYDIR_LTSP) == 0)
			it->ndirs++;
	}
	it->pem = malloc(KEYFILE_MAX);
	if (!it->pem)
		return -ENOMEM;
	/* Open the first directory there is: an error only if none is. */
	for (it->di = 0; it->di < it->ndirs; it->di++) {
		it->d = opendir(it->dirs[it->di]);
		if (it->d)
			return 0;
		if (rc == -ENOENT)
			rc = -errno;
	}
	free(it->pem);
	it->pem = NULL;
	return rc;
}

const struct edkey *keyiter_next(struct keyiter *it)
{
	struct dirent *e;

	while (it->d) {
		size_t n, len = 0;
		int rc;

		e = readdir(it->d);
		if (!e) {
			closedir(it->d);
			it->d = NULL;
			while (!it->d && ++it->di < it->ndirs)
				it->d = opendir(it->dirs[it->di]);
			continue;
		}
		n = strlen(e->d_name);
		if (n <= 4 || n - 4 >= sizeof(it->name) || strcmp(e->d_name + n - 4, ".pub") ||
		    e->d_name[0] == '.')
			continue;
		/* A trusted key is a file there, never what a link names. */
		if (read_small(dirfd(it->d), e->d_name, O_NOFOLLOW, it->pem, KEYFILE_MAX, &len,
			       NULL) < 0)
			continue;
		rc = key_from_pem(it->pem, len, false, &it->key);
		if (rc == -EPERM) {
			rb_warn("%s/%s: a private key, not a public one; not trusted (it does "
				"not belong here)", it->dirs[it->di], e->d_name);
			continue;
		}
		if (rc < 0) {
			rb_warn("%s/%s: not an Ed25519 public key; ignored", it->dirs[it->di],
				e->d_name);
			continue;
		}
		keyid_of(&it->key, it->keyid);
		/* The key's name: the file's without ".pub", and without the
		 * ".key" of the private key it was made beside (`ramboot
		 * keygen lab.key` writes lab.key.pub: the key is "lab"). */
		n -= 4;
		if (n > 4 && !memcmp(e->d_name + n - 4, ".key", 4))
			n -= 4;
		memcpy(it->name, e->d_name, n);
		it->name[n] = '\0';
		return &it->key;
	}
	return NULL;
}

void keyiter_close(struct keyiter *it)
{
	if (it->d)
		closedir(it->d);
	if (it->pem)
		sodium_memzero(it->pem, KEYFILE_MAX);
	free(it->pem);
	it->d = NULL;
	it->pem = NULL;
}

int sign_keys_count(const char *keydir)
{
	struct keyiter it;
	int n = 0;

	if (keyiter_open(&it, keydir) < 0)
		return 0;
	while (keyiter_next(&it) != NULL)
		n++;
	keyiter_close(&it);
	return n;
}
