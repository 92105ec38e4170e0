/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The boot profile text format: which ranges of an image file a boot
 * read, in the order it first touched them, so that a later boot
 * (prefetch, lazy copy) can read them first. Recording and merging are
 * profile/profile.h's; docs/profiles.md has the admin's view.
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
#ifndef RAMBOOT_FORMAT_PROFILE_H
#define RAMBOOT_FORMAT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* Would profile_parse() accept the text of *p? 0, -EINVAL with why in
 * err (no line number: "range 3 (...): why"), or -ENOMEM. */
int profile_check(const struct profile *p, char *err, size_t errlen);

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

/* The text's own rules, for other small text files of the profile
 * subsystem (the recorder's pid file): a decimal number (digits only, no
 * sign, no leading zero but "0", no overflow): 0 or -EINVAL; and the
 * split of line at spaces and tabs into at most max fields (the number
 * of fields, max + 1 when there are more; line is cut in place). */
int profile_parse_u64(const char *s, uint64_t *out);
int profile_fields(char *line, char **f, int max);

#endif
