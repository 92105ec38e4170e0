/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Boot profiles: which ranges of an image file a boot read, in the order
 * it first touched them, so that a later boot (prefetch, lazy copy) can
 * read them first. docs/profiles.md has the admin's view.
 *
 *   ramboot-profile 1
 *   image-size 104857600
 *   image-sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
 *   image-ends-sha256 2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae
 *   page-size 4096
 *   range 0 131072
 *   range 104726528 131072
 *   range 8388608 65536
 *
 * The text is strict; anything else is refused with "line N: why":
 * - the first line that is not blank or a '#' comment is
 *   "ramboot-profile 1";
 * - then the header keys, each at most once, in any order, all before the
 *   first range: image-size (bytes), page-size (a power of two from 512 to
 *   1 MiB), image-sha256 and image-ends-sha256 (64 hex digits, upper case
 *   accepted and written back in lower case); image-size and page-size are
 *   required, and at least one of the two hashes;
 * - then "range OFFSET LENGTH" lines (bytes) in first-touch order, so not
 *   sorted by offset. OFFSET is a multiple of page-size, LENGTH is not 0
 *   and is a multiple of page-size unless the range ends at image-size (the
 *   file's last, partial page); a range never reaches past image-size and
 *   no two ranges overlap (a page is touched first only once). None at all
 *   is allowed (a boot that read nothing new);
 * - numbers are decimal digits only: no sign, no leading zero (but "0"),
 *   no overflow; fields are separated by spaces or tabs; a line is at most
 *   255 bytes (a trailing CR is dropped); no NUL byte anywhere; unknown
 *   keys are refused (a later format gets a new version number).
 *
 * Identity: a profile is applied only to the image it was recorded on.
 * image-sha256 is the SHA-256 of the whole image file (as its manifest or
 * ramboot.sha256= gives it); image-ends-sha256 is a SHA-256 any client can
 * compute cheaply without a manifest: over the first MiB of the file
 * followed by its last MiB (the two parts never overlap: a file of at most
 * 2 MiB is hashed whole, once). profile_matches() wants the same size,
 * equality of every hash both sides know, and at least one hash both
 * sides know. The recorder always writes image-ends-sha256, and
 * image-sha256 when it was told the manifest's.
 */
#ifndef RAMBOOT_PROFILE_H
#define RAMBOOT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#define PROFILE_MAX (64u << 20)          /* larger profile files are refused */
#define PROFILE_ENDS (1u << 20)          /* image-ends-sha256: first and last MiB */
#define PROFILE_PAGE_MIN 512u
#define PROFILE_PAGE_MAX (1u << 20)

/* What an image is: size and the hashes known of it ("" when unknown). */
struct profile_id {
	uint64_t size;
	char sha256[65];          /* of the whole image, lower-case hex */
	char ends_sha256[65];     /* of the first and last MiB */
};

struct profile_range {
	uint64_t off, len;        /* bytes */
};

struct profile {
	struct profile_id id;
	uint32_t page_size;
	struct profile_range *r;  /* first-touch order, never overlapping */
	size_t n, cap;
};

/* An empty profile (no ranges, no identity); profile_free() releases what
 * it grew to. Both leave *p empty and ready for reuse. */
void profile_init(struct profile *p);
void profile_free(struct profile *p);

/* Append [off, off+len) as the next range in first-touch order; a range
 * that starts where the last one ends extends it. No other check:
 * profile_format() validates the whole profile. 0 or -ENOMEM. */
int profile_add(struct profile *p, uint64_t off, uint64_t len);

/* Bytes covered by the ranges. */
uint64_t profile_bytes(const struct profile *p);

/* Parse buf[0..len) (see above) into *p, which need not be initialised
 * and is left empty on failure. 0, -EINVAL with "line N: why" in err, or
 * -ENOMEM. Never reads past len; buf need not be NUL-terminated. */
int profile_parse(const char *buf, size_t len, struct profile *p, char *err, size_t errlen);

/* Read and parse a profile file (path not prefixed). A regular file only
 * (a FIFO never blocks: opened O_NONBLOCK), at most PROFILE_MAX bytes.
 * 0 or -errno with a message in err. */
int profile_load(const char *path, struct profile *p, char *err, size_t errlen);

/* The text of *p in a malloc'd buffer (*text, *len; not NUL-terminated
 * beyond len). Refuses (-EINVAL, with why in err) a profile that
 * profile_parse() would refuse, so what is written always reads back. */
int profile_format(const struct profile *p, char **text, size_t *len, char *err, size_t errlen);

/* Format and write to path (not prefixed) through outfile: the old file
 * stays until the new one is complete and synced; a symbolic link or a
 * non-regular file at path is refused. 0 or -errno with err set. */
int profile_write(const struct profile *p, const char *path, char *err, size_t errlen);

/* The identity of the image open at fd, of size bytes: id->size and
 * id->ends_sha256 (reads at most 2 MiB with pread); id->sha256 is left
 * "" for the caller to fill from a manifest. 0 or -errno (-EIO when the
 * file is shorter than size). */
int profile_image_id(int fd, uint64_t size, struct profile_id *id);

/* Is p a profile of the image id describes? (The rule is above.) */
bool profile_matches(const struct profile *p, const struct profile_id *id);

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
 * resident (cmd_profile checks this before it records).
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
 * The copy order of an image: the profile's ranges in order, then the
 * rest from the start to the end. One bit per page (a 3 GiB image in
 * 4 KiB pages: 96 KiB) records what is taken: done by other means
 * (rangeq_mark_done: copied already, resident in the page cache and
 * copied first) or handed out by rangeq_next(). No page is handed out
 * twice.
 */
struct rangeq {
	uint64_t size;
	uint32_t page;
	uint64_t npages;
	uint64_t left;            /* pages not taken */
	uint64_t *taken;          /* one bit per page */
	struct profile_range *pr; /* the profile's ranges, in pages */
	size_t npr, ri;           /* how many, the next one */
	uint64_t cur;             /* the next page to look at: in pr[ri], then
				   * of the sequential pass */
};

/* size: the image's size; page: the granularity (a power of two, at least
 * 512: normally the system's page size); p: a profile of this image (its
 * image-size must be size) or NULL (sequential only). The profile may be
 * freed afterwards. 0, -EINVAL or -ENOMEM. */
int rangeq_init(struct rangeq *q, uint64_t size, uint32_t page, const struct profile *p);
/* Take the pages that lie wholly in [off, off+len) (the last, partial
 * page of the image counts when the range reaches the end): a range that
 * does not cover a page never takes it, so nothing partly copied is ever
 * skipped. Parts beyond the image are ignored. */
void rangeq_mark_done(struct rangeq *q, uint64_t off, uint64_t len);
/* The next range to copy: consecutive pages not yet taken, inside one
 * profile range while there are any, at most max bytes (rounded down to
 * pages, at least one page; the image's last range may end on its
 * partial page). The range is taken. 1 with *off, *len set, or 0 when
 * every page is taken. */
int rangeq_next(struct rangeq *q, uint64_t max, uint64_t *off, uint64_t *len);
/* Bytes not taken yet. */
uint64_t rangeq_left(const struct rangeq *q);
void rangeq_free(struct rangeq *q);

/* Does mincore() tell the truth about this file to this process? The
 * kernel shows the page cache of a file only to a process that owns it,
 * may write it, or has CAP_FOWNER; to others every page is resident. */
bool profile_mincore_shows(const struct stat *st, const char *path);

#endif
