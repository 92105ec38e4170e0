/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The chunk index of a raw image: where its content-defined chunks
 * (cdc.h) are and the SHA-256 of each, so that a client holding one
 * version of an image finds, by hash, the chunks of the next version it
 * already has and reads only the others. A text file, like the manifest:
 *
 *   ramboot-cindex 1
 *   chunker gear-fastcdc 16384 65536 262144
 *   size 1073741824
 *   chunks 15342
 *   chunk 0 81920 5feceb66ffc86f38d952786c6d696c79c2dbc239dd4e91b46729d73a27fb57e9
 *   chunk 81920 40733 6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b
 *   ...
 *
 * "chunker NAME MIN AVG MAX" names the chunker and its lengths (bytes);
 * then the image's size, the number of chunks and one line per chunk,
 * "chunk OFFSET LENGTH SHA256", in order. The chunks tile the image: the
 * first at 0, each where the previous one ends, the last ending at the
 * size; every length from MIN to MAX but the first and the last one's
 * (1 to MAX: a chunker may cut a header alone, as cdc.h's does a squashfs
 * superblock). An empty image has no chunk.
 *
 * The text is canonical, so that one index has one hash (the manifest
 * names it, and its signature covers it): the lines in this order, each
 * ending in one LF, fields separated by one space, decimal numbers
 * without leading zeros, hashes in lower case, nothing else (no comment,
 * blank line, CR or trailing byte). Anything else is refused.
 *
 * Bounds: MIN from CINDEX_LEN_FLOOR, MAX at most CINDEX_LEN_LIMIT, and at
 * most CINDEX_CHUNKS_MAX chunks (and never more than (size - 2) / MIN + 2), so
 * a parsed index holds at most 48 MiB and its text is at most
 * cindex_text_max() bytes. A larger image needs a larger MIN.
 *
 * The chunker's parameters are recorded, not relied on: which chunks of
 * a new index an old one has is a question of hashes only.
 */
#ifndef RAMBOOT_CINDEX_H
#define RAMBOOT_CINDEX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CINDEX_MAGIC       "ramboot-cindex 1"
#define CINDEX_NAME_MAX    31             /* chunker name: [a-z0-9-]{1,31} */
#define CINDEX_LEN_FLOOR   4096u          /* the smallest MIN allowed */
#define CINDEX_LEN_LIMIT   (64u << 20)    /* the largest MAX allowed */
#define CINDEX_CHUNKS_MAX  (1u << 20)     /* 16 GiB at 16 KiB, at least */
/* Longest lines: the header's, and a chunk's (20-digit offset, 8-digit
 * length, hash, spaces, LF). */
#define CINDEX_HEADER_MAX  256
#define CINDEX_LINE_MAX    (6 + 20 + 1 + 8 + 1 + 64 + 1)

struct cindex_chunk {
	uint64_t off;
	uint32_t len;
	uint8_t sha256[32];
};

struct cindex {
	char chunker[CINDEX_NAME_MAX + 1];
	uint32_t min, avg, max;
	uint64_t size;                    /* of the image */
	uint32_t n;                       /* chunks */
	struct cindex_chunk *chunk;       /* n of them, NULL when none */
};

/* Parse buf[0..len) (need not be NUL-terminated; never read past len).
 * 0, -EINVAL with the reason in err ("line 7: chunk overlaps the previous
 * one"), or -ENOMEM. On failure nothing is left allocated. */
int cindex_parse(const char *buf, size_t len, struct cindex *ci, char *err, size_t errlen);
void cindex_free(struct cindex *ci);

/* The largest text an index of n chunks can have. */
size_t cindex_text_max(uint32_t n);
/* Format a valid index (one cindex_parse or cindex_build made) into buf:
 * its length, or -ENOSPC. cindex_text_max(ci->n) + 1 always suffices. */
ssize_t cindex_format(const struct cindex *ci, char *buf, size_t len);

/* Read and parse an index file (a regular file, at most
 * cindex_text_max(CINDEX_CHUNKS_MAX) bytes). 0 or -errno, err says why. */
int cindex_load(const char *path, struct cindex *ci, char *err, size_t errlen);
/* cindex_load(), and with want (64 lower-case hex digits, or NULL) the
 * SHA-256 of the bytes read checked against it before they are parsed
 * (the hash a signed manifest gives): -EBADMSG when it differs. */
int cindex_load_checked(const char *path, const char *want, struct cindex *ci, char *err,
			size_t errlen);

/* The chunker cindex_build uses for an image that starts with
 * head[0..n) (its first CDC_SQFS_SUPER bytes or more): its name. */
const char *cindex_chunker_for(const uint8_t *head, size_t n);

/* The index of the image read from fd (plain reads from where it is to
 * its end), chunked by cdc.h (with the marker of the compressor a squashfs
 * superblock at its start names) and hashed with SHA-256. 0 or -errno (-EIO,
 * -EFBIG: more than CINDEX_CHUNKS_MAX chunks, -ENOMEM), err says why. */
int cindex_build(int fd, struct cindex *ci, char *err, size_t errlen);

#endif
