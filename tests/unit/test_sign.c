// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Signed manifests (sign.h): the signature line's syntax, checking
 * against a key directory, and signing. The known answer is RFC 8032's
 * first Ed25519 test vector (the empty message): a text that is nothing
 * but its signature line signs exactly the empty message.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>

#include "tap.h"
#include "trust/sign.h"

/* RFC 8032, 7.1, TEST 1 */
static const char *const rfc_secret =
	"9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
static const char *const rfc_public =
	"d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
static const char *const rfc_sig =
	"e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
	"5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b";

static char dir[] = "/tmp/test_sign.XXXXXX";
static char keys[256], empty_keys[256], priv_path[256];
static char keyid[SIGN_KEYID_LEN + 1];
static char err[256];

static void unhex(const char *h, unsigned char *out, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(h + 2 * i, "%2x", &v) != 1)
			abort();
		out[i] = (unsigned char)v;
	}
}

static void write_pem(const char *path, EVP_PKEY *k, int priv)
{
	FILE *f = fopen(path, "w");

	if (!f || (priv ? PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL) :
			  PEM_write_PUBKEY(f, k)) != 1 || fclose(f) != 0)
		abort();
}

static void setup(void)
{
	unsigned char sec[32], pub[32];
	char p[300];
	EVP_PKEY *k;
	FILE *f;

	if (!mkdtemp(dir))
		abort();
	snprintf(keys, sizeof(keys), "%s/keys", dir);
	snprintf(empty_keys, sizeof(empty_keys), "%s/none", dir);
	snprintf(priv_path, sizeof(priv_path), "%s/rfc.key", dir);
	if (mkdir(keys, 0755) < 0 || mkdir(empty_keys, 0755) < 0)
		abort();
	unhex(rfc_secret, sec, 32);
	unhex(rfc_public, pub, 32);
	k = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, sec, 32);
	if (!k)
		abort();
	write_pem(priv_path, k, 1);
	snprintf(p, sizeof(p), "%s/rfc.pub", keys);
	write_pem(p, k, 0);
	EVP_PKEY_free(k);
	/* Not keys: ignored. */
	snprintf(p, sizeof(p), "%s/README", keys);
	f = fopen(p, "w");
	if (!f || fputs("not a key\n", f) < 0 || fclose(f) != 0)
		abort();
	snprintf(p, sizeof(p), "%s/junk.pub", keys);
	f = fopen(p, "w");
	if (!f || fputs("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", f) < 0 ||
	    fclose(f) != 0)
		abort();
}

static void teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# cleanup of %s failed\n", dir);
}

/* "signature ed25519 ID B64\n" for a raw signature. */
static void sig_line(char *out, size_t len, const char *id, const unsigned char *sig)
{
	unsigned char b64[89];

	EVP_EncodeBlock(b64, sig, 64);
	snprintf(out, len, "signature ed25519 %s %s\n", id, (char *)b64);
}

static void key_id(void)
{
	unsigned char pub[32], md[SHA256_DIGEST_LENGTH];
	char got[SIGN_KEYID_LEN + 1], p[300];
	int i;

	unhex(rfc_public, pub, 32);
	SHA256(pub, 32, md);
	for (i = 0; i < SIGN_KEYID_LEN / 2; i++)
		snprintf(keyid + 2 * i, 3, "%02x", md[i]);
	CHECK_EQ_INT(sign_keyid_file(priv_path, got, err, sizeof(err)), 0);
	CHECK_EQ_STR(got, keyid);
	snprintf(p, sizeof(p), "%s/rfc.pub", keys);
	CHECK_EQ_INT(sign_keyid_file(p, got, err, sizeof(err)), 0);
	CHECK_EQ_STR(got, keyid);
	CHECK_EQ_INT(sign_keyid_file("/nonexistent", got, err, sizeof(err)), -ENOENT);
	CHECK_EQ_INT(sign_keys_count(keys), 1);
	CHECK_EQ_INT(sign_keys_count(empty_keys), 0);
	CHECK_EQ_INT(sign_keys_count("/nonexistent"), 0);
}

