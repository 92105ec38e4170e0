// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lzop_parse_header() on headers written by lzop 1.04 (LZO 2.10), on
 * every truncation of them, and on headers built here with one field
 * changed (method, flags, checksum). lzop_block_header_len() for the
 * checksum flag combinations.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tap.h"
#include "lib/base.h"
#include "format/lzop.h"

/*
 * Whole files made once with lzop 1.04 from a 6-byte file "h.txt"
 * ("hello\n", mtime 1700000000):
 *   h1: lzop -1        method 2 (LZO1X-1(15)), level 1, Adler-32 data
 *   h9: lzop -9        method 3 (LZO1X-999), level 9
 *   hc: lzop --crc32   method 1, CRC-32 header and data checksums,
 *                      version_needed 0x1001
 *   hs: lzop -3 <h.txt from stdin: no name, mode 0
 * The header ends with its checksum; the one block (stored: compressed
 * length == uncompressed length) and the 4-byte end marker follow.
 */
static const unsigned char h1_lzo[] = {
  0x89, 0x4c, 0x5a, 0x4f, 0x00, 0x0d, 0x0a, 0x1a, 0x0a, 0x10, 0x40, 0x20,
  0xa0, 0x09, 0x40, 0x02, 0x01, 0x03, 0x00, 0x00, 0x01, 0x00, 0x00, 0x81,
  0xa4, 0x65, 0x53, 0xf1, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x68, 0x2e,
  0x74, 0x78, 0x74, 0x51, 0xb7, 0x06, 0x2a, 0x00, 0x00, 0x00, 0x06, 0x00,
  0x00, 0x00, 0x06, 0x08, 0x4b, 0x02, 0x1f, 0x68, 0x65, 0x6c, 0x6c, 0x6f,
  0x0a, 0x00, 0x00, 0x00, 0x00
};
static const unsigned char h9_lzo[] = {
  0x89, 0x4c, 0x5a, 0x4f, 0x00, 0x0d, 0x0a, 0x1a, 0x0a, 0x10, 0x40, 0x20,
  0xa0, 0x09, 0x40, 0x03, 0x09, 0x03, 0x00, 0x00, 0x01, 0x00, 0x00, 0x81,
  0xa4, 0x65, 0x53, 0xf1, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x68, 0x2e,
  0x74, 0x78, 0x74, 0x52, 0x87, 0x06, 0x33, 0x00, 0x00, 0x00, 0x06, 0x00,
  0x00, 0x00, 0x06, 0x08, 0x4b, 0x02, 0x1f, 0x68, 0x65, 0x6c, 0x6c, 0x6f,
  0x0a, 0x00, 0x00, 0x00, 0x00
};
static const unsigned char hc_lzo[] = {
  0x89, 0x4c, 0x5a, 0x4f, 0x00, 0x0d, 0x0a, 0x1a, 0x0a, 0x10, 0x40, 0x20,
  0xa0, 0x10, 0x01, 0x01, 0x05, 0x03, 0x00, 0x11, 0x00, 0x00, 0x00, 0x81,
  0xa4, 0x65, 0x53, 0xf1, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x68, 0x2e,
  0x74, 0x78, 0x74, 0x3c, 0x9a, 0x7d, 0xf2, 0x00, 0x00, 0x00, 0x06, 0x00,
  0x00, 0x00, 0x06, 0x36, 0x3a, 0x30, 0x20, 0x68, 0x65, 0x6c, 0x6c, 0x6f,
  0x0a, 0x00, 0x00, 0x00, 0x00
};
static const unsigned char hs_lzo[] = {
  0x89, 0x4c, 0x5a, 0x4f, 0x00, 0x0d, 0x0a, 0x1a, 0x0a, 0x10, 0x40, 0x20,
  0xa0, 0x09, 0x40, 0x01, 0x05, 0x03, 0x00, 0x00, 0x0d, 0x00, 0x00, 0x00,
  0x00, 0x6b, 0x0d, 0x49, 0x55, 0x00, 0x00, 0x00, 0x00, 0x00, 0x27, 0x84,
  0x02, 0x86, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x06, 0x08, 0x4b,
  0x02, 0x1f, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x0a, 0x00, 0x00, 0x00, 0x00
};

