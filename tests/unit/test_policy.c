// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trust_policy_read() (trust/policy.c): what a load checks its copy
 * against. --sha256 alone, a manifest alone, both (they must agree), a
 * manifest that must be signed by a key of a key directory, and the
 * chunk hashes kept only when asked for. Files in a temporary directory;
 * keys made with OpenSSL (an implementation independent of ours).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "tap.h"
#include "lib/runerr.h"
#include "format/manifest.h"
#include "trust/policy.h"
#include "trust/sign.h"

/* SHA-256 of "test", and of 65536 zero bytes */
#define HEX   "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
#define HEXU  "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"
#define OTHER "de2f256064a0af797747c2b97505dc0b9f3df0de4f489eac731c23ae9ca9cc31"
#define V1    "ramboot-manifest 1\nsize 4\nsha256 " HEX "\n"
#define V2    "ramboot-manifest 2\nsize 4\nsha256 " HEX "\nchunk-size 65536\nchunk 0 " HEX "\n"

static char dir[] = "/tmp/test_policy.XXXXXX";
static char keys[256], lab_key[256], other_key[256];
static char p_v1[256], p_v2[256], p_bad[256], p_lab[256], p_lab_v2[256], p_other[256];
static char p_missing[256];

/* What one call gives. */
static char sha[65], by[128], err[512];
static struct manifest man;
static bool have;

static void put(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0)
		abort();
}

/* A fresh Ed25519 key: the private one at path, the public one at
 * pubpath (NULL: not kept). */
static void keypair(const char *path, const char *pubpath)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	FILE *f;

	if (!k || !(f = fopen(path, "w")) ||
	    PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL) != 1 || fclose(f) != 0)
		abort();
	if (pubpath && (!(f = fopen(pubpath, "w")) || PEM_write_PUBKEY(f, k) != 1 ||
			fclose(f) != 0))
		abort();
	EVP_PKEY_free(k);
}

static void put_signed(const char *path, const char *text, const char *key)
{
	char out[4096], why[256];
	long n = sign_text(text, strlen(text), key, out, sizeof(out), why, sizeof(why));

	if (n < 0) {
		printf("# sign_text: %s\n", why);
		abort();
	}
	put(path, out, (size_t)n);
}

static void setup(void)
{
	char pub[300];

	if (!mkdtemp(dir))
		abort();
	snprintf(keys, sizeof(keys), "%s/keys", dir);
	if (mkdir(keys, 0755) < 0)
		abort();
	snprintf(lab_key, sizeof(lab_key), "%s/lab", dir);
	snprintf(pub, sizeof(pub), "%s/lab.pub", keys);
	keypair(lab_key, pub);
	snprintf(other_key, sizeof(other_key), "%s/other", dir);
	keypair(other_key, NULL);

	snprintf(p_v1, sizeof(p_v1), "%s/v1.manifest", dir);
	put(p_v1, V1, strlen(V1));
	snprintf(p_v2, sizeof(p_v2), "%s/v2.manifest", dir);
	put(p_v2, V2, strlen(V2));
	snprintf(p_bad, sizeof(p_bad), "%s/bad.manifest", dir);
	put(p_bad, "ramboot-manifest 1\nsize x\n", 26);
	snprintf(p_lab, sizeof(p_lab), "%s/lab.manifest", dir);
	put_signed(p_lab, V1, lab_key);
	snprintf(p_lab_v2, sizeof(p_lab_v2), "%s/lab-v2.manifest", dir);
	put_signed(p_lab_v2, V2, lab_key);
	snprintf(p_other, sizeof(p_other), "%s/other.manifest", dir);
	put_signed(p_other, V1, other_key);
	snprintf(p_missing, sizeof(p_missing), "%s/missing.manifest", dir);
}

static void cleanup(void)
{
	const char *const files[] = { "keys/lab.pub", "lab", "other", "v1.manifest",
				      "v2.manifest", "bad.manifest", "lab.manifest",
				      "lab-v2.manifest", "other.manifest" };
	char p[300];
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		unlink(p);
	}
	rmdir(keys);
	rmdir(dir);
}

static enum run_err read_policy(const struct trust_policy *p)
{
	struct trust_want w = { sha, &man, &have, by, sizeof(by), NULL };

	memset(sha, 'x', sizeof(sha) - 1);
	sha[sizeof(sha) - 1] = '\0';
	memset(&man, 0, sizeof(man));
	by[0] = err[0] = '\0';
	have = false;
	return trust_policy_read(p, &w, err, sizeof(err));
}