static void rfc_vector(void)
{
	unsigned char sig[64];
	char text[200];
	struct sign_who who;

	unhex(rfc_sig, sig, 64);
	sig_line(text, sizeof(text), keyid, sig);
	CHECK_EQ_INT(sign_check(text, strlen(text), keys, &who, err, sizeof(err)), 0);
	CHECK_EQ_STR(who.name, "rfc");
	CHECK_EQ_STR(who.keyid, keyid);
	/* Without the final newline: the same. */
	CHECK_EQ_INT(sign_check(text, strlen(text) - 1, keys, &who, err, sizeof(err)), 0);
	/* One bit of the signature: rejected. */
	sig[10] ^= 1;
	sig_line(text, sizeof(text), keyid, sig);
	CHECK_EQ_INT(sign_check(text, strlen(text), keys, &who, err, sizeof(err)), -EKEYREJECTED);
	/* Another key id: not trusted. */
	sig[10] ^= 1;
	sig_line(text, sizeof(text), "0123456789abcdef", sig);
	CHECK_EQ_INT(sign_check(text, strlen(text), keys, &who, err, sizeof(err)), -ENOKEY);
	CHECK(strstr(err, "0123456789abcdef") != NULL);
	/* No keys at all. */
	sig_line(text, sizeof(text), keyid, sig);
	CHECK_EQ_INT(sign_check(text, strlen(text), empty_keys, &who, err, sizeof(err)), -ENOENT);
	CHECK_EQ_INT(sign_check(text, strlen(text), "/nonexistent", &who, err, sizeof(err)), -ENOENT);
}

static int split(const char *s, size_t *body)
{
	struct sign_line l;
	char *copy = malloc(strlen(s) + 1);
	int rc;

	if (!copy)
		abort();
	memcpy(copy, s, strlen(s));   /* no NUL: reads stay within len */
	rc = sign_split(copy, strlen(s), body, &l, err, sizeof(err));
	free(copy);
	return rc;
}

#define B64 "A2mQlhiNJHQuKUQZQBA/7gi+Fi7FkUsTjl5ibsIODoVI+bd12cDAEfTqKTSQXspS9O4cQM9WLzzahxrSU78vBQ=="
#define LINE "signature ed25519 1c64ea2d433efc67 " B64

static void syntax(void)
{
	size_t body = 99;

	CHECK_EQ_INT(split("ramboot-manifest 1\nsize 1\n", &body), 0);
	CHECK_EQ_INT(body, strlen("ramboot-manifest 1\nsize 1\n"));
	CHECK_EQ_INT(split("", &body), 0);
	CHECK_EQ_INT(split("a\n" LINE "\n", &body), 1);
	CHECK_EQ_INT(body, 2);
	CHECK_EQ_INT(split("a\n" LINE, &body), 1);
	CHECK_EQ_INT(split(LINE "\n", &body), 1);
	CHECK_EQ_INT(body, 0);
	/* Anything after it, another one, or one in the middle. */
	CHECK_EQ_INT(split("a\n" LINE "\nsize 2\n", &body), -EINVAL);
	CHECK_EQ_INT(split("a\n" LINE "\n" LINE "\n", &body), -EINVAL);
	CHECK_EQ_INT(split("a\n" LINE "\n\n", &body), -EINVAL);
	CHECK_EQ_INT(split("signature\na\n", &body), -EINVAL);
	/* Malformed lines. */
	CHECK_EQ_INT(split("a\nsignature rsa 1c64ea2d433efc67 " B64 "\n", &body), -EINVAL);
	CHECK_EQ_INT(split("a\nsignature ed25519 1C64EA2D433EFC67 " B64 "\n", &body), -EINVAL);
	CHECK_EQ_INT(split("a\nsignature ed25519 1c64ea2d433efc6 " B64 "\n", &body), -EINVAL);
	CHECK_EQ_INT(split("a\nsignature ed25519 1c64ea2d433efc67  " B64 "\n", &body), -EINVAL);
	CHECK_EQ_INT(split("a\nsignature ed25519 1c64ea2d433efc67 " B64 "x\n", &body), -EINVAL);
	CHECK_EQ_INT(split("a\nsignature ed25519 1c64ea2d433efc67 "
			   "A2mQlhiNJHQuKUQZQBA/7gi+Fi7FkUsTjl5ibsIODoVI+bd12cDAEfTqKTSQXspS9O4cQM9WLzzahxrSU78vBQ=A\n",
			   &body), -EINVAL);
	CHECK_EQ_INT(split("a\nsignature ed25519 1c64ea2d433efc67 "
			   "A2mQlhiNJHQuKUQZQBA/7gi+Fi7FkUsTjl5ibsIODoVI+bd12cDAEfTqKTSQXspS9O4cQM9WLzzahxrSU78v!Q==\n",
			   &body), -EINVAL);
	CHECK_EQ_INT(split("a\nsignature\n", &body), -EINVAL);
	CHECK_EQ_INT(split("a\nsignature\tx\n", &body), -EINVAL);
	/* Other keys that start alike are not signatures. */
	CHECK_EQ_INT(split("a\nsignatures 1\n", &body), 0);
	CHECK_EQ_INT(split("a\n# signature ed25519\n", &body), 0);
}

