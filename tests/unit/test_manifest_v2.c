// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Version 2 manifests: chunk-size and the chunk hashes. Test vectors for
 * each kind of malformed input, the size limit that grows with the chunk
 * count and its hard cap, the format round trip, and manifest_load()
 * against manifest_load_chunks(). Inputs are parsed from heap blocks of
 * exactly their length, so ASan reports a read past len; LSan a chunk
 * array that is not freed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/sha.h>

#include "tap.h"
#include "format/manifest.h"
#include "exact.h"
#include "lib/fdio.h"
#include "lib/report.h"

#define HEX  "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
#define HEXU "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"
/* SHA-256 of 65536 zero bytes, and of "" */
#define H_ZERO64K "de2f256064a0af797747c2b97505dc0b9f3df0de4f489eac731c23ae9ca9cc31"
#define H_EMPTY   "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/* a 3-chunk image of 65536-byte chunks, the last one 1 byte */
#define HEAD "ramboot-manifest 2\nsize 131073\nsha256 " HEX "\nchunk-size 65536\n"
#define GOOD HEAD "chunk 0 " H_ZERO64K "\nchunk 1 " HEX "\nchunk 2 " H_EMPTY "\n"

static char err[256];

EXACT_PARSE(manifest_parse, struct manifest, 0x5a)

static void hex2bin(const char *hex, uint8_t out[32])
{
	int i;

	for (i = 0; i < 32; i++) {
		unsigned int v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			abort();
		out[i] = (uint8_t)v;
	}
}

/* Refused with a reason that contains want (NULL: any reason). */
static void check_refused_why(const char *s, const char *want)
{
	struct manifest m;
	int rc = parse(s, &m);

	if (rc != -EINVAL || !err[0] || (want && !strstr(err, want)))
		printf("#   %d \"%s\" for \"%s\"\n", rc, err, s);
	CHECK_EQ_INT(rc, -EINVAL);
	CHECK(err[0] != '\0');
	if (want)
		CHECK(strstr(err, want) != NULL);
	/* nothing stays allocated after a refusal */
	CHECK(m.chunk == NULL);
}

static void test_good(void)
{
	struct manifest m;
	uint8_t d[32];

	CHECK_EQ_INT(parse(GOOD, &m), 0);
	CHECK_EQ_INT(m.version, 2);
	CHECK_EQ_INT(m.size, 131073);
	CHECK_EQ_STR(m.sha256, HEX);
	CHECK_EQ_INT(m.chunk_size, 65536);
	CHECK_EQ_INT(m.nchunks, 3);
	CHECK(m.chunk != NULL);
	if (m.chunk) {
		hex2bin(H_ZERO64K, d);
		CHECK(!memcmp(m.chunk[0], d, 32));
		hex2bin(HEX, d);
		CHECK(!memcmp(m.chunk[1], d, 32));
		hex2bin(H_EMPTY, d);
		CHECK(!memcmp(m.chunk[2], d, 32));
	}
	manifest_free(&m);
	CHECK(m.chunk == NULL);
	manifest_free(&m);      /* twice is harmless */
}

/* The vector is right: the first chunk is the hash of 64 KiB of zeros. */
static void test_vector_is_sha256(void)
{
	static uint8_t zero[65536];
	uint8_t d[32], want[32];

	SHA256(zero, sizeof(zero), d);
	hex2bin(H_ZERO64K, want);
	CHECK(!memcmp(d, want, 32));
	SHA256(zero, 0, d);
	hex2bin(H_EMPTY, want);
	CHECK(!memcmp(d, want, 32));
}

static void test_version_1_has_no_chunks(void)
{
	struct manifest m;

	CHECK_EQ_INT(parse("ramboot-manifest 1\nsize 5\nsha256 " HEX "\n", &m), 0);
	CHECK_EQ_INT(m.version, 1);
	CHECK_EQ_INT(m.chunk_size, 0);
	CHECK_EQ_INT(m.nchunks, 0);
	CHECK(m.chunk == NULL);
	/* the keys of version 2 are not for version 1 */
	check_refused_why("ramboot-manifest 1\nsize 5\nsha256 " HEX "\nchunk-size 65536\n",
			  "version 2");
	check_refused_why("ramboot-manifest 1\nsize 5\nsha256 " HEX "\nchunk 0 " HEX "\n",
			  "version 2");
	check_refused_why("ramboot-manifest 3\nsize 5\nsha256 " HEX "\n", "version");
	check_refused_why("ramboot-manifest 02\nsize 5\nsha256 " HEX "\n", "version");
}

