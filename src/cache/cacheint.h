/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of src/cache/ share: the state file and the side files
 * of a slot, read and written in an image's directory.
 */
#ifndef RAMBOOT_CACHEINT_H
#define RAMBOOT_CACHEINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/cindex.h"
#include "format/cstate.h"

/* Read the regular file name in dirfd (never through a symbolic link,
 * never waiting on a FIFO), at most max bytes: a malloc'ed *buf and *len.
 * 0 or -errno with err (-EFBIG: larger than max). */
int cache_read_at(int dirfd, const char *name, size_t max, char **buf, size_t *len, char *err,
		  size_t errlen);

/* The state in dirfd: 0, -ENOENT (none: an image never refreshed), or
 * -errno with err (-EINVAL: corrupt; -ELOOP: a symbolic link). With ci,
 * the active slot's chunk index too, checked against the state (a
 * mismatch is -EINVAL); ci->n == 0 when there is no active slot. */
int cache_state_read(int dirfd, struct cstate *s, struct cindex *ci, char *err, size_t errlen);

/* Commit s as the state of dirfd: written aside, fsync, rename over the
 * old one, fsync of the directory (lib/outfile). 0 or -errno with err. */
int cache_state_commit(int dirfd, const struct cstate *s, char *err, size_t errlen);

/* The name of slot i's file, and of its side files ("a", "a.cindex",
 * "a.manifest"). */
void cache_slot_name(int i, const char *suffix, char *out, size_t len);

/* Mark slot bad in the state of image name in the cache c (mounted
 * read-write), under the lock a refresh takes, when it still holds the
 * image sha256 (hex; NULL: whatever it holds): cache_mark_bad() on a
 * cache already open (bad.c). 0 or -errno with err (-EBUSY: a refresh
 * of the image runs). */
struct cache;
int cache_mark_bad_in(struct cache *c, const char *name, int slot, const char *sha256,
		      char *err, size_t errlen);

/* The directory of image name in the cache c (*dir, or -1) and its state,
 * with lock the lock a refresh takes (held while *dir is open: closing
 * it lets go) (cboot.c). 0 or -errno with err. */
int cache_image_state(struct cache *c, const char *name, bool lock, int *dir,
		      struct cstate *st, char *err, size_t errlen);

#endif
