/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The facts of squashfs ramboot needs: a superblock ("hsqs", then
 * bytes_used as a little-endian 64-bit number at offset 40) says how
 * long the file system is, so a truncated image is known as one from
 * any source, before or after decompression (the loader); and which
 * compressor made its blocks (the chunk index's marker, cdc.h).
 */
#ifndef RAMBOOT_SQUASHFS_H
#define RAMBOOT_SQUASHFS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#define SQUASHFS_SB_MIN 96       /* the superblock's size */

/* 0 and *used when buf starts with a squashfs superblock, else -EINVAL. */
static inline int squashfs_bytes_used(const uint8_t *buf, size_t len, uint64_t *used)
{
	uint64_t v = 0;
	int i;

	if (len < 48 || buf[0] != 'h' || buf[1] != 's' || buf[2] != 'q' || buf[3] != 's')
		return -EINVAL;
	for (i = 7; i >= 0; i--)
		v = v << 8 | buf[40 + i];
	*used = v;
	return 0;
}

/* The compressor of a squashfs superblock (its 16-bit id at offset 20),
 * or -EINVAL when buf does not start with one. */
#define SQUASHFS_COMP_GZIP 1
#define SQUASHFS_COMP_XZ   4
#define SQUASHFS_COMP_ZSTD 6
static inline int squashfs_compression(const uint8_t *buf, size_t len)
{
	if (len < SQUASHFS_SB_MIN || buf[0] != 'h' || buf[1] != 's' || buf[2] != 'q' ||
	    buf[3] != 's')
		return -EINVAL;
	return buf[20] | buf[21] << 8;
}

#endif
