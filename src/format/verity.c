// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dm-verity hash trees: geometry, superblock, building and checking (see
 * verity.h for the layout).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A SHA-256 context that has taken the salt is copied for every block. */
#include "lib/sha256.h"

#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/hex.h"
#include "format/verity.h"

#define BITS_PER_LEVEL 7   /* log2(VERITY_PER_BLOCK) */
#define READ_BLOCKS 256    /* data blocks per read: 1 MiB */

int verity_geom(uint64_t data_blocks, struct verity_geom *g)
{
	uint64_t pos = 0;
	int i, levels = 0;

	memset(g, 0, sizeof(*g));
	if (data_blocks == 0 || data_blocks > UINT64_MAX / VERITY_BLOCK)
		return -EINVAL;
	/* cryptsetup's hash_levels(): as many levels as it takes for one
	 * block to cover every data block. */
	while (BITS_PER_LEVEL * levels < 64 && ((data_blocks - 1) >> (BITS_PER_LEVEL * levels)))
		levels++;
	if (levels > VERITY_MAX_LEVELS)
		return -EINVAL;
	/* The top level first; each level has one digest per block of the
	 * level below, 128 to a block. */
	for (i = levels - 1; i >= 0; i--) {
		unsigned int shift = (unsigned int)(i + 1) * BITS_PER_LEVEL;
		uint64_t n;

		if (shift > 63)
			return -EINVAL;
		n = (data_blocks >> shift) + ((data_blocks & ((UINT64_C(1) << shift) - 1)) != 0);
		g->level_start[i] = pos;
		g->level_blocks[i] = n;
		if (pos + n < pos)
			return -EINVAL;
		pos += n;
	}
	/* The hash file (superblock block + tree) must have a byte size. */
	if (pos > UINT64_MAX / VERITY_BLOCK - VERITY_HASH_START)
		return -EINVAL;
	g->data_blocks = data_blocks;
	g->levels = levels;
	g->tree_blocks = pos;
	return 0;
}

uint64_t verity_hash_file_size(uint64_t data_blocks)
{
	struct verity_geom g;

	if (verity_geom(data_blocks, &g) < 0)
		return 0;
	return (g.tree_blocks + VERITY_HASH_START) * VERITY_BLOCK;
}

static void salted(SHA256_CTX *c, const uint8_t *salt, size_t salt_len)
{
	SHA256_Init(c);
	if (salt_len)
		SHA256_Update(c, salt, salt_len);
}

void verity_digest(const uint8_t *salt, size_t salt_len, const uint8_t *block,
		   uint8_t out[VERITY_DIGEST])
{
	SHA256_CTX c;

	salted(&c, salt, salt_len);
	SHA256_Update(&c, block, VERITY_BLOCK);
	SHA256_Final(out, &c);
}

void verity_uuid(const uint8_t *salt, size_t salt_len, const uint8_t root[VERITY_DIGEST],
		 uint8_t uuid[16])
{
	static const char tag[] = "ramboot-verity";
	uint8_t d[SHA256_DIGEST_LENGTH];
	SHA256_CTX c;

	SHA256_Init(&c);
	SHA256_Update(&c, tag, sizeof(tag) - 1);
	if (salt_len)
		SHA256_Update(&c, salt, salt_len);
	SHA256_Update(&c, root, VERITY_DIGEST);
	SHA256_Final(d, &c);
	memcpy(uuid, d, 16);
	uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x80);   /* version 8 */
	uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);   /* variant 10 */
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static const char sb_magic[8] = { 'v', 'e', 'r', 'i', 't', 'y', 0, 0 };

void verity_sb_encode(const struct verity_params *p, uint8_t out[VERITY_BLOCK])
{
	memset(out, 0, VERITY_BLOCK);
	memcpy(out, sb_magic, sizeof(sb_magic));
	put_le(out + 8, 1, 4);                    /* superblock version */
	put_le(out + 12, 1, 4);                   /* hash type */
	memcpy(out + 16, p->uuid, 16);
	memcpy(out + 32, "sha256", 6);
	put_le(out + 64, VERITY_BLOCK, 4);
	put_le(out + 68, VERITY_BLOCK, 4);
	put_le(out + 72, p->data_blocks, 8);
	put_le(out + 80, p->salt_len, 2);
	memcpy(out + 88, p->salt, p->salt_len);
}

