// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The chunk index (format/cindex.h): cindex_build() of an image file,
 * cindex_format() and cindex_parse() back, byte for byte; every
 * malformed index refused with a reason; cindex_load() of files. Each
 * text is parsed from a heap block of exactly its length (no NUL), so
 * ASan reports any read past it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SHA256_NO_COMPAT
#include "tap.h"
#include "exact.h"
#include "lib/fdio.h"
#include "lib/sha256.h"
#include "format/cdc.h"
#include "format/cindex.h"

#define H0 "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
#define H1 "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
#define HDR "ramboot-cindex 1\nchunker gear-fastcdc 16384 65536 262144\n"
/* 100000 bytes in two chunks */
#define GOOD HDR "size 100000\nchunks 2\nchunk 0 70000 " H0 "\nchunk 70000 30000 " H1 "\n"

static char err[512];

EXACT_PARSE(cindex_parse, struct cindex, 0)

/* Refused, with a reason, nothing left allocated. */
static void refused(const char *s, const char *why)
{
	struct cindex ci;
	int rc = parse(s, &ci);

	if (rc != -EINVAL || !strstr(err, why))
		printf("#   %d \"%s\" for: %.200s\n", rc, err, s);
	CHECK_EQ_INT(rc, -EINVAL);
	CHECK(strstr(err, why) != NULL);
	CHECK(ci.chunk == NULL && ci.n == 0);
}

static void test_good(void)
{
	struct cindex ci;
	char out[1024];
	ssize_t n;

	CHECK_EQ_INT(parse(GOOD, &ci), 0);
	CHECK_EQ_STR(ci.chunker, "gear-fastcdc");
	CHECK_EQ_INT(ci.min, 16384);
	CHECK_EQ_INT(ci.avg, 65536);
	CHECK_EQ_INT(ci.max, 262144);
	CHECK_EQ_INT(ci.size, 100000);
	CHECK_EQ_INT(ci.n, 2);
	CHECK_EQ_INT(ci.chunk[1].off, 70000);
	CHECK_EQ_INT(ci.chunk[1].len, 30000);
	CHECK_EQ_INT(ci.chunk[0].sha256[0], 0x9f);
	CHECK_EQ_INT(ci.chunk[1].sha256[31], 0xae);
	n = cindex_format(&ci, out, sizeof(out));
	CHECK_EQ_INT(n, strlen(GOOD));
	CHECK(n > 0 && !memcmp(out, GOOD, (size_t)n));
	/* too small a buffer */
	CHECK_EQ_INT(cindex_format(&ci, out, 100), -ENOSPC);
	CHECK(cindex_text_max(ci.n) >= strlen(GOOD));
	cindex_free(&ci);
	cindex_free(&ci);

	/* an empty image; one short chunk; other chunker lengths */
	CHECK_EQ_INT(parse(HDR "size 0\nchunks 0\n", &ci), 0);
	CHECK(ci.n == 0 && ci.chunk == NULL);
	CHECK_EQ_INT(parse(HDR "size 1\nchunks 1\nchunk 0 1 " H0 "\n", &ci), 0);
	CHECK_EQ_INT(ci.n, 1);
	cindex_free(&ci);
	CHECK_EQ_INT(parse("ramboot-cindex 1\nchunker x-2 4096 4096 67108864\nsize 67108864\n"
			   "chunks 1\nchunk 0 67108864 " H0 "\n", &ci), 0);
	cindex_free(&ci);
	/* a short first chunk (a header cut alone) and a short last one:
	 * three chunks in 16386 bytes */
	CHECK_EQ_INT(parse(HDR "size 16386\nchunks 3\nchunk 0 1 " H0 "\nchunk 1 16384 " H1
			   "\nchunk 16385 1 " H0 "\n", &ci), 0);
	CHECK_EQ_INT(ci.n, 3);
	cindex_free(&ci);
}

