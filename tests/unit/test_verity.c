// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dm-verity hash trees (verity.c): the geometry, the superblock, the tree
 * against a reference built here level by level (EVP, not the library's
 * code), and against vectors `veritysetup format` (cryptsetup 2.6.1)
 * produced once for the same images, salts and UUIDs: its root hash and
 * the SHA-256 of its whole hash file. Also the kernel table line and the
 * mapping names of dm.c, and its answer without device-mapper.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "tap.h"
#include "lib/base.h"
#include "lib/fdio.h"
#include "lib/path.h"
#include "format/verity.h"
#include "trust/verity_format.h"
#include "dev/dm.h"

static char dir[] = "/tmp/ramboot-verity-XXXXXX";
static char err[512];

static void hex(const uint8_t *b, size_t n, char *out)
{
	verity_hex(b, n, out);
}

static void sha256(const void *buf, size_t len, uint8_t out[32])
{
	unsigned int n = 32;

	if (EVP_Digest(buf, len, out, &n, EVP_sha256(), NULL) != 1)
		abort();
}

/* SHA-256(salt || block), through EVP. */
static void ref_digest(const uint8_t *salt, size_t salt_len, const uint8_t *block, uint8_t out[32])
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	unsigned int n = 32;

	if (!c || EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(c, salt, salt_len) != 1 ||
	    EVP_DigestUpdate(c, block, 4096) != 1 || EVP_DigestFinal_ex(c, out, &n) != 1)
		abort();
	EVP_MD_CTX_free(c);
}

/*
 * The reference tree: digest every block of the level below, pack the
 * digests 128 to a zero-padded block, until one block is left; its digest
 * is the root. One data block: no level, the root is its digest. The
 * hash file's tree is the levels top first. Returns the tree (malloc'd)
 * and its length.
 */
static uint8_t *ref_tree(const uint8_t *data, size_t nblocks, const uint8_t *salt,
			 size_t salt_len, uint8_t root[32], size_t *treelen)
{
	uint8_t *levels[16], *tree;
	size_t sizes[16], nlev = 0, cur_n = nblocks, i, pos;
	const uint8_t *cur = data;

	while (cur_n > 1) {
		size_t nb = (cur_n + 127) / 128;
		uint8_t *l = calloc(nb, 4096);

		if (!l)
			abort();
		for (i = 0; i < cur_n; i++)
			ref_digest(salt, salt_len, cur + i * 4096, l + i * 32);
		levels[nlev] = l;
		sizes[nlev++] = nb;
		cur = l;
		cur_n = nb;
	}
	ref_digest(salt, salt_len, cur, root);
	pos = 0;
	for (i = 0; i < nlev; i++)
		pos += sizes[i];
	tree = malloc(pos ? pos * 4096 : 1);
	if (!tree)
		abort();
	*treelen = pos * 4096;
	pos = 0;
	for (i = nlev; i-- > 0;) {
		memcpy(tree + pos, levels[i], sizes[i] * 4096);
		pos += sizes[i] * 4096;
		free(levels[i]);
	}
	return tree;
}

/* Block i of a test image: bytes (k * 7 + i * 13) & 0xff, as the
 * vectors below were made (k the offset in the image). */
static uint8_t *pattern(size_t nblocks, bool zero)
{
	uint8_t *d = malloc(nblocks * 4096);
	size_t k;

	if (!d)
		abort();
	for (k = 0; k < nblocks * 4096; k++)
		d[k] = zero ? 0 : (uint8_t)((k * 7 + (k >> 12) * 13) & 0xff);
	return d;
}

static void write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || write_all(fd, buf, len) < 0 || close(fd) < 0)
		abort();
}

