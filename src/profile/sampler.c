// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Recording by sampling the page cache with mincore(2): which pages of
 * an image became resident since the last sample (profile/profile.h has
 * what it can and cannot tell).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bgread/resident.h"
#include "profile/profile.h"

int profile_sampler_init(struct profile_sampler *s, int fd, uint64_t size)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t w = 1u << 30;
	uint64_t words;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (fd < 0 || pg < (long)PROFILE_PAGE_MIN || pg > (long)PROFILE_PAGE_MAX || (pg & (pg - 1)))
		return -EINVAL;
	s->fd = fd;
	s->size = size;
	s->page = (uint32_t)pg;
	s->npages = size / s->page + (size % s->page != 0);
	/* A power of two of at least a page, so halving it keeps windows
	 * page aligned; no larger than the file needs. */
	while (w > s->page && w / 2 >= size)
		w /= 2;
	if (w < s->page)
		w = s->page;
	s->window = w;
	words = s->npages / 64 + 1;
	s->seen = words <= SIZE_MAX / sizeof(*s->seen) ? calloc((size_t)words, sizeof(*s->seen)) : NULL;
	s->vec = malloc(w / s->page);
	if (!s->seen || !s->vec) {
		profile_sampler_free(s);
		return -ENOMEM;
	}
	return 0;
}

void profile_sampler_free(struct profile_sampler *s)
{
	free(s->seen);
	free(s->vec);
	s->seen = NULL;
	s->vec = NULL;
}

/* One window of profile_sample(): the pages newly resident, in order. */
struct sample {
	struct profile_sampler *s;
	struct profile *p;
	uint64_t got;
};

static int sample_window(void *arg, const unsigned char *vec, uint64_t off, uint64_t len)
{
	struct sample *c = arg;
	const struct profile_sampler *s = c->s;
	uint64_t base = off / s->page, pages = len / s->page + (len % s->page != 0), i;
	int rc;

	for (i = 0; i < pages; i++) {
		uint64_t *word = &s->seen[(base + i) >> 6], bit = 1ULL << ((base + i) & 63);
		uint64_t poff, plen;

		if (!(vec[i] & 1) || (*word & bit))
			continue;
		*word |= bit;
		poff = (base + i) * s->page;
		plen = s->size - poff < s->page ? s->size - poff : s->page;
		rc = profile_add(c->p, poff, plen);
		if (rc < 0)
			return rc;
		c->got += plen;
	}
	return 0;
}

int profile_sample(struct profile_sampler *s, struct profile *p, uint64_t *added)
{
	struct sample c = { s, p, 0 };
	int rc = bgread_mincore_walk(s->fd, s->size, s->page, &s->window, s->vec, sample_window, &c);

	if (added)
		*added = c.got;
	return rc;
}
