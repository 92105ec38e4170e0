// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The squashfs table reader (format/sqfs.c, through profile/layout.c's
 * decoders) against real images made here by mksquashfs: each
 * compressor it offers, fragments, sparse files, hard links, a name of
 * 255 bytes, a directory of 3000 entries (an extended directory inode
 * with an index, its listing in many headers); with the metadata and
 * data stored uncompressed, the extents found hold the files' bytes.
 * Then hostile images: truncated, a table out of the image, a loop in
 * the tree, and thousands of corrupted copies (no crash, an error or a
 * result within the image). And the sort file and the spread of a
 * profile.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "lib/base.h"
#include "profile/profile.h"

static char dir[] = "/tmp/test_sqfs.XXXXXX";
static char err[512];

static const char *at(const char *name)
{
	static char p[4][600];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
	return p[i];
}

static int sh(const char *cmd)
{
	char c[2048];

	snprintf(c, sizeof(c), "cd %s && %s", dir, cmd);
	return system(c);
}

static void put(const char *name, size_t len, unsigned seed)
{
	FILE *f = fopen(at(name), "w");
	size_t i;

	if (!f)
		abort();
	for (i = 0; i < len; i++)
		fputc((int)((i * 2654435761u + seed) >> 13 & 0xff), f);
	if (fclose(f) != 0)
		abort();
}

/* The tree every image is made of. */
static void make_tree(void)
{
	char name[300];
	int i;

	if (sh("mkdir -p src/big src/d1/d2") != 0)
		abort();
	put("src/data", 300000, 1);            /* blocks and a tail */
	put("src/small", 5000, 2);             /* a fragment only */
	put("src/d1/d2/deep", 200000, 3);
	put("src/d1/linked", 20000, 4);
	if (link(at("src/d1/linked"), at("src/d1/d2/link2")) != 0)
		abort();
	memcpy(name, "src/d1/", 7);
	memset(name + 7, 'L', 255);
	name[7 + 255] = '\0';
	put(name, 9000, 5);
	for (i = 0; i < 3000; i++) {
		char p[64];

		snprintf(p, sizeof(p), "src/big/entry-%04d", i);
		put(p, (size_t)(i % 7) * 100, (unsigned)i);
	}
	if (sh("truncate -s 1M src/sparse && ln -s data src/sym") != 0)
		abort();
}

static int load(const char *img, struct sqfs *s)
{
	struct stat st;
	int fd = open(at(img), O_RDONLY), rc;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	rc = profile_sqfs_load(fd, (uint64_t)st.st_size, s, err, sizeof(err));
	close(fd);
	return rc;
}

static long find(const struct sqfs *s, const char *path)
{
	char p[SQFS_PATH_MAX + 1];
	size_t i;

	for (i = 0; i < s->nf; i++)
		if (sqfs_path(s, i, p, sizeof(p)) >= 0 && !strcmp(p, path))
			return (long)i;
	return -1;
}

/* tails: made with -always-use-fragments (the tail of a file larger
 * than a block in a fragment, not in a short last block). */
static void check_tree(const char *img, int tails)
{
	char p[SQFS_PATH_MAX + 1], lname[300];
	struct sqfs s;
	long i, n = 0;
	int rc = load(img, &s);

	CHECK_EQ_INT(rc, 0);
	if (rc) {
		printf("#   %s: %s\n", img, err);
		return;
	}
	/* 3000 + data small deep linked (once) long sparse */
	CHECK_EQ_INT(s.nf, 3006);
	for (i = 0; i < (long)s.nf; i++)
		if (sqfs_path(&s, (size_t)i, p, sizeof(p)) > 0 && !strncmp(p, "big/entry-", 10))
			n++;
	CHECK_EQ_INT(n, 3000);
	i = find(&s, "data");
	CHECK(i >= 0 && s.f[i].size == 300000 && s.f[i].data_len > 0 &&
	      s.f[i].blocks == (tails ? 2 : 3) && (s.f[i].frag_len > 0) == tails);
	i = find(&s, "small");
	CHECK(i >= 0 && s.f[i].data_len == 0 && s.f[i].frag_len > 0 && s.f[i].blocks == 0);
	i = find(&s, "d1/linked");
	CHECK(i >= 0 && s.f[i].links == 2);
	CHECK(find(&s, "d1/d2/link2") < 0);
	i = find(&s, "sparse");
	CHECK(i >= 0 && s.f[i].size == 1048576 && s.f[i].data_len == 0 && s.f[i].blocks == 8);
	memset(lname, 'L', 255);
	snprintf(lname + 255, sizeof(lname) - 255, "%s", "");
	snprintf(p, sizeof(p), "d1/%s", lname);
	CHECK(find(&s, p) >= 0);
	CHECK(find(&s, "d1/d2/deep") >= 0);
	CHECK(find(&s, "sym") < 0);
	CHECK_EQ_INT(s.narea >= 5, 1);
	CHECK_EQ_STR(s.area[0].name, "superblock");
	for (i = 0; i < (long)s.nf; i++)
		CHECK(s.f[i].data_off + s.f[i].data_len <= s.sb.bytes_used &&
		      s.f[i].frag_off + s.f[i].frag_len <= s.sb.bytes_used);
	sqfs_free(&s);
}