static const struct real {
	const char *name;
	const unsigned char *buf;
	size_t len, header_len;
	uint8_t method, level;
	uint32_t flags, mode;
	uint16_t version_needed;
} reals[] = {
	{ "h1", h1_lzo, sizeof(h1_lzo), 43, 2, 1, 0x03000001, 0100644, 0x0940 },
	{ "h9", h9_lzo, sizeof(h9_lzo), 43, 3, 9, 0x03000001, 0100644, 0x0940 },
	{ "hc", hc_lzo, sizeof(hc_lzo), 43, 1, 5, 0x03001100, 0100644, 0x1001 },
	{ "hs", hs_lzo, sizeof(hs_lzo), 38, 1, 5, 0x0300000d, 0, 0x0940 },
};

/* Parse a copy of buf[0..len) in a heap block of exactly len bytes, so
 * that ASan reports any read past len. */
static int parse_exact(const unsigned char *buf, size_t len, struct lzop_header *h)
{
	unsigned char *copy = malloc(len ? len : 1);
	int rc;

	if (!copy)
		abort();
	memcpy(copy, buf, len);
	rc = lzop_parse_header(len ? copy : copy + 1, len, h);
	free(copy);
	return rc;
}

/* ---- a header builder (the layout lzop >= 0.94 writes) ---- */

struct spec {
	uint16_t version, lib_version, version_needed;
	uint8_t method, level;
	uint32_t flags, filter, mode, mtime_lo, mtime_hi;
	const char *name;
	int bad_checksum;
};

static unsigned char *put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
	return p + 2;
}

static unsigned char *put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
	return p + 4;
}

/* Returns the header length; out must hold 300 bytes. */
static size_t build(unsigned char *out, const struct spec *s)
{
	unsigned char *p = out;
	size_t nlen = strlen(s->name);
	uint32_t ck;

	memcpy(p, lzop_magic, LZOP_MAGIC_LEN);
	p += LZOP_MAGIC_LEN;
	p = put16(p, s->version);
	p = put16(p, s->lib_version);
	p = put16(p, s->version_needed);
	*p++ = s->method;
	*p++ = s->level;
	p = put32(p, s->flags);
	if (s->flags & LZOP_F_H_FILTER)
		p = put32(p, s->filter);
	p = put32(p, s->mode);
	p = put32(p, s->mtime_lo);
	p = put32(p, s->mtime_hi);
	*p++ = (unsigned char)nlen;
	memcpy(p, s->name, nlen);
	p += nlen;
	if (s->flags & LZOP_F_H_CRC32)
		ck = (uint32_t)crc32(0, out + LZOP_MAGIC_LEN, (uInt)(p - out - LZOP_MAGIC_LEN));
	else
		ck = (uint32_t)adler32(1, out + LZOP_MAGIC_LEN, (uInt)(p - out - LZOP_MAGIC_LEN));
	if (s->bad_checksum)
		ck ^= 1;
	p = put32(p, ck);
	return (size_t)(p - out);
}

/* the fields of h1 */
static struct spec h1_spec(void)
{
	struct spec s = {
		.version = 0x1040, .lib_version = 0x20a0, .version_needed = 0x0940,
		.method = 2, .level = 1, .flags = 0x03000001, .mode = 0100644,
		.mtime_lo = 0x6553f100, .mtime_hi = 0, .name = "h.txt",
	};
	return s;
}

/* ---- tests ---- */

static void test_magic_table(void)
{
	CHECK(!memcmp(lzop_magic, "\x89LZO\0\r\n\x1a\n", LZOP_MAGIC_LEN));
}

static void test_real_headers(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(reals); i++) {
		const struct real *r = &reals[i];
		struct lzop_header h;

		memset(&h, 0xa5, sizeof(h));
		CHECK_EQ_INT(parse_exact(r->buf, r->header_len, &h), 0);
		CHECK_EQ_INT(h.header_len, r->header_len);
		CHECK_EQ_INT(h.method, r->method);
		CHECK_EQ_INT(h.level, r->level);
		CHECK_EQ_INT(h.flags, r->flags);
		CHECK_EQ_INT(h.mode, r->mode);
		CHECK_EQ_INT(h.version, 0x1040);
		CHECK_EQ_INT(h.lib_version, 0x20a0);
		CHECK_EQ_INT(h.version_needed, r->version_needed);
	}
}