static void test_refused(void)
{
	char big[256];

	/* header */
	refused("", "not a chunk index");
	refused("ramboot-cindex 2\n", "not a chunk index");
	refused("ramboot-cindex 1", "not a chunk index");
	refused("ramboot-cindex 1\r\n", "not a chunk index");
	refused("ramboot-manifest 1\nsize 1\n", "not a chunk index");
	refused("ramboot-cindex 1\nchunker gear-fastcdc 16384 65536\n", "bad chunker");
	refused("ramboot-cindex 1\nchunker Gear 16384 65536 262144\n", "bad chunker");
	refused("ramboot-cindex 1\nchunker  gear 16384 65536 262144\n", "bad chunker");
	refused("ramboot-cindex 1\nchunker gear-fastcdc-0123456789012345678 4096 4096 4096\n",
		"bad chunker");
	refused("ramboot-cindex 1\nchunker g 2048 4096 4096\n", "bad chunker lengths");
	refused("ramboot-cindex 1\nchunker g 8192 4096 16384\n", "bad chunker lengths");
	refused("ramboot-cindex 1\nchunker g 4096 8192 4096\n", "bad chunker lengths");
	refused("ramboot-cindex 1\nchunker g 4096 4096 67108865\n", "bad chunker");
	refused(HDR "size 100000\n", "bad chunks");
	refused(HDR "chunks 0\nsize 0\n", "bad size");
	refused(HDR "size 0\nchunks 0", "bad chunks");
	refused(HDR "size 0\nchunks 0\n\n", "trailing bytes");
	refused(HDR "size 0\nchunks 0\n# comment\n", "trailing bytes");
	refused(HDR "size 0\nchunks 1\nchunk 0 1 " H0 "\n", "cannot tile");
	refused(HDR "size 1\nchunks 0\n", "cannot tile");

	/* overflowing, signed, padded numbers */
	refused(HDR "size 18446744073709551616\nchunks 0\n", "bad size");
	refused(HDR "size 99999999999999999999\nchunks 0\n", "bad size");
	refused(HDR "size 18446744073709551615\nchunks 18446744073709551616\n", "bad chunks");
	refused(HDR "size -1\nchunks 0\n", "bad size");
	refused(HDR "size +1\nchunks 1\nchunk 0 1 " H0 "\n", "bad size");
	refused(HDR "size 01\nchunks 1\nchunk 0 1 " H0 "\n", "bad size");
	refused(HDR "size 1 \nchunks 1\nchunk 0 1 " H0 "\n", "bad size");
	refused(HDR "size 1\nchunks 1\nchunk 00 1 " H0 "\n", "bad chunk");
	refused(HDR "size 1\nchunks 1\nchunk 0 01 " H0 "\n", "bad chunk");
	refused(HDR "size 1\nchunks 1\nchunk 18446744073709551616 1 " H0 "\n", "bad chunk");
	refused(HDR "size 1\nchunks 1\nchunk 0 4294967297 " H0 "\n", "bad chunk");

	/* the chunk count: derived from size / MIN, the hard cap, the text */
	refused(HDR "size 32768\nchunks 4\n", "cannot tile");
	refused(HDR "size 16385\nchunks 3\n", "cannot tile");
	refused(HDR "size 18446744073709551615\nchunks 1048577\n", "more than 1048576 chunks");
	refused(HDR "size 18446744073709551615\nchunks 1048576\n", "too short");
	refused(HDR "size 100000\nchunks 2\nchunk 0 70000 " H0 "\n", "too short");

	/* tiling */
	refused(HDR "size 100000\nchunks 2\nchunk 1 70000 " H0 "\nchunk 70001 29999 " H1 "\n",
		"gap before");
	refused(HDR "size 100000\nchunks 2\nchunk 0 70000 " H0 "\nchunk 70001 29999 " H1 "\n",
		"gap before");
	refused(HDR "size 100000\nchunks 2\nchunk 0 70000 " H0 "\nchunk 69999 30001 " H1 "\n",
		"overlaps");
	refused(HDR "size 100000\nchunks 2\nchunk 0 70000 " H0 "\nchunk 0 70000 " H0 "\n",
		"overlaps");
	refused(HDR "size 300000\nchunks 2\nchunk 0 262145 " H0 "\nchunk 262145 37855 " H1 "\n",
		"not from 1 to 262144");
	refused(HDR "size 600000\nchunks 3\nchunk 0 96 " H0 "\nchunk 96 262145 " H1
		"\nchunk 262241 337759 " H0 "\n", "not from 16384 to 262144");
	refused(HDR "size 100000\nchunks 3\nchunk 0 96 " H0 "\nchunk 96 16383 " H1
		"\nchunk 16479 83521 " H0 "\n", "not from 16384 to 262144");
	refused(HDR "size 100000\nchunks 2\nchunk 0 0 " H0 "\nchunk 0 100000 " H1 "\n",
		"not from 1 to 262144");
	refused(HDR "size 1\nchunks 1\nchunk 0 0 " H0 "\n", "not from 1 to 262144");
	refused(HDR "size 100000\nchunks 2\nchunk 0 70000 " H0 "\nchunk 70000 30001 " H1 "\n",
		"ends past the image");
	refused(HDR "size 100001\nchunks 2\nchunk 0 70000 " H0 "\nchunk 70000 30000 " H1 "\n",
		"the chunks end at 100000, the image at 100001");
	refused(HDR "size 18446744073709551615\nchunks 1\nchunk 18446744073709551615 1 " H0 "\n",
		"gap before");

	/* hashes */
	refused(HDR "size 1\nchunks 1\nchunk 0 1 " "9F86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
		"\n", "bad chunk");
	refused(HDR "size 1\nchunks 1\nchunk 0 1 " "gf86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
		"\n", "bad chunk");
	refused(HDR "size 100000\nchunks 2\nchunk 0 70000 "
		"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a0"
		"\nchunk 70000 30000 " H1 "\n", "line 5: bad chunk");
	refused(HDR "size 1\nchunks 1\nchunk 0 1 " H0 "0\n", "bad chunk");
	refused(HDR "size 1\nchunks 1\nchunk 0 1 " H0, "too short");
	refused(HDR "size 1\nchunks 1\nchunk 0 1 " H0 "\r\n", "bad chunk");
	refused(HDR "size 1\nchunks 1\nchunk 0  1 " H0 "\n", "bad chunk");
	refused(HDR "size 1\nchunks 1\nchunk\t0 1 " H0 "\n", "bad chunk");

	/* trailing garbage */
	refused(GOOD "x", "line 7: trailing bytes");
	refused(GOOD "\n", "trailing bytes");
	refused(GOOD "chunk 100000 1 " H0 "\n", "trailing bytes");

	/* a NUL inside */
	snprintf(big, sizeof(big), "%s", HDR "size 0\nchunks 0\n");
	{
		struct cindex ci;
		size_t l = strlen(big);

		CHECK_EQ_INT(parse_n(big, l + 1, &ci), -EINVAL);
		big[5] = '\0';
		CHECK_EQ_INT(parse_n(big, l, &ci), -EINVAL);
	}
}

