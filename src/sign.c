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
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>

#include "ramboot.h"
#include "manifest.h"
#include "outfile.h"
#include "sign.h"

#define SIGN_PREFIX "signature ed25519 "
#define SIGN_B64_LEN 88             /* base64 of 64 bytes, "==" included */
#define KEYFILE_MAX (16 * 1024)     /* a PEM key is a few hundred bytes */
#define SIGN_TEXT_MAX (16 * 1024 * 1024)

/* ---- the signature line ---- */

static bool is_hex_lower(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

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
	int got;

	if (n != pl + SIGN_KEYID_LEN + 1 + SIGN_B64_LEN || memcmp(p, SIGN_PREFIX, pl))
		return rb_errfmt(err, errlen, -EINVAL, "malformed signature line "
				 "(want \"signature ed25519 KEYID BASE64\")");
	id = p + pl;
	b64 = id + SIGN_KEYID_LEN + 1;
	if (!is_hex_lower(id, SIGN_KEYID_LEN) || id[SIGN_KEYID_LEN] != ' ')
		return rb_errfmt(err, errlen, -EINVAL, "signature line: bad key id");
	if (b64[SIGN_B64_LEN - 2] != '=' || b64[SIGN_B64_LEN - 1] != '=')
		return rb_errfmt(err, errlen, -EINVAL, "signature line: bad signature");
	got = EVP_DecodeBlock(raw, (const unsigned char *)b64, SIGN_B64_LEN);
	if (got != 66)
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

static int read_small(int dirfd, const char *path, char *buf, size_t cap, size_t *len)
{
	/* O_NONBLOCK: a FIFO planted there must not hang a boot. */
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	ssize_t n;
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		rc = -errno;
	else if (!S_ISREG(st.st_mode))
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

/* An Ed25519 key from PEM text: public (want_private false) or private. */
static EVP_PKEY *key_from_pem(const char *pem, size_t len, bool want_private)
{
	BIO *b = BIO_new_mem_buf(pem, (int)len);
	EVP_PKEY *k = NULL;

	if (!b)
		return NULL;
	k = want_private ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) :
			   PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
	if (!k && !want_private) {
		/* A private key file names its public key too. */
		(void)BIO_reset(b);
		k = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
	}
	BIO_free(b);
	if (k && EVP_PKEY_get_base_id(k) != EVP_PKEY_ED25519) {
		EVP_PKEY_free(k);
		k = NULL;
	}
	return k;
}

static int keyid_of(EVP_PKEY *k, char keyid[SIGN_KEYID_LEN + 1])
{
	unsigned char raw[32], md[SHA256_DIGEST_LENGTH];
	size_t n = sizeof(raw);
	int i;

	if (EVP_PKEY_get_raw_public_key(k, raw, &n) != 1 || n != sizeof(raw))
		return -EINVAL;
	SHA256(raw, n, md);
	for (i = 0; i < SIGN_KEYID_LEN / 2; i++)
		snprintf(keyid + 2 * i, 3, "%02x", md[i]);
	return 0;
}

int sign_keyid_file(const char *path, char keyid[SIGN_KEYID_LEN + 1], char *err, size_t errlen)
{
	char *pem = malloc(KEYFILE_MAX);
	EVP_PKEY *k = NULL;
	size_t len = 0;
	int rc;

	if (!pem)
		return rb_errfmt(err, errlen, -ENOMEM, "out of memory");
	rc = read_small(AT_FDCWD, path, pem, KEYFILE_MAX, &len);
	if (rc < 0) {
		rb_errfmt(err, errlen, rc, "%s: %s", path, strerror(-rc));
		goto out;
	}
	k = key_from_pem(pem, len, false);
	if (!k || keyid_of(k, keyid) < 0)
		rc = rb_errfmt(err, errlen, -EINVAL, "%s: not an Ed25519 key in PEM form", path);
out:
	EVP_PKEY_free(k);
	free(pem);
	return rc;
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

static EVP_PKEY *keyiter_next(struct keyiter *it)
{
	struct dirent *e;

	while (it->d) {
		size_t n, len = 0;
		EVP_PKEY *k;

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
		if (read_small(dirfd(it->d), e->d_name, it->pem, KEYFILE_MAX, &len) < 0)
			continue;
		k = key_from_pem(it->pem, len, false);
		if (!k || keyid_of(k, it->keyid) < 0) {
			rb_warn("%s/%s: not an Ed25519 public key; ignored", it->dirs[it->di],
				e->d_name);
			EVP_PKEY_free(k);
			continue;
		}
		memcpy(it->name, e->d_name, n - 4);
		it->name[n - 4] = '\0';
		return k;
	}
	return NULL;
}

static void keyiter_close(struct keyiter *it)
{
	if (it->d)
		closedir(it->d);
	free(it->pem);
	it->d = NULL;
	it->pem = NULL;
}

int sign_keys_count(const char *keydir)
{
	struct keyiter it;
	EVP_PKEY *k;
	int n = 0;

	if (keyiter_open(&it, keydir) < 0)
		return 0;
	while ((k = keyiter_next(&it)) != NULL) {
		EVP_PKEY_free(k);
		n++;
	}
	keyiter_close(&it);
	return n;
}

static bool verify_with(EVP_PKEY *k, const unsigned char *sig, const char *body, size_t len)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	bool ok;

	if (!ctx)
		return false;
	ok = EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, k) == 1 &&
	     EVP_DigestVerify(ctx, sig, SIGN_LEN, (const unsigned char *)body, len) == 1;
	EVP_MD_CTX_free(ctx);
	return ok;
}

