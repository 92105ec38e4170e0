/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Boot profiles: merging the profiles of several clients, recording one
 * by sampling the page cache. The text format and the identity of an
 * image are format/profile.h's; the copy order a profile gives is the
 * background reader's (bgread/sched.h); docs/profiles.md has the
 * admin's view.
 */
#ifndef RAMBOOT_PROFILE_H
#define RAMBOOT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/profile.h"
#include "format/sqfs.h"

/*
 * Merge the profiles of one image recorded on several clients into *out
 * (initialised here; left empty on failure).
 *
 * - The inputs must agree on the image: the same size, and every hash
 *   two of them know is the same. The merged profile keeps a hash only
 *   when all inputs have it, and at least one must remain (else -EINVAL:
 *   nothing would tell that they describe one image).
 * - page-size is the largest of the inputs'; ranges are widened to it.
 * - Order: each input's ranges are cut into pieces (64 KiB, or more for
 *   very large profiles: at most about 2^18 pieces per input), and a
 *   piece's rank is its normalised first-touch position in its profile:
 *   the bytes of that profile before it divided by that profile's bytes,
 *   so 0 for the first byte the boot read and near 1 for the last, for
 *   every client whatever its workload's size. A byte's rank is the
 *   earliest over the inputs that hold it; the output lists every byte
 *   of any input once, by rank (ties: the earlier input, then the
 *   earlier piece), and joins pieces that follow each other both in
 *   order and on disk.
 * So merging one profile gives it back (with neighbouring ranges
 * joined), merging a profile with itself too, and the union of the
 * inputs is covered exactly.
 * 0, -EINVAL (err says why) or -ENOMEM.
 */
int profile_merge(const struct profile *const *in, size_t n, struct profile *out,
		  char *err, size_t errlen);

/*
 * Recording by sampling the page cache. mincore(2) on a shared read-only
 * mapping of the file tells, page by page, whether that page of the
 * file's page cache is present and up to date now. The page cache is the
 * file's, shared by every reader: a loop device with buffered I/O (dio=0)
 * reads its backing file through it, so the pages the boot made the loop
 * device read show up there, and only the mapping's page table entries
 * (none, we never touch the mapping) are ours.
 *
 * What it cannot tell: who read a page (the boot, the kernel's readahead
 * around the boot's reads, another reader: all count), when within a
 * sample interval (pages that became resident in one interval are
 * ordered by offset), and a page read and evicted again between two
 * samples (memory pressure) is missed. Pages resident before the first
 * sample are all in the first interval. A loop device with direct I/O
 * (dio=1) bypasses the page cache: nothing is seen. And the kernel shows
 * the page cache of a file only to a process that owns the file, may
 * write it, or has CAP_FOWNER; to anyone else it says every page is
 * resident (profile_record_run() asks bgread_mincore_shows() before it
 * records).
 */
struct profile_sampler {
	int fd;
	uint64_t size;
	uint32_t page;            /* the system's page size */
	uint64_t npages;
	uint64_t *seen;           /* one bit per page: resident in a sample */
	unsigned char *vec;       /* mincore()'s answer for one window */
	size_t window;            /* bytes mapped at a time: 1 GiB, less when
				   * the address space is short (32 bits) */
};

/* fd: the image, open for reading; size: its size (a regular file or a
 * block device). 0, -EINVAL or -ENOMEM. */
int profile_sampler_init(struct profile_sampler *s, int fd, uint64_t size);
/* One sample: the pages resident now and in no earlier sample are added
 * to p (profile_add(), in offset order, neighbours joined; the file's
 * last page as a partial range). *added (may be NULL): the bytes added.
 * 0 or -errno (mmap, mincore). */
int profile_sample(struct profile_sampler *s, struct profile *p, uint64_t *added);
void profile_sampler_free(struct profile_sampler *s);

/*
 * The recorder (`ramboot profile record`; boot starts it in a child for
 * ramboot.profile=record): samples the page cache of the image every
 * interval until a stop point (until, the stop file, SIGTERM or SIGINT,
 * which it catches), then writes the profile through outfile. Its pid
 * and start time are in /run/ramboot/profile.pid (below the root prefix)
 * while it records, for `ramboot profile --stop`; every path is resolved
 * at the start, so it lives on after a switch of root.
 */
