// SPDX-License-Identifier: GPL-2.0-or-later
/* Page-cache residency (resident.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bgread/resident.h"
#include "bgread/yield.h"
#include "lib/base.h"

#define RESIDENT_WINDOW GiB    /* mincore() over the image in such windows */

int bgread_ranges_add(struct bgread_ranges *r, uint64_t off, uint64_t len)
{
	if (len == 0)
		return 0;
	if (r->n > 0 && r->v[r->n - 1].off + r->v[r->n - 1].len == off) {
		r->v[r->n - 1].len += len;
		return 0;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct bgread_range *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n].off = off;
	r->v[r->n].len = len;
	r->n++;
	return 0;
}

void bgread_ranges_free(struct bgread_ranges *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

int bgread_ranges_from_mincore(struct bgread_ranges *r, const unsigned char *vec, size_t npages,
			       uint64_t base, uint64_t page, uint64_t limit)
{
	size_t i = 0;

	while (i < npages) {
		size_t j;
		uint64_t off, end;

		if (!(vec[i] & 1)) {
			i++;
			continue;
		}
		for (j = i; j < npages && (vec[j] & 1); j++)
			;
		off = base + i * page;
		end = base + j * page;
		if (end > limit)
			end = limit;
		if (end > off && bgread_ranges_add(r, off, end - off) < 0)
			return -ENOMEM;
		i = j;
	}
	return 0;
}

uint64_t bgread_resident_bytes(const unsigned char *vec, uint64_t off, uint64_t len, uint64_t page)
{
	uint64_t sum = 0, p, end = off + len;
	size_t i;

	for (i = 0, p = off; p < end; i++, p += page)
		if (vec[i] & 1)
			sum += (end - p < page ? end - p : page);
	return sum;
}

bool bgread_mincore_shows(const struct stat *st, const char *path)
{
	if (geteuid() == 0 || st->st_uid == geteuid())
		return true;
	return faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0;
}

uint64_t bgread_chunk_resident(int fd, uint64_t off, uint64_t len, uint64_t page)
{
	unsigned char vec[BGREAD_CHUNK / 512 + 1];
	uint64_t res = 0;
	void *m;

	if (len == 0 || (len + page - 1) / page > sizeof(vec))
		return 0;
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)off);
	if (m == MAP_FAILED)
		return 0;
	if (mincore(m, len, vec) == 0)
		res = bgread_resident_bytes(vec, off, len, page);
	(void)munmap(m, len);
	return res;
}

int bgread_mincore_walk(int fd, uint64_t size, uint64_t page, size_t *window, unsigned char *vec,
			bgread_window_fn *fn, void *arg)
{
	uint64_t off = 0;
	int rc = 0;

	while (off < size && rc == 0) {
		size_t len = size - off < *window ? (size_t)(size - off) : *window;
		/* Mapping the file reads nothing: no page table entry is made
		 * until the mapping is touched, and it never is. */
		void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)off);

		if (m == MAP_FAILED) {
			rc = -errno;
			if (rc == -ENOMEM && *window > page) {
				*window /= 2;
				rc = 0;
			}
			continue;
		}
		/* For a file mapping, mincore() looks up each page in the
		 * file's page cache: bit 0 set when present and up to date
		 * (a page still being read is not, and shows up next time). */
		rc = mincore(m, len, vec) < 0 ? -errno : 0;
		(void)munmap(m, len);
		if (rc == 0)
			rc = fn(arg, vec, off, len);
		off += len;
	}
	return rc;
}

/* bgread_scan_resident()'s walk: the file's size and page, the ranges. */
struct scan {
	struct bgread_ranges *out;
	uint64_t size, page;
};

static int scan_window(void *arg, const unsigned char *vec, uint64_t off, uint64_t len)
{
	const struct scan *sc = arg;

	return bgread_ranges_from_mincore(sc->out, vec, (len + sc->page - 1) / sc->page, off,
					  sc->page, sc->size);
}

int bgread_scan_resident(int fd, uint64_t size, uint64_t page, struct bgread_ranges *out)
{
	struct scan sc = { out, size, page };
	size_t win = RESIDENT_WINDOW;
	unsigned char *vec = malloc(win / page);
	int rc;

	if (!vec)
		return -ENOMEM;
	rc = bgread_mincore_walk(fd, size, page, &win, vec, scan_window, &sc);
	free(vec);
	return rc;
}