int verity_sb_decode(const uint8_t *buf, size_t len, struct verity_params *p,
		     char *err, size_t errlen)
{
	struct verity_geom g;
	char alg[33];
	uint64_t v;

	memset(p, 0, sizeof(*p));
	if (len < VERITY_SB_SIZE || memcmp(buf, sb_magic, sizeof(sb_magic)))
		return rb_errfmt(err, errlen, -EINVAL, "no verity superblock");
	if ((v = get_le(buf + 8, 4)) != 1)
		return rb_errfmt(err, errlen, -EINVAL, "superblock version %" PRIu64 ", not 1", v);
	if ((v = get_le(buf + 12, 4)) != 1)
		return rb_errfmt(err, errlen, -EINVAL, "hash type %" PRIu64 ", not 1", v);
	memcpy(alg, buf + 32, 32);
	alg[32] = '\0';
	if (strcmp(alg, "sha256")) {
		size_t i;

		/* Printable in the message, whatever the bytes are. */
		for (i = 0; alg[i]; i++)
			if (alg[i] < 0x20 || alg[i] > 0x7e)
				alg[i] = '?';
		return rb_errfmt(err, errlen, -EINVAL, "hash algorithm '%s', not sha256", alg);
	}
	if ((v = get_le(buf + 64, 4)) != VERITY_BLOCK)
		return rb_errfmt(err, errlen, -EINVAL, "data block size %" PRIu64 ", not 4096", v);
	if ((v = get_le(buf + 68, 4)) != VERITY_BLOCK)
		return rb_errfmt(err, errlen, -EINVAL, "hash block size %" PRIu64 ", not 4096", v);
	v = get_le(buf + 72, 8);
	if (verity_geom(v, &g) < 0)
		return rb_errfmt(err, errlen, -EINVAL, "bad number of data blocks %" PRIu64, v);
	p->data_blocks = v;
	if ((v = get_le(buf + 80, 2)) > VERITY_SALT_MAX)
		return rb_errfmt(err, errlen, -EINVAL, "salt of %" PRIu64 " bytes, more than 256", v);
	p->salt_len = (size_t)v;
	memcpy(p->salt, buf + 88, p->salt_len);
	memcpy(p->uuid, buf + 16, 16);
	return 0;
}

/* Level 0: the digest of each data block, read READ_BLOCKS at a time. */
static int hash_data(int fd, const struct verity_params *p, const struct verity_geom *g,
		     uint8_t *level0, char *err, size_t errlen)
{
	const size_t chunk = (size_t)READ_BLOCKS * VERITY_BLOCK;
	uint8_t *buf = malloc(chunk);
	SHA256_CTX base;
	uint64_t b = 0;
	int rc = 0;

	if (!buf)
		return rb_errfmt(err, errlen, -ENOMEM, "out of memory");
	salted(&base, p->salt, p->salt_len);
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	while (b < g->data_blocks) {
		uint64_t n = g->data_blocks - b;
		ssize_t got;
		size_t i;

		if (n > READ_BLOCKS)
			n = READ_BLOCKS;
		got = pread_full(fd, buf, (size_t)n * VERITY_BLOCK, (off_t)(b * VERITY_BLOCK));
		if (got < 0) {
			rc = rb_errfmt(err, errlen, (int)got, "read at %" PRIu64 ": %s",
				       b * VERITY_BLOCK, strerror((int)-got));
			goto out;
		}
		if ((size_t)got != n * VERITY_BLOCK) {
			rc = rb_errfmt(err, errlen, -EIO, "the image ends early, at %" PRIu64
				       " bytes (it changed while it was hashed?)",
				       b * VERITY_BLOCK + (uint64_t)got);
			goto out;
		}
		for (i = 0; i < n; i++) {
			SHA256_CTX c = base;

			SHA256_Update(&c, buf + i * VERITY_BLOCK, VERITY_BLOCK);
			SHA256_Final(level0 + (b + i) * VERITY_DIGEST, &c);
		}
		b += n;
	}
out:
	free(buf);
	return rc;
}