static void test_nothing(void)
{
	struct trust_policy p = { 0 };

	CHECK_EQ_INT(read_policy(&p), RUN_OK);
	CHECK_EQ_STR(sha, "");
	CHECK(!have);
}

static void test_sha256_alone(void)
{
	struct trust_policy p = { .sha256 = HEXU };

	CHECK_EQ_INT(read_policy(&p), RUN_OK);
	CHECK_EQ_STR(sha, HEX);         /* lower case, as the copy's hash is */
	CHECK(!have);

	p.sha256 = HEX "0";
	CHECK_EQ_INT(read_policy(&p), RUN_USAGE);
	CHECK_EQ_STR(err, "--sha256: need 64 hex digits");
	p.sha256 = "";
	CHECK_EQ_INT(read_policy(&p), RUN_USAGE);
	p.sha256 = "z" HEX;
	CHECK_EQ_INT(read_policy(&p), RUN_USAGE);
	/* 64 digits, one of them not hex */
	p.sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a0g";
	CHECK_EQ_INT(read_policy(&p), RUN_USAGE);
}

static void test_manifest_alone(void)
{
	struct trust_policy p = { .manifest = p_v1 };

	CHECK_EQ_INT(read_policy(&p), RUN_OK);
	CHECK(have);
	CHECK_EQ_STR(sha, HEX);
	CHECK_EQ_INT(man.size, 4);
	CHECK_EQ_STR(by, "");
}

static void test_manifest_unreadable(void)
{
	struct trust_policy p = { .manifest = p_missing };

	CHECK_EQ_INT(read_policy(&p), RUN_MANIFEST);
	CHECK(!have);
	CHECK(!strncmp(err, p_missing, strlen(p_missing)));
	/* a directory where the manifest should be never means "unverified" */
	p.manifest = dir;
	CHECK_EQ_INT(read_policy(&p), RUN_MANIFEST);
	CHECK(!have);
	p.manifest = p_bad;
	CHECK_EQ_INT(read_policy(&p), RUN_MANIFEST);
	CHECK(!have);
	CHECK(!strncmp(err, p_bad, strlen(p_bad)));
}

static void test_both(void)
{
	struct trust_policy p = { .sha256 = HEXU, .manifest = p_v1 };

	CHECK_EQ_INT(read_policy(&p), RUN_OK);
	CHECK(have);
	CHECK_EQ_STR(sha, HEX);

	p.sha256 = OTHER;
	CHECK_EQ_INT(read_policy(&p), RUN_USAGE);
	CHECK_EQ_STR(err, "--sha256 and --manifest disagree");
	/* a malformed --sha256 is said before the manifest is read */
	p.sha256 = "12";
	p.manifest = p_missing;
	CHECK_EQ_INT(read_policy(&p), RUN_USAGE);
	CHECK(!have);
}

static void test_chunks(void)
{
	struct trust_policy p = { .manifest = p_v2 };

	CHECK_EQ_INT(read_policy(&p), RUN_OK);
	CHECK_EQ_INT(man.version, 2);
	CHECK(man.chunk == NULL);       /* checked, not kept */

	p.chunks = true;
	CHECK_EQ_INT(read_policy(&p), RUN_OK);
	CHECK_EQ_INT(man.version, 2);
	CHECK_EQ_INT(man.nchunks, 1);
	CHECK(man.chunk != NULL);
	manifest_free(&man);
}

static void test_signed(void)
{
	struct trust_policy p = { .manifest = p_lab, .signed_only = true, .keydir = keys };

	CHECK_EQ_INT(read_policy(&p), RUN_OK);
	CHECK(have);
	CHECK_EQ_STR(sha, HEX);
	CHECK(!strncmp(by, "lab ", 4));
	CHECK_EQ_INT(strlen(by), 4 + SIGN_KEYID_LEN);
	CHECK(man.chunk == NULL);

	p.manifest = p_lab_v2;
	p.chunks = true;
	CHECK_EQ_INT(read_policy(&p), RUN_OK);
	CHECK_EQ_INT(man.nchunks, 1);
	CHECK(man.chunk != NULL);
	manifest_free(&man);
	p.chunks = false;
	CHECK_EQ_INT(read_policy(&p), RUN_OK);
	CHECK(man.chunk == NULL);       /* dropped again: only the whole hash */

	/* the same manifest unsigned, or signed by a key not in keydir */
	p.manifest = p_v1;
	CHECK_EQ_INT(read_policy(&p), RUN_SIGNATURE);
	CHECK(!have);
	CHECK_EQ_STR(by, "");
	p.manifest = p_other;
	CHECK_EQ_INT(read_policy(&p), RUN_SIGNATURE);
	CHECK(!have);
	/* a signed manifest read without the policy is a manifest all the same */
	p.signed_only = false;
	CHECK_EQ_INT(read_policy(&p), RUN_OK);
	CHECK(have);
	CHECK_EQ_STR(by, "");
	/* a missing manifest under the policy is a signature failure: it
	 * cannot be shown to be signed */
	p.signed_only = true;
	p.manifest = p_missing;
	CHECK_EQ_INT(read_policy(&p), RUN_SIGNATURE);
}

