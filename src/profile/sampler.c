// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Recording by sampling the page cache with mincore(2): which pages of
 * an image became resident since the last sample (profile/profile.h has
 * what it can and cannot tell).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

int profile_sample(struct profile_sampler *s, struct profile *p, uint64_t *added)
{
	uint64_t off = 0, got = 0;
	int rc = 0;

	while (off < s->size) {
		size_t len = s->size - off < s->window ? (size_t)(s->size - off) : s->window;
		uint64_t base = off / s->page, i, pages;
		void *map;

		/* Mapping the file reads nothing: no page table entry is made
		 * until the mapping is touched, and it never is. */
		map = mmap(NULL, len, PROT_READ, MAP_SHARED, s->fd, (off_t)off);
		if (map == MAP_FAILED) {
			rc = -errno;
			if (rc == -ENOMEM && s->window > s->page) {
				s->window /= 2;   /* short of address space */
				continue;
			}
			break;
		}
		/* For a file mapping, mincore() looks up each page in the
		 * file's page cache: bit 0 set when present and up to date
		 * (a page still being read is not, and shows up next time). */
		rc = mincore(map, len, s->vec) < 0 ? -errno : 0;
		(void)munmap(map, len);
		if (rc < 0)
			break;
		pages = len / s->page + (len % s->page != 0);
		for (i = 0; i < pages; i++) {
			uint64_t *word = &s->seen[(base + i) >> 6], bit = 1ULL << ((base + i) & 63);
			uint64_t poff, plen;

			if (!(s->vec[i] & 1) || (*word & bit))
				continue;
			*word |= bit;
			poff = (base + i) * s->page;
			plen = s->size - poff < s->page ? s->size - poff : s->page;
			rc = profile_add(p, poff, plen);
			if (rc < 0)
				goto out;
			got += plen;
		}
		off += len;
	}
out:
	if (added)
		*added = got;
	return rc;
}