static void test_empty_image(void)
{
	struct manifest m;

	CHECK_EQ_INT(parse("ramboot-manifest 2\nsize 0\nsha256 " H_EMPTY
			   "\nchunk-size 4194304\n", &m), 0);
	CHECK_EQ_INT(m.nchunks, 0);
	CHECK(m.chunk == NULL);
	check_refused_why("ramboot-manifest 2\nsize 0\nsha256 " H_EMPTY
			  "\nchunk-size 4194304\nchunk 0 " H_EMPTY "\n", "more chunks");
}

static void test_exact_multiple(void)
{
	struct manifest m;

	/* 2 full chunks: no third */
	CHECK_EQ_INT(parse("ramboot-manifest 2\nsize 131072\nsha256 " HEX "\nchunk-size 65536\n"
			   "chunk 0 " HEX "\nchunk 1 " HEX "\n", &m), 0);
	CHECK_EQ_INT(m.nchunks, 2);
	manifest_free(&m);
	check_refused_why("ramboot-manifest 2\nsize 131072\nsha256 " HEX "\nchunk-size 65536\n"
			  "chunk 0 " HEX "\nchunk 1 " HEX "\nchunk 2 " HEX "\n", "more chunks");
}

static void test_other_keys_upper_case_comments(void)
{
	struct manifest m;

	/* unknown keys (a later signature, dm-verity) are ignored, also
	 * between chunks; hex in either case; comments anywhere */
	CHECK_EQ_INT(parse("ramboot-manifest 2\n# v2\nsize 65536\ncompression zstd\n"
			   "sha256 " HEXU "\nmemlimit 1048576\nchunk-size 65536\n"
			   "verity-root-hash 00\nchunk   0\t" HEXU "  \n# end\n"
			   "signature later\n", &m), 0);
	CHECK_EQ_STR(m.sha256, HEX);
	CHECK_EQ_STR(m.compression, "zstd");
	CHECK_EQ_INT(m.memlimit, 1048576);
	CHECK_EQ_INT(m.nchunks, 1);
	manifest_free(&m);
}

static void test_chunk_size_malformed(void)
{
	const char *bad[] = {
		"0", "1", "4096", "32768", "65535", "65537", "100000", "3145728",
		"2147483648", "4294967296", "", "4M", "+65536", "-65536", "0x10000",
		"65536 65536", "18446744073709551616",
	};
	char buf[512];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(buf, sizeof(buf), "ramboot-manifest 2\nsize 1\nsha256 " HEX
			 "\nchunk-size %s\nchunk 0 " HEX "\n", bad[i]);
		check_refused_why(buf, "chunk-size");
	}
	/* the bounds themselves are good */
	{
		struct manifest m;

		CHECK_EQ_INT(parse("ramboot-manifest 2\nsize 1\nsha256 " HEX
				   "\nchunk-size 1073741824\nchunk 0 " HEX "\n", &m), 0);
		manifest_free(&m);
		CHECK_EQ_INT(parse("ramboot-manifest 2\nsize 1\nsha256 " HEX
				   "\nchunk-size 65536\nchunk 0 " HEX "\n", &m), 0);
		manifest_free(&m);
	}
}

static void test_missing(void)
{
	/* no chunk-size; no chunks; one short; a key of the header missing */
	check_refused_why("ramboot-manifest 2\nsize 1\nsha256 " HEX "\n", "chunk-size");
	check_refused_why("ramboot-manifest 2\nsize 1\nsha256 " HEX "\nchunk-size 65536\n",
			  "0 of 1 chunks");
	check_refused_why(HEAD "chunk 0 " HEX "\nchunk 1 " HEX "\n", "2 of 3 chunks");
	check_refused_why("ramboot-manifest 2\nsize 1\nchunk-size 65536\nchunk 0 " HEX "\n",
			  "no sha256");
	check_refused_why("ramboot-manifest 2\nsha256 " HEX "\nchunk-size 65536\n", "no size");
}