/* Bytes read already (the cache's refresh reads the manifest once,
 * through its descriptor): parsed as a file would be, the chunk hashes
 * kept or not as asked, the name given in messages, an unsigned text
 * refused under --signed, a --sha256 that disagrees refused. */
#define T1 "ramboot-manifest 1\nsize 4096\nsha256 " HEX "\n"
#define T2 "ramboot-manifest 2\nsize 65536\nsha256 " HEX "\nchunk-size 65536\nchunk 0 " HEX "\n"

static enum run_err read_text(const char *text, bool chunks, bool signed_only,
			      const char *want_sha)
{
	const struct trust_policy p = {
		.sha256 = want_sha, .manifest = "server/image.manifest", .signed_only = signed_only,
		.keydir = "/nonexistent", .chunks = chunks, .text = text, .text_len = strlen(text),
	};

	return read_policy(&p);
}

static void test_text(void)
{
	CHECK_EQ_INT(read_text(T1, false, false, NULL), RUN_OK);
	CHECK(have);
	CHECK_EQ_INT(man.size, 4096);
	CHECK_EQ_STR(sha, HEX);
	manifest_free(&man);
	CHECK_EQ_INT(read_text(T1, false, false, HEX), RUN_OK);
	manifest_free(&man);
	CHECK_EQ_INT(read_text(T2, true, false, NULL), RUN_OK);
	CHECK(man.chunk != NULL);
	CHECK_EQ_INT(man.nchunks, 1);
	manifest_free(&man);
	CHECK_EQ_INT(read_text(T2, false, false, NULL), RUN_OK);
	CHECK(man.chunk == NULL);
	manifest_free(&man);
}

static void test_text_refused(void)
{
	CHECK_EQ_INT(read_text("ramboot-manifest 1\nsize x\n", true, false, NULL), RUN_MANIFEST);
	CHECK(!have);
	CHECK(!strncmp(err, "server/image.manifest: ", 23));
	/* Signed or refused: the text's bytes are what is checked. */
	CHECK_EQ_INT(read_text(T1, true, true, NULL), RUN_SIGNATURE);
	CHECK(!have);
	CHECK_EQ_STR(err, "server/image.manifest: not signed");
	CHECK_EQ_INT(read_text(T1, true, false, OTHER), RUN_USAGE);
	CHECK_EQ_STR(err, "--sha256 and --manifest disagree");
	manifest_free(&man);
}

/* The read's own result, for a caller that tells a server that cannot
 * be reached from a manifest it refuses (the cache's look). */
static void test_read_rc(void)
{
	int rc = 1;
	struct trust_want w = { sha, &man, &have, by, sizeof(by), &rc };
	struct trust_policy p = { .manifest = p_v1 };

	CHECK_EQ_INT(trust_policy_read(&p, &w, err, sizeof(err)), RUN_OK);
	CHECK_EQ_INT(rc, 0);
	p.manifest = p_missing;
	CHECK_EQ_INT(trust_policy_read(&p, &w, err, sizeof(err)), RUN_MANIFEST);
	CHECK_EQ_INT(rc, -ENOENT);
	p.manifest = p_bad;
	rc = 1;
	CHECK_EQ_INT(trust_policy_read(&p, &w, err, sizeof(err)), RUN_MANIFEST);
	CHECK(rc < 0 && rc != -ENOENT);
	p.manifest = p_v1;
	p.signed_only = true;
	p.keydir = keys;
	rc = 1;
	CHECK_EQ_INT(trust_policy_read(&p, &w, err, sizeof(err)), RUN_SIGNATURE);
	CHECK(rc < 0);
}

int main(void)
{
	setup();
	RUN(test_nothing);
	RUN(test_sha256_alone);
	RUN(test_manifest_alone);
	RUN(test_manifest_unreadable);
	RUN(test_both);
	RUN(test_chunks);
	RUN(test_signed);
	RUN(test_text);
	RUN(test_text_refused);
	RUN(test_read_rc);
	cleanup();
	return TAP_DONE();
}