static uint8_t *read_file(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *b;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	b = malloc((size_t)st.st_size + 1);
	if (!b || read_full(fd, b, (size_t)st.st_size) != st.st_size)
		abort();
	close(fd);
	*len = (size_t)st.st_size;
	return b;
}

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void test_geometry(void)
{
	struct verity_geom g;

	CHECK_EQ_INT(verity_geom(0, &g), -EINVAL);
	CHECK_EQ_INT(verity_geom(UINT64_MAX, &g), -EINVAL);
	CHECK_EQ_INT(verity_geom(UINT64_MAX / 4096 + 1, &g), -EINVAL);

	CHECK_EQ_INT(verity_geom(1, &g), 0);
	CHECK_EQ_INT(g.levels, 0);
	CHECK_EQ_INT(g.tree_blocks, 0);
	CHECK_EQ_INT(verity_hash_file_size(1), 4096);

	CHECK_EQ_INT(verity_geom(2, &g), 0);
	CHECK_EQ_INT(g.levels, 1);
	CHECK_EQ_INT(g.level_blocks[0], 1);
	CHECK_EQ_INT(verity_geom(128, &g), 0);
	CHECK_EQ_INT(g.levels, 1);
	CHECK_EQ_INT(g.tree_blocks, 1);

	/* 129: two level-0 blocks and the top after the superblock. */
	CHECK_EQ_INT(verity_geom(129, &g), 0);
	CHECK_EQ_INT(g.levels, 2);
	CHECK_EQ_INT(g.level_start[1], 0);
	CHECK_EQ_INT(g.level_blocks[1], 1);
	CHECK_EQ_INT(g.level_start[0], 1);
	CHECK_EQ_INT(g.level_blocks[0], 2);
	CHECK_EQ_INT(verity_hash_file_size(129), 4 * 4096);

	CHECK_EQ_INT(verity_geom(16384, &g), 0);
	CHECK_EQ_INT(g.levels, 2);
	CHECK_EQ_INT(g.tree_blocks, 129);
	CHECK_EQ_INT(verity_geom(16385, &g), 0);
	CHECK_EQ_INT(g.levels, 3);
	CHECK_EQ_INT(g.level_blocks[2], 1);
	CHECK_EQ_INT(g.level_blocks[1], 2);
	CHECK_EQ_INT(g.level_blocks[0], 129);
	CHECK_EQ_INT(g.level_start[1], 1);
	CHECK_EQ_INT(g.level_start[0], 3);
	CHECK_EQ_INT(verity_hash_file_size(16385), 133 * 4096);   /* veritysetup: 544768 */

	/* 1 TiB of data: 2^28 blocks, levels of 2^21, 2^14, 2^7, 1, 1. */
	CHECK_EQ_INT(verity_geom(UINT64_C(1) << 28, &g), 0);
	CHECK_EQ_INT(g.levels, 4);
	CHECK_EQ_INT(g.level_blocks[0], 1 << 21);
	CHECK_EQ_INT(g.level_blocks[3], 1);
	CHECK_EQ_INT(g.tree_blocks, (1 << 21) + (1 << 14) + (1 << 7) + 1);
	/* The largest data a 64-bit byte offset can address still has a
	 * tree that fits one. */
	CHECK_EQ_INT(verity_geom(UINT64_MAX / 4096, &g), 0);
	CHECK_EQ_INT(g.levels, 8);
}

static void test_hex(void)
{
	uint8_t b[4];
	size_t n = 99;
	char s[9];

	CHECK_EQ_INT(verity_hex_parse("00aBcD", b, sizeof(b), &n), 0);
	CHECK_EQ_INT(n, 3);
	CHECK(b[0] == 0 && b[1] == 0xab && b[2] == 0xcd);
	hex(b, 3, s);
	CHECK_EQ_STR(s, "00abcd");
	CHECK_EQ_INT(verity_hex_parse("-", b, sizeof(b), &n), 0);
	CHECK_EQ_INT(n, 0);
	hex(b, 0, s);
	CHECK_EQ_STR(s, "-");
	CHECK_EQ_INT(verity_hex_parse("", b, sizeof(b), &n), -EINVAL);
	CHECK_EQ_INT(verity_hex_parse("abc", b, sizeof(b), &n), -EINVAL);
	CHECK_EQ_INT(verity_hex_parse("0g", b, sizeof(b), &n), -EINVAL);
	CHECK_EQ_INT(verity_hex_parse("0011223344", b, sizeof(b), &n), -EINVAL);
	CHECK_EQ_INT(verity_hex_parse(" 00", b, sizeof(b), &n), -EINVAL);
	CHECK_EQ_INT(verity_hex_parse("--", b, sizeof(b), &n), -EINVAL);
}