static void test_real_files_whole(void)
{
	size_t i;

	/* the block data after the header does not change the answer */
	for (i = 0; i < ARRAY_SIZE(reals); i++) {
		struct lzop_header h;

		CHECK_EQ_INT(parse_exact(reals[i].buf, reals[i].len, &h), 0);
		CHECK_EQ_INT(h.header_len, reals[i].header_len);
	}
}

static void test_truncated_every_length(void)
{
	size_t i, len;

	for (i = 0; i < ARRAY_SIZE(reals); i++) {
		for (len = 0; len < reals[i].header_len; len++) {
			struct lzop_header h;
			int rc = parse_exact(reals[i].buf, len, &h);

			if (rc != -EAGAIN)
				printf("#   %s truncated to %zu bytes: %d\n", reals[i].name, len, rc);
			CHECK_EQ_INT(rc, -EAGAIN);
		}
	}
}

static void test_bad_magic(void)
{
	unsigned char buf[sizeof(h1_lzo)];
	struct lzop_header h;
	size_t i;

	for (i = 0; i < LZOP_MAGIC_LEN; i++) {
		memcpy(buf, h1_lzo, sizeof(buf));
		buf[i] ^= 0x20;
		CHECK_EQ_INT(parse_exact(buf, sizeof(buf), &h), -EINVAL);
	}
	/* a gzip and a zstd file are not lzop files */
	CHECK_EQ_INT(parse_exact((const unsigned char *)"\x1f\x8b\x08\0\0\0\0\0\0\3xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
				 50, &h), -EINVAL);
	CHECK_EQ_INT(parse_exact((const unsigned char *)"\x28\xb5\x2f\xfd\0\0\0\0\0\0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
				 50, &h), -EINVAL);
}

static void test_corrupt_checksum(void)
{
	unsigned char buf[64];
	struct lzop_header h;
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(reals); i++) {
		size_t hl = reals[i].header_len;

		/* the stored checksum itself */
		for (j = hl - 4; j < hl; j++) {
			memcpy(buf, reals[i].buf, hl);
			buf[j] ^= 0x01;
			CHECK_EQ_INT(parse_exact(buf, hl, &h), -EBADMSG);
		}
		/* the mtime, which nothing else checks */
		memcpy(buf, reals[i].buf, hl);
		buf[26] ^= 0x40;
		CHECK_EQ_INT(parse_exact(buf, hl, &h), -EBADMSG);
	}
	/* a name byte of h1 */
	memcpy(buf, h1_lzo, 43);
	buf[36] ^= 0x01;
	CHECK_EQ_INT(parse_exact(buf, 43, &h), -EBADMSG);
}

static void test_builder_matches_lzop(void)
{
	unsigned char buf[300];
	struct spec s = h1_spec();

	/* the builder writes what lzop writes: the other tests can trust it */
	CHECK_EQ_INT(build(buf, &s), 43);
	CHECK(!memcmp(buf, h1_lzo, 43));
	s.method = 1;
	s.level = 5;
	s.version_needed = 0x1001;
	s.flags = 0x03001100;
	CHECK_EQ_INT(build(buf, &s), 43);
	CHECK(!memcmp(buf, hc_lzo, 43));
}

static void test_bad_method(void)
{
	static const uint8_t methods[] = { 4, 0x40, 0x7f, 0x80, 0xff };
	unsigned char buf[300];
	struct lzop_header h;
	size_t i, n;

	for (i = 0; i < ARRAY_SIZE(methods); i++) {
		struct spec s = h1_spec();

		s.method = methods[i];
		n = build(buf, &s);
		if (parse_exact(buf, n, &h) != -ENOTSUP)
			printf("#   method %u\n", methods[i]);
		CHECK_EQ_INT(parse_exact(buf, n, &h), -ENOTSUP);
	}
}

static void test_good_methods(void)
{
	unsigned char buf[300];
	struct lzop_header h;
	uint8_t m;

	for (m = 1; m <= 3; m++) {
		struct spec s = h1_spec();
		size_t n;

		s.method = m;
		n = build(buf, &s);
		CHECK_EQ_INT(parse_exact(buf, n, &h), 0);
		CHECK_EQ_INT(h.method, m);
	}
}