#define PROFILE_DIR "/run/ramboot"
#define PROFILE_OUT PROFILE_DIR "/profile"
#define PROFILE_PID PROFILE_DIR "/profile.pid"

struct profile_record_opts {
	const char *image;        /* the image file or block device: required */
	const char *out;          /* NULL: /run/ramboot/profile below the root prefix */
	const char *stop_file;    /* NULL: none */
	const char *manifest;     /* tag with the SHA-256 its manifest gives; NULL: none */
	char sha256[65];          /* or this one, lower-case hex; "": none */
	double interval;          /* seconds between samples, above 0 */
	double until;             /* stop this many seconds after the start; < 0: no limit */
};

/* The defaults: every path NULL, no hash, interval 0.2 s, no limit. */
void profile_record_opts_init(struct profile_record_opts *o);

/* Record. Every error is said with rb_err(); 0 or -errno. A recorder
 * that fails once its pid file is out leaves it: `--stop` then reports
 * that no profile was written. */
int profile_record_run(const struct profile_record_opts *o);

/* Stop the running recorder (SIGTERM) and wait, at most 30 s, until it
 * has written its profile and removed its pid file. Every error is said
 * with rb_err(); 0 or -errno. */
int profile_record_stop(void);

/*
 * Layout: a profile against the files of its squashfs image
 * (layout.c). profile_sqfs_load() reads the tables of the image open at
 * fd (size bytes) with format/sqfs.h's reader, its metadata blocks
 * decoded by zlib, liblzma, liblzo2 or libzstd (lzma and lz4 images are
 * refused: -EPROTONOSUPPORT). 0 or -errno with why in err.
 */
int profile_sqfs_load(int fd, uint64_t size, struct sqfs *s, char *err, size_t errlen);

/* A file the profile read: its index in sqfs.f and its path. */
struct profile_read {
	size_t file;
	char *path;
};

/*
 * The files of s whose data blocks or fragment block a range of p
 * meets, in the order the boot first read them: by the first range (in
 * p's order) that meets one of their extents, then by the offset where
 * it met it, then by path (the files whose tails share a fragment
 * block). Files never read are not listed. 0 or -ENOMEM.
 */
int profile_files_read(const struct sqfs *s, const struct profile *p, struct profile_read **out,
		       size_t *n);
void profile_files_free(struct profile_read *r, size_t n);

/*
 * The files read, reordered as the sort file lists them: by directory,
 * the directories in the order the boot first read one of their files,
 * and within a directory by name, as mksquashfs orders them. The read
 * set still comes first and contiguous; what this keeps from
 * mksquashfs's own layout is that a directory's files (a package's, as
 * a rule) share their fragment blocks with each other, so that a
 * rebuild that changes one package changes about as many compressed
 * blocks as without a sort file (docs/profiles.md, "Sorting the
 * image"). 0 or -ENOMEM.
 */
int profile_group_dirs(struct profile_read *r, size_t n);

/*
 * The mksquashfs -sort file of the files read, in that order: one line
 * "PATH PRIORITY" each, PATH relative to the image's root (as mksquashfs
 * takes it with one source directory), white space, backslashes and a
 * leading '#' quoted with a backslash. mksquashfs writes the files of
 * the highest priority first and gives 0 to those not listed, so the
 * first file read gets PROFILE_SORT_TOP, the next one less, down to 1
 * (the files after the first 32767 all get 1: among them mksquashfs's
 * own order). A path mksquashfs cannot read back (a newline in it, or
 * one that ends in "/" and "*") is left out and counted in *skipped.
 * 0 or -ENOMEM.
 */
#define PROFILE_SORT_TOP 32767
int profile_sortfile(const struct profile_read *r, size_t n, char **text, size_t *len,
		     size_t *skipped);

/* How scattered the reads of a profile are: the distinct extents they
 * make on disk (ranges that touch are one), the bytes between the first
 * byte and the last one read (spread), and the seeks (a range, in
 * first-read order, that does not start where the one before ended). */
struct profile_spread {
	uint64_t extents, spread, seeks;
};
int profile_spread(const struct profile *p, struct profile_spread *sp);

#endif
