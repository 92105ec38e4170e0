/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The lzop file format (what `lzop` writes): a 9-byte magic, a header
 * (version, method, flags, mode, mtime, name, header checksum), then
 * blocks of [u32 uncompressed len][u32 compressed len][checksums][data],
 * ended by a block with uncompressed len 0. Big-endian throughout.
 */
#ifndef RAMBOOT_LZOP_H
#define RAMBOOT_LZOP_H

#include <stddef.h>
#include <stdint.h>

#define LZOP_MAGIC_LEN 9
extern const unsigned char lzop_magic[LZOP_MAGIC_LEN];

/* header flags we act on */
#define LZOP_F_ADLER32_D  0x00000001u
#define LZOP_F_ADLER32_C  0x00000002u
#define LZOP_F_H_EXTRA    0x00000040u
#define LZOP_F_CRC32_D    0x00000100u
#define LZOP_F_CRC32_C    0x00000200u
#define LZOP_F_MULTIPART  0x00000400u
#define LZOP_F_H_FILTER   0x00000800u
#define LZOP_F_H_CRC32    0x00001000u

/* The largest block lzop accepts (its MAX_BLOCK_SIZE); it writes 256 KiB. */
#define LZOP_BLOCK_MAX (64u * 1024 * 1024)

struct lzop_header {
	uint16_t version, lib_version, version_needed;
	uint8_t method, level;
	uint32_t flags;
	uint32_t mode;
	size_t header_len;       /* bytes from the magic through the checksum */
};

/* Parse the file header at buf[0..len) (magic included).
 * Returns 0 with h filled, -EAGAIN when more bytes are needed, -EINVAL
 * for a malformed header, -ENOTSUP for an unsupported method/filter/
 * multipart file, -EBADMSG for a header checksum mismatch. */
int lzop_parse_header(const uint8_t *buf, size_t len, struct lzop_header *h);

/* The fixed part of a block header: returns its length (bytes before the
 * data) for these flags; the block's checksums follow the two lengths. */
size_t lzop_block_header_len(uint32_t flags, uint32_t dlen, uint32_t clen);

#endif
