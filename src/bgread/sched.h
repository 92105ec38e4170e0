/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The scheduler of a background reader: which bytes of the image to read
 * next. Three lists in priority order: what the page cache holds
 * (refreshed while the reader runs), a boot profile's ranges (in the
 * order the boot first read them), the whole image in offset order.
 * One bit per page records what was handed out (a 3 GiB image in 4 KiB
 * pages: 96 KiB); a page is handed out once. Pieces are page aligned
 * (the last one ends at the image size) and never cross a range of
 * their list. Not locked: the caller serialises.
 */
#ifndef RAMBOOT_BGREAD_SCHED_H
#define RAMBOOT_BGREAD_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "bgread/resident.h"

enum { BGREAD_LIST_RESIDENT, BGREAD_LIST_PROFILE, BGREAD_LIST_SEQ, BGREAD_NLISTS };

/* bgread_sched_init() flags: no offset-order list (only what the other
 * two lists name is ever handed out). */
#define BGREAD_SCHED_NO_SEQ 1u

struct bgread_sched {
	uint64_t size, page, npages;
	uint64_t *taken;          /* bitmap: page handed out */
	uint64_t ntaken;          /* pages handed out */
	struct bgread_ranges list[BGREAD_NLISTS];
	size_t idx[BGREAD_NLISTS];  /* current range of each list */
	uint64_t pos[BGREAD_NLISTS]; /* where to look next in it */
};

/* page: a power of two. 0 or -ENOMEM. */
int bgread_sched_init(struct bgread_sched *s, uint64_t size, uint64_t page, unsigned flags);
void bgread_sched_free(struct bgread_sched *s);
/* Replace one list (BGREAD_LIST_RESIDENT or BGREAD_LIST_PROFILE) by r,
 * which the scheduler takes over (r is left empty). Ranges are widened
 * to whole pages and cut at the image size. 0, -EINVAL or -ENOMEM. */
int bgread_sched_set(struct bgread_sched *s, int list, struct bgread_ranges *r);
/* The next piece of at most max bytes (a multiple of the page size, at
 * least one page); false when nothing is left. *list (may be NULL) tells
 * where it came from. */
bool bgread_sched_next(struct bgread_sched *s, uint64_t max, uint64_t *off, uint64_t *len,
		       int *list);
/* Every page handed out? */
bool bgread_sched_done(const struct bgread_sched *s);

#endif