static void test_order(void)
{
	/* a chunk before size or chunk-size; out of order; repeated */
	check_refused_why("ramboot-manifest 2\nsha256 " HEX "\nchunk-size 65536\nchunk 0 " HEX
			  "\nsize 1\n", "before");
	check_refused_why("ramboot-manifest 2\nsize 1\nsha256 " HEX "\nchunk 0 " HEX
			  "\nchunk-size 65536\n", "before");
	check_refused_why(HEAD "chunk 1 " HEX "\nchunk 0 " HEX "\nchunk 2 " HEX "\n", "order");
	check_refused_why(HEAD "chunk 0 " HEX "\nchunk 0 " HEX "\nchunk 1 " HEX "\n", "order");
	check_refused_why(HEAD "chunk 0 " HEX "\nchunk 2 " HEX "\n", "order");
	check_refused_why(HEAD "chunk-size 65536\nchunk 0 " HEX "\n", "twice");
	check_refused_why(HEAD "chunk-size 131072\nchunk 0 " HEX "\n", "twice");
}

static void test_chunk_line_malformed(void)
{
	const char *bad[] = {
		"chunk\n",
		"chunk 0\n",
		"chunk " HEX "\n",
		"chunk 0 " HEX " extra\n",
		"chunk 0 " HEX "0\n",
		"chunk 0 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a0\n",
		"chunk 0 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a0g\n",
		"chunk 0 0x9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a\n",
		"chunk +0 " HEX "\n",
		"chunk -0 " HEX "\n",
		"chunk 0x0 " HEX "\n",
		"chunk a " HEX "\n",
		"chunk 00 " HEX "\n",
		"chunk 00000000000000000000000000000 " HEX "\n",
		"chunk 18446744073709551616 " HEX "\n",
		"chunk 0," HEX "\n",
	};
#define ONE "ramboot-manifest 2\nsize 1\nsha256 " HEX "\nchunk-size 65536\n"
	struct manifest m;
	char buf[512];
	size_t i;

	/* one chunk: the line alone decides */
	CHECK_EQ_INT(parse(ONE "chunk 0 " HEX "\n", &m), 0);
	manifest_free(&m);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(buf, sizeof(buf), ONE "%s", bad[i]);
		check_refused_why(buf, "chunk");
	}
	/* the refusal names the line */
	check_refused_why(HEAD "chunk 0 " HEX "\nchunk 1 xyz\n", "line 6");
}

static void test_embedded_nul_and_prefixes(void)
{
	static const char a[] = HEAD "chunk 0 " HEX "\0\nchunk 1 " HEX "\nchunk 2 " HEX "\n";
	const size_t len = strlen(GOOD);
	struct manifest m;
	size_t n;

	CHECK_EQ_INT(parse_n(a, sizeof(a) - 1, &m), -EINVAL);
	/* cut anywhere before the last newline: refused (ASan and LSan
	 * watch each) */
	for (n = 0; n < len - 1; n++) {
		int rc = parse_n(GOOD, n, &m);

		if (rc != -EINVAL)
			printf("#   prefix of %zu bytes: %d\n", n, rc);
		CHECK_EQ_INT(rc, -EINVAL);
	}
	CHECK_EQ_INT(parse_n(GOOD, len - 1, &m), 0);
	manifest_free(&m);
}

/* A manifest of n chunks of 64 KiB, padded with a comment to total
 * bytes (0: no padding). Returns its length; *out malloc'd. */
static size_t make_big(uint32_t n, size_t total, char **out)
{
	size_t cap = (total ? total : 0) + 256 + (size_t)n * 80, len;
	char *buf = malloc(cap);
	uint32_t i;

	if (!buf)
		abort();
	len = (size_t)sprintf(buf, "ramboot-manifest 2\nsize %llu\nsha256 " HEX
			      "\nchunk-size 65536\n", (unsigned long long)n * 65536);
	for (i = 0; i < n; i++)
		len += (size_t)sprintf(buf + len, "chunk %u " HEX "\n", i);
	if (total > len) {
		/* comment lines of at most 200 bytes */
		while (len < total) {
			size_t l = total - len > 200 ? 200 : total - len;

			memset(buf + len, '#', l);
			buf[len + l - 1] = '\n';
			len += l;
		}
	}
	*out = buf;
	return len;
}

