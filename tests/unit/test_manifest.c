// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * manifest_parse(), manifest_format(), manifest_load() and
 * sha256_hex_parse(). Every input is parsed from a heap block of exactly
 * its length (no terminating NUL), so ASan reports any read past len.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "lib/fdio.h"
#include "format/manifest.h"
#include "exact.h"

#define HEX  "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
#define HEXU "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"
#define GOOD "ramboot-manifest 1\nsize 1073741824\nsha256 " HEX "\n"

static char err[256];

EXACT_PARSE(manifest_parse, struct manifest, 0x5a)

/* A refusal always says why. */
static void check_refused(const char *s)
{
	struct manifest m;

	int rc = parse(s, &m);

	if (rc != -EINVAL || !err[0])
		printf("#   accepted or no reason (%d): \"%s\"\n", rc, s);
	CHECK_EQ_INT(rc, -EINVAL);
	CHECK(err[0] != '\0');
}

static void test_good(void)
{
	struct manifest m;

	CHECK_EQ_INT(parse(GOOD, &m), 0);
	CHECK_EQ_INT(m.size, 1073741824ULL);
	CHECK_EQ_STR(m.sha256, HEX);
	CHECK_EQ_STR(m.compression, "");
}

static void test_size_zero_and_large(void)
{
	struct manifest m;

	CHECK_EQ_INT(parse("ramboot-manifest 1\nsize 0\nsha256 " HEX "\n", &m), 0);
	CHECK_EQ_INT(m.size, 0);
	CHECK_EQ_INT(parse("ramboot-manifest 1\nsize 1099511627776\nsha256 " HEX "\n", &m), 0);
	CHECK(m.size == 1099511627776ULL);
}

static void test_key_order_comments_unknown(void)
{
	struct manifest m;

	CHECK_EQ_INT(parse("ramboot-manifest 1\n"
			   "# a comment\n"
			   "\n"
			   "sha256 " HEX "\n"
			   "signature for-a-later-version\n"
			   "compression zstd\n"
			   "size 4096\n", &m), 0);
	CHECK_EQ_INT(m.size, 4096);
	CHECK_EQ_STR(m.sha256, HEX);
	CHECK_EQ_STR(m.compression, "zstd");
}

static void test_upper_case_hex(void)
{
	struct manifest m;

	CHECK_EQ_INT(parse("ramboot-manifest 1\nsize 1\nsha256 " HEXU "\n", &m), 0);
	CHECK_EQ_STR(m.sha256, HEX);
}

static void test_no_trailing_newline(void)
{
	struct manifest m;

	CHECK_EQ_INT(parse("ramboot-manifest 1\nsize 7\nsha256 " HEX, &m), 0);
	CHECK_EQ_INT(m.size, 7);
	CHECK_EQ_STR(m.sha256, HEX);
}

static void test_missing_keys(void)
{
	check_refused("ramboot-manifest 1\nsize 1\n");
	check_refused("ramboot-manifest 1\nsha256 " HEX "\n");
	check_refused("ramboot-manifest 1\n");
	check_refused("");
	check_refused("\n\n# nothing\n");
}

static void test_missing_or_bad_header(void)
{
	check_refused("size 1\nsha256 " HEX "\n");
	check_refused("ramboot-manifest\nsize 1\nsha256 " HEX "\n");
	check_refused("some-other-format 1\nsize 1\nsha256 " HEX "\n");
}

static void test_repeated_key(void)
{
	check_refused("ramboot-manifest 1\nsize 1\nsize 1\nsha256 " HEX "\n");
	check_refused("ramboot-manifest 1\nsize 1\nsha256 " HEX "\nsha256 " HEX "\n");
	check_refused("ramboot-manifest 1\nsize 1\nsize 2\nsha256 " HEX "\n");
}

static void test_bad_hex(void)
{
	/* 63 and 65 digits, a non-hex digit, a space inside, empty, a sign */
	check_refused("ramboot-manifest 1\nsize 1\nsha256 "
		      "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a0\n");
	check_refused("ramboot-manifest 1\nsize 1\nsha256 " HEX "0\n");
	check_refused("ramboot-manifest 1\nsize 1\nsha256 "
		      "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a0g\n");
	check_refused("ramboot-manifest 1\nsize 1\nsha256 "
		      "9f86d081884c7d659a2feaa0c55ad015 3bf4f1b2b0b822cd15d6c15b0f00a08\n");
	check_refused("ramboot-manifest 1\nsize 1\nsha256 \n");
	check_refused("ramboot-manifest 1\nsize 1\nsha256\n");
	check_refused("ramboot-manifest 1\nsize 1\nsha256 0x" HEX "\n");
}

