/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The tables of a squashfs 4.0 image: which bytes of the image hold the
 * data of which file, and where its metadata lies. Enough to map the
 * byte ranges a boot read (a boot profile) back to files; nothing is
 * ever decompressed but metadata blocks, and no file data is read.
 *
 * Layout (all little-endian). The superblock (96 bytes) gives the
 * compressor, the block size, the root inode and where each table
 * starts. A metadata block is a 16-bit header (bit 15: stored
 * uncompressed; the low 15 bits: its size on disk) and at most 8 KiB of
 * data once decoded; a table is a run of them, every block but the last
 * decoding to exactly 8 KiB. An inode reference is the block's offset
 * from the inode table's start (bits 16..47) and the offset in its
 * decoded data (bits 0..15). A directory's listing, in the directory
 * table, is a run of headers (entries - 1 (at most 255), the inode block
 * of its entries, a base inode number), each followed by its entries
 * (offset of the inode in that block, inode number delta, type, name
 * length - 1, the name). A regular file's inode has the start of its
 * data blocks and one 32-bit word per block (bit 24: stored
 * uncompressed; the low 24 bits: its size on disk, 0 for a sparse
 * block), and the index of the fragment that holds its tail, if any;
 * the fragment table, through an index of 64-bit pointers to its
 * metadata blocks, gives each fragment block's start and size. The id,
 * export and xattr tables are found the same way.
 *
 * Hostile images: every offset, length and count is checked against the
 * image and the tables; a decoded table is at most SQFS_TABLE_MAX bytes;
 * a directory reached twice (a loop in the tree, or a directory hard
 * link) is refused; a path longer than SQFS_PATH_MAX is refused; each
 * inode is parsed once however many names it has, so the work is bounded
 * by the size of the tables.
 */
#ifndef RAMBOOT_FORMAT_SQFS_H
#define RAMBOOT_FORMAT_SQFS_H

#include <stddef.h>
#include <stdint.h>

#define SQFS_META 8192u                  /* a metadata block, decoded */
#define SQFS_TABLE_MAX (64u << 20)       /* inode or directory table, decoded */
#define SQFS_PATH_MAX 4096u              /* a file's path, root-relative */
#define SQFS_NONE UINT64_MAX             /* an absent table in the superblock */

/* The compressor ids of the superblock. */
enum { SQFS_GZIP = 1, SQFS_LZMA = 2, SQFS_LZO = 3, SQFS_XZ = 4, SQFS_LZ4 = 5, SQFS_ZSTD = 6 };

struct sqfs_super {
	uint32_t inodes, block_size, frags;
	uint16_t comp, flags, ids;
	uint64_t root, bytes_used;
	uint64_t id_table, xattr_table, inode_table, dir_table, frag_table, export_table;
};

/* How the parser reaches the image: it does no I/O of its own. */
struct sqfs_io {
	void *ctx;
	/* len bytes of the image at off: 0, or -errno (-EIO when short). */
	int (*read)(void *ctx, uint64_t off, void *buf, size_t len);
	/* Decode in[0..inlen), one block of compressor comp (an SQFS_*
	 * id), into out (cap bytes of room): 0 and *outlen, or -errno
	 * (-EBADMSG: corrupt, -EPROTONOSUPPORT: no such decoder). */
	int (*decode)(void *ctx, unsigned comp, const uint8_t *in, size_t inlen, uint8_t *out,
		      size_t cap, size_t *outlen);
};

/* An image held in memory: sqfs_mem_read as sqfs_io.read, a struct
 * sqfs_mem as its ctx (the fuzz target, the tests' hostile images). */
struct sqfs_mem {
	const uint8_t *b;
	size_t len;
};
int sqfs_mem_read(void *ctx, uint64_t off, void *buf, size_t len);

/* A regular file, once per inode (hard links: the first name the walk
 * met, links counts the names). */
struct sqfs_file {
	uint32_t dir;             /* its directory: index into sqfs.d */
	uint32_t name;            /* offset of its name in sqfs.names */
	uint32_t links;
	uint32_t blocks;          /* data blocks, sparse ones included */
	uint64_t size;            /* bytes, as the file reads */
	uint64_t data_off, data_len; /* the data blocks on disk (contiguous); len 0: none */
	uint64_t frag_off;        /* the fragment block holding its tail */
	uint32_t frag_len;        /* on disk; 0: no fragment */
};

/* A directory: its parent (the root is 0, its own parent) and name. */
struct sqfs_dir {
	uint32_t parent, name;
	uint32_t path_len;        /* bytes of its path, without a trailing '/' */
};

/* A metadata area of the image, by name ("superblock", "inode table",
 * "directory table", "fragment table", "export table", "id table",
 * "xattr table"). */
struct sqfs_area {
	const char *name;
	uint64_t off, len;
};

#define SQFS_AREAS 7

struct sqfs {
	struct sqfs_super sb;
	struct sqfs_file *f;      /* in the order of the walk */
	size_t nf;
	struct sqfs_dir *d;
	size_t nd;
	char *names;              /* NUL-terminated names */
	size_t names_len;
	struct sqfs_area area[SQFS_AREAS];
	size_t narea;
};

/* The superblock in buf[0..len): 0, or -EINVAL (not squashfs 4.0, or
 * a field out of range) with why in err. */
int sqfs_super_parse(const uint8_t *buf, size_t len, struct sqfs_super *sb, char *err,
		     size_t errlen);

/* Read the tables of the image of image_size bytes into *s (need not be
 * initialised; empty on failure). 0, or -errno with why in err:
 * -EINVAL (a table is not what it must be), -ELOOP (a directory reached
 * twice), -ENAMETOOLONG, -EFBIG (a table above SQFS_TABLE_MAX),
 * -EPROTONOSUPPORT (no decoder for the compressor), -ENOMEM, or what
 * io's calls returned. */
int sqfs_read(struct sqfs *s, uint64_t image_size, const struct sqfs_io *io, char *err,
	      size_t errlen);

void sqfs_free(struct sqfs *s);

/* The path of file i relative to the root ("etc/passwd") into buf:
 * its length, or -ENAMETOOLONG when len is too short. */
int sqfs_path(const struct sqfs *s, size_t i, char *buf, size_t len);

/* The name of a compressor id ("gzip", "lz4"), "unknown" for others. */
const char *sqfs_comp_name(unsigned comp);

#endif
