// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Boot profiles: profile_parse() (every refusal), format/parse round trip,
 * profile_load(), profile_write(), the image identity and matching,
 * profile_merge(), the copy order a profile gives (bgread/sched.h) and the
 * page cache sampler on
 * a real file. Every input is parsed from a heap block of exactly its
 * length (no terminating NUL), so ASan reports any read past len.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <openssl/sha.h>

#include "tap.h"
#include "exact.h"
#include "lib/base.h"
#include "lib/fdio.h"
#include "bgread/sched.h"
#include "profile/profile.h"

#define HEX  "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
#define HEXU "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"
#define HEX2 "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
/* 100 pages and 100 bytes */
#define HDR  "ramboot-profile 1\nimage-size 409700\nimage-ends-sha256 " HEX "\npage-size 4096\n"
#define PG 4096u
#define TMPFS_MAGIC_ 0x01021994

static char err[256];

static int skip(const char *name, const char *why)
{
	tap_n++;
	printf("ok %d - %s # SKIP %s\n", tap_n, name, why);
	return 0;
}

EXACT_PARSE(profile_parse, struct profile, 0x5a)

/* A refusal says why, names the line, and leaves the profile empty. */
static void check_refused_at(const char *s, const char *why)
{
	struct profile p;
	int rc = parse(s, &p);

	if (rc != -EINVAL || !strstr(err, why))
		printf("#   rc %d, err \"%s\", expected \"%s\" for \"%s\"\n", rc, err, why, s);
	CHECK_EQ_INT(rc, -EINVAL);
	CHECK(strstr(err, why) != NULL);
	CHECK(p.n == 0 && p.r == NULL);
	profile_free(&p);
}

static void test_parse_good(void)
{
	struct profile p;

	CHECK_EQ_INT(parse(HDR "range 8192 4096\nrange 0 8192\nrange 405504 4196\n", &p), 0);
	CHECK_EQ_INT(p.id.size, 409700);
	CHECK_EQ_INT(p.page_size, 4096);
	CHECK_EQ_STR(p.id.ends_sha256, HEX);
	CHECK_EQ_STR(p.id.sha256, "");
	CHECK_EQ_INT(p.n, 3);
	/* first-touch order, as written, not sorted nor joined */
	CHECK_EQ_INT(p.r[0].off, 8192);
	CHECK_EQ_INT(p.r[0].len, 4096);
	CHECK_EQ_INT(p.r[1].off, 0);
	CHECK_EQ_INT(p.r[1].len, 8192);
	CHECK_EQ_INT(p.r[2].off, 405504);
	CHECK_EQ_INT(p.r[2].len, 4196);   /* the partial last page */
	CHECK_EQ_INT(profile_bytes(&p), 16484);
	profile_free(&p);
}

static void test_parse_variants(void)
{
	struct profile p;

	/* comments, blank lines, tabs, CRLF, any header order, upper case hex,
	 * both hashes, no newline at the end */
	CHECK_EQ_INT(parse("# recorded on a client\n\n  ramboot-profile\t1\r\n"
			   "page-size 65536\r\n# c\nimage-sha256 " HEXU "\n"
			   "image-ends-sha256\t" HEX2 "  \nimage-size 131072\n"
			   "\trange 65536 65536 \n range 0 65536", &p), 0);
	CHECK_EQ_STR(p.id.sha256, HEX);
	CHECK_EQ_STR(p.id.ends_sha256, HEX2);
	CHECK_EQ_INT(p.page_size, 65536);
	CHECK_EQ_INT(p.n, 2);
	profile_free(&p);
	/* no ranges; image-sha256 alone; size 0 */
	CHECK_EQ_INT(parse("ramboot-profile 1\nimage-size 0\nimage-sha256 " HEX "\npage-size 512\n",
			   &p), 0);
	CHECK_EQ_INT(p.n, 0);
	CHECK_EQ_INT(p.id.size, 0);
	profile_free(&p);
	/* the largest numbers */
	CHECK_EQ_INT(parse("ramboot-profile 1\nimage-size 18446744073709551615\nimage-sha256 " HEX
			   "\npage-size 1048576\nrange 18446744073708503040 1048575\n", &p), 0);
	CHECK(p.r[0].off + p.r[0].len == UINT64_MAX);
	profile_free(&p);
	/* a range of a page smaller than the file's last */
	CHECK_EQ_INT(parse(HDR "range 409600 100\n", &p), 0);
	profile_free(&p);
}