int sign_check(const char *buf, size_t len, const char *keydir, struct sign_who *who,
	       char *err, size_t errlen)
{
	struct sign_line line;
	struct keyiter it;
	EVP_PKEY *k;
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
		if (strcmp(it.keyid, line.keyid)) {
			EVP_PKEY_free(k);
			continue;
		}
		known = true;
		if (verify_with(k, line.sig, buf, body)) {
			snprintf(who->name, sizeof(who->name), "%s", it.name);
			memcpy(who->keyid, it.keyid, sizeof(who->keyid));
			rc = 0;
		}
		EVP_PKEY_free(k);
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
	unsigned char sig[SIGN_LEN], b64[SIGN_B64_LEN + 1];
	char *pem = malloc(KEYFILE_MAX), keyid[SIGN_KEYID_LEN + 1];
	struct sign_line line;
	EVP_MD_CTX *ctx = NULL;
	EVP_PKEY *k = NULL;
	size_t body, siglen = sizeof(sig), plen = 0, n;
	long rc;

	if (!pem)
		return rb_errfmt(err, errlen, -ENOMEM, "out of memory");
	rc = sign_split(buf, len, &body, &line, err, errlen);
	if (rc < 0)
		goto out;
	if (memchr(buf, '\0', body)) {
		rc = rb_errfmt(err, errlen, -EINVAL, "a NUL byte in the text");
		goto out;
	}
	rc = read_small(AT_FDCWD, keyfile, pem, KEYFILE_MAX, &plen);
	if (rc < 0) {
		rb_errfmt(err, errlen, (int)rc, "%s: %s", keyfile, strerror((int)-rc));
		goto out;
	}
	k = key_from_pem(pem, plen, true);
	if (!k || keyid_of(k, keyid) < 0) {
		rc = rb_errfmt(err, errlen, -EINVAL, "%s: not an Ed25519 private key in PEM form",
			       keyfile);
		goto out;
	}
	/* The text, ending in a newline, then the line. */
	n = body + (body > 0 && buf[body - 1] != '\n');
	if (n + SIGN_LINE_MAX > outlen) {
		rc = rb_errfmt(err, errlen, -ENOSPC, "the signed text is too long");
		goto out;
	}
	memcpy(out, buf, body);
	if (n > body)
		out[body] = '\n';
	ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestSignInit(ctx, NULL, NULL, NULL, k) != 1 ||
	    EVP_DigestSign(ctx, sig, &siglen, (const unsigned char *)out, n) != 1 ||
	    siglen != SIGN_LEN) {
		rc = rb_errfmt(err, errlen, -EIO, "signing failed");
		goto out;
	}
	if (EVP_EncodeBlock(b64, sig, SIGN_LEN) != SIGN_B64_LEN) {
		rc = rb_errfmt(err, errlen, -EIO, "signing failed");
		goto out;
	}
	rc = (long)n + snprintf(out + n, outlen - n, SIGN_PREFIX "%s %s\n", keyid, (char *)b64);
out:
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(k);
	free(pem);
	return rc;
}

/* ---- commands ---- */

static int write_file(const char *path, const void *data, size_t len, mode_t mode, int flags,
		      char *err, size_t errlen)
{
	struct outfile of;
	int rc = outfile_open(&of, path, mode, flags | OUTFILE_SYNC, NULL, err, errlen);

	if (rc < 0)
		return rc;
	/* The mode, whatever the umask: a private key is the owner's only. */
	if (fchmod(of.fd, mode) < 0 || (rc = write_all(of.fd, data, len)) < 0) {
		rc = rc < 0 ? rc : -errno;
		outfile_abort(&of);
		return rb_errfmt(err, errlen, rc, "%s: %s", path, strerror(-rc));
	}
	rc = outfile_commit(&of);
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "%s: %s", path, strerror(-rc));
	return 0;
}