int verity_build(int fd, struct verity_params *p, uint8_t **out, size_t *outlen,
		 uint8_t root[VERITY_DIGEST], char *err, size_t errlen)
{
	struct verity_geom g;
	uint64_t size = verity_hash_file_size(p->data_blocks);
	uint8_t one[VERITY_DIGEST], *file, *tree, *digests;
	int i, rc;

	*out = NULL;
	*outlen = 0;
	if (verity_geom(p->data_blocks, &g) < 0 || size == 0 || p->salt_len > VERITY_SALT_MAX)
		return rb_errfmt(err, errlen, -EINVAL, "bad number of data blocks %" PRIu64,
				 p->data_blocks);
	if (size > SIZE_MAX)
		return rb_errfmt(err, errlen, -EFBIG, "the hash tree is too large for memory");
	file = calloc(1, (size_t)size);
	if (!file)
		return rb_errfmt(err, errlen, -ENOMEM, "out of memory for a hash tree of %" PRIu64
				 " bytes", size);
	tree = file + (size_t)VERITY_HASH_START * VERITY_BLOCK;
	/* The digests of the data blocks go where level 0 lies; with one
	 * block (no tree) its digest is the root hash. */
	digests = g.levels ? tree + g.level_start[0] * VERITY_BLOCK : one;
	rc = hash_data(fd, p, &g, digests, err, errlen);
	if (rc < 0) {
		free(file);
		return rc;
	}
	/* Each level above: the digests of the blocks of the level below,
	 * in order, zero-padded to a whole block (calloc). */
	for (i = 1; i < g.levels; i++) {
		const uint8_t *below = tree + g.level_start[i - 1] * VERITY_BLOCK;
		uint8_t *here = tree + g.level_start[i] * VERITY_BLOCK;
		uint64_t k;

		for (k = 0; k < g.level_blocks[i - 1]; k++)
			verity_digest(p->salt, p->salt_len, below + k * VERITY_BLOCK,
				      here + k * VERITY_DIGEST);
	}
	if (g.levels)
		verity_digest(p->salt, p->salt_len, tree + g.level_start[g.levels - 1] * VERITY_BLOCK,
			      root);
	else
		memcpy(root, one, VERITY_DIGEST);
	verity_uuid(p->salt, p->salt_len, root, p->uuid);
	verity_sb_encode(p, file);
	*out = file;
	*outlen = (size_t)size;
	return 0;
}

int verity_check_root(int hashfd, int datafd, const struct verity_params *p,
		      const uint8_t root[VERITY_DIGEST])
{
	uint8_t *block, d[VERITY_DIGEST];
	struct verity_geom g;
	ssize_t n;
	off_t off;
	int fd;

	if (verity_geom(p->data_blocks, &g) < 0)
		return -EINVAL;
	if (g.levels) {
		fd = hashfd;
		off = (off_t)((VERITY_HASH_START + g.level_start[g.levels - 1]) * VERITY_BLOCK);
	} else {
		fd = datafd;
		off = 0;
	}
	block = malloc(VERITY_BLOCK);
	if (!block)
		return -ENOMEM;
	n = pread_full(fd, block, VERITY_BLOCK, off);
	if (n == (ssize_t)VERITY_BLOCK)
		verity_digest(p->salt, p->salt_len, block, d);
	free(block);
	if (n < 0)
		return (int)n;
	if (n != (ssize_t)VERITY_BLOCK)
		return -EIO;
	return memcmp(d, root, VERITY_DIGEST) ? -EBADMSG : 0;
}

void verity_hex(const uint8_t *bytes, size_t len, char *out)
{
	if (!len)
		strcpy(out, "-");
	else
		hex_encode(bytes, len, out);
}

int verity_hex_parse(const char *s, uint8_t *out, size_t max, size_t *len)
{
	size_t n = strlen(s);

	if (!strcmp(s, "-")) {
		*len = 0;
		return 0;
	}
	if (n == 0 || n % 2 || n / 2 > max || hex_decode(s, n / 2, out) < 0)
		return -EINVAL;
	*len = n / 2;
	return 0;
}