static void test_parse_refusals(void)
{
	char longline[400];

	check_refused_at("", "line 0: empty profile");
	check_refused_at("# only\n\n", "line 2: empty profile");
	check_refused_at("ramboot-manifest 1\n", "line 1: not a ramboot profile");
	check_refused_at("ramboot-profile 2\n", "line 1: unsupported profile version");
	check_refused_at("ramboot-profile\n", "line 1: unsupported profile version");
	check_refused_at("ramboot-profile 1 x\n", "line 1: unsupported profile version");
	check_refused_at("ramboot-profile 01\n", "unsupported profile version");
	{
		/* a NUL inside the length (strlen would stop there) */
		static const char nul[] = HDR "range 0 4\0096\n";
		struct profile p;

		CHECK_EQ_INT(parse_n(nul, sizeof(nul) - 1, &p), -EINVAL);
		CHECK(strstr(err, "line 5: NUL byte") != NULL);
	}
	memset(longline, ' ', sizeof(longline));
	memcpy(longline, "ramboot-profile 1\n#", 19);
	longline[18 + 256] = '\n';
	longline[18 + 257] = '\0';
	check_refused_at(longline, "line 2: line too long");
	longline[18 + 255] = '\n';   /* 255 bytes: fine */
	{
		struct profile p;

		CHECK_EQ_INT(parse(longline, &p), -EINVAL);
		CHECK(strstr(err, "no image-size") != NULL);
	}

	/* header keys */
	check_refused_at(HDR "image-size 409700\n", "line 5: image-size given twice");
	check_refused_at("ramboot-profile 1\nimage-size 1\nimage-size 1\n", "line 3: image-size given twice");
	check_refused_at(HDR "page-size 4096\n", "line 5: page-size given twice");
	check_refused_at(HDR "image-ends-sha256 " HEX "\n", "line 5: image-ends-sha256 given twice");
	check_refused_at("ramboot-profile 1\nimage-sha256 " HEX "\nimage-sha256 " HEX "\n",
			 "line 3: image-sha256 given twice");
	check_refused_at("ramboot-profile 1\nimage-size\n", "line 2: bad image-size");
	check_refused_at("ramboot-profile 1\nimage-size 1 2\n", "line 2: bad image-size");
	check_refused_at("ramboot-profile 1\nimage-size -1\n", "bad image-size");
	check_refused_at("ramboot-profile 1\nimage-size +1\n", "bad image-size");
	check_refused_at("ramboot-profile 1\nimage-size 01\n", "bad image-size");
	check_refused_at("ramboot-profile 1\nimage-size 1k\n", "bad image-size");
	check_refused_at("ramboot-profile 1\nimage-size 0x10\n", "bad image-size");
	check_refused_at("ramboot-profile 1\nimage-size 18446744073709551616\n", "bad image-size");
	check_refused_at("ramboot-profile 1\nimage-size 99999999999999999999\n", "bad image-size");
	check_refused_at("ramboot-profile 1\npage-size 4095\n", "line 2: bad page-size");
	check_refused_at("ramboot-profile 1\npage-size 256\n", "bad page-size");
	check_refused_at("ramboot-profile 1\npage-size 2097152\n", "bad page-size");
	check_refused_at("ramboot-profile 1\npage-size 0\n", "bad page-size");
	check_refused_at("ramboot-profile 1\npage-size 4294971392\n", "bad page-size");
	check_refused_at("ramboot-profile 1\nimage-sha256 " HEX "0\n", "line 2: bad image-sha256");
	check_refused_at("ramboot-profile 1\nimage-sha256 9f86\n", "bad image-sha256");
	check_refused_at("ramboot-profile 1\nimage-sha256 unknown\n", "bad image-sha256");
	check_refused_at("ramboot-profile 1\nimage-ends-sha256 g" HEX "\n", "bad image-ends-sha256");
	check_refused_at("ramboot-profile 1\nimage-ends-sha256 " HEX " x\n", "bad image-ends-sha256");
	check_refused_at("ramboot-profile 1\nimage-sha256\n", "bad image-sha256");
	check_refused_at(HDR "signature abc\n", "line 5: unknown key");
	check_refused_at("ramboot-profile 1\nsize 4096\n", "line 2: unknown key");

	/* what must be there */
	check_refused_at("ramboot-profile 1\npage-size 4096\nimage-sha256 " HEX "\n", "no image-size");
	check_refused_at("ramboot-profile 1\nimage-size 4096\nimage-sha256 " HEX "\n", "no page-size");
	check_refused_at("ramboot-profile 1\nimage-size 4096\npage-size 4096\n",
			 "no image-sha256 or image-ends-sha256");
	check_refused_at("ramboot-profile 1\nimage-size 4096\npage-size 4096\nrange 0 4096\n",
			 "no image-sha256 or image-ends-sha256");
	check_refused_at("ramboot-profile 1\npage-size 4096\nrange 0 4096\n",
			 "line 3: range before image-size");
	check_refused_at("ramboot-profile 1\nimage-size 8192\nrange 0 4096\n",
			 "line 3: range before page-size");
	check_refused_at(HDR "range 0 4096\nimage-sha256 " HEX "\n", "line 6: header key after the ranges");

	/* ranges */
	check_refused_at(HDR "range 0\n", "line 5: bad range");
	check_refused_at(HDR "range 0 4096 1\n", "line 5: bad range");
	check_refused_at(HDR "range\n", "bad range");
	check_refused_at(HDR "range 0 -4096\n", "bad range");
	check_refused_at(HDR "range 00 4096\n", "bad range");
	check_refused_at(HDR "range 0 4096x\n", "bad range");
	check_refused_at(HDR "range 4096 0\n", "line 5: empty range");
	check_refused_at(HDR "range 100 4096\n", "line 5: range offset not a multiple of page-size");
	check_refused_at(HDR "range 0 4095\n", "line 5: range length not a multiple of page-size");
	check_refused_at(HDR "range 405504 4095\n", "range length not a multiple of page-size");
	check_refused_at(HDR "range 405504 8192\n", "line 5: range beyond image-size");
	check_refused_at(HDR "range 409600 4096\n", "range beyond image-size");
	check_refused_at(HDR "range 413696 4096\n", "range beyond image-size");
	check_refused_at(HDR "range 4096 18446744073709547520\n", "range beyond image-size");
	check_refused_at("ramboot-profile 1\nimage-size 18446744073709551615\nimage-sha256 " HEX
			 "\npage-size 4096\nrange 18446744073709547520 8192\n", "range beyond image-size");

	/* overlaps, in any order; adjacent is fine */
	check_refused_at(HDR "range 0 8192\nrange 4096 4096\n",
			 "line 6: range overlaps the range on line 5");
	check_refused_at(HDR "range 40960 4096\nrange 0 8192\nrange 12288 4096\nrange 0 4096\n",
			 "line 8: range overlaps the range on line 6");
	check_refused_at(HDR "range 8192 4096\n# gap\nrange 0 409700\n",
			 "line 7: range overlaps the range on line 5");
	check_refused_at(HDR "range 4096 4096\nrange 4096 4096\n",
			 "line 6: range overlaps the range on line 5");
	{
		struct profile p;

		CHECK_EQ_INT(parse(HDR "range 4096 4096\nrange 0 4096\nrange 8192 4096\n", &p), 0);
		profile_free(&p);
	}

	/* too large: refused before a byte is read */
	{
		struct profile p;
		char one = 'r';

		CHECK_EQ_INT(profile_parse(&one, (size_t)PROFILE_MAX + 1, &p, err, sizeof(err)),
			     -EINVAL);
		CHECK(strstr(err, "too large") != NULL);
	}
}