/* The library's hash file for data against the reference: the
 * superblock's block, then the reference tree; the root hash alike. */
static void check_against_ref(size_t nblocks, bool zero, const uint8_t *salt, size_t salt_len)
{
	char img[4096], hf[4096], rs[65], want[65];
	uint8_t *data = pattern(nblocks, zero), *file = NULL, *tree, root[32], rroot[32];
	struct verity_params p;
	size_t len = 0, treelen;
	int rc;

	path_of(img, sizeof(img), "ref.img");
	path_of(hf, sizeof(hf), "ref.hash");
	write_file(img, data, nblocks * 4096);
	(void)unlink(hf);
	rc = verity_format(img, hf, false, salt, salt_len, &p, root, err, sizeof(err));
	CHECK_EQ_INT(rc, 0);
	if (rc == 0)
		file = read_file(hf, &len);
	tree = ref_tree(data, nblocks, salt, salt_len, rroot, &treelen);
	hex(root, 32, rs);
	hex(rroot, 32, want);
	CHECK_EQ_STR(rs, want);
	CHECK(file != NULL);
	CHECK_EQ_INT(len, 4096 + treelen);
	CHECK_EQ_INT(p.data_blocks, nblocks);
	if (file && len == 4096 + treelen)
		CHECK(memcmp(file + 4096, tree, treelen) == 0);
	if (tap_case_failed)
		printf("#   %zu blocks, salt of %zu bytes\n", nblocks, salt_len);
	free(file);
	free(tree);
	free(data);
}

static void test_tree_reference(void)
{
	static const uint8_t salt[] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };
	static const size_t sizes[] = { 1, 2, 3, 127, 128, 129, 255, 256, 257, 300, 16384, 16385 };
	uint8_t big[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		check_against_ref(sizes[i], false, salt, sizeof(salt));
		check_against_ref(sizes[i], true, salt, 0);
	}
	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(255 - i);
	check_against_ref(129, false, big, sizeof(big));
}

/* Vectors from `veritysetup format --hash=sha256 --data-block-size=4096
 * --hash-block-size=4096 --salt=S --uuid=U IMAGE HASH`: the root hash
 * it printed and the SHA-256 of the hash file it wrote, for images made
 * by pattern(). Our hash file is theirs byte for byte. */
static const struct vector {
	size_t blocks;
	bool zero;
	const char *salt, *root, *uuid, *file_sha256;
} vectors[] = {
	{ 1, true, "00112233",
	  "7ec8dda1b53ca958f13d08bcb7f8320234bed38c694eaebd9bd43bbfbf4d742f",
	  "a8495382-2712-8739-8623-548ebfa817ae",
	  "7da2b714ba6840f8c190e9e2674aac3cd31262fb79b1dd9529ad222bf2a575d4" },
	{ 3, false, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
	  "db1c04805f2f14e34bde2dfb4c25552b88c99dfb8ceb2f44c78fe4147a2cb96c",
	  "81be2f53-08e5-848c-b18a-3a3310e0ef68",
	  "13b25fdeef88c2eeed596569b0ce1fbc1416df726e9446c6bcb5415be87cd20c" },
	{ 129, true, "-",
	  "3e5d285ca1f11edfca6327028471f08b75634ff3361264b88d79ee2e95cacb84",
	  "7f4f73eb-b0f5-893e-b5e3-f6c7f965f429",
	  "3277967b235f924b0572c8024a72ae24804e5ee59778d39bdac23cced55cd858" },
	{ 300, false, "ab",
	  "eccdb76402c18caf1b6ba596fe3b666f4270d71ac3db4aa200883daecf051be4",
	  "ad645b21-959a-8725-913d-371fccb083bc",
	  "1e7335689617a2c23693828130c8a9bf26d4e41a1cbdd7ce5b2ffdf10f52038d" },
};

