// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Signed manifests (sign.h): the signature line, checking it against the
 * trusted keys, signing, and the commands `ramboot keygen` and
 * `ramboot sign`.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "lib/sha256.h"

#include "cmd.h"
#include "lib/opts.h"
#include "lib/base.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "lib/hex.h"
#include "format/manifest.h"
#include "lib/outfile.h"
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
static const unsigned char der_pub[12] = {
	0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
};
static const unsigned char der_priv[16] = {
	0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70,
	0x04, 0x22, 0x04, 0x20,
};
static const unsigned char der_priv_v1[16] = {
	0x30, 0x51, 0x02, 0x01, 0x01, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70,
	0x04, 0x22, 0x04, 0x20,
};
static const unsigned char der_priv_v1_pub[3] = { 0x81, 0x21, 0x00 };

#define PEM_PUB  "PUBLIC KEY"
#define PEM_PRIV "PRIVATE KEY"

/* An Ed25519 key: the public half always, the secret (seed and public
 * key, as libsodium keeps it) when the file was a private key. */
struct edkey {
	unsigned char pub[crypto_sign_PUBLICKEYBYTES];
	unsigned char sk[crypto_sign_SECRETKEYBYTES];
	bool priv;
};

static void edkey_wipe(struct edkey *k)
{
	sodium_memzero(k, sizeof(*k));
}

/* ---- base64 (RFC 4648, with padding) ---- */

static const char b64chars[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static size_t b64_encode(char *out, const unsigned char *in, size_t n)
{
	size_t i, o = 0;

	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		out[o++] = b64chars[v >> 18];
		out[o++] = b64chars[(v >> 12) & 63];
		out[o++] = b64chars[(v >> 6) & 63];
		out[o++] = b64chars[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);

		out[o++] = b64chars[v >> 18];
		out[o++] = b64chars[(v >> 12) & 63];
		out[o++] = i + 1 < n ? b64chars[(v >> 6) & 63] : '=';
		out[o++] = '=';
	}
	out[o] = '\0';
	return o;
}

static int b64_value(char c)
{
	const char *p = c ? strchr(b64chars, c) : NULL;

	return p ? (int)(p - b64chars) : -1;
}

/* Decode in[0..n) (blanks and newlines skipped, "=" only at the end):
 * the byte count, or -EINVAL. */
static long b64_decode(unsigned char *out, size_t cap, const char *in, size_t n)
{
	uint32_t v = 0;
	size_t o = 0, i;
	int bits = 0, pad = 0;

	for (i = 0; i < n; i++) {
		char c = in[i];
		int d;

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			continue;
		if (c == '=') {
			pad++;
			continue;
		}
		d = b64_value(c);
		if (d < 0 || pad)
			return -EINVAL;
		v = v << 6 | (uint32_t)d;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o == cap)
				return -EINVAL;
			out[o++] = (unsigned char)(v >> bits);
		}
	}
	/* Leftover bits must be the padding's zeros, and the padding exact. */
	if (pad > 2 || (v & ((1u << bits) - 1)) || (bits == 4 && pad != 2) ||
	    (bits == 2 && pad != 1) || (bits == 0 && pad))
		return -EINVAL;
	return (long)o;
}

/* ---- the signature line ---- */

/* Does a line start at p (within buf[0..len))? The key, as the manifest
 * parser sees it: "signature" followed by a blank or the line's end. */
static bool starts_signature(const char *p, size_t left)
{
	static const char key[] = "signature";

	return left >= sizeof(key) - 1 && !memcmp(p, key, sizeof(key) - 1) &&
	       (left == sizeof(key) - 1 || p[sizeof(key) - 1] == ' ' ||
		p[sizeof(key) - 1] == '\t' || p[sizeof(key) - 1] == '\n');
}