static void test_size_limit_grows_with_chunks(void)
{
	struct manifest m;
	size_t len, lim;
	char *buf;

	/* 1000 chunks: up to MANIFEST_MAX + 1000 * MANIFEST_CHUNK_LINE bytes */
	lim = MANIFEST_MAX + 1000 * (size_t)MANIFEST_CHUNK_LINE;
	len = make_big(1000, lim, &buf);
	CHECK_EQ_INT(len, lim);
	CHECK_EQ_INT(parse_n(buf, len, &m), 0);
	CHECK_EQ_INT(m.nchunks, 1000);
	manifest_free(&m);
	free(buf);
	len = make_big(1000, lim + 1, &buf);
	CHECK_EQ_INT(parse_n(buf, len, &m), -EINVAL);
	CHECK(strstr(err, "too large") != NULL);
	free(buf);

	/* a version 1 manifest stays at MANIFEST_MAX */
	buf = malloc(MANIFEST_MAX + 1);
	if (!buf)
		abort();
	len = (size_t)sprintf(buf, "ramboot-manifest 1\nsize 1\nsha256 " HEX "\n");
	memset(buf + len, '\n', MANIFEST_MAX + 1 - len);
	CHECK_EQ_INT(parse_n(buf, MANIFEST_MAX, &m), 0);
	CHECK_EQ_INT(parse_n(buf, MANIFEST_MAX + 1, &m), -EINVAL);
	free(buf);
}

static void test_chunk_count_cap(void)
{
	struct manifest m;
	char buf[512];
	size_t len;
	char *big;

	/* the most chunks there may be: parsed */
	len = make_big(MANIFEST_CHUNKS_MAX, 0, &big);
	CHECK(len <= MANIFEST_HARD_MAX);
	CHECK_EQ_INT(parse_n(big, len, &m), 0);
	CHECK_EQ_INT(m.nchunks, MANIFEST_CHUNKS_MAX);
	manifest_free(&m);
	free(big);

	/* one more: refused at the first chunk, before anything is
	 * allocated for them, and also with no chunk lines at all */
	snprintf(buf, sizeof(buf), "ramboot-manifest 2\nsize %llu\nsha256 " HEX
		 "\nchunk-size 65536\nchunk 0 " HEX "\n",
		 (unsigned long long)MANIFEST_CHUNKS_MAX * 65536 + 1);
	check_refused_why(buf, "65536 chunks");
	snprintf(buf, sizeof(buf), "ramboot-manifest 2\nsize 18446744073709551615\nsha256 " HEX
		 "\nchunk-size 1073741824\n");
	check_refused_why(buf, "65536 chunks");

	/* beyond the hard cap: refused before it is read line by line */
	big = malloc(MANIFEST_HARD_MAX + 1);
	if (!big)
		abort();
	memset(big, '\n', MANIFEST_HARD_MAX + 1);
	memcpy(big, "ramboot-manifest 2\n", 19);
	CHECK_EQ_INT(parse_n(big, MANIFEST_HARD_MAX + 1, &m), -EINVAL);
	CHECK(strstr(err, "too large") != NULL);
	free(big);
}

#define V2B "ramboot-manifest 2\nsize 131072\nsha256 " HEX "\nchunk-size 65536\n" \
	"chunk 0 " H_ZERO64K "\nchunk 1 " HEX "\n"
#define VROOT "verity-root " HEX "\n"
#define VSALT "verity-salt 00ff\n"
#define VHASH "verity-hash x86_64.img.verity\n"