static void uuid_text(const uint8_t u[16], char out[37])
{
	char h[33];

	hex(u, 16, h);
	snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", h, h + 8, h + 12, h + 16, h + 20);
}

static void test_veritysetup_vectors(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vectors); i++) {
		const struct vector *v = &vectors[i];
		uint8_t *data = pattern(v->blocks, v->zero), *file = NULL, salt[256], root[32], d[32];
		char img[4096], hf[4096], s[65], u[37];
		struct verity_params p;
		size_t salt_len, len = 0;

		path_of(img, sizeof(img), "vec.img");
		path_of(hf, sizeof(hf), "vec.hash");
		write_file(img, data, v->blocks * 4096);
		(void)unlink(hf);
		CHECK_EQ_INT(verity_hex_parse(v->salt, salt, sizeof(salt), &salt_len), 0);
		CHECK_EQ_INT(verity_format(img, hf, false, salt, salt_len, &p, root, err,
					   sizeof(err)), 0);
		hex(root, 32, s);
		CHECK_EQ_STR(s, v->root);
		uuid_text(p.uuid, u);
		CHECK_EQ_STR(u, v->uuid);
		file = read_file(hf, &len);
		CHECK(file != NULL);
		if (file) {
			CHECK_EQ_INT(len, verity_hash_file_size(v->blocks));
			sha256(file, len, d);
			hex(d, 32, s);
			CHECK_EQ_STR(s, v->file_sha256);
		}
		free(file);
		free(data);
	}
}