/* The images, one per compressor (made once). */
static void make_images(void)
{
	static const char *const comp[] = { "gzip", "xz", "zstd", "lzo", "lz4" };
	char cmd[1024];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(comp); i++) {
		snprintf(cmd, sizeof(cmd), "mksquashfs %s/src %s/img.%s -noappend -quiet -no-progress "
			 "-comp %s >/dev/null 2>&1", dir, dir, comp[i], comp[i]);
		if (system(cmd) != 0)
			abort();
	}
	snprintf(cmd, sizeof(cmd), "mksquashfs %s/src %s/img.raw -noappend -quiet -no-progress "
		 "-noI -noD -noF -noX -always-use-fragments >/dev/null 2>&1", dir, dir);
	if (system(cmd) != 0)
		abort();
}

static void test_gzip(void) { check_tree("img.gzip", 0); }
static void test_xz(void) { check_tree("img.xz", 0); }
static void test_zstd(void) { check_tree("img.zstd", 0); }
static void test_lzo(void) { check_tree("img.lzo", 0); }
static void test_uncompressed(void) { check_tree("img.raw", 1); }

static void test_lz4_refused(void)
{
	struct sqfs s;

	CHECK_EQ_INT(load("img.lz4", &s), -EPROTONOSUPPORT);
	CHECK_EQ_STR(err, "compressor lz4 is not supported");
}

static uint8_t *slurp(const char *name, size_t *len)
{
	struct stat st;
	uint8_t *b;
	int fd = open(at(name), O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0)
		abort();
	b = malloc((size_t)st.st_size);
	if (!b || read(fd, b, (size_t)st.st_size) != st.st_size)
		abort();
	close(fd);
	*len = (size_t)st.st_size;
	return b;
}

/* Uncompressed: the extents are the files' bytes. */
static void test_extents_hold_the_data(void)
{
	size_t len, slen;
	uint8_t *img = slurp("img.raw", &len), *src;
	struct sqfs s;
	long i;

	CHECK_EQ_INT(load("img.raw", &s), 0);
	i = find(&s, "data");
	src = slurp("src/data", &slen);
	CHECK(i >= 0 && s.f[i].data_len == 2 * 131072 &&
	      !memcmp(img + s.f[i].data_off, src, 2 * 131072));
	CHECK(i >= 0 && memmem(img + s.f[i].frag_off, s.f[i].frag_len, src + 262144,
			       slen - 262144));
	free(src);
	i = find(&s, "small");
	src = slurp("src/small", &slen);
	CHECK(i >= 0 && memmem(img + s.f[i].frag_off, s.f[i].frag_len, src, slen));
	free(src);
	free(img);
	sqfs_free(&s);
}

/* The hostile cases: an image in memory (struct sqfs_mem), nothing decoded. */
static int mem_decode(void *ctx, unsigned comp, const uint8_t *in, size_t inlen, uint8_t *out,
		      size_t cap, size_t *outlen)
{
	(void)ctx; (void)comp; (void)in; (void)inlen; (void)out; (void)cap; (void)outlen;
	return -EBADMSG;
}

static int mem_load(const uint8_t *b, size_t len, struct sqfs *s)
{
	struct sqfs_mem m = { b, len };
	struct sqfs_io io = { &m, sqfs_mem_read, mem_decode };

	return sqfs_read(s, len, &io, err, sizeof(err));
}