/* dm-verity keys: the three together, on a whole number of 4 KiB blocks. */
static void test_verity_keys(void)
{
	struct manifest m;
	size_t cap;
	char *buf;
	int n;

	CHECK_EQ_INT(parse(V2B VROOT VSALT VHASH, &m), 0);
	CHECK_EQ_STR(m.verity_root, HEX);
	CHECK_EQ_STR(m.verity_salt, "00ff");
	CHECK_EQ_STR(m.verity_hash, "x86_64.img.verity");
	manifest_free(&m);
	CHECK_EQ_INT(parse(V2B VROOT "verity-salt -\n" VHASH, &m), 0);
	CHECK_EQ_STR(m.verity_salt, "-");
	manifest_free(&m);
	CHECK_EQ_INT(parse(V2B "verity-root " HEXU "\nverity-salt 00FF\n" VHASH, &m), 0);
	CHECK_EQ_STR(m.verity_root, HEX);
	CHECK_EQ_STR(m.verity_salt, "00ff");
	/* Round trip. */
	cap = manifest_format_max(&m);
	buf = malloc(cap);
	if (!buf)
		abort();
	n = manifest_format(&m, buf, cap);
	manifest_free(&m);
	CHECK(n > 0 && strstr(buf, "\nverity-root " HEX "\nverity-salt 00ff\n"
			      "verity-hash x86_64.img.verity\n"));
	CHECK_EQ_INT(parse_n(buf, (size_t)n, &m), 0);
	CHECK_EQ_STR(m.verity_hash, "x86_64.img.verity");
	manifest_free(&m);
	free(buf);
	/* Missing one, bad values, a path, twice, version 1, odd sizes. */
	CHECK_EQ_INT(parse(V2B VROOT VSALT, &m), -EINVAL);
	CHECK(strstr(err, "come together") != NULL);
	CHECK_EQ_INT(parse(V2B VSALT VHASH, &m), -EINVAL);
	CHECK_EQ_INT(parse(V2B "verity-root 12\n" VSALT VHASH, &m), -EINVAL);
	CHECK_EQ_INT(parse(V2B VROOT "verity-salt 0\n" VHASH, &m), -EINVAL);
	CHECK_EQ_INT(parse(V2B VROOT "verity-salt zz\n" VHASH, &m), -EINVAL);
	CHECK_EQ_INT(parse(V2B VROOT VSALT "verity-hash ../etc/shadow\n", &m), -EINVAL);
	CHECK_EQ_INT(parse(V2B VROOT VSALT "verity-hash ..\n", &m), -EINVAL);
	CHECK_EQ_INT(parse(V2B VROOT VROOT VSALT VHASH, &m), -EINVAL);
	CHECK_EQ_INT(parse("ramboot-manifest 1\nsize 131072\nsha256 " HEX "\n" VROOT VSALT VHASH,
			   &m), -EINVAL);
	CHECK_EQ_INT(parse(GOOD VROOT VSALT VHASH, &m), -EINVAL);
	CHECK(strstr(err, "4096-byte blocks") != NULL);
}

#define INAME "image x86_64.img.sha256-0123456789abcdef\n"

/* The content-addressed image's name (publish --content-addressed): any
 * version, a name beside the image, once; formatted and parsed back. */
static void test_image_key(void)
{
	struct manifest m;
	size_t cap;
	char *buf;
	int n;

	CHECK_EQ_INT(parse("ramboot-manifest 1\nsize 131072\nsha256 " HEX "\n" INAME, &m), 0);
	CHECK_EQ_STR(m.image, "x86_64.img.sha256-0123456789abcdef");
	manifest_free(&m);
	CHECK_EQ_INT(parse(V2B INAME, &m), 0);
	CHECK_EQ_STR(m.image, "x86_64.img.sha256-0123456789abcdef");
	cap = manifest_format_max(&m);
	buf = malloc(cap);
	if (!buf)
		abort();
	n = manifest_format(&m, buf, cap);
	manifest_free(&m);
	CHECK(n > 0);
	CHECK(strstr(buf, "\n" INAME) != NULL);
	CHECK_EQ_INT(parse_n(buf, (size_t)n, &m), 0);
	CHECK_EQ_STR(m.image, "x86_64.img.sha256-0123456789abcdef");
	manifest_free(&m);
	free(buf);
	CHECK_EQ_INT(parse(V2B, &m), 0);
	CHECK_EQ_STR(m.image, "");
	manifest_free(&m);
	check_refused_why(V2B "image ../x86_64.img\n", "bad image");
	check_refused_why(V2B "image /srv/ltsp/images/x86_64.img\n", "bad image");
	check_refused_why(V2B "image ..\n", "bad image");
	check_refused_why(V2B INAME INAME, "image given twice");
}