/* Every prefix of a good profile parses without reading past its end. */
static void test_parse_prefixes(void)
{
	static const char good[] = HDR "range 8192 4096\nrange 0 8192\n";
	size_t i;

	for (i = 0; i <= sizeof(good) - 1; i++) {
		struct profile p;
		int rc = parse_n(good, i, &p);

		CHECK(rc == 0 || rc == -EINVAL);
		CHECK(rc == 0 || err[0]);
		profile_free(&p);
	}
}

static bool same(const struct profile *a, const struct profile *b)
{
	size_t i;

	if (a->id.size != b->id.size || a->page_size != b->page_size || a->n != b->n ||
	    strcmp(a->id.sha256, b->id.sha256) || strcmp(a->id.ends_sha256, b->id.ends_sha256))
		return false;
	for (i = 0; i < a->n; i++)
		if (a->r[i].off != b->r[i].off || a->r[i].len != b->r[i].len)
			return false;
	return true;
}

static void test_format_roundtrip(void)
{
	static const char text[] = "ramboot-profile 1\nimage-size 409700\nimage-sha256 " HEX
				   "\nimage-ends-sha256 " HEX2 "\npage-size 4096\n"
				   "range 405504 4196\nrange 8192 4096\nrange 0 8192\n";
	struct profile p, back;
	size_t len;
	char *out;

	CHECK_EQ_INT(parse(text, &p), 0);
	CHECK_EQ_INT(profile_format(&p, &out, &len, err, sizeof(err)), 0);
	/* canonical text: byte for byte what was read */
	CHECK_EQ_INT(len, sizeof(text) - 1);
	CHECK(out && !memcmp(out, text, len));
	CHECK_EQ_INT(parse_n(out, len, &back), 0);
	CHECK(same(&p, &back));
	free(out);
	profile_free(&back);

	/* profile_format refuses what the parser would refuse */
	p.r[1].off = 4096;   /* now overlaps range 3 */
	CHECK_EQ_INT(profile_format(&p, &out, &len, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "range 3 overlaps range 2") != NULL);
	CHECK(out == NULL);
	p.r[1].off = 8192 + 1;
	CHECK_EQ_INT(profile_format(&p, &out, &len, err, sizeof(err)), -EINVAL);
	p.r[1].off = 8192;
	p.page_size = 3000;
	CHECK_EQ_INT(profile_format(&p, &out, &len, err, sizeof(err)), -EINVAL);
	p.page_size = 4096;
	p.id.sha256[0] = '\0';
	p.id.ends_sha256[0] = '\0';
	CHECK_EQ_INT(profile_format(&p, &out, &len, err, sizeof(err)), -EINVAL);
	memcpy(p.id.sha256, HEXU, 65);   /* upper case is not canonical */
	CHECK_EQ_INT(profile_format(&p, &out, &len, err, sizeof(err)), -EINVAL);
	profile_free(&p);

	/* profile_add joins a range that starts where the last one ends */
	profile_init(&p);
	CHECK_EQ_INT(profile_add(&p, 4096, 4096), 0);
	CHECK_EQ_INT(profile_add(&p, 8192, 4096), 0);
	CHECK_EQ_INT(profile_add(&p, 0, 4096), 0);
	CHECK_EQ_INT(profile_add(&p, 100, 0), 0);
	CHECK_EQ_INT(p.n, 2);
	CHECK_EQ_INT(p.r[0].len, 8192);
	profile_free(&p);
}

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
	static char path[128];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