static void test_truncated(void)
{
	size_t len;
	uint8_t *img = slurp("img.raw", &len);
	struct sqfs s;

	CHECK_EQ_INT(mem_load(img, len, &s), 0);
	sqfs_free(&s);
	CHECK_EQ_INT(mem_load(img, len - 4096, &s), -EINVAL);
	CHECK(strstr(err, "truncated") != NULL);
	CHECK_EQ_INT(mem_load(img, 95, &s), -EINVAL);
	img[0] = 'x';
	CHECK_EQ_INT(mem_load(img, len, &s), -EINVAL);
	CHECK_EQ_STR(err, "not a squashfs image");
	free(img);
}

static void put_le64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void test_tables_out_of_image(void)
{
	size_t len;
	uint8_t *img = slurp("img.raw", &len);
	struct sqfs s;

	put_le64(img + 72, (uint64_t)len * 2);   /* directory table */
	CHECK_EQ_INT(mem_load(img, len, &s), -EINVAL);
	free(img);
	img = slurp("img.raw", &len);
	put_le64(img + 32, (uint64_t)1 << 40);   /* root inode in no block */
	CHECK_EQ_INT(mem_load(img, len, &s), -EINVAL);
	CHECK_EQ_STR(err, "the root inode is not a directory");
	free(img);
}

/* d's entry in the root's listing made to name the root itself. */
static void test_loop(void)
{
	static const uint8_t d1[] = { 1, 0, 0, 0, 'd' };   /* type dir, name size - 1 */
	size_t len;
	uint8_t *img = slurp("img.small", &len), *e;
	uint64_t dt = 0, root = 0;
	struct sqfs s;
	int i;

	for (i = 7; i >= 0; i--) {
		dt = dt << 8 | img[72 + i];
		root = root << 8 | img[32 + i];
	}
	e = memmem(img + dt, len - dt, d1, sizeof(d1));
	CHECK(e != NULL);
	if (!e)
		return;
	/* the header before it names the inode block; the entry's offset */
	e -= 4;
	e[0] = (uint8_t)(root & 0xff);
	e[1] = (uint8_t)(root >> 8 & 0xff);
	/* the header's block: the root's (the inode table is one block here
	 * only if the root is in block 0; else the case proves nothing) */
	if ((root >> 16) != 0) {
		printf("# skip: the root inode is not in the first block\n");
		free(img);
		return;
	}
	CHECK_EQ_INT(mem_load(img, len, &s), -ELOOP);
	CHECK(strstr(err, "reached twice") != NULL);
	free(img);
}

/* Corrupted copies: each byte of the tables, and random bytes, changed. */
static void test_corrupted(void)
{
	size_t len, i, ok = 0, bad = 0;
	uint8_t *img = slurp("img.small", &len), *c = malloc(len);
	unsigned r = 12345;
	struct sqfs s;

	if (!c)
		abort();
	for (i = 0; i < 20000; i++) {
		size_t k, n = 1 + i % 4;
		int rc;

		memcpy(c, img, len);
		for (k = 0; k < n; k++) {
			r = r * 1103515245 + 12345;
			c[(r >> 8) % len] ^= (uint8_t)(1 + (r >> 3) % 255);
		}
		rc = mem_load(c, len, &s);
		if (rc == 0) {
			for (k = 0; k < s.nf; k++)
				CHECK(s.f[k].data_off + s.f[k].data_len <= len &&
				      s.f[k].frag_off + s.f[k].frag_len <= len);
			ok++;
			sqfs_free(&s);
		} else {
			CHECK(rc < 0 && err[0]);
			bad++;
		}
	}
	printf("# %zu corrupted copies read, %zu refused\n", ok, bad);
	CHECK(bad > 0);
	free(c);
	free(img);
}

static void test_sortfile(void)
{
	struct profile_read r[4] = {
		{ 0, (char *)"a b\\c" }, { 1, (char *)"#x" }, { 2, (char *)"new\nline" },
		{ 3, (char *)"d/x#\t" },
	};
	char *text;
	size_t len, skipped;

	CHECK_EQ_INT(profile_sortfile(r, 4, &text, &len, &skipped), 0);
	CHECK_EQ_INT(skipped, 1);
	CHECK(len == strlen("a\\ b\\\\c 32767\n\\#x 32766\nd/x#\\\t 32765\n") &&
	      !memcmp(text, "a\\ b\\\\c 32767\n\\#x 32766\nd/x#\\\t 32765\n", len));
	free(text);
}