static void sign_round_trip(void)
{
	const char *m = "ramboot-manifest 1\nsize 5\nsha256 "
			"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n";
	char out[1024], again[1024];
	struct sign_who who;
	long n, n2;

	n = sign_text(m, strlen(m), priv_path, out, sizeof(out), err, sizeof(err));
	CHECK(n > (long)strlen(m));
	CHECK(!memcmp(out, m, strlen(m)));
	CHECK_EQ_INT(sign_check(out, (size_t)n, keys, &who, err, sizeof(err)), 0);
	/* Signing a signed text replaces its line (Ed25519 is deterministic). */
	n2 = sign_text(out, (size_t)n, priv_path, again, sizeof(again), err, sizeof(err));
	CHECK_EQ_INT(n2, n);
	CHECK(!memcmp(out, again, (size_t)n));
	/* A change anywhere in the body: rejected. */
	out[20] ^= 1;
	CHECK_EQ_INT(sign_check(out, (size_t)n, keys, &who, err, sizeof(err)), -EKEYREJECTED);
	/* A text without its final newline gets one before the line. */
	n = sign_text("x", 1, priv_path, out, sizeof(out), err, sizeof(err));
	CHECK(n > 2 && out[0] == 'x' && out[1] == '\n');
	CHECK_EQ_INT(sign_check(out, (size_t)n, keys, &who, err, sizeof(err)), 0);
	/* Unsigned text; a public key is no signing key; too small a buffer. */
	CHECK_EQ_INT(sign_check(m, strlen(m), keys, &who, err, sizeof(err)), -ENODATA);
	snprintf(again, sizeof(again), "%s/rfc.pub", keys);
	CHECK_EQ_INT(sign_text(m, strlen(m), again, out, sizeof(out), err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(sign_text(m, strlen(m), priv_path, out, 100, err, sizeof(err)), -ENOSPC);
	CHECK_EQ_INT(sign_text("a\0b\n", 4, priv_path, out, sizeof(out), err, sizeof(err)), -EINVAL);
}

/* The check the initrd makes before it packs a key: public keys only,
 * never a private key (by name), a link or a FIFO. */
static void pubkey_read(void)
{
	char buf[SIGN_KEYFILE_MAX], got[SIGN_KEYID_LEN + 1], p[300], l[300];
	struct stat st;
	size_t len;

	snprintf(p, sizeof(p), "%s/rfc.pub", keys);
	CHECK_EQ_INT(sign_pubkey_read(AT_FDCWD, p, buf, sizeof(buf), &len, &st, got, err,
				      sizeof(err)), 0);
	CHECK_EQ_STR(got, keyid);
	CHECK(S_ISREG(st.st_mode) && len > 0);
	CHECK_EQ_INT(sign_pubkey_read(AT_FDCWD, priv_path, buf, sizeof(buf), &len, &st, got, err,
				      sizeof(err)), -EPERM);
	CHECK(strstr(err, priv_path) && strstr(err, "PRIVATE"));
	snprintf(l, sizeof(l), "%s/link.pub", dir);
	CHECK_EQ_INT(symlink(p, l), 0);
	CHECK_EQ_INT(sign_pubkey_read(AT_FDCWD, l, buf, sizeof(buf), &len, &st, got, err,
				      sizeof(err)), -ELOOP);
	snprintf(l, sizeof(l), "%s/fifo.pub", dir);
	CHECK_EQ_INT(mkfifo(l, 0600), 0);
	CHECK_EQ_INT(sign_pubkey_read(AT_FDCWD, l, buf, sizeof(buf), &len, &st, got, err,
				      sizeof(err)), -EINVAL);
	snprintf(p, sizeof(p), "%s/junk.pub", keys);
	CHECK_EQ_INT(sign_pubkey_read(AT_FDCWD, p, buf, sizeof(buf), &len, &st, got, err,
				      sizeof(err)), -EINVAL);
}

/* A private key among the trusted keys is not trusted: it counts as no
 * key, and what it signed does not check. */
static void private_not_trusted(void)
{
	char d[280], p[300], cmd[700], m[] = "ramboot-manifest 1\n", out[512];
	struct sign_who who;
	long n;

	snprintf(d, sizeof(d), "%.200s/privkeys", dir);
	CHECK_EQ_INT(mkdir(d, 0755), 0);
	snprintf(p, sizeof(p), "%s/rfc.pub", d);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", priv_path, p);
	CHECK_EQ_INT(system(cmd), 0);
	CHECK_EQ_INT(sign_keys_count(d), 0);
	n = sign_text(m, strlen(m), priv_path, out, sizeof(out), err, sizeof(err));
	CHECK(n > 0);
	CHECK_EQ_INT(sign_check(out, (size_t)n, d, &who, err, sizeof(err)), -ENOENT);
	CHECK_EQ_INT(sign_check(out, (size_t)n, keys, &who, err, sizeof(err)), 0);
}

int main(void)
{
	setup();
	RUN(key_id);
	RUN(rfc_vector);
	RUN(syntax);
	RUN(sign_round_trip);
	RUN(pubkey_read);
	RUN(private_not_trusted);
	teardown();
	return TAP_DONE();
}