static void write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write_all(fd, buf, len) < 0 || close(fd) < 0)
		abort();
}

static void test_load_and_write(void)
{
	static const char text[] = HDR "range 8192 4096\n";
	struct profile p, back;
	char big[64];

	write_file(tmp_path("good"), text, sizeof(text) - 1);
	CHECK_EQ_INT(profile_load(tmp_path("good"), &p, err, sizeof(err)), 0);
	CHECK_EQ_INT(p.n, 1);
	/* written, read back the same */
	CHECK_EQ_INT(profile_write(&p, tmp_path("out"), err, sizeof(err)), 0);
	CHECK_EQ_INT(profile_load(tmp_path("out"), &back, err, sizeof(err)), 0);
	CHECK(same(&p, &back));
	profile_free(&back);
	/* replaced atomically; a symbolic link there is refused */
	CHECK_EQ_INT(profile_write(&p, tmp_path("out"), err, sizeof(err)), 0);
	CHECK_EQ_INT(symlink("good", tmp_path("link")), 0);
	CHECK_EQ_INT(profile_write(&p, tmp_path("link"), err, sizeof(err)), -ELOOP);
	profile_free(&p);

	CHECK_EQ_INT(profile_load(tmp_path("missing"), &p, err, sizeof(err)), -ENOENT);
	CHECK(err[0]);
	CHECK_EQ_INT(profile_load(tmpdir, &p, err, sizeof(err)), -EISDIR);
	CHECK_EQ_INT(mkfifo(tmp_path("fifo"), 0600), 0);
	CHECK_EQ_INT(profile_load(tmp_path("fifo"), &p, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "not a regular file") != NULL);
	/* one byte more than PROFILE_MAX, sparse */
	{
		int fd = open(tmp_path("big"), O_WRONLY | O_CREAT | O_TRUNC, 0644);

		CHECK(fd >= 0 && ftruncate(fd, (off_t)PROFILE_MAX + 1) == 0);
		close(fd);
	}
	CHECK_EQ_INT(profile_load(tmp_path("big"), &p, err, sizeof(err)), -EFBIG);
	/* a bad profile: the parser's message */
	snprintf(big, sizeof(big), "ramboot-profile 1\nbogus 1\n");
	write_file(tmp_path("bad"), big, strlen(big));
	CHECK_EQ_INT(profile_load(tmp_path("bad"), &p, err, sizeof(err)), -EINVAL);
	CHECK_EQ_STR(err, "line 2: unknown key");
}

