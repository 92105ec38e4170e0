// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Signed manifests (sign.h): the signature line, checking it against the
 * trusted keys, signing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/base64.h"
#include "lib/hex.h"
#include "lib/msg.h"
#include "format/manifest.h"
#include "trust/sign.h"
#include "trust/signint.h"

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