static void test_superblock(void)
{
	uint8_t sb[4096], bad[4096];
	struct verity_params p, q;

	memset(&p, 0, sizeof(p));
	p.data_blocks = 16385;
	p.salt_len = 3;
	memcpy(p.salt, "\x01\x02\x03", 3);
	memcpy(p.uuid, "0123456789abcdef", 16);
	verity_sb_encode(&p, sb);
	CHECK(memcmp(sb, "verity\0\0\1\0\0\0\1\0\0\0", 16) == 0);
	CHECK(memcmp(sb + 32, "sha256\0", 7) == 0);
	CHECK(memcmp(sb + 64, "\0\x10\0\0\0\x10\0\0\x01\x40\0\0\0\0\0\0\x03\0", 18) == 0);
	CHECK(memcmp(sb + 88, "\x01\x02\x03\0", 4) == 0);
	CHECK_EQ_INT(verity_sb_decode(sb, sizeof(sb), &q, err, sizeof(err)), 0);
	CHECK_EQ_INT(q.data_blocks, 16385);
	CHECK_EQ_INT(q.salt_len, 3);
	CHECK(memcmp(q.salt, p.salt, 3) == 0);
	CHECK(memcmp(q.uuid, p.uuid, 16) == 0);
	/* 512 bytes are enough; fewer are not. */
	CHECK_EQ_INT(verity_sb_decode(sb, 512, &q, err, sizeof(err)), 0);
	CHECK_EQ_INT(verity_sb_decode(sb, 511, &q, err, sizeof(err)), -EINVAL);

#define REFUSED(off, val, why) do { \
		memcpy(bad, sb, sizeof(sb)); \
		bad[off] = (uint8_t)(val); \
		err[0] = '\0'; \
		CHECK_EQ_INT(verity_sb_decode(bad, sizeof(bad), &q, err, sizeof(err)), -EINVAL); \
		if (!strstr(err, why)) \
			printf("#   byte %d = %d: '%s', expected '%s'\n", off, val, err, why); \
		CHECK(strstr(err, why) != NULL); \
	} while (0)
	REFUSED(0, 'V', "no verity superblock");
	REFUSED(7, 1, "no verity superblock");
	REFUSED(8, 2, "superblock version 2");
	REFUSED(11, 1, "superblock version");
	REFUSED(12, 0, "hash type 0");
	REFUSED(38, '1', "'sha2561', not sha256");
	REFUSED(35, '1', "'sha156', not sha256");
	REFUSED(33, 0x01, "'s?a256'");
	REFUSED(65, 0x02, "data block size 512");
	REFUSED(69, 0x20, "hash block size 8192");
	/* 16385 = 0x4001: 16384 is a good count, 0 and 2^56 blocks are not. */
	memcpy(bad, sb, sizeof(sb));
	bad[72] = 0;
	CHECK_EQ_INT(verity_sb_decode(bad, sizeof(bad), &q, err, sizeof(err)), 0);
	memcpy(bad, sb, sizeof(sb));
	bad[72] = 0;
	bad[73] = 0;
	CHECK_EQ_INT(verity_sb_decode(bad, sizeof(bad), &q, err, sizeof(err)), -EINVAL);
	memcpy(bad, sb, sizeof(sb));
	bad[79] = 0xff;                     /* beyond what a byte offset addresses */
	CHECK_EQ_INT(verity_sb_decode(bad, sizeof(bad), &q, err, sizeof(err)), -EINVAL);
	REFUSED(81, 1, "salt of 259 bytes");
	memcpy(bad, sb, sizeof(sb));
	bad[80] = 0;
	bad[81] = 1;                        /* 256: the most there is */
	CHECK_EQ_INT(verity_sb_decode(bad, sizeof(bad), &q, err, sizeof(err)), 0);
	CHECK_EQ_INT(q.salt_len, 256);
#undef REFUSED
}

static void test_format_refusals(void)
{
	char img[4096], hf[4096], hf2[4096];
	uint8_t root[32], block[4096 + 1];
	struct verity_params p;
	struct stat st;

	path_of(img, sizeof(img), "r.img");
	path_of(hf, sizeof(hf), "r.hash");
	path_of(hf2, sizeof(hf2), "r2.hash");
	memset(block, 'x', sizeof(block));
	(void)unlink(hf);

	/* Not a whole number of blocks: refused, nothing written (veritysetup
	 * would leave the tail out of the tree). */
	write_file(img, block, sizeof(block));
	CHECK_EQ_INT(verity_format(img, hf, false, NULL, 0, &p, root, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "4097 bytes, not a whole number of 4096-byte blocks") != NULL);
	CHECK(stat(hf, &st) < 0 && errno == ENOENT);
	write_file(img, block, 4095);
	CHECK_EQ_INT(verity_format(img, hf, false, NULL, 0, &p, root, err, sizeof(err)), -EINVAL);
	write_file(img, block, 0);
	CHECK_EQ_INT(verity_format(img, hf, false, NULL, 0, &p, root, err, sizeof(err)), -EINVAL);
	CHECK(stat(hf, &st) < 0 && errno == ENOENT);
	CHECK_EQ_INT(verity_format(dir, hf, false, NULL, 0, &p, root, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "not a regular file or block device") != NULL);

	/* A random salt of 32 bytes when none is given; two runs differ. */
	write_file(img, block, 4096);
	CHECK_EQ_INT(verity_format(img, hf, false, NULL, 0, &p, root, err, sizeof(err)), 0);
	CHECK_EQ_INT(p.salt_len, 32);
	{
		struct verity_params p2;
		uint8_t root2[32];

		CHECK_EQ_INT(verity_format(img, hf2, false, NULL, 0, &p2, root2, err, sizeof(err)), 0);
		CHECK(memcmp(p.salt, p2.salt, 32) != 0);
		CHECK(memcmp(root, root2, 32) != 0);
	}
	/* An existing hash file stays without replace; the image itself
	 * is never the hash file. */
	CHECK_EQ_INT(verity_format(img, hf, false, NULL, 0, &p, root, err, sizeof(err)), -EEXIST);
	CHECK_EQ_INT(verity_format(img, hf, true, NULL, 0, &p, root, err, sizeof(err)), 0);
	CHECK_EQ_INT(verity_format(img, img, true, NULL, 0, &p, root, err, sizeof(err)), -EINVAL);
	CHECK(stat(img, &st) == 0 && st.st_size == 4096);
	CHECK_EQ_INT(verity_format(img, hf, false, block, 257, &p, root, err, sizeof(err)), -EINVAL);
	(void)unlink(hf2);
}

