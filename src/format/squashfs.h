/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one fact of squashfs the loader needs: a superblock ("hsqs", then
 * bytes_used as a little-endian 64-bit number at offset 40) says how
 * long the file system is, so a truncated image is known as one from
 * any source, before or after decompression.
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

#endif