static void test_bad_size(void)
{
	/* 2^64, a sign, a suffix, hex, empty, huge */
	check_refused("ramboot-manifest 1\nsize 18446744073709551616\nsha256 " HEX "\n");
	check_refused("ramboot-manifest 1\nsize 99999999999999999999999999\nsha256 " HEX "\n");
	check_refused("ramboot-manifest 1\nsize -1\nsha256 " HEX "\n");
	check_refused("ramboot-manifest 1\nsize +1\nsha256 " HEX "\n");
	check_refused("ramboot-manifest 1\nsize 12abc\nsha256 " HEX "\n");
	check_refused("ramboot-manifest 1\nsize 1G\nsha256 " HEX "\n");
	check_refused("ramboot-manifest 1\nsize 0x10\nsha256 " HEX "\n");
	check_refused("ramboot-manifest 1\nsize \nsha256 " HEX "\n");
	check_refused("ramboot-manifest 1\nsize\nsha256 " HEX "\n");
}

static void test_error_names_the_line(void)
{
	struct manifest m;

	CHECK_EQ_INT(parse("ramboot-manifest 1\nsize 1\nsha256 xyz\n", &m), -EINVAL);
	CHECK(strstr(err, "3") != NULL);
	CHECK_EQ_INT(parse("ramboot-manifest 1\nsize one\nsha256 " HEX "\n", &m), -EINVAL);
	CHECK(strstr(err, "2") != NULL);
}

static void test_small_error_buffer(void)
{
	static const char bad[] = "ramboot-manifest 1\nsize 1\nsha256 xyz\n";
	char small[8];
	struct manifest m;

	memset(small, 'Z', sizeof(small));
	CHECK_EQ_INT(manifest_parse(bad, sizeof(bad) - 1, &m, small, sizeof(small)), -EINVAL);
	CHECK(memchr(small, '\0', sizeof(small)) != NULL);
	/* errlen 0: nothing written */
	CHECK_EQ_INT(manifest_parse(bad, sizeof(bad) - 1, &m, small, 0), -EINVAL);
}

static void test_crlf(void)
{
	struct manifest m;
	int rc = parse("ramboot-manifest 1\r\nsize 42\r\nsha256 " HEX "\r\n", &m);

	/* either understood or refused, never a hash or size with a CR in it */
	CHECK(rc == 0 || rc == -EINVAL);
	if (rc == 0) {
		CHECK_EQ_INT(m.size, 42);
		CHECK_EQ_STR(m.sha256, HEX);
	}
}

static void test_embedded_nul(void)
{
	static const char a[] = "ramboot-manifest 1\nsize 1\0 2\nsha256 " HEX "\n";
	static const char b[] = "ramboot-manifest 1\nsize 1\nsha256 " HEX "\0garbage\n";
	static const char c[] = "ramboot-manifest 1\nsize 1\nsha256 " HEX "\n\0";
	static const char d[] = "ramboot-manifest 1\0\nsize 1\nsha256 " HEX "\n";
	struct manifest m;

	/* a NUL is never silently the end of the input */
	CHECK_EQ_INT(parse_n(a, sizeof(a) - 1, &m), -EINVAL);
	CHECK_EQ_INT(parse_n(b, sizeof(b) - 1, &m), -EINVAL);
	CHECK_EQ_INT(parse_n(c, sizeof(c) - 1, &m), -EINVAL);
	CHECK_EQ_INT(parse_n(d, sizeof(d) - 1, &m), -EINVAL);
}

static void test_every_prefix(void)
{
	const size_t len = strlen(GOOD);
	struct manifest m;
	size_t n;

	/* a manifest cut short is refused, except for the last newline */
	for (n = 0; n < len - 1; n++) {
		int rc = parse_n(GOOD, n, &m);

		if (rc != -EINVAL)
			printf("#   prefix of %zu bytes: %d\n", n, rc);
		CHECK_EQ_INT(rc, -EINVAL);
	}
	CHECK_EQ_INT(parse_n(GOOD, len - 1, &m), 0);
	CHECK_EQ_INT(parse_n(GOOD, len, &m), 0);
}

static void test_huge_lines(void)
{
	/* below MANIFEST_MAX: the line itself is the problem */
	const size_t big = MANIFEST_MAX - 200;
	char *buf = malloc(big + 200);
	struct manifest m;
	size_t n;
	int rc;

	if (!buf)
		abort();
	/* a huge value of a known key */
	n = (size_t)sprintf(buf, "ramboot-manifest 1\nsize 1\nsha256 ");
	memset(buf + n, 'a', big);
	n += big;
	buf[n++] = '\n';
	CHECK_EQ_INT(parse_n(buf, n, &m), -EINVAL);

	/* a huge size */
	n = (size_t)sprintf(buf, "ramboot-manifest 1\nsha256 " HEX "\nsize ");
	memset(buf + n, '9', big);
	n += big;
	CHECK_EQ_INT(parse_n(buf, n, &m), -EINVAL);

	/* a huge comment or unknown key: ignored or refused, never a crash */
	n = (size_t)sprintf(buf, "ramboot-manifest 1\nsize 1\nsha256 " HEX "\n#");
	memset(buf + n, 'c', big);
	n += big;
	buf[n++] = '\n';
	rc = parse_n(buf, n, &m);
	CHECK(rc == 0 || rc == -EINVAL);

	/* one line with no newline at all */
	memset(buf, 'x', big);
	CHECK_EQ_INT(parse_n(buf, big, &m), -EINVAL);
	free(buf);

	/* more than MANIFEST_MAX bytes */
	buf = malloc(4 * MANIFEST_MAX);
	if (!buf)
		abort();
	n = (size_t)sprintf(buf, "%s", GOOD);
	memset(buf + n, '\n', 4 * MANIFEST_MAX - n);
	CHECK_EQ_INT(parse_n(buf, 4 * MANIFEST_MAX, &m), -EINVAL);
	free(buf);
}