#define CNAME "cindex x86_64.img.cindex-0123456789abcdef\n"
#define CSUM  "cindex-sha256 " H_EMPTY "\n"

/* m formatted (manifest_format) into a malloc'ed buffer, *n its length;
 * m freed. */
static char *formatted(struct manifest *m, int *n)
{
	size_t cap = manifest_format_max(m);
	char *buf = malloc(cap);

	if (!buf)
		abort();
	*n = manifest_format(m, buf, cap);
	manifest_free(m);
	CHECK(*n > 0);
	return buf;
}

/* The chunk index's keys: the two together, version 2 only, a name beside
 * the image, 64 hex digits; formatted and parsed back the same. */
static void test_cindex_keys(void)
{
	struct manifest m;
	char *buf;
	int n;

	CHECK_EQ_INT(parse(V2B CNAME CSUM, &m), 0);
	CHECK_EQ_STR(m.cindex, "x86_64.img.cindex-0123456789abcdef");
	CHECK_EQ_STR(m.cindex_sha256, H_EMPTY);
	manifest_free(&m);
	/* Upper-case hex is read as lower case; any order, with verity. */
	CHECK_EQ_INT(parse(V2B "cindex-sha256 " HEXU "\n" VROOT VSALT VHASH CNAME, &m), 0);
	CHECK_EQ_STR(m.cindex_sha256, HEX);
	CHECK_EQ_STR(m.verity_hash, "x86_64.img.verity");
	buf = formatted(&m, &n);
	CHECK(strstr(buf, "\ncindex x86_64.img.cindex-0123456789abcdef\ncindex-sha256 " HEX
		     "\n") != NULL);
	CHECK_EQ_INT(parse_n(buf, (size_t)n, &m), 0);
	CHECK_EQ_STR(m.cindex, "x86_64.img.cindex-0123456789abcdef");
	CHECK_EQ_STR(m.cindex_sha256, HEX);
	CHECK_EQ_STR(m.verity_root, HEX);
	manifest_free(&m);
	free(buf);
	/* None: none formatted. */
	CHECK_EQ_INT(parse(V2B, &m), 0);
	CHECK_EQ_STR(m.cindex, "");
	buf = formatted(&m, &n);
	CHECK(strstr(buf, "cindex") == NULL);
	free(buf);
	/* One without the other. */
	check_refused_why(V2B CNAME, "cindex and cindex-sha256 come together");
	check_refused_why(V2B CSUM, "cindex and cindex-sha256 come together");
	/* Bad hex: short, long, not hex, empty. */
	check_refused_why(V2B CNAME "cindex-sha256 0123\n", "bad cindex-sha256");
	check_refused_why(V2B CNAME "cindex-sha256 " HEX "0\n", "bad cindex-sha256");
	check_refused_why(V2B CNAME "cindex-sha256 "
			  "zf86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n",
			  "bad cindex-sha256");
	check_refused_why(V2B CNAME "cindex-sha256\n", "bad cindex-sha256");
	/* A path, or no name: refused like verity-hash. */
	check_refused_why(V2B "cindex ../etc/shadow\n" CSUM, "bad cindex");
	check_refused_why(V2B "cindex /srv/x.cindex\n" CSUM, "bad cindex");
	check_refused_why(V2B "cindex a/b\n" CSUM, "bad cindex");
	check_refused_why(V2B "cindex ..\n" CSUM, "bad cindex");
	check_refused_why(V2B "cindex .\n" CSUM, "bad cindex");
	check_refused_why(V2B "cindex\n" CSUM, "bad cindex");
	/* Twice; in version 1. */
	check_refused_why(V2B CNAME CNAME CSUM, "cindex given twice");
	check_refused_why(V2B CNAME CSUM CSUM, "cindex-sha256 given twice");
	check_refused_why("ramboot-manifest 1\nsize 131072\nsha256 " HEX "\n" CNAME CSUM,
			  "needs manifest version 2");
}

#define DNAME "delta x86_64.img.delta-0123456789abcdef\n"
#define DFROM "delta-from " H_EMPTY "\n"
#define DSUM  "delta-sha256 " HEX "\n"

