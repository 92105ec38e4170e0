/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The scrub behind a boot from a slot through dm-verity (docs/cache.md,
 * "A bad slot"): the whole mapping read once, in the boot's idle time
 * (bgread/, one reader that yields to the boot's reads of the same
 * mapping); every block read through it is checked against the hash
 * tree, and one that fails is an I/O error. A read error marks the slot
 * bad in its state, so that the next boot boots from the network and its
 * refresh writes the other slot.
 *
 * Everything is opened by cache_scrub_open(), before the switch of root:
 * the mapping, its I/O counters, and the cache, mounted read-only as a
 * running slot's is; cache_scrub_run() opens no path.
 */
#ifndef RAMBOOT_CACHE_SCRUB_H
#define RAMBOOT_CACHE_SCRUB_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bgread/loopstat.h"
#include "cache/cache.h"

struct cache_scrub {
	struct cache c;           /* the cache, read-only down to its superblock */
	int fd;                   /* the mapping (or any device or file), read */
	uint64_t size;
	struct bgread_loop loop;  /* its counters (name "" when none) */
	char name[NAME_MAX + 1];  /* the image's name in the cache */
	int slot;                 /* the slot the mapping reads */
	char sha256[65];          /* the image it holds (hex) */
	char what[PATH_MAX];      /* the mapping's path, for messages */
};

enum cache_scrub_verdict { CACHE_SCRUB_OK, CACHE_SCRUB_BAD, CACHE_SCRUB_ERROR };

struct cache_scrub_result {
	enum cache_scrub_verdict verdict;
	uint64_t bytes;           /* read (OK: the size) */
	uint64_t bad_off;         /* BAD: the first block that failed to read */
	bool marked;              /* BAD: the slot is marked bad in the state */
	double seconds;
	char why[640];            /* BAD, ERROR: what failed (BAD, not marked: why) */
};

/*
 * Open what the scrub of slot (0 or 1, holding the image sha256) of
 * image name in the cache on device needs: mapping (its size, its
 * counters under /sys/dev/block when it is a block device), and the
 * cache, mounted read-only down to its superblock (as the boot's look
 * mounts it). 0 or -errno with err; nothing stays open on failure.
 */
int cache_scrub_open(struct cache_scrub *s, const char *device, const char *name, int slot,
		     const char *sha256, const char *mapping, char *err, size_t errlen);

/* Read the mapping whole, yielding to the boot's reads of it; on a read
 * error, find the first block that fails and mark the slot bad (its
 * state committed under the refresh lock, the cache's file system
 * read-write for that commit only). The outcome in r. */
void cache_scrub_run(struct cache_scrub *s, struct cache_scrub_result *r);

void cache_scrub_close(struct cache_scrub *s);

#endif
