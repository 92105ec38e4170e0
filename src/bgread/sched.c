// SPDX-License-Identifier: GPL-2.0-or-later
/* The scheduler of a background reader (sched.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bgread/sched.h"

static bool page_taken(const struct bgread_sched *s, uint64_t p)
{
	return s->taken[p / 64] & (1ULL << (p % 64));
}

/* The first page from p on, before end, not yet handed out. */
static uint64_t first_free(const struct bgread_sched *s, uint64_t p, uint64_t end)
{
	while (p < end) {
		if (s->taken[p / 64] == ~0ULL) {
			p = (p / 64 + 1) * 64;
			continue;
		}
		if (!page_taken(s, p))
			return p;
		p++;
	}
	return end;
}

int bgread_sched_init(struct bgread_sched *s, uint64_t size, uint64_t page, unsigned flags)
{
	memset(s, 0, sizeof(*s));
	s->size = size;
	s->page = page;
	s->npages = (size + page - 1) / page;
	s->taken = calloc(s->npages / 64 + 1, sizeof(uint64_t));
	if (!s->taken)
		return -ENOMEM;
	if (!(flags & BGREAD_SCHED_NO_SEQ) &&
	    bgread_ranges_add(&s->list[BGREAD_LIST_SEQ], 0, size) < 0) {
		bgread_sched_free(s);
		return -ENOMEM;
	}
	return 0;
}

void bgread_sched_free(struct bgread_sched *s)
{
	int l;

	free(s->taken);
	s->taken = NULL;
	for (l = 0; l < BGREAD_NLISTS; l++)
		bgread_ranges_free(&s->list[l]);
}

int bgread_sched_set(struct bgread_sched *s, int list, struct bgread_ranges *r)
{
	struct bgread_ranges n = { 0 };
	size_t i;

	if (list != BGREAD_LIST_RESIDENT && list != BGREAD_LIST_PROFILE)
		return -EINVAL;
	for (i = 0; i < r->n; i++) {
		uint64_t off = r->v[i].off, end = off + r->v[i].len;

		if (end < off || end > s->size)     /* overflow, or past the end */
			end = s->size;
		off &= ~(s->page - 1);
		if (end > off && bgread_ranges_add(&n, off, end - off) < 0) {
			bgread_ranges_free(&n);
			return -ENOMEM;
		}
	}
	bgread_ranges_free(r);
	bgread_ranges_free(&s->list[list]);
	s->list[list] = n;
	s->idx[list] = 0;
	s->pos[list] = 0;
	return 0;
}

bool bgread_sched_next(struct bgread_sched *s, uint64_t max, uint64_t *off, uint64_t *len,
		       int *list)
{
	uint64_t maxpages = max / s->page ? max / s->page : 1;
	int l;

	for (l = 0; l < BGREAD_NLISTS; l++) {
		struct bgread_ranges *r = &s->list[l];

		while (s->idx[l] < r->n) {
			const struct bgread_range *g = &r->v[s->idx[l]];
			uint64_t first = g->off / s->page;
			uint64_t end = (g->off + g->len + s->page - 1) / s->page, p, q;

			if (end > s->npages)
				end = s->npages;
			p = first_free(s, s->pos[l] > first ? s->pos[l] : first, end);
			if (p >= end) {
				s->idx[l]++;
				s->pos[l] = 0;
				continue;
			}
			for (q = p; q < end && q - p < maxpages && !page_taken(s, q); q++)
				s->taken[q / 64] |= 1ULL << (q % 64);
			s->ntaken += q - p;
			s->pos[l] = q;
			*off = p * s->page;
			*len = (q * s->page < s->size ? q * s->page : s->size) - *off;
			if (list)
				*list = l;
			return true;
		}
	}
	return false;
}

bool bgread_sched_done(const struct bgread_sched *s)
{
	return s->ntaken == s->npages;
}