static int parse_line(const char *p, size_t n, struct sign_line *line, char *err, size_t errlen)
{
	const size_t pl = sizeof(SIGN_PREFIX) - 1;
	unsigned char raw[SIGN_B64_LEN];
	const char *id, *b64;
	long got;

	if (n != pl + SIGN_KEYID_LEN + 1 + SIGN_B64_LEN || memcmp(p, SIGN_PREFIX, pl))
		return rb_errfmt(err, errlen, -EINVAL, "malformed signature line "
				 "(want \"signature ed25519 KEYID BASE64\")");
	id = p + pl;
	b64 = id + SIGN_KEYID_LEN + 1;
	if (!hex_lower(id, SIGN_KEYID_LEN) || id[SIGN_KEYID_LEN] != ' ')
		return rb_errfmt(err, errlen, -EINVAL, "signature line: bad key id");
	if (b64[SIGN_B64_LEN - 2] != '=' || b64[SIGN_B64_LEN - 1] != '=')
		return rb_errfmt(err, errlen, -EINVAL, "signature line: bad signature");
	got = b64_decode(raw, sizeof(raw), b64, SIGN_B64_LEN);
	if (got != SIGN_LEN)
		return rb_errfmt(err, errlen, -EINVAL, "signature line: bad signature");
	memcpy(line->keyid, id, SIGN_KEYID_LEN);
	line->keyid[SIGN_KEYID_LEN] = '\0';
	memcpy(line->sig, raw, SIGN_LEN);
	return 0;
}

int sign_split(const char *buf, size_t len, size_t *body_len, struct sign_line *line,
	       char *err, size_t errlen)
{
	size_t end = len, ls, i;
	int rc;

	*body_len = len;
	if (end > 0 && buf[end - 1] == '\n')
		end--;
	/* The start of the last line. */
	for (ls = end; ls > 0 && buf[ls - 1] != '\n'; ls--)
		;
	/* Any other line that would be a signature: refused, so no text
	 * reads as signed by one line and as something else by another. */
	for (i = 0; i < ls; i++) {
		if ((i == 0 || buf[i - 1] == '\n') && starts_signature(buf + i, ls - i))
			return rb_errfmt(err, errlen, -EINVAL, "a signature line that is not the "
					 "last line");
	}
	if (!starts_signature(buf + ls, end - ls))
		return 0;
	if (memchr(buf + ls, '\0', end - ls))
		return rb_errfmt(err, errlen, -EINVAL, "malformed signature line");
	rc = parse_line(buf + ls, end - ls, line, err, errlen);
	if (rc < 0)
		return rc;
	*body_len = ls;
	return 1;
}

/* ---- keys ---- */

/* A regular file of at most cap - 1 bytes; flags: O_NOFOLLOW or 0. *st
 * (may be NULL) gets its fstat. */