/* An image shorter than the block count given: an error, no tree. */
static void test_build_short(void)
{
	char img[4096];
	struct verity_params p;
	uint8_t *file = (uint8_t *)&p, root[32];
	uint8_t *data = pattern(5, false);
	size_t len = 1;
	int fd;

	path_of(img, sizeof(img), "short.img");
	write_file(img, data, 5 * 4096);
	fd = open(img, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	memset(&p, 0, sizeof(p));
	p.data_blocks = 300;
	CHECK_EQ_INT(verity_build(fd, &p, &file, &len, root, err, sizeof(err)), -EIO);
	CHECK(strstr(err, "the image ends early, at 20480 bytes") != NULL);
	CHECK(file == NULL);
	CHECK_EQ_INT(len, 0);
	p.data_blocks = 0;
	CHECK_EQ_INT(verity_build(fd, &p, &file, &len, root, err, sizeof(err)), -EINVAL);
	close(fd);
	free(data);
}

/* verity_check_root: the top block's digest (or the one data block's). */
static void test_check_root(void)
{
	static const size_t sizes[] = { 1, 2, 129 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		uint8_t *data = pattern(sizes[i], false), root[32], sb[4096];
		char img[4096], hf[4096];
		struct verity_params p, q;
		int dfd, hfd;

		path_of(img, sizeof(img), "c.img");
		path_of(hf, sizeof(hf), "c.hash");
		write_file(img, data, sizes[i] * 4096);
		(void)unlink(hf);
		CHECK_EQ_INT(verity_format(img, hf, false, (const uint8_t *)"salt", 4, &p, root, err,
					   sizeof(err)), 0);
		dfd = open(img, O_RDONLY | O_CLOEXEC);
		hfd = open(hf, O_RDONLY | O_CLOEXEC);
		CHECK(dfd >= 0 && hfd >= 0);
		CHECK_EQ_INT(pread_full(hfd, sb, sizeof(sb), 0), 4096);
		CHECK_EQ_INT(verity_sb_decode(sb, sizeof(sb), &q, err, sizeof(err)), 0);
		CHECK_EQ_INT(q.data_blocks, sizes[i]);
		CHECK_EQ_INT(verity_check_root(hfd, dfd, &q, root), 0);
		root[31] ^= 1;
		CHECK_EQ_INT(verity_check_root(hfd, dfd, &q, root), -EBADMSG);
		root[31] ^= 1;
		q.salt[0] ^= 1;
		CHECK_EQ_INT(verity_check_root(hfd, dfd, &q, root), -EBADMSG);
		close(dfd);
		close(hfd);
		free(data);
	}
}

static void test_dm_table(void)
{
	struct dm_verity_target t;
	char buf[1024];

	memset(&t, 0, sizeof(t));
	t.data = makedev(7, 0);
	t.hash = makedev(259, 1048575);
	t.data_blocks = 16385;
	t.hash_start = VERITY_HASH_START;
	memset(t.root, 0xab, sizeof(t.root));
	t.salt_len = 2;
	t.salt[0] = 0x01;
	t.salt[1] = 0xfe;
	CHECK_EQ_INT(dm_verity_params(&t, buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "1 7:0 259:1048575 4096 4096 16385 1 sha256 "
		     "abababababababababababababababababababababababababababababababab 01fe");
	t.salt_len = 0;
	CHECK_EQ_INT(dm_verity_params(&t, buf, sizeof(buf)), 0);
	CHECK(strlen(buf) > 2 && !strcmp(buf + strlen(buf) - 2, " -"));
	CHECK_EQ_INT(dm_verity_params(&t, buf, 20), -ENOSPC);
	/* The longest salt fits the buffer the ioctl has. */
	t.salt_len = VERITY_SALT_MAX;
	CHECK_EQ_INT(dm_verity_params(&t, buf, sizeof(buf)), 0);
	CHECK_EQ_INT(strlen(buf), 43 + 64 + 1 + 2 * VERITY_SALT_MAX);
}

static void test_dm_names(void)
{
	char long_name[200];

	CHECK(dm_name_valid("ltsp-image"));
	CHECK(dm_name_valid("x86_64.img+v2"));
	CHECK(dm_name_valid("a"));
	CHECK(!dm_name_valid(""));
	CHECK(!dm_name_valid("."));
	CHECK(!dm_name_valid(".."));
	CHECK(!dm_name_valid(".hidden"));
	CHECK(!dm_name_valid("a/b"));
	CHECK(!dm_name_valid("a b"));
	CHECK(!dm_name_valid("control\n"));
	CHECK(!dm_name_valid("t\xc3\xa9"));
	memset(long_name, 'n', sizeof(long_name));
	long_name[127] = '\0';
	CHECK(dm_name_valid(long_name));
	long_name[127] = 'n';
	long_name[128] = '\0';
	CHECK(!dm_name_valid(long_name));
}

/* Below a root prefix without /dev/mapper/control: -ENODEV, and a
 * message that says what is missing; nothing is made. */
static void test_dm_no_control(void)
{
	struct dm_verity_target t;
	char root[sizeof(dir) + 16], path[sizeof(dir) + 64];
	struct stat st;
	dev_t dev;

	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(path, sizeof(path), "%s/dev", root);
	CHECK(mkdir(root, 0755) == 0 && mkdir(path, 0755) == 0);
	setenv("RAMBOOT_ROOT", root, 1);
	rb_root_init();
	memset(&t, 0, sizeof(t));
	t.data_blocks = 1;
	err[0] = '\0';
	CHECK_EQ_INT(dm_verity_create("x", &t, &dev, err, sizeof(err)), -ENODEV);
	CHECK(strstr(err, "/root/dev/mapper/control") != NULL);
	CHECK(strstr(err, "no device-mapper") != NULL);
	CHECK_EQ_INT(dm_remove("x", err, sizeof(err)), -ENODEV);
	CHECK_EQ_INT(dm_has_target("verity"), -ENODEV);
	CHECK_EQ_INT(dm_verity_create("a/b", &t, &dev, err, sizeof(err)), -EINVAL);
	snprintf(path, sizeof(path), "%s/dev/mapper", root);
	CHECK(stat(path, &st) < 0 && errno == ENOENT);
	unsetenv("RAMBOOT_ROOT");
	rb_root_init();
}

int main(void)
{
	char cmd[64 + sizeof(dir)];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_geometry);
	RUN(test_hex);
	RUN(test_superblock);
	RUN(test_tree_reference);
	RUN(test_veritysetup_vectors);
	RUN(test_format_refusals);
	RUN(test_build_short);
	RUN(test_check_root);
	RUN(test_dm_table);
	RUN(test_dm_names);
	RUN(test_dm_no_control);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return TAP_DONE();
}
