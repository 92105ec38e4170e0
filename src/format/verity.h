/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dm-verity hash trees, as `veritysetup format --hash=sha256
 * --data-block-size=4096 --hash-block-size=4096` writes them (format
 * version 1), into a hash file of its own:
 *
 *   block 0        the superblock (512 bytes, the rest of the 4096-byte
 *                  block zero), so that `veritysetup verify IMAGE HASHFILE
 *                  ROOTHASH` and `veritysetup open` need nothing more;
 *   blocks 1..     the tree, its top level first: level L-1 (one block),
 *                  level L-2, ..., level 0 last (the digests of the data
 *                  blocks). A hash block holds 128 SHA-256 digests, the
 *                  last one of a level padded with zeros.
 *
 * Every digest is SHA-256(salt || block); the root hash is the digest of
 * the top level's one block. An image of one data block has no tree at
 * all (levels 0): the root hash is the digest of that block, and the hash
 * file is the superblock alone (the kernel takes that as well).
 *
 * The image must be a whole number of 4096-byte blocks, and not empty:
 * veritysetup leaves a tail shorter than a block out of the tree without a
 * word (the tail would be unverified, and unreachable through the
 * mapping), we refuse it. mksquashfs pads its images to 4 KiB unless told
 * -nopad.
 *
 * The superblock (all numbers little-endian, struct verity_sb of
 * cryptsetup's lib/verity/verity.c):
 *
 *   0   8  "verity\0\0"
 *   8   4  superblock version: 1
 *   12  4  hash type: 1 (0 is the Chrome OS format)
 *   16 16  UUID
 *   32 32  hash algorithm, NUL-padded: "sha256"
 *   64  4  data block size: 4096
 *   68  4  hash block size: 4096
 *   72  8  number of data blocks
 *   80  2  salt size (at most 256)
 *   82  6  zero
 *   88 256 salt, zero-padded
 *   344 168 zero
 *
 * The UUID is not random: the first 16 bytes of SHA-256("ramboot-verity" ||
 * salt || root hash), marked as an RFC 9562 version 8 UUID. The same image
 * with the same salt gives the same hash file, byte for byte.
 */
#ifndef RAMBOOT_VERITY_H
#define RAMBOOT_VERITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VERITY_BLOCK      4096u   /* data and hash block size */
#define VERITY_DIGEST     32u     /* SHA-256 */
#define VERITY_PER_BLOCK  (VERITY_BLOCK / VERITY_DIGEST)   /* 128 */
#define VERITY_SALT_MAX   256u
#define VERITY_SALT_DEFAULT 32u   /* veritysetup's default salt size */
#define VERITY_SB_SIZE    512u
#define VERITY_MAX_LEVELS 63      /* cryptsetup's VERITY_MAX_LEVELS */
/* The tree's first block in the hash file: after the superblock's block
 * (the kernel table's <hash_start_block>, in hash blocks). */
#define VERITY_HASH_START 1u

/* The shape of the tree of a number of data blocks. Positions in hash
 * blocks from the start of the tree (add VERITY_HASH_START for the hash
 * file). */
struct verity_geom {
	uint64_t data_blocks;
	int levels;                                 /* 0 for one data block */
	uint64_t level_start[VERITY_MAX_LEVELS];    /* [0]: the digests of the data */
	uint64_t level_blocks[VERITY_MAX_LEVELS];
	uint64_t tree_blocks;                       /* every level */
};

/* What the superblock says, and with the root hash all a kernel table
 * needs. */
struct verity_params {
	uint64_t data_blocks;
	uint8_t salt[VERITY_SALT_MAX];
	size_t salt_len;
	uint8_t uuid[16];
};

/* The shape of the tree of data_blocks blocks, as cryptsetup's
 * hash_levels() lays it out. 0 or -EINVAL (0 blocks, or more than a
 * 64-bit offset of the hash file can address). */
int verity_geom(uint64_t data_blocks, struct verity_geom *g);

/* Bytes of the hash file for data_blocks: the superblock's block and the
 * tree. 0 when verity_geom refuses. */
uint64_t verity_hash_file_size(uint64_t data_blocks);

/* SHA-256(salt || block[0..VERITY_BLOCK)). */
void verity_digest(const uint8_t *salt, size_t salt_len, const uint8_t *block,
		   uint8_t out[VERITY_DIGEST]);

/* The UUID of the superblock (see above). */
void verity_uuid(const uint8_t *salt, size_t salt_len, const uint8_t root[VERITY_DIGEST],
		 uint8_t uuid[16]);

/* The superblock of p into out[0..VERITY_BLOCK) (its block, zero-padded). */
void verity_sb_encode(const struct verity_params *p, uint8_t out[VERITY_BLOCK]);

/* Read a superblock from buf[0..len): 0, or -EINVAL with the reason in err
 * ("not a verity superblock", "hash algorithm 'sha1', not sha256", ...).
 * Only what this file describes is taken: version 1, hash type 1, sha256,
 * 4096-byte blocks, a data block count verity_geom accepts, a salt of at
 * most 256 bytes. */
int verity_sb_decode(const uint8_t *buf, size_t len, struct verity_params *p,
		     char *err, size_t errlen);

/* Hash the data of fd (data_blocks * VERITY_BLOCK bytes from offset 0,
 * read with pread: fd may be shared) and build the hash file in memory:
 * *out (malloc'd, verity_hash_file_size bytes, superblock included),
 * root hash in root, p->uuid set. 0 or -errno with the reason in err
 * (-EIO "the image ends early" when fd gives fewer bytes). */
int verity_build(int fd, struct verity_params *p, uint8_t **out, size_t *outlen,
		 uint8_t root[VERITY_DIGEST], char *err, size_t errlen);

/* Check that a hash file (hashfd, superblock included) belongs to root:
 * the digest of the tree's top block, or for a one-block image the digest
 * of the data block (datafd), is root. 0, -EBADMSG when it is not, -errno
 * on a read error (-EIO: short). */
int verity_check_root(int hashfd, int datafd, const struct verity_params *p,
		      const uint8_t root[VERITY_DIGEST]);

/* Hex, lower case, NUL-terminated: out has room for 2 * len + 1. An empty
 * salt is written "-", as veritysetup and the kernel table write it. */
void verity_hex(const uint8_t *bytes, size_t len, char *out);
/* Parse hex (either case) of at most max bytes; "-" is no bytes. 0 or
 * -EINVAL (odd length, a non-hex digit, too long, empty string). */
int verity_hex_parse(const char *s, uint8_t *out, size_t max, size_t *len);

#endif