static int read_small(int dirfd, const char *path, int flags, char *buf, size_t cap, size_t *len,
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

/*
 * An Ed25519 key from PEM text. 0 with *k; -EPERM when want_private is
 * false and the text is a private key (a trusted key must be a public
 * one: a private key where a public one belongs is on its way to every
 * client); -EINVAL when it is no Ed25519 key of the kind wanted.
 */
static int key_from_pem(const char *pem, size_t len, bool want_private, struct edkey *k)
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

static void keyid_of(const struct edkey *k, char keyid[SIGN_KEYID_LEN + 1])
{
	unsigned char md[SHA256_DIGEST_LENGTH];

	SHA256(k->pub, sizeof(k->pub), md);
	hex_encode(md, SIGN_KEYID_LEN / 2, keyid);
}

static size_t pem_write(char *buf, size_t cap, const char *label, const unsigned char *der,
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

static int keyiter_open(struct keyiter *it, const char *keydir)
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

static const struct edkey *keyiter_next(struct keyiter *it)
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

static void keyiter_close(struct keyiter *it)
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

static bool verify_with(const struct edkey *k, const unsigned char *sig, const char *body,
			size_t len)
{
	return sodium_init() >= 0 &&
	       crypto_sign_verify_detached(sig, (const unsigned char *)body, len, k->pub) == 0;
}

int sign_check(const char *buf, size_t len, const char *keydir, struct sign_who *who,
	       char *err, size_t errlen)
{
	struct sign_line line;
	struct keyiter it;
	const struct edkey *k;
	size_t body;
	int rc, nkeys = 0;
	bool known = false;

	rc = sign_split(buf, len, &body, &line, err, errlen);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return rb_errfmt(err, errlen, -ENODATA, "not signed");
	rc = keyiter_open(&it, keydir);
	if (rc < 0)
		return rb_errfmt(err, errlen, -ENOENT, "no trusted keys (%s: %s)",
				 keydir ? keydir : SIGN_KEYDIR, strerror(-rc));
	rc = -ENOKEY;
	while ((k = keyiter_next(&it)) != NULL) {
		nkeys++;
		if (strcmp(it.keyid, line.keyid))
			continue;
		known = true;
		if (verify_with(k, line.sig, buf, body)) {
			snprintf(who->name, sizeof(who->name), "%s", it.name);
			memcpy(who->keyid, it.keyid, sizeof(who->keyid));
			rc = 0;
		}
		if (rc == 0)
			break;
	}
	keyiter_close(&it);
	if (rc == 0)
		return 0;
	if (!nkeys)
		return rb_errfmt(err, errlen, -ENOENT, "no trusted keys in %s",
				 keydir ? keydir : SIGN_KEYDIR);
	if (known)
		return rb_errfmt(err, errlen, -EKEYREJECTED, "bad signature (key %s)", line.keyid);
	return rb_errfmt(err, errlen, -ENOKEY, "signed by key %s, which is not trusted here",
			 line.keyid);
}

struct check_ctx {
	const char *keydir;
	struct sign_who *who;
};

static int check_cb(const char *buf, size_t len, void *ctx, char *err, size_t errlen)
{
	struct check_ctx *c = ctx;

	return sign_check(buf, len, c->keydir, c->who, err, errlen);
}

int sign_manifest_load(const char *path, const char *keydir, struct manifest *m,
		       struct sign_who *who, char *err, size_t errlen)
{
	struct check_ctx c = { keydir, who };

	return manifest_load_checked(path, m, check_cb, &c, err, errlen);
}

/* ---- signing ---- */

long sign_text(const char *buf, size_t len, const char *keyfile, char *out, size_t outlen,
	       char *err, size_t errlen)
{
	unsigned char sig[SIGN_LEN];
	char *pem = malloc(KEYFILE_MAX), keyid[SIGN_KEYID_LEN + 1], b64[SIGN_B64_LEN + 1];
	struct sign_line line;
	struct edkey k;
	size_t body, plen = 0, n;
	long rc;

	memset(&k, 0, sizeof(k));
	if (!pem)
		return rb_errfmt(err, errlen, -ENOMEM, "out of memory");
	rc = sign_split(buf, len, &body, &line, err, errlen);
	if (rc < 0)
		goto out;
	if (memchr(buf, '\0', body)) {
		rc = rb_errfmt(err, errlen, -EINVAL, "a NUL byte in the text");
		goto out;
	}
	rc = read_small(AT_FDCWD, keyfile, 0, pem, KEYFILE_MAX, &plen, NULL);
	if (rc < 0) {
		rb_errfmt(err, errlen, (int)rc, "%s: %s", keyfile, strerror((int)-rc));
		goto out;
	}
	if (key_from_pem(pem, plen, true, &k) < 0) {
		rc = rb_errfmt(err, errlen, -EINVAL, "%s: not an Ed25519 private key in PEM form",
			       keyfile);
		goto out;
	}
	keyid_of(&k, keyid);
	/* The text, ending in a newline, then the line. */
	n = body + (body > 0 && buf[body - 1] != '\n');
	if (n + SIGN_LINE_MAX > outlen) {
		rc = rb_errfmt(err, errlen, -ENOSPC, "the signed text is too long");
		goto out;
	}
	memcpy(out, buf, body);
	if (n > body)
		out[body] = '\n';
	if (sodium_init() < 0 ||
	    crypto_sign_detached(sig, NULL, (const unsigned char *)out, n, k.sk) != 0) {
		rc = rb_errfmt(err, errlen, -EIO, "signing failed");
		goto out;
	}
	if (b64_encode(b64, sig, SIGN_LEN) != SIGN_B64_LEN) {
		rc = rb_errfmt(err, errlen, -EIO, "signing failed");
		goto out;
	}
	rc = (long)n + snprintf(out + n, outlen - n, SIGN_PREFIX "%s %s\n", keyid, b64);
out:
	edkey_wipe(&k);
	sodium_memzero(pem, KEYFILE_MAX);
	free(pem);
	return rc;
}

/* ---- commands ---- */

/* Open path's new file and write data to it, unnamed until
 * outfile_commit(); on failure nothing is left (outfile_abort done). */
static int write_aside(struct outfile *of, const char *path, const void *data, size_t len,
		       mode_t mode, int flags, char *err, size_t errlen)
{
	int rc = outfile_open(of, path, mode, flags | OUTFILE_SYNC, NULL, err, errlen);

	if (rc < 0)
		return rc;
	/* The mode, whatever the umask: a private key is the owner's only. */
	if (fchmod(of->fd, mode) < 0 || (rc = write_all(of->fd, data, len)) < 0) {
		rc = rc < 0 ? rc : -errno;
		outfile_abort(of);
		return rb_errfmt(err, errlen, rc, "%s: %s", path, strerror(-rc));
	}
	return 0;
}

static int write_file(const char *path, const void *data, size_t len, mode_t mode, int flags,
		      char *err, size_t errlen)
{
	struct outfile of;
	int rc = write_aside(&of, path, data, len, mode, flags, err, errlen);

	if (rc < 0)
		return rc;
	rc = outfile_commit(&of);
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "%s: %s", path, strerror(-rc));
	return 0;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/* getrandom(2) until len bytes: it may return fewer, or be interrupted. */
static int getrandom_full(unsigned char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = getrandom(buf + got, len - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	return 0;
}

static const struct rb_optset keygen_optset = {
	.head = "Usage: ramboot keygen [--force] KEY\n"
		"\n"
		"Make an Ed25519 key pair for signing manifests: the private key in\n"
		"KEY (mode 0600) and the public key in KEY.pub. Put KEY.pub into\n"
		"/etc/ramboot/keys/ where the initrd is built; keep KEY on the server.\n"
		"\n",
	.opts = RB_OPTS(
		{ "force", 'f', NULL,
		  "replace existing files" },
		RB_OPT_HELP),
	.tail = "\n"
		"Exit status: 0 made, 1 error, 2 usage.\n",
	.indent = 6, .col = 16,
};

/* Is DIR (a resolved, absolute path) PREFIX or below it? */
static bool path_under(const char *dir, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(dir, prefix, n) && (dir[n] == '\0' || dir[n] == '/');
}

/*
 * Where a private key must not go: what LTSP hands every client. /etc/ltsp
 * is packed whole into ltsp.img (TFTP, HTTP: no access control), /srv/ltsp
 * holds the images the clients mount and /srv/tftp what they download:
 * refused. The rest of /etc goes into a chrootless image (`ltsp image /`)
 * and /srv is often exported: a loud warning (LTSP's image excludes leave
 * out /root, where the admin guide keeps keys). true: refused.
 */
static bool keygen_place_refused(const char *key)
{
	static const char *const refused[] = { "/etc/ltsp", "/srv/ltsp", "/srv/tftp" };
	char tmp[PATH_MAX], dir[PATH_MAX], *slash;
	size_t i;

	snprintf(tmp, sizeof(tmp), "%s", key);
	slash = strrchr(tmp, '/');
	if (!slash)
		snprintf(tmp, sizeof(tmp), ".");
	else if (slash == tmp)
		tmp[1] = '\0';
	else
		*slash = '\0';
	if (!realpath(tmp, dir))
		return false;     /* the write itself says what is wrong */
	/* Below a fixture root (RAMBOOT_ROOT), the paths it stands for. */
	if (rb_path(tmp, sizeof(tmp), "%s", "") == 0 && tmp[0]) {
		char root[PATH_MAX];
		size_t n;

		if (realpath(tmp, root) && (n = strlen(root)) > 1 && path_under(dir, root))
			memmove(dir, dir + n, strlen(dir + n) + 1);
		if (!dir[0])
			snprintf(dir, sizeof(dir), "/");
	}
	for (i = 0; i < ARRAY_SIZE(refused); i++) {
		if (path_under(dir, refused[i])) {
			rb_err("%s: %s goes to every LTSP client; keep the private key where "
			       "no client reads it (e.g. /root/ramboot/, see trust.md)", key, refused[i]);
			return true;
		}
	}
	if (path_under(dir, "/etc"))
		rb_warn("%s: a private key under /etc ends up in a chrootless LTSP image "
			"(ltsp image /) unless excluded (ADD_IMAGE_EXCLUDES); /root/ramboot/ is "
			"safer (see trust.md)", key);
	else if (path_under(dir, "/srv"))
		rb_warn("%s: /srv is what an LTSP server serves (NFS, TFTP, HTTP); "
			"/root/ramboot/ is safer (see trust.md)", key);
	return false;
}

int cmd_keygen(int argc, char **argv)
{
	struct rb_getopt g = { .set = &keygen_optset };
	char priv[256], pub[256], pubpath[PATH_MAX], keyid[SIGN_KEYID_LEN + 1], err[512];
	unsigned char der[sizeof(der_priv) + 32];
	struct edkey k;
	struct outfile opub, opriv;
	int flags = 0, c, rc;
	size_t np, nu;

	rb_set_cmd("keygen");
	while ((c = rb_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case 'f': flags |= OUTFILE_REPLACE; break;
		case 'h': rb_opts_usage(stdout, &keygen_optset); return RB_EXIT_OK;
		default: return rb_usage_option("keygen", argv);
		}
	}
	if (argc - optind != 1)
		return rb_usage("keygen", "expected one KEY file name");
	if ((size_t)snprintf(pubpath, sizeof(pubpath), "%s.pub", argv[optind]) >= sizeof(pubpath))
		return rb_usage("keygen", "KEY: name too long");
	/* KEY is the private key: a name ending in .pub is where the keys
	 * the initrd packs for every client are taken from. */
	if (ends_with(argv[optind], ".pub")) {
		rb_err("%s: the private key would be named like a public key (.pub); "
		       "give KEY without .pub (KEY.pub is the public key)", argv[optind]);
		return RB_EXIT_USAGE;
	}
	if (keygen_place_refused(argv[optind]))
		return RB_EXIT_USAGE;
	/* The seed from the kernel's random pool, as PKCS#8 holds it. */
	memcpy(der, der_priv, sizeof(der_priv));
	rc = getrandom_full(der + sizeof(der_priv), 32);
	if (rc == 0 && (sodium_init() < 0 ||
			crypto_sign_seed_keypair(k.pub, k.sk, der + sizeof(der_priv)) != 0))
		rc = -EIO;
	if (rc < 0) {
		sodium_memzero(der, sizeof(der));
		rb_err("cannot make a key: %s", strerror(-rc));
		return RB_EXIT_FAIL;
	}
	np = pem_write(priv, sizeof(priv), PEM_PRIV, der, sizeof(der));
	sodium_memzero(der, sizeof(der));
	{
		unsigned char dpub[sizeof(der_pub) + 32];

		memcpy(dpub, der_pub, sizeof(der_pub));
		memcpy(dpub + sizeof(der_pub), k.pub, 32);
		nu = pem_write(pub, sizeof(pub), PEM_PUB, dpub, sizeof(dpub));
	}
	keyid_of(&k, keyid);
	edkey_wipe(&k);
	/* Both written aside before either is named: a refused or failed KEY
	 * leaves no KEY.pub of a key that is thrown away, and an existing
	 * pair stays a pair. The private key is named first: a KEY.pub the
	 * admin copies to the clients then always has its private key. */
	rc = write_aside(&opriv, argv[optind], priv, np, 0600, flags, err, sizeof(err));
	sodium_memzero(priv, sizeof(priv));
	if (rc == 0) {
		rc = write_aside(&opub, pubpath, pub, nu, 0644, flags, err, sizeof(err));
		if (rc < 0)
			outfile_abort(&opriv);
	}
	if (rc == 0) {
		rc = outfile_commit(&opriv);
		if (rc < 0) {
			outfile_abort(&opub);
			rb_errfmt(err, sizeof(err), rc, "%s: %s", argv[optind], strerror(-rc));
		}
	}
	if (rc == 0) {
		rc = outfile_commit(&opub);
		if (rc < 0)
			rb_errfmt(err, sizeof(err), rc, "%s: %s (%s is a new key now; run again "
				  "with --force)", pubpath, strerror(-rc), argv[optind]);
	}
	if (rc < 0) {
		rb_err("%s", err);
		return RB_EXIT_FAIL;
	}
	printf("%s: key id %s\n", pubpath, keyid);
	return RB_EXIT_OK;   /* main.c checks that it reached stdout */
}

/* `sign --check-key FILE...`: what the initramfs-tools hook and the dracut
 * module ask before they pack a key. */
static int check_keys(int n, char **files)
{
	char *buf = malloc(KEYFILE_MAX), keyid[SIGN_KEYID_LEN + 1], err[PATH_MAX + 256];
	int i, ret = RB_EXIT_OK;

	if (!buf) {
		rb_err("out of memory");
		return RB_EXIT_FAIL;
	}
	for (i = 0; i < n; i++) {
		struct stat st;
		size_t len;

		if (sign_pubkey_read(AT_FDCWD, files[i], buf, KEYFILE_MAX, &len, &st, keyid, err,
				     sizeof(err)) < 0) {
			rb_err("%s", err);
			ret = RB_EXIT_FAIL;
			continue;
		}
		if (st.st_mode & S_IWOTH)
			rb_warn("%s: world-writable: anyone here can replace a key the clients "
				"trust", files[i]);
		printf("%s: Ed25519 public key, key id %s\n", files[i], keyid);
	}
	free(buf);
	return ret;
}

enum { OPT_KEYS = 256, OPT_CHECK_KEY };

static const struct rb_optset sign_optset = {
	.head = "Usage: ramboot sign --key=KEY MANIFEST\n"
		"       ramboot sign --check [--keys=DIR] MANIFEST\n"
		"       ramboot sign --check-key FILE...\n"
		"\n"
		"Sign a manifest in place with the Ed25519 private key KEY (a signature\n"
		"it has already is replaced), or check its signature against the\n"
		"public keys (*.pub) in DIR (default /etc/ramboot/keys and\n"
		"/etc/ltsp/ramboot/keys).\n"
		"\n",
	.opts = RB_OPTS(
		{ "key", 'k', "=KEY",
		  "the private key (PEM, from ramboot keygen or openssl genpkey)" },
		{ "check", 'c', NULL,
		  "check instead of signing; prints who signed" },
		{ "check-key", OPT_CHECK_KEY, NULL,
		  "FILE... are public key files: check that each is an\n"
		  "Ed25519 public key (not a private one, not a link)" },
		{ "keys", OPT_KEYS, "=DIR",
		  "the trusted public keys for --check" },
		RB_OPT_HELP),
	.tail = "\n"
		"Exit status: 0 signed (or the signature is good), 1 error or a\n"
		"signature that is missing, bad, or by a key not trusted, 2 usage.\n",
	.indent = 6, .col = 19,
};

int cmd_sign(int argc, char **argv)
{
	struct rb_getopt g = { .set = &sign_optset };
	const char *key = NULL, *keys = NULL, *path;
	char err[512], *buf = NULL, *out = NULL;
	bool check = false, check_key = false;
	size_t len = 0;
	int c, rc, ret = RB_EXIT_FAIL;
	long n;

	rb_set_cmd("sign");
	while ((c = rb_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case 'k': key = optarg; break;
		case 'c': check = true; break;
		case OPT_KEYS: keys = optarg; break;
		case OPT_CHECK_KEY: check_key = true; break;
		case 'h': rb_opts_usage(stdout, &sign_optset); return RB_EXIT_OK;
		default: return rb_usage_option("sign", argv);
		}
	}
	if (check_key) {
		if (key || check || keys)
			return rb_usage("sign", "--check-key goes alone");
		if (argc - optind < 1)
			return rb_usage("sign", "expected key FILEs");
		return check_keys(argc - optind, argv + optind);
	}
	if (argc - optind != 1)
		return rb_usage("sign", "expected one MANIFEST");
	if (check == !!key)
		return rb_usage("sign", "give either --key or --check");
	if (keys && !check)
		return rb_usage("sign", "--keys goes with --check");
	path = argv[optind];
	buf = malloc(SIGN_TEXT_MAX);
	out = malloc(SIGN_TEXT_MAX);
	if (!buf || !out) {
		rb_err("out of memory");
		goto out;
	}
	rc = read_small(AT_FDCWD, path, 0, buf, SIGN_TEXT_MAX, &len, NULL);
	if (rc < 0) {
		rb_err("%s: %s", path, rc == -EINVAL ? "not a regular file" : strerror(-rc));
		goto out;
	}
	if (check) {
		struct sign_who who;

		rc = sign_check(buf, len, keys, &who, err, sizeof(err));
		if (rc < 0) {
			rb_err("%s: %s", path, err);
			goto out;
		}
		printf("%s: signed by %s (key %s)\n", path, who.name, who.keyid);
		ret = RB_EXIT_OK;
		goto out;
	}
	{
		struct manifest m;

		/* Only what a client would accept gets signed. */
		if (manifest_parse(buf, len, &m, err, sizeof(err)) < 0) {
			rb_err("%s: not a manifest: %s", path, err);
			goto out;
		}
		manifest_free(&m);
	}
	n = sign_text(buf, len, key, out, SIGN_TEXT_MAX, err, sizeof(err));
	if (n < 0) {
		rb_err("%s", err);
		goto out;
	}
	rc = write_file(path, out, (size_t)n, 0644, OUTFILE_REPLACE, err, sizeof(err));
	if (rc < 0) {
		rb_err("%s", err);
		goto out;
	}
	ret = RB_EXIT_OK;
out:
	free(buf);
	free(out);
	return ret;
}