/* A file of len bytes: splitmix-like bytes with a run of zeros. */
static int image_file(char *path, size_t len)
{
	uint64_t s = 99;
	uint8_t *d = malloc(len);
	size_t i;
	int fd;

	if (!d)
		abort();
	for (i = 0; i < len; i++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		d[i] = (uint8_t)(s >> 56);
	}
	if (len > 800000)
		memset(d + 500000, 0, 300000);
	fd = mkstemp(path);
	if (fd < 0 || write_all(fd, d, len) < 0 || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	free(d);
	return fd;
}

static void test_build(void)
{
	static const size_t sizes[] = { 0, 1, CDC_MIN - 1, CDC_MIN, 3u << 20, (3u << 20) + 17 };
	size_t t;

	for (t = 0; t < sizeof(sizes) / sizeof(sizes[0]); t++) {
		char path[] = "/tmp/test_cindex.XXXXXX";
		int fd = image_file(path, sizes[t]);
		struct cindex ci, back;
		uint8_t *d = malloc(sizes[t] + 1), md[32];
		char *text, *text2;
		size_t cap;
		ssize_t n, n2;
		uint32_t i;
		int bad = 0;

		if (!d || pread_full(fd, d, sizes[t], 0) != (ssize_t)sizes[t])
			abort();
		CHECK_EQ_INT(cindex_build(fd, &ci, err, sizeof(err)), 0);
		CHECK_EQ_INT(ci.size, sizes[t]);
		CHECK_EQ_STR(ci.chunker, CDC_NAME);
		CHECK_EQ_INT(ci.n == 0, sizes[t] == 0);
		for (i = 0; i < ci.n; i++) {
			sha256(d + ci.chunk[i].off, ci.chunk[i].len, md);
			if (memcmp(md, ci.chunk[i].sha256, 32))
				bad++;
		}
		CHECK_EQ_INT(bad, 0);
		/* the run of 300000 zeros: one CDC_MAX chunk at least */
		if (sizes[t] > 800000) {
			for (i = 0, bad = 1; i < ci.n; i++)
				if (ci.chunk[i].len == CDC_MAX)
					bad = 0;
			CHECK_EQ_INT(bad, 0);
		}
		cap = cindex_text_max(ci.n) + 1;
		text = malloc(cap);
		text2 = malloc(cap);
		if (!text || !text2)
			abort();
		n = cindex_format(&ci, text, cap);
		CHECK(n > 0);
		CHECK_EQ_INT(parse_n(text, (size_t)n, &back), 0);
		CHECK_EQ_INT(back.n, ci.n);
		CHECK_EQ_INT(back.size, ci.size);
		for (i = 0, bad = 0; i < ci.n && i < back.n; i++)
			if (back.chunk[i].off != ci.chunk[i].off || back.chunk[i].len != ci.chunk[i].len ||
			    memcmp(back.chunk[i].sha256, ci.chunk[i].sha256, 32))
				bad++;
		CHECK_EQ_INT(bad, 0);
		n2 = cindex_format(&back, text2, cap);
		CHECK(n2 == n && !memcmp(text, text2, (size_t)n));
		/* the same image read again: the same text */
		cindex_free(&back);
		CHECK_EQ_INT(lseek(fd, 0, SEEK_SET), 0);
		CHECK_EQ_INT(cindex_build(fd, &back, err, sizeof(err)), 0);
		n2 = cindex_format(&back, text2, cap);
		CHECK(n2 == n && !memcmp(text, text2, (size_t)n));
		cindex_free(&back);
		cindex_free(&ci);
		free(text);
		free(text2);
		free(d);
		close(fd);
		unlink(path);
	}
}

/* An image that starts with a squashfs superblock gets its compressor's
 * marker (cdc.h): its superblock is a chunk alone, and zeros with zstd's
 * marker ending at 20000, 60000 and 100000 bytes cut there under zstd,
 * and nowhere but every CDC_MAX under gzip or xz; no superblock chunk and
 * no marker under lzo, or without the superblock's magic. */
static void test_build_squashfs(void)
{
	static const struct {
		int comp;
		const char *magic, *name;
		uint32_t first, second;
	} t[] = {
		{ 6, "hsqs", "gear-fastcdc-sqfs-zstd", CDC_SQFS_SUPER, 20000 - CDC_SQFS_SUPER },
		{ 1, "hsqs", "gear-fastcdc-sqfs-zlib", CDC_SQFS_SUPER, CDC_MAX },
		{ 4, "hsqs", "gear-fastcdc-sqfs-xz", CDC_SQFS_SUPER, CDC_MAX },
		{ 3, "hsqs", "gear-fastcdc", CDC_MAX, CDC_MAX },
		{ 6, "hsqt", "gear-fastcdc", CDC_MAX, CDC_MAX },
	};
	size_t len = 1u << 20, k;
	uint8_t *d = calloc(1, len);

	if (!d)
		abort();
	for (k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		char path[] = "/tmp/test_cindex.XXXXXX";
		struct cindex ci;
		int fd = mkstemp(path);

		memset(d, 0, len);
		memcpy(d, t[k].magic, 4);
		d[20] = (uint8_t)t[k].comp;
		memcpy(d + 20000 - 4, "\x28\xb5\x2f\xfd", 4);
		memcpy(d + 60000 - 4, "\x28\xb5\x2f\xfd", 4);
		memcpy(d + 100000 - 4, "\x28\xb5\x2f\xfd", 4);
		if (fd < 0 || write_all(fd, d, len) < 0 || lseek(fd, 0, SEEK_SET) != 0)
			abort();
		CHECK_EQ_INT(cindex_build(fd, &ci, err, sizeof(err)), 0);
		CHECK_EQ_STR(ci.chunker, t[k].name);
		CHECK(ci.n > 3);
		if (ci.n > 3) {
			CHECK_EQ_INT(ci.chunk[0].len, t[k].first);
			CHECK_EQ_INT(ci.chunk[1].len, t[k].second);
			if (t[k].second < 20000) {
				CHECK_EQ_INT(ci.chunk[2].len, 40000);
				CHECK_EQ_INT(ci.chunk[3].len, 40000);
			}
		}
		cindex_free(&ci);
		close(fd);
		unlink(path);
	}
	free(d);
}

static void test_load(void)
{
	char path[] = "/tmp/test_cindex.XXXXXX";
	struct cindex ci;
	int fd = mkstemp(path);

	if (fd < 0 || write_all(fd, GOOD, strlen(GOOD)) < 0)
		abort();
	close(fd);
	CHECK_EQ_INT(cindex_load(path, &ci, err, sizeof(err)), 0);
	CHECK_EQ_INT(ci.n, 2);
	cindex_free(&ci);
	CHECK_EQ_INT(truncate(path, (off_t)strlen(GOOD) - 1), 0);
	CHECK_EQ_INT(cindex_load(path, &ci, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, path) != NULL && strstr(err, "bad chunk") != NULL);
	unlink(path);
	CHECK_EQ_INT(cindex_load(path, &ci, err, sizeof(err)), -ENOENT);
	CHECK_EQ_INT(cindex_load("/tmp", &ci, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "not a regular file") != NULL);
}

int main(void)
{
	RUN(test_good);
	RUN(test_refused);
	RUN(test_build);
	RUN(test_build_squashfs);
	RUN(test_load);
	return TAP_DONE();
}