static void test_format_round_trip(void)
{
	struct manifest m = { .size = 123456789 }, back;
	char buf[512];
	int n;

	memcpy(m.sha256, HEX, 65);
	n = manifest_format(&m, buf, sizeof(buf));
	CHECK(n > 0);
	if (n <= 0)
		return;
	CHECK_EQ_INT((size_t)n, strlen(buf));
	CHECK(!strncmp(buf, "ramboot-manifest 1\n", 19));
	CHECK(strstr(buf, "\nsize 123456789\n") != NULL);
	CHECK(strstr(buf, "\nsha256 " HEX "\n") != NULL);
	CHECK_EQ_INT(parse_n(buf, (size_t)n, &back), 0);
	CHECK(back.size == m.size);
	CHECK_EQ_STR(back.sha256, m.sha256);
}

static void test_format_too_small(void)
{
	struct manifest m = { .size = 1 };
	char buf[32];

	memcpy(m.sha256, HEX, 65);
	CHECK_EQ_INT(manifest_format(&m, buf, sizeof(buf)), -ENOSPC);
	CHECK_EQ_INT(manifest_format(&m, buf, 0), -ENOSPC);
}

static void test_sha256_hex_parse(void)
{
	char out[65];

	CHECK_EQ_INT(sha256_hex_parse(HEX, out), 0);
	CHECK_EQ_STR(out, HEX);
	CHECK_EQ_INT(sha256_hex_parse(HEXU, out), 0);
	CHECK_EQ_STR(out, HEX);
	CHECK(sha256_hex_parse("", out) < 0);
	CHECK(sha256_hex_parse("abc", out) < 0);
	CHECK(sha256_hex_parse(HEX "0", out) < 0);
	CHECK(sha256_hex_parse(HEX " ", out) < 0);
	CHECK(sha256_hex_parse("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a0", out) < 0);
	CHECK(sha256_hex_parse("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a0z", out) < 0);
	CHECK(sha256_hex_parse("-f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", out) < 0);
}

/* write s to a new temporary file, return its path (static buffer) */
static const char *tmpfile_with(const char *s, size_t len)
{
	static char path[64];
	int fd;

	strcpy(path, "/tmp/test_manifest.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		abort();
	if (write_all(fd, s, len) || close_checked(fd))
		abort();
	return path;
}

static void test_load(void)
{
	struct manifest m;
	const char *p = tmpfile_with(GOOD, strlen(GOOD));

	CHECK_EQ_INT(manifest_load(p, &m, err, sizeof(err)), 0);
	CHECK_EQ_INT(m.size, 1073741824ULL);
	CHECK_EQ_STR(m.sha256, HEX);
	unlink(p);

	CHECK(manifest_load("/nonexistent/manifest", &m, err, sizeof(err)) < 0);
}

static void test_load_too_big(void)
{
	size_t len = MANIFEST_MAX + 100, n;
	char *buf = malloc(len);
	struct manifest m;
	const char *p;

	if (!buf)
		abort();
	/* a valid manifest padded with comment lines beyond MANIFEST_MAX */
	n = (size_t)sprintf(buf, "%s", GOOD);
	while (n < len) {
		buf[n++] = '#';
		while (n < len && n % 100)
			buf[n++] = 'c';
		if (n < len)
			buf[n++] = '\n';
	}
	buf[len - 1] = '\n';
	p = tmpfile_with(buf, len);
	CHECK(manifest_load(p, &m, err, sizeof(err)) < 0);
	unlink(p);
	free(buf);
}

int main(void)
{
	RUN(test_good);
	RUN(test_size_zero_and_large);
	RUN(test_key_order_comments_unknown);
	RUN(test_upper_case_hex);
	RUN(test_no_trailing_newline);
	RUN(test_missing_keys);
	RUN(test_missing_or_bad_header);
	RUN(test_repeated_key);
	RUN(test_bad_hex);
	RUN(test_bad_size);
	RUN(test_error_names_the_line);
	RUN(test_small_error_buffer);
	RUN(test_crlf);
	RUN(test_embedded_nul);
	RUN(test_every_prefix);
	RUN(test_huge_lines);
	RUN(test_format_round_trip);
	RUN(test_format_too_small);
	RUN(test_sha256_hex_parse);
	RUN(test_load);
	RUN(test_load_too_big);
	return TAP_DONE();
}
