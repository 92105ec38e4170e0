/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Page-cache residency of an image: what the boot has read already
 * (mincore), as ranges, and what a read will take without the network.
 *
 * The kernel shows the page cache of a file only to a process that owns
 * it, may write it, or has CAP_FOWNER (mm/mincore.c, can_do_mincore());
 * to others it says every page is resident. Every reader asks
 * bgread_mincore_shows() first and treats nothing as resident when it
 * says no.
 */
#ifndef RAMBOOT_BGREAD_RESIDENT_H
#define RAMBOOT_BGREAD_RESIDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct bgread_range {
	uint64_t off, len;
};

struct bgread_ranges {
	struct bgread_range *v;
	size_t n, cap;
};

/* Append [off, off + len); a range that starts where the last one ends
 * extends it. 0 or -ENOMEM. An empty range is ignored. */
int bgread_ranges_add(struct bgread_ranges *r, uint64_t off, uint64_t len);
void bgread_ranges_free(struct bgread_ranges *r);

/* The resident runs of a mincore() vector: page i (bit 0 of vec[i])
 * covers base + i * page; each run of resident pages is appended as one
 * range, cut at limit (the file size). 0 or -ENOMEM. */
int bgread_ranges_from_mincore(struct bgread_ranges *r, const unsigned char *vec, size_t npages,
			       uint64_t base, uint64_t page, uint64_t limit);

/* Bytes of [off, off + len) that a mincore() vector of the pages from
 * off (page aligned) on shows resident; the last page may be partial. */
uint64_t bgread_resident_bytes(const unsigned char *vec, uint64_t off, uint64_t len,
			       uint64_t page);

/* Does mincore() tell this process the truth about the file st (at
 * path)? See above. */
bool bgread_mincore_shows(const struct stat *st, const char *path);

/* Bytes of [off, off + len) of fd the page cache holds now (len at most
 * BGREAD_CHUNK; off page aligned): what a read takes without the source.
 * 0 when it cannot be told. */
uint64_t bgread_chunk_resident(int fd, uint64_t off, uint64_t len, uint64_t page);

/* One window of bgread_mincore_walk(): page i of [off, off + len) of
 * the file is resident when bit 0 of vec[i] is set (the last page may
 * be partial). 0 to go on, -errno to stop the walk. */
typedef int bgread_window_fn(void *arg, const unsigned char *vec, uint64_t off, uint64_t len);

/*
 * mincore() over the first size bytes of fd, one window of *window
 * bytes (a power of two times page) at a time, each handed to fn. vec
 * holds *window / page bytes. While the address space is short of a
 * window (mmap's ENOMEM), *window is halved, down to a page, and stays
 * so for the next walk. 0, fn's error, or -errno.
 */
int bgread_mincore_walk(int fd, uint64_t size, uint64_t page, size_t *window, unsigned char *vec,
			bgread_window_fn *fn, void *arg);

/* What the page cache holds of the first size bytes of fd, appended to
 * out (mincore in windows of 1 GiB). 0 or -errno (out may hold part). */
int bgread_scan_resident(int fd, uint64_t size, uint64_t page, struct bgread_ranges *out);

#endif