/* The delta's keys: the three together, version 2 only, a name beside
 * the image, 64 hex digits each; formatted and parsed back the same. */
static void test_delta_keys(void)
{
	struct manifest m;
	char *buf;
	int n;

	CHECK_EQ_INT(parse(V2B DNAME DFROM DSUM, &m), 0);
	CHECK_EQ_STR(m.delta, "x86_64.img.delta-0123456789abcdef");
	CHECK_EQ_STR(m.delta_from, H_EMPTY);
	CHECK_EQ_STR(m.delta_sha256, HEX);
	manifest_free(&m);
	CHECK_EQ_INT(parse(V2B "delta-sha256 " HEXU "\n" DFROM CNAME CSUM DNAME, &m), 0);
	CHECK_EQ_STR(m.delta_sha256, HEX);
	buf = formatted(&m, &n);
	CHECK(strstr(buf, "\n" DNAME DFROM DSUM) != NULL);
	CHECK_EQ_INT(parse_n(buf, (size_t)n, &m), 0);
	CHECK_EQ_STR(m.delta, "x86_64.img.delta-0123456789abcdef");
	CHECK_EQ_STR(m.delta_from, H_EMPTY);
	CHECK_EQ_STR(m.delta_sha256, HEX);
	CHECK_EQ_STR(m.cindex_sha256, H_EMPTY);
	manifest_free(&m);
	free(buf);
	/* None: none formatted. */
	CHECK_EQ_INT(parse(V2B, &m), 0);
	buf = formatted(&m, &n);
	CHECK(strstr(buf, "delta") == NULL);
	free(buf);
	/* Not all three. */
	check_refused_why(V2B DNAME DFROM, "delta, delta-from and delta-sha256 come together");
	check_refused_why(V2B DNAME DSUM, "delta, delta-from and delta-sha256 come together");
	check_refused_why(V2B DFROM DSUM, "delta, delta-from and delta-sha256 come together");
	/* Bad hex, a path. */
	check_refused_why(V2B DNAME "delta-from 0123\n" DSUM, "bad delta-from");
	check_refused_why(V2B DNAME DFROM "delta-sha256 " HEX "0\n", "bad delta-sha256");
	check_refused_why(V2B "delta ../x\n" DFROM DSUM, "bad delta");
	check_refused_why(V2B "delta /srv/x.delta\n" DFROM DSUM, "bad delta");
	/* Twice; in version 1. */
	check_refused_why(V2B DNAME DNAME DFROM DSUM, "delta given twice");
	check_refused_why("ramboot-manifest 1\nsize 131072\nsha256 " HEX "\n" DNAME DFROM DSUM,
			  "needs manifest version 2");
}

/* A parser that knows no cindex keys ignores them (manifest.h): a key
 * of that kind, unknown to this one, is ignored the same way. */
static void test_unknown_keys_ignored(void)
{
	struct manifest m;

	CHECK_EQ_INT(parse(V2B CNAME CSUM "cindex2 whatever\nsomething-new 1 2 3\n", &m), 0);
	CHECK_EQ_STR(m.cindex, "x86_64.img.cindex-0123456789abcdef");
	manifest_free(&m);
}

static void test_format_round_trip(void)
{
	struct manifest m, back;
	size_t cap;
	char *buf;
	int n, i;

	memset(&m, 0, sizeof(m));
	m.size = 3 * 65536 - 7;
	memcpy(m.sha256, HEX, 65);
	strcpy(m.compression, "xz");
	m.memlimit = 1 << 30;
	m.chunk_size = 65536;
	m.nchunks = 3;
	m.chunk = calloc(3, 32);
	if (!m.chunk)
		abort();
	for (i = 0; i < 3 * 32; i++)
		m.chunk[i / 32][i % 32] = (uint8_t)(i * 7);
	cap = manifest_format_max(&m);
	buf = malloc(cap);
	if (!buf)
		abort();
	n = manifest_format(&m, buf, cap);
	CHECK(n > 0);
	CHECK(!strncmp(buf, "ramboot-manifest 2\n", 19));
	CHECK(strstr(buf, "\nchunk-size 65536\nchunk 0 00070e151c") != NULL);
	CHECK_EQ_INT(parse_n(buf, (size_t)n, &back), 0);
	CHECK_EQ_INT(back.nchunks, 3);
	CHECK(back.chunk && !memcmp(back.chunk, m.chunk, 3 * 32));
	CHECK_EQ_STR(back.compression, "xz");
	CHECK_EQ_INT(back.memlimit, 1 << 30);
	manifest_free(&back);
	/* a buffer one byte short */
	CHECK_EQ_INT(manifest_format(&m, buf, (size_t)n), -ENOSPC);
	free(buf);
	manifest_free(&m);
}

