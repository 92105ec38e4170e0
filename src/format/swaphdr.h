/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The version-1 swap header, byte for byte as util-linux mkswap writes it:
 * the first page holds 1024 zeroed boot bytes, then version, last_page,
 * nr_badpages, UUID and label, and "SWAPSPACE2" in its last ten bytes.
 */
#ifndef RAMBOOT_SWAPHDR_H
#define RAMBOOT_SWAPHDR_H

#include <stddef.h>
#include <stdint.h>

#define SWAPHDR_LABEL "ramboot-zram"
#define SWAPHDR_LABEL_MAX 16     /* the field; mkswap fills 15 and a NUL */
/* mkswap refuses fewer pages: the kernel needs a few beyond the header. */
#define SWAPHDR_MIN_PAGES 10

/* Fill page (pagesize bytes) with the header of a swap area of size bytes.
 * 0, or -EINVAL (page size not a power of two >= 4096, area too small,
 * label longer than 15 bytes). */
int swaphdr_build(void *page, size_t pagesize, uint64_t size,
		  const uint8_t uuid[16], const char *label);

/* Parse a first page: 0 with label (NUL-terminated) and uuid filled,
 * -EINVAL when it is not a version-1 swap header. */
int swaphdr_parse(const void *page, size_t pagesize, char label[SWAPHDR_LABEL_MAX + 1],
		  uint8_t uuid[16]);

/* A random (version 4) UUID from getrandom(2). 0 or -errno. */
int swaphdr_uuid_random(uint8_t uuid[16]);
/* "01234567-89ab-..." <-> 16 bytes. parse: 0 or -EINVAL. */
int swaphdr_uuid_parse(const char *s, uint8_t uuid[16]);
void swaphdr_uuid_format(const uint8_t uuid[16], char out[37]);

/* Write the header to the start of fd (a device of size bytes) and
 * fsync it. 0 or -errno. */
int swaphdr_write(int fd, size_t pagesize, uint64_t size,
		  const uint8_t uuid[16], const char *label);
/* Read the header of fd. 0, -EINVAL (no swap header) or -errno. */
int swaphdr_read(int fd, size_t pagesize, char label[SWAPHDR_LABEL_MAX + 1], uint8_t uuid[16]);

#endif