static void test_filter_and_multipart(void)
{
	unsigned char buf[300];
	struct lzop_header h;
	struct spec s = h1_spec();
	size_t n;

	s.flags |= LZOP_F_H_FILTER;
	s.filter = 1;
	n = build(buf, &s);
	CHECK_EQ_INT(n, 47);
	CHECK_EQ_INT(parse_exact(buf, n, &h), -ENOTSUP);

	s = h1_spec();
	s.flags |= LZOP_F_MULTIPART;
	n = build(buf, &s);
	CHECK_EQ_INT(parse_exact(buf, n, &h), -ENOTSUP);
}

static void test_bad_checksum_built(void)
{
	unsigned char buf[300];
	struct lzop_header h;
	struct spec s = h1_spec();
	size_t n;

	s.bad_checksum = 1;
	n = build(buf, &s);
	CHECK_EQ_INT(parse_exact(buf, n, &h), -EBADMSG);
	s.flags |= LZOP_F_H_CRC32;
	n = build(buf, &s);
	CHECK_EQ_INT(parse_exact(buf, n, &h), -EBADMSG);
}

static void test_long_name(void)
{
	char name[256];
	unsigned char buf[300];
	struct lzop_header h;
	struct spec s = h1_spec();
	size_t n, len;

	memset(name, 'n', 255);
	name[255] = '\0';
	s.name = name;
	n = build(buf, &s);
	CHECK_EQ_INT(n, 43 - 5 + 255);
	CHECK_EQ_INT(parse_exact(buf, n, &h), 0);
	CHECK_EQ_INT(h.header_len, n);
	for (len = 0; len < n; len += 7)
		CHECK_EQ_INT(parse_exact(buf, len, &h), -EAGAIN);
	CHECK_EQ_INT(parse_exact(buf, n - 1, &h), -EAGAIN);
}

static void test_crc32_header(void)
{
	unsigned char buf[300];
	struct lzop_header h;
	struct spec s = h1_spec();
	size_t n;

	/* CRC-32 header checksum, Adler-32 data checksum */
	s.flags |= LZOP_F_H_CRC32;
	n = build(buf, &s);
	CHECK_EQ_INT(parse_exact(buf, n, &h), 0);
	CHECK_EQ_INT(h.flags, s.flags);
}

static void test_block_header_len(void)
{
	const uint32_t ad = LZOP_F_ADLER32_D, ac = LZOP_F_ADLER32_C;
	const uint32_t cd = LZOP_F_CRC32_D, cc = LZOP_F_CRC32_C;

	/* two lengths, then the data checksums, then the compressed-data
	 * checksums, the latter only when the block is really compressed */
	CHECK_EQ_INT(lzop_block_header_len(0, 100, 50), 8);
	CHECK_EQ_INT(lzop_block_header_len(ad, 100, 50), 12);
	CHECK_EQ_INT(lzop_block_header_len(cd, 100, 50), 12);
	CHECK_EQ_INT(lzop_block_header_len(ad | ac, 100, 50), 16);
	CHECK_EQ_INT(lzop_block_header_len(ad | ac, 100, 100), 12);
	CHECK_EQ_INT(lzop_block_header_len(cd | cc, 100, 50), 16);
	CHECK_EQ_INT(lzop_block_header_len(cd | cc, 100, 100), 12);
	CHECK_EQ_INT(lzop_block_header_len(ad | ac | cd | cc, 100, 50), 24);
	CHECK_EQ_INT(lzop_block_header_len(ad | ac | cd | cc, 100, 100), 16);
	/* flags that are not checksums do not count */
	CHECK_EQ_INT(lzop_block_header_len(0x03000000 | ad, 100, 50), 12);
}

int main(void)
{
	RUN(test_magic_table);
	RUN(test_real_headers);
	RUN(test_real_files_whole);
	RUN(test_truncated_every_length);
	RUN(test_bad_magic);
	RUN(test_corrupt_checksum);
	RUN(test_builder_matches_lzop);
	RUN(test_bad_method);
	RUN(test_good_methods);
	RUN(test_filter_and_multipart);
	RUN(test_bad_checksum_built);
	RUN(test_long_name);
	RUN(test_crc32_header);
	RUN(test_block_header_len);
	return TAP_DONE();
}
