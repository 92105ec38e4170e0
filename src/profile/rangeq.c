// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The copy order of an image (rangeq): the profile's ranges first, then
 * the rest in order, each page handed out once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

/* The first bit in [from, to) that is val, or to. */
static uint64_t bit_find(const uint64_t *b, uint64_t from, uint64_t to, bool val)
{
	while (from < to) {
		uint64_t w = b[from >> 6];

		if (!val)
			w = ~w;
		w &= ~0ULL << (from & 63);
		if (w) {
			uint64_t i = (from & ~63ULL) + (uint64_t)__builtin_ctzll(w);

			return i < to ? i : to;
		}
		from = (from | 63) + 1;
	}
	return to;
}

/* Set the bits [from, to). */
static void bit_set_range(uint64_t *b, uint64_t from, uint64_t to)
{
	while (from < to) {
		unsigned int lo = (unsigned int)(from & 63);
		uint64_t span = to - from < 64 - lo ? to - from : 64 - lo;
		uint64_t mask = (span == 64 ? ~0ULL : ((1ULL << span) - 1)) << lo;
		uint64_t *w = &b[from >> 6];

		*w |= mask;
		from += span;
	}
}

static uint64_t *bitmap_new(uint64_t bits)
{
	uint64_t words = bits / 64 + 1;

	if (words > SIZE_MAX / sizeof(uint64_t))
		return NULL;
	return calloc((size_t)words, sizeof(uint64_t));
}

int rangeq_init(struct rangeq *q, uint64_t size, uint32_t page, const struct profile *p)
{
	size_t i;

	memset(q, 0, sizeof(*q));
	if (page < PROFILE_PAGE_MIN || (page & (page - 1)))
		return -EINVAL;
	if (p && p->id.size != size)
		return -EINVAL;
	q->size = size;
	q->page = page;
	q->npages = size / page + (size % page != 0);
	q->taken = bitmap_new(q->npages);
	if (!q->taken)
		return -ENOMEM;
	if (p && p->n) {
		if (p->n > SIZE_MAX / sizeof(*q->pr)) {
			rangeq_free(q);
			return -ENOMEM;
		}
		q->pr = malloc(p->n * sizeof(*q->pr));
		if (!q->pr) {
			rangeq_free(q);
			return -ENOMEM;
		}
		for (i = 0; i < p->n; i++) {
			uint64_t off = p->r[i].off, len = p->r[i].len, end;

			if (len == 0 || off >= size || len > size - off) {
				rangeq_free(q);
				return -EINVAL;
			}
			end = off + len;
			/* in pages: every page the range touches */
			q->pr[i].off = off / page;
			q->pr[i].len = end / page + (end % page != 0) - q->pr[i].off;
		}
		q->npr = p->n;
		q->cur = q->pr[0].off;
	}
	return 0;
}

void rangeq_free(struct rangeq *q)
{
	free(q->taken);
	free(q->pr);
	memset(q, 0, sizeof(*q));
}

static int take(struct rangeq *q, uint64_t x, uint64_t lim, uint64_t *off, uint64_t *len)
{
	uint64_t y = bit_find(q->taken, x, lim, true);
	uint64_t end = y == q->npages ? q->size : y * q->page;

	bit_set_range(q->taken, x, y);
	q->cur = y;
	*off = x * q->page;
	*len = end - *off;
	return 1;
}

int rangeq_next(struct rangeq *q, uint64_t max, uint64_t *off, uint64_t *len)
{
	uint64_t maxp = max / q->page ? max / q->page : 1, x;

	while (q->ri < q->npr) {
		const struct profile_range *r = &q->pr[q->ri];
		uint64_t end = r->off + r->len;

		x = bit_find(q->taken, q->cur > r->off ? q->cur : r->off, end, false);
		if (x < end)
			return take(q, x, end - x > maxp ? x + maxp : end, off, len);
		q->ri++;
		q->cur = q->ri < q->npr ? q->pr[q->ri].off : 0;
	}
	x = bit_find(q->taken, q->cur, q->npages, false);
	if (x >= q->npages)
		return 0;
	return take(q, x, q->npages - x > maxp ? x + maxp : q->npages, off, len);
}