static void sha_hex(const unsigned char *buf, size_t len, char out[65])
{
	unsigned char md[32];
	int i;

	SHA256(buf, len, md);
	for (i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static void test_image_id(void)
{
	static const size_t sizes[] = { 0, 1, 100, 1u << 20, (1u << 20) + 1, 2u << 20,
					(2u << 20) + 1, 3u << 20 };
	unsigned char *data = malloc(3u << 20), *both = malloc(2u << 20);
	size_t i;

	if (!data || !both)
		abort();
	for (i = 0; i < (3u << 20); i++)
		data[i] = (unsigned char)(i * 2654435761u >> 13);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct profile_id id;
		size_t sz = sizes[i], head = sz < (1u << 20) ? sz : (1u << 20);
		size_t toff = sz - head < (1u << 20) ? head : sz - (1u << 20);
		char want[65];
		int fd;

		memcpy(both, data, head);
		memcpy(both + head, data + toff, sz - toff);
		sha_hex(both, head + (sz - toff), want);
		/* an image of sz bytes: the start of data */
		write_file(tmp_path("img"), data, sz);
		fd = open(tmp_path("img"), O_RDONLY);
		CHECK_EQ_INT(profile_image_id(fd, sz, &id), 0);
		CHECK_EQ_INT(id.size, sz);
		CHECK_EQ_STR(id.ends_sha256, want);
		CHECK_EQ_STR(id.sha256, "");
		/* a file shorter than the size given */
		CHECK_EQ_INT(profile_image_id(fd, sz + 1, &id), -EIO);
		close(fd);
	}
	free(data);
	free(both);
}

static void test_matches(void)
{
	struct profile p;
	struct profile_id id;

	CHECK_EQ_INT(parse("ramboot-profile 1\nimage-size 4096\nimage-sha256 " HEX
			   "\nimage-ends-sha256 " HEX2 "\npage-size 4096\n", &p), 0);
	memset(&id, 0, sizeof(id));
	id.size = 4096;
	CHECK(!profile_matches(&p, &id));            /* nothing to compare */
	memcpy(id.ends_sha256, HEX2, 65);
	CHECK(profile_matches(&p, &id));             /* ends only */
	memcpy(id.sha256, HEX, 65);
	CHECK(profile_matches(&p, &id));             /* both */
	id.size = 8192;
	CHECK(!profile_matches(&p, &id));            /* size */
	id.size = 4096;
	memcpy(id.sha256, HEX2, 65);
	CHECK(!profile_matches(&p, &id));            /* whole hash differs */
	id.sha256[0] = '\0';
	memcpy(id.ends_sha256, HEX, 65);
	CHECK(!profile_matches(&p, &id));            /* ends hash differs */
	p.id.ends_sha256[0] = '\0';
	memcpy(id.sha256, HEX, 65);
	CHECK(profile_matches(&p, &id));             /* whole hash only */
	id.sha256[0] = '\0';
	CHECK(!profile_matches(&p, &id));            /* sha vs ends: no common hash */
	profile_free(&p);
}

/* A profile of an image of size bytes with the ranges given as
 * (offset, length) pairs in pages of pg, the ends hash HEX. */
static void mk(struct profile *p, uint64_t size, uint32_t pg, const uint64_t *pairs, size_t n)
{
	size_t i;

	profile_init(p);
	p->id.size = size;
	p->page_size = pg;
	memcpy(p->id.ends_sha256, HEX, 65);
	for (i = 0; i < n; i++)
		if (profile_add(p, pairs[2 * i], pairs[2 * i + 1]) < 0)
			abort();
}

static bool ranges_are(const struct profile *p, const uint64_t *pairs, size_t n)
{
	size_t i;
	bool ok = p->n == n;

	for (i = 0; ok && i < n; i++)
		ok = p->r[i].off == pairs[2 * i] && p->r[i].len == pairs[2 * i + 1];
	if (!ok) {
		printf("#   got %zu ranges:", p->n);
		for (i = 0; i < p->n; i++)
			printf(" %llu+%llu", (unsigned long long)p->r[i].off,
			       (unsigned long long)p->r[i].len);
		printf("\n");
	}
	return ok;
}

#define K 1024ULL
#define M (1024ULL * 1024)

static void test_merge_order(void)
{
	/* A: 0 (rank 0), 1M (rank 1/2); B: 2M (0), 3M (1/3), 1M (2/3) */
	static const uint64_t a[] = { 0, 64 * K, M, 64 * K };
	static const uint64_t b[] = { 2 * M, 64 * K, 3 * M, 64 * K, M, 64 * K };
	static const uint64_t want[] = { 0, 64 * K, 2 * M, 64 * K, 3 * M, 64 * K, M, 64 * K };
	struct profile pa, pb, out, out2;
	const struct profile *in[3];

	mk(&pa, 4 * M, 4096, a, 2);
	mk(&pb, 4 * M, 4096, b, 3);
	in[0] = &pa;
	in[1] = &pb;
	CHECK_EQ_INT(profile_merge(in, 2, &out, err, sizeof(err)), 0);
	CHECK(ranges_are(&out, want, 4));
	CHECK_EQ_INT(out.page_size, 4096);
	CHECK_EQ_STR(out.id.ends_sha256, HEX);
	/* adding a profile already in makes no difference */
	in[2] = &pb;
	CHECK_EQ_INT(profile_merge(in, 3, &out2, err, sizeof(err)), 0);
	CHECK(same(&out, &out2));
	profile_free(&out2);
	profile_free(&out);

	/* one profile: itself, neighbours in order and on disk joined */
	{
		static const uint64_t c[] = { 8 * K, 4 * K, 12 * K, 4 * K, 0, 8 * K, 100 * K, 4 * K };
		static const uint64_t cw[] = { 8 * K, 8 * K, 0, 8 * K, 100 * K, 4 * K };
		struct profile pc;

		profile_init(&pc);
		pc.id.size = 4 * M;
		pc.page_size = 4096;
		memcpy(pc.id.ends_sha256, HEX, 65);
		/* raw ranges, not joined by profile_add */
		pc.r = malloc(4 * sizeof(*pc.r));
		memcpy(pc.r, c, sizeof(c));
		pc.n = pc.cap = 4;
		in[0] = &pc;
		CHECK_EQ_INT(profile_merge(in, 1, &out, err, sizeof(err)), 0);
		CHECK(ranges_are(&out, cw, 3));
		profile_free(&out);
		in[1] = &pc;
		CHECK_EQ_INT(profile_merge(in, 2, &out, err, sizeof(err)), 0);
		CHECK(ranges_are(&out, cw, 3));
		profile_free(&out);
		profile_free(&pc);
	}
	profile_free(&pa);
	profile_free(&pb);
}

static void test_merge_ranks_within_ranges(void)
{
	/* A reads 0..1M in one range; B reads 512K..1M first, then 2M. A
	 * byte's rank is its position in its profile over the profile's
	 * size, the earliest of the two: A's k-th 64 KiB piece and B's k-th
	 * both rank k/16 (A first on ties), and A's second half is B's
	 * first, claimed earlier by B. */
	static const uint64_t a[] = { 0, M };
	static const uint64_t b[] = { 512 * K, 512 * K, 2 * M, 512 * K };
	/* two clients reading the same amount: interleaved by position */
	static const uint64_t c[] = { 0, 128 * K };
	static const uint64_t d[] = { M, 128 * K };
	static const uint64_t want2[] = { 0, 64 * K, M, 64 * K, 64 * K, 64 * K, M + 64 * K, 64 * K };
	uint64_t want[2 * 17];
	struct profile pa, pb, out;
	const struct profile *in[2] = { &pa, &pb };
	int k;

	for (k = 0; k < 8; k++) {
		want[4 * k] = (uint64_t)k * 64 * K;
		want[4 * k + 1] = 64 * K;
		want[4 * k + 2] = 512 * K + (uint64_t)k * 64 * K;
		want[4 * k + 3] = 64 * K;
	}
	want[32] = 2 * M;
	want[33] = 512 * K;
	mk(&pa, 4 * M, 4096, a, 1);
	mk(&pb, 4 * M, 4096, b, 2);
	CHECK_EQ_INT(profile_merge(in, 2, &out, err, sizeof(err)), 0);
	CHECK(ranges_are(&out, want, 17));
	CHECK_EQ_INT(profile_bytes(&out), M + 512 * K);
	profile_free(&out);
	profile_free(&pa);
	profile_free(&pb);

	mk(&pa, 4 * M, 4096, c, 1);
	mk(&pb, 4 * M, 4096, d, 1);
	CHECK_EQ_INT(profile_merge(in, 2, &out, err, sizeof(err)), 0);
	CHECK(ranges_are(&out, want2, 4));
	profile_free(&out);
	profile_free(&pa);
	profile_free(&pb);
}

static void test_merge_overlap_union_pages(void)
{
	/* partial overlaps: the union, each byte once */
	static const uint64_t a[] = { 0, 128 * K };
	static const uint64_t b[] = { 64 * K, 128 * K };
	static const uint64_t want[] = { 0, 192 * K };
	/* page sizes: 4 KiB ranges widened to 64 KiB */
	static const uint64_t c[] = { 4 * K, 4 * K, 200 * K, 8 * K };
	static const uint64_t d[] = { 0, 64 * K };
	static const uint64_t want2[] = { 0, 64 * K, 192 * K, 64 * K };
	/* a last partial page */
	static const uint64_t e[] = { 8 * K, 10000 - 8 * K };
	static const uint64_t want3[] = { 0, 10000 };
	struct profile pa, pb, out;
	const struct profile *in[2];

	mk(&pa, 4 * M, 4096, a, 1);
	mk(&pb, 4 * M, 4096, b, 1);
	in[0] = &pa;
	in[1] = &pb;
	CHECK_EQ_INT(profile_merge(in, 2, &out, err, sizeof(err)), 0);
	CHECK(ranges_are(&out, want, 1));
	profile_free(&out);
	profile_free(&pa);
	profile_free(&pb);

	mk(&pa, 4 * M, 4096, c, 2);
	mk(&pb, 4 * M, 65536, d, 1);
	CHECK_EQ_INT(profile_merge(in, 2, &out, err, sizeof(err)), 0);
	CHECK(ranges_are(&out, want2, 2));
	CHECK_EQ_INT(out.page_size, 65536);
	profile_free(&out);
	profile_free(&pa);
	profile_free(&pb);

	mk(&pa, 10000, 4096, e, 1);
	mk(&pb, 10000, 65536, NULL, 0);
	CHECK_EQ_INT(profile_merge(in, 2, &out, err, sizeof(err)), 0);
	CHECK(ranges_are(&out, want3, 1));
	{
		char *text;
		size_t len;

		CHECK_EQ_INT(profile_format(&out, &text, &len, err, sizeof(err)), 0);
		free(text);
	}
	profile_free(&out);
	profile_free(&pa);
	profile_free(&pb);
}

static void test_merge_identity(void)
{
	struct profile pa, pb, out;
	const struct profile *in[2] = { &pa, &pb };

	mk(&pa, 4 * M, 4096, NULL, 0);
	mk(&pb, 8 * M, 4096, NULL, 0);
	CHECK_EQ_INT(profile_merge(in, 2, &out, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "profile 2 is of an image of 8388608 bytes") != NULL);
	CHECK(out.n == 0 && out.r == NULL);
	pb.id.size = 4 * M;
	memcpy(pb.id.ends_sha256, HEX2, 65);
	CHECK_EQ_INT(profile_merge(in, 2, &out, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "another image-ends-sha256") != NULL);
	/* A: sha + ends, B: ends: the merge keeps ends only */
	memcpy(pb.id.ends_sha256, HEX, 65);
	memcpy(pa.id.sha256, HEX2, 65);
	CHECK_EQ_INT(profile_merge(in, 2, &out, err, sizeof(err)), 0);
	CHECK_EQ_STR(out.id.sha256, "");
	CHECK_EQ_STR(out.id.ends_sha256, HEX);
	profile_free(&out);
	/* both sha: kept; differing: refused */
	memcpy(pb.id.sha256, HEX2, 65);
	CHECK_EQ_INT(profile_merge(in, 2, &out, err, sizeof(err)), 0);
	CHECK_EQ_STR(out.id.sha256, HEX2);
	profile_free(&out);
	memcpy(pb.id.sha256, HEX, 65);
	CHECK_EQ_INT(profile_merge(in, 2, &out, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "another image-sha256") != NULL);
	/* A: sha only, B: ends only: nothing in common */
	pa.id.ends_sha256[0] = '\0';
	pb.id.sha256[0] = '\0';
	CHECK_EQ_INT(profile_merge(in, 2, &out, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "no image hash in common") != NULL);
	CHECK_EQ_INT(profile_merge(in, 0, &out, err, sizeof(err)), -EINVAL);
	/* an invalid input */
	pb.id.sha256[0] = '\0';
	memcpy(pa.id.ends_sha256, HEX, 65);
	pa.page_size = 1000;
	CHECK_EQ_INT(profile_merge(in, 2, &out, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "profile 1: bad page-size") != NULL);
	profile_free(&pa);
	profile_free(&pb);
}

/* The copy order a profile gives (the background reader's scheduler,
 * its ranges as the profile list): each page exactly once, whatever the
 * profile (overlaps included) and max, the profile's first range first. */
static void test_copy_order_each_page_once(void)
{
	const uint64_t pages = 777, size = pages * PG - 1;
	uint32_t seed = 12345;
	unsigned char *seen = calloc(pages, 1);
	struct bgread_ranges r;
	struct bgread_sched q;
	struct profile p;
	uint64_t off, len, total, first;
	int round, i, list;
	size_t j;

	if (!seen)
		abort();
	for (round = 0; round < 20; round++) {
		profile_init(&p);
		p.id.size = size;
		p.page_size = PG;
		for (i = 0; i < 50; i++) {
			uint64_t a, l;

			seed = seed * 1103515245 + 12345;
			a = (seed >> 8) % pages;
			l = 1 + (seed >> 3) % 20;
			if (a + l > pages)
				l = pages - a;
			/* overlapping ranges are fine for the scheduler */
			if (profile_add(&p, a * PG, a + l == pages ? size - a * PG : l * PG) < 0)
				abort();
		}
		memset(&r, 0, sizeof(r));
		for (j = 0; j < p.n; j++)
			CHECK_EQ_INT(bgread_ranges_add(&r, p.r[j].off, p.r[j].len), 0);
		CHECK_EQ_INT(bgread_sched_init(&q, size, PG, 0), 0);
		CHECK_EQ_INT(bgread_sched_set(&q, BGREAD_LIST_PROFILE, &r), 0);
		first = p.r[0].off;
		profile_free(&p);
		memset(seen, 0, pages);
		total = 0;
		while (bgread_sched_next(&q, (uint64_t)(round + 1) * PG + 1, &off, &len, &list)) {
			uint64_t pg;

			if (total == 0) {
				CHECK(off == first);
				CHECK(list == BGREAD_LIST_PROFILE);
			}
			CHECK(off % PG == 0);
			CHECK(len <= (uint64_t)(round + 1) * PG);
			CHECK(off + len <= size);
			for (pg = off / PG; pg * PG < off + len; pg++) {
				CHECK(!seen[pg]);
				seen[pg] = 1;
			}
			total += len;
		}
		CHECK(bgread_sched_done(&q));
		CHECK(total == size);
		bgread_sched_free(&q);
	}
	free(seen);
}

/* ---- the sampler, on a real file ---- */

static bool on_tmpfs(const char *dir)
{
	struct statfs sf;

	return statfs(dir, &sf) == 0 && (unsigned long)sf.f_type == TMPFS_MAGIC_;
}

/* How many pages of fd are resident (the test's own check). */
static long resident(int fd, size_t size)
{
	size_t pages = (size + PG - 1) / PG, i;
	unsigned char *vec = malloc(pages);
	void *map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	long n = 0;

	if (!vec || map == MAP_FAILED || mincore(map, size, vec) < 0)
		n = -1;
	for (i = 0; n >= 0 && i < pages; i++)
		n += vec[i] & 1;
	if (map != MAP_FAILED)
		munmap(map, size);
	free(vec);
	return n;
}

static void read_pages(int fd, uint64_t first, uint64_t count)
{
	char buf[PG];
	uint64_t i;

	for (i = 0; i < count; i++)
		if (pread(fd, buf, PG, (off_t)((first + i) * PG)) < 0)
			abort();
}

static void test_sampler(void)
{
	const size_t size = 64 * PG + 100;
	char path[256], *data;
	struct profile_sampler s;
	struct profile p;
	uint64_t added;
	int fd;

	if (sysconf(_SC_PAGESIZE) != PG) {
		skip("test_sampler", "the page size is not 4 KiB");
		return;
	}
	/* A tmpfs file is all page cache, nothing to drop: a disk-backed
	 * directory is needed. */
	if (!on_tmpfs(tmpdir)) {
		snprintf(path, sizeof(path), "%s/sample", tmpdir);
	} else if (!on_tmpfs(".")) {
		snprintf(path, sizeof(path), "./test_profile.sample.%d", (int)getpid());
	} else {
		skip("test_sampler", "no directory outside tmpfs");
		return;
	}
	data = malloc(size);
	if (!data)
		abort();
	memset(data, 'x', size);
	write_file(path, data, size);
	free(data);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	/* Dirty pages are not dropped: written back first, then dropped. */
	CHECK_EQ_INT(fdatasync(fd), 0);
	CHECK_EQ_INT(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	if (resident(fd, size) != 0) {
		printf("#   %ld pages still resident after DONTNEED\n", resident(fd, size));
		close(fd);
		unlink(path);
		skip("test_sampler", "the page cache of the file could not be dropped");
		return;
	}
	/* no readahead around our reads: exactly the pages read */
	CHECK_EQ_INT(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM), 0);

	profile_init(&p);
	CHECK_EQ_INT(profile_sampler_init(&s, fd, size), 0);
	CHECK_EQ_INT(profile_sample(&s, &p, &added), 0);
	CHECK_EQ_INT(added, 0);
	CHECK_EQ_INT(p.n, 0);

	read_pages(fd, 10, 2);
	CHECK_EQ_INT(profile_sample(&s, &p, &added), 0);
	CHECK_EQ_INT(added, 2 * PG);

	/* one interval: pages in offset order, the last one partial */
	read_pages(fd, 64, 1);
	read_pages(fd, 3, 1);
	read_pages(fd, 5, 1);
	CHECK_EQ_INT(profile_sample(&s, &p, &added), 0);
	CHECK_EQ_INT(added, 2 * PG + 100);

	/* next to the last range: joined; a page seen before: not again,
	 * even once dropped and read anew */
	read_pages(fd, 10, 1);
	CHECK_EQ_INT(posix_fadvise(fd, 10 * PG, PG, POSIX_FADV_DONTNEED), 0);
	read_pages(fd, 10, 1);
	read_pages(fd, 12, 1);
	CHECK_EQ_INT(profile_sample(&s, &p, &added), 0);
	CHECK_EQ_INT(added, PG);
	CHECK_EQ_INT(profile_sample(&s, &p, &added), 0);
	CHECK_EQ_INT(added, 0);
	{
		/* 12 is not joined to 10..11: the last range was 64 */
		static const uint64_t want[] = { 10 * PG, 2 * PG, 3 * PG, PG, 5 * PG, PG,
						 64 * PG, 100, 12 * PG, PG };

		CHECK(ranges_are(&p, want, 5));
	}
	/* what it records is a valid profile */
	p.id.size = size;
	p.page_size = s.page;
	CHECK_EQ_INT(profile_image_id(fd, size, &p.id), 0);
	{
		char *text;
		size_t len;

		CHECK_EQ_INT(profile_format(&p, &text, &len, err, sizeof(err)), 0);
		free(text);
	}
	profile_sampler_free(&s);
	profile_free(&p);

	/* small windows: the same answer across window edges */
	CHECK_EQ_INT(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	profile_init(&p);
	CHECK_EQ_INT(profile_sampler_init(&s, fd, size), 0);
	s.window = 4 * PG;
	read_pages(fd, 3, 2);
	read_pages(fd, 7, 3);
	read_pages(fd, 64, 1);
	CHECK_EQ_INT(profile_sample(&s, &p, &added), 0);
	{
		static const uint64_t want[] = { 3 * PG, 2 * PG, 7 * PG, 3 * PG, 64 * PG, 100 };

		CHECK(ranges_are(&p, want, 3));
	}
	profile_sampler_free(&s);
	profile_free(&p);
	close(fd);
	unlink(path);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_profile.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_parse_good);
	RUN(test_parse_variants);
	RUN(test_parse_refusals);
	RUN(test_parse_prefixes);
	RUN(test_format_roundtrip);
	RUN(test_load_and_write);
	RUN(test_image_id);
	RUN(test_matches);
	RUN(test_merge_order);
	RUN(test_merge_ranks_within_ranges);
	RUN(test_merge_overlap_union_pages);
	RUN(test_merge_identity);
	RUN(test_copy_order_each_page_once);
	RUN(test_sampler);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tmpdir);
	}
	return TAP_DONE();
}