/* The files read, grouped: directories as first read ("usr/lib" by its
 * first file, before "usr/bin"), names within one by bytes; "usr" and
 * "usr/lib" and "usr/lib2" are three directories, the top one a fourth. */
static void test_group_dirs(void)
{
	static const char *in[] = {
		"usr/lib/z", "usr/bin/sh", "top", "usr/lib2/a", "usr/lib/a b", "usr/x",
		"usr/lib/a", "etc", "usr/bin/ash", "usr/lib/Z",
	};
	static const char *want[] = {
		"usr/lib/Z", "usr/lib/a", "usr/lib/a b", "usr/lib/z", "usr/bin/ash", "usr/bin/sh",
		"etc", "top", "usr/lib2/a", "usr/x",
	};
	struct profile_read r[10];
	size_t i;

	for (i = 0; i < 10; i++) {
		r[i].file = i;
		r[i].path = (char *)in[i];
	}
	CHECK_EQ_INT(profile_group_dirs(r, 10), 0);
	for (i = 0; i < 10; i++) {
		CHECK_EQ_STR(r[i].path, want[i]);
		/* each path keeps its file */
		CHECK(!strcmp(in[r[i].file], r[i].path));
	}
	CHECK_EQ_INT(profile_group_dirs(r, 1), 0);
	CHECK_EQ_INT(profile_group_dirs(NULL, 0), 0);
}

static void test_spread(void)
{
	struct profile p;
	struct profile_spread sp;

	profile_init(&p);
	profile_add(&p, 8192, 4096);
	profile_add(&p, 0, 4096);
	profile_add(&p, 4096, 4096);     /* touches both: one extent, read out of order */
	profile_add(&p, 65536, 4096);
	CHECK_EQ_INT(profile_spread(&p, &sp), 0);
	CHECK_EQ_INT(sp.extents, 2);
	CHECK_EQ_INT(sp.spread, 65536 + 4096);
	CHECK_EQ_INT(sp.seeks, 2);
	profile_free(&p);
}

/* Files met by ranges, in the order of the ranges: one byte inside
 * each file's data blocks. */
static void test_files_read(void)
{
	struct profile_read *r = NULL;
	struct profile p;
	struct sqfs s;
	size_t n = 0;
	long d, x;

	CHECK_EQ_INT(load("img.gzip", &s), 0);
	d = find(&s, "d1/d2/deep");
	x = find(&s, "data");
	CHECK(d >= 0 && x >= 0);
	if (d < 0 || x < 0)
		return;
	profile_init(&p);
	profile_add(&p, s.f[d].data_off + 1, 1);
	profile_add(&p, s.f[x].data_off + 1, 1);
	CHECK_EQ_INT(profile_files_read(&s, &p, &r, &n), 0);
	CHECK_EQ_INT(n, 2);
	if (n == 2) {
		CHECK_EQ_STR(r[0].path, "d1/d2/deep");
		CHECK_EQ_STR(r[1].path, "data");
	}
	profile_files_free(r, n);
	profile_free(&p);
	sqfs_free(&s);
}

int main(void)
{
	char cmd[600];

	if (!mkdtemp(dir))
		return 1;
	make_tree();
	make_images();
	snprintf(cmd, sizeof(cmd), "mkdir %s/s && echo x >%s/s/a && head -c 9000 /dev/zero >%s/s/b && "
		 "mkdir %s/s/d && echo y >%s/s/d/c && mksquashfs %s/s %s/img.small -noI -noD -noF "
		 "-noX -noappend -quiet -no-progress >/dev/null 2>&1",
		 dir, dir, dir, dir, dir, dir, dir);
	if (system(cmd) != 0)
		return 1;
	RUN(test_gzip);
	RUN(test_xz);
	RUN(test_zstd);
	RUN(test_lzo);
	RUN(test_uncompressed);
	RUN(test_lz4_refused);
	RUN(test_extents_hold_the_data);
	RUN(test_truncated);
	RUN(test_tables_out_of_image);
	RUN(test_loop);
	RUN(test_corrupted);
	RUN(test_sortfile);
	RUN(test_group_dirs);
	RUN(test_spread);
	RUN(test_files_read);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 1;
	return TAP_DONE();
}