static long pem_of(EVP_PKEY *k, bool priv, char *buf, size_t cap)
{
	BIO *b = BIO_new(BIO_s_mem());
	long n = -EIO;

	if (!b)
		return -ENOMEM;
	if (priv ? PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL) == 1 :
		   PEM_write_bio_PUBKEY(b, k) == 1) {
		int got = BIO_read(b, buf, (int)cap);

		n = got > 0 && (size_t)got < cap ? got : -EIO;
	}
	BIO_free(b);
	return n;
}

static void keygen_usage(FILE *out)
{
	fprintf(out,
		"Usage: ramboot keygen [--force] KEY\n"
		"\n"
		"Make an Ed25519 key pair for signing manifests: the private key in\n"
		"KEY (mode 0600) and the public key in KEY.pub. Put KEY.pub into\n"
		"/etc/ramboot/keys/ where the initrd is built; keep KEY on the server.\n"
		"\n"
		"  -f, --force   replace existing files\n"
		"  -h, --help    this help\n"
		"\n"
		"Exit status: 0 made, 1 error, 2 usage.\n");
}

int cmd_keygen(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char priv[4096], pub[1024], pubpath[PATH_MAX], keyid[SIGN_KEYID_LEN + 1], err[512];
	int flags = 0, c, rc;
	long np, nu;
	EVP_PKEY *k;

	rb_set_cmd("keygen");
	optind = 1;
	while ((c = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (c) {
		case 'f': flags |= OUTFILE_REPLACE; break;
		case 'h': keygen_usage(stdout); return RB_EXIT_OK;
		default: return rb_usage("keygen", "unknown option");
		}
	}
	if (argc - optind != 1)
		return rb_usage("keygen", "expected one KEY file name");
	if ((size_t)snprintf(pubpath, sizeof(pubpath), "%s.pub", argv[optind]) >= sizeof(pubpath))
		return rb_usage("keygen", "KEY: name too long");
	k = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	if (!k) {
		rb_err("cannot make a key");
		return RB_EXIT_FAIL;
	}
	np = pem_of(k, true, priv, sizeof(priv));
	nu = pem_of(k, false, pub, sizeof(pub));
	rc = np < 0 || nu < 0 || keyid_of(k, keyid) < 0 ? -EIO : 0;
	EVP_PKEY_free(k);
	if (rc < 0) {
		rb_err("cannot write the key");
		return RB_EXIT_FAIL;
	}
	/* The public key first: a private key without it is no use, the
	 * other way round is harmless. */
	rc = write_file(pubpath, pub, (size_t)nu, 0644, flags, err, sizeof(err));
	if (rc == 0)
		rc = write_file(argv[optind], priv, (size_t)np, 0600, flags, err, sizeof(err));
	OPENSSL_cleanse(priv, sizeof(priv));
	if (rc < 0) {
		rb_err("%s", err);
		return RB_EXIT_FAIL;
	}
	printf("%s: key id %s\n", pubpath, keyid);
	return RB_EXIT_OK;
}

static void sign_usage(FILE *out)
{
	fprintf(out,
		"Usage: ramboot sign --key=KEY MANIFEST\n"
		"       ramboot sign --check [--keys=DIR] MANIFEST\n"
		"\n"
		"Sign a manifest in place with the Ed25519 private key KEY (a signature\n"
		"it has already is replaced), or check its signature against the\n"
		"public keys (*.pub) in DIR (default /etc/ramboot/keys).\n"
		"\n"
		"  -k, --key=KEY    the private key (PEM, from ramboot keygen or openssl genpkey)\n"
		"  -c, --check      check instead of signing; prints who signed\n"
		"      --keys=DIR   the trusted public keys for --check\n"
		"  -h, --help       this help\n"
		"\n"
		"Exit status: 0 signed (or the signature is good), 1 error or a\n"
		"signature that is missing, bad, or by a key not trusted, 2 usage.\n");
}

int cmd_sign(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "check", no_argument, NULL, 'c' },
		{ "keys", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *key = NULL, *keys = NULL, *path;
	char err[512], *buf = NULL, *out = NULL;
	bool check = false;
	size_t len = 0;
	int c, rc, ret = RB_EXIT_FAIL;
	long n;

	rb_set_cmd("sign");
	optind = 1;
	while ((c = getopt_long(argc, argv, "k:ch", opts, NULL)) != -1) {
		switch (c) {
		case 'k': key = optarg; break;
		case 'c': check = true; break;
		case 'K': keys = optarg; break;
		case 'h': sign_usage(stdout); return RB_EXIT_OK;
		default: return rb_usage("sign", "unknown option");
		}
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
	rc = read_small(AT_FDCWD, path, buf, SIGN_TEXT_MAX, &len);
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