static const char *tmpfile_with(const char *s, size_t len)
{
	static char path[64];
	int fd;

	strcpy(path, "/tmp/test_manifest_v2.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		abort();
	if (write_all(fd, s, len) || close_checked(fd))
		abort();
	return path;
}

static void test_load_keeps_or_drops_chunks(void)
{
	const char *p = tmpfile_with(GOOD, strlen(GOOD));
	struct manifest m;
	size_t len;
	char *big;

	/* manifest_load: checked, not kept */
	CHECK_EQ_INT(manifest_load(p, &m, err, sizeof(err)), 0);
	CHECK_EQ_INT(m.version, 2);
	CHECK_EQ_INT(m.nchunks, 3);
	CHECK(m.chunk == NULL);
	CHECK_EQ_INT(manifest_load_chunks(p, &m, err, sizeof(err)), 0);
	CHECK(m.chunk != NULL);
	manifest_free(&m);
	unlink(p);

	/* a bad chunk is refused by both */
	p = tmpfile_with(HEAD "chunk 0 " HEX "\nchunk 1 nothex\nchunk 2 " HEX "\n",
			 strlen(HEAD "chunk 0 " HEX "\nchunk 1 nothex\nchunk 2 " HEX "\n"));
	CHECK_EQ_INT(manifest_load(p, &m, err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(manifest_load_chunks(p, &m, err, sizeof(err)), -EINVAL);
	unlink(p);

	/* a large manifest (beyond MANIFEST_MAX) is read whole */
	len = make_big(5000, 0, &big);
	CHECK(len > MANIFEST_MAX);
	p = tmpfile_with(big, len);
	CHECK_EQ_INT(manifest_load_chunks(p, &m, err, sizeof(err)), 0);
	CHECK_EQ_INT(m.nchunks, 5000);
	manifest_free(&m);
	unlink(p);
	free(big);
}

/* The boot report counts the chunks of a copy verified chunk by chunk,
 * after hash=; without such a copy the keys are not there. */
static void test_report_chunk_keys(void)
{
	struct boot_report r;
	char buf[8192];

	report_init(&r);
	CHECK(report_format(&r, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "chunks") == NULL);
	CHECK(report_format_json(&r, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "chunks") == NULL);
	strcpy(r.hash, "ok");
	r.chunks = 512;
	r.chunks_retried = 1;
	CHECK(report_format(&r, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "\nhash=ok\nchunks=512\nchunks_retried=1\nfstype=\n") != NULL);
	CHECK(report_format_json(&r, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "\"chunks\": 512,\n  \"chunks_retried\": 1,\n") != NULL);
}

int main(void)
{
	RUN(test_good);
	RUN(test_vector_is_sha256);
	RUN(test_version_1_has_no_chunks);
	RUN(test_empty_image);
	RUN(test_exact_multiple);
	RUN(test_other_keys_upper_case_comments);
	RUN(test_chunk_size_malformed);
	RUN(test_missing);
	RUN(test_order);
	RUN(test_chunk_line_malformed);
	RUN(test_embedded_nul_and_prefixes);
	RUN(test_size_limit_grows_with_chunks);
	RUN(test_chunk_count_cap);
	RUN(test_format_round_trip);
	RUN(test_verity_keys);
	RUN(test_cindex_keys);
	RUN(test_delta_keys);
	RUN(test_image_key);
	RUN(test_unknown_keys_ignored);
	RUN(test_load_keeps_or_drops_chunks);
	RUN(test_report_chunk_keys);
	return TAP_DONE();
}
