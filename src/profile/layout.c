// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A boot profile against the files of its squashfs image: which files
 * the boot read, in the order it first read them, as a mksquashfs -sort
 * file; and how scattered the reads are (profile/profile.h).
 */
#include <errno.h>
#include <lzma.h>
#include <lzo/lzo1x.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "lib/fdio.h"
#include "lib/msg.h"
#include "profile/profile.h"

/* ---- the image's tables, read with the libraries' one-shot decoders ---- */

static int img_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	ssize_t n = pread_full(*(int *)ctx, buf, len, (off_t)off);

	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EIO;
}

/* One metadata block: squashfs's gzip is a zlib stream, xz an xz
 * stream, lzo raw lzo1x, zstd one frame. */
static int img_decode(void *ctx, unsigned comp, const uint8_t *in, size_t inlen, uint8_t *out,
		      size_t cap, size_t *outlen)
{
	(void)ctx;
	switch (comp) {
	case SQFS_GZIP: {
		uLongf n = (uLongf)cap;

		if (uncompress(out, &n, in, (uLong)inlen) != Z_OK)
			return -EBADMSG;
		*outlen = n;
		return 0;
	}
	case SQFS_XZ: {
		uint64_t mem = 16ULL << 20;   /* a dictionary of at most 1 MiB, the largest block */
		size_t ip = 0, op = 0;

		if (lzma_stream_buffer_decode(&mem, 0, NULL, in, &ip, inlen, out, &op, cap) != LZMA_OK)
			return -EBADMSG;
		*outlen = op;
		return 0;
	}
	case SQFS_LZO: {
		lzo_uint n = cap;

		if (lzo1x_decompress_safe(in, inlen, out, &n, NULL) != LZO_E_OK)
			return -EBADMSG;
		*outlen = n;
		return 0;
	}
	case SQFS_ZSTD: {
		size_t n = ZSTD_decompress(out, cap, in, inlen);

		if (ZSTD_isError(n))
			return -EBADMSG;
		*outlen = n;
		return 0;
	}
	default:
		return -EPROTONOSUPPORT;
	}
}

int profile_sqfs_load(int fd, uint64_t size, struct sqfs *s, char *err, size_t errlen)
{
	struct sqfs_io io = { &fd, img_read, img_decode };

	return sqfs_read(s, size, &io, err, errlen);
}

/* ---- ranges to files ---- */

struct ext {
	uint64_t off, end;
	size_t file;
};

static int cmp_ext(const void *a, const void *b)
{
	const struct ext *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

struct by_off {
	uint64_t off, end;
	size_t order;
};

static int cmp_by_off(const void *a, const void *b)
{
	const struct by_off *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* A segment tree over the ranges in offset order (t[m + i] = i, each
 * inner node the one of its two with the lower order): the range of
 * [lo, hi) read first, among those an extent meets. */
static size_t seg_min(const size_t *t, const struct by_off *r, size_t m, size_t lo, size_t hi)
{
	size_t best = SIZE_MAX;

	for (lo += m, hi += m; lo < hi; lo /= 2, hi /= 2) {
		if ((lo & 1) && (best == SIZE_MAX || r[t[lo]].order < r[best].order))
			best = t[lo];
		if ((hi & 1) && (best == SIZE_MAX || r[t[hi - 1]].order < r[best].order))
			best = t[hi - 1];
		lo += lo & 1;
		hi -= hi & 1;
	}
	return best;
}

struct hit {
	size_t order;             /* SIZE_MAX: not read */
	uint64_t pos;             /* where in that range the boot reached it */
	size_t file;
	char *path;
};

static int cmp_hit(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Each file's first read: order of the first range that meets one of
 * its extents (data blocks, fragment block), and the offset reached. */
static int first_reads(const struct sqfs *s, const struct profile *p, struct hit *h)
{
	struct ext *e = NULL;
	struct by_off *r = NULL;
	size_t *t = NULL, ne = 0, m = p->n, i;
	int rc = -ENOMEM;

	for (i = 0; i < s->nf; i++) {
		h[i].order = SIZE_MAX;
		h[i].pos = 0;
		h[i].file = i;
	}
	if (!m || !s->nf)
		return 0;
	e = malloc(2 * s->nf * sizeof(*e));
	r = malloc(m * sizeof(*r));
	t = malloc(2 * m * sizeof(*t));
	if (!e || !r || !t)
		goto out;
	for (i = 0; i < s->nf; i++) {
		const struct sqfs_file *f = &s->f[i];

		if (f->data_len)
			e[ne++] = (struct ext){ f->data_off, f->data_off + f->data_len, i };
		if (f->frag_len)
			e[ne++] = (struct ext){ f->frag_off, f->frag_off + f->frag_len, i };
	}
	qsort(e, ne, sizeof(*e), cmp_ext);
	for (i = 0; i < m; i++)
		r[i] = (struct by_off){ p->r[i].off, p->r[i].off + p->r[i].len, i };
	qsort(r, m, sizeof(*r), cmp_by_off);
	for (i = 0; i < m; i++)
		t[m + i] = i;
	for (i = m - 1; i > 0; i--)
		t[i] = r[t[2 * i]].order < r[t[2 * i + 1]].order ? t[2 * i] : t[2 * i + 1];
	for (i = 0; i < ne; i++) {
		size_t lo = 0, hi = m, a, z, k;
		uint64_t pos;

		/* ranges never overlap: their ends are in offset order too */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (r[mid].end <= e[i].off)
				lo = mid + 1;
			else
				hi = mid;
		}
		a = lo;
		for (hi = m; lo < hi; ) {
			size_t mid = lo + (hi - lo) / 2;

			if (r[mid].off < e[i].end)
				lo = mid + 1;
			else
				hi = mid;
		}
		z = lo;
		if (a >= z)
			continue;
		k = seg_min(t, r, m, a, z);
		pos = r[k].off > e[i].off ? r[k].off : e[i].off;
		if (r[k].order < h[e[i].file].order ||
		    (r[k].order == h[e[i].file].order && pos < h[e[i].file].pos)) {
			h[e[i].file].order = r[k].order;
			h[e[i].file].pos = pos;
		}
	}
	rc = 0;
out:
	free(e);
	free(r);
	free(t);
	return rc;
}

int profile_files_read(const struct sqfs *s, const struct profile *p, struct profile_read **out,
		       size_t *n)
{
	struct hit *h;
	struct profile_read *o = NULL;
	char path[SQFS_PATH_MAX + 1];
	size_t i, k = 0;
	int rc;

	*out = NULL;
	*n = 0;
	h = calloc(s->nf ? s->nf : 1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	rc = first_reads(s, p, h);
	for (i = 0; rc == 0 && i < s->nf; i++) {
		if (h[i].order == SIZE_MAX)
			continue;
		if (sqfs_path(s, i, path, sizeof(path)) < 0 || !(h[k].path = strdup(path))) {
			rc = -ENOMEM;
			break;
		}
		h[k].order = h[i].order;
		h[k].pos = h[i].pos;
		h[k].file = i;
		k++;
	}
	if (rc == 0) {
		qsort(h, k, sizeof(*h), cmp_hit);
		o = calloc(k ? k : 1, sizeof(*o));
		if (!o)
			rc = -ENOMEM;
	}
	for (i = 0; i < k; i++) {
		if (o) {
			o[i].file = h[i].file;
			o[i].path = h[i].path;
		} else {
			free(h[i].path);
		}
	}
	free(h);
	if (rc < 0)
		return rc;
	*out = o;
	*n = k;
	return 0;
}

void profile_files_free(struct profile_read *r, size_t n)
{
	size_t i;

	for (i = 0; r && i < n; i++)
		free(r[i].path);
	free(r);
}

/* ---- files read, grouped by directory ---- */

struct grp {
	struct profile_read r;
	size_t dlen;  /* the directory's part of the path: up to its last '/' */
	size_t idx;   /* place in first-read order */
	size_t rank;  /* the first-read place of the directory's first file */
};

static int cmp_dir(const struct grp *x, const struct grp *y)
{
	int c = memcmp(x->r.path, y->r.path, x->dlen < y->dlen ? x->dlen : y->dlen);

	if (c)
		return c;
	return x->dlen < y->dlen ? -1 : x->dlen > y->dlen;
}

static int cmp_dir_idx(const void *a, const void *b)
{
	const struct grp *x = a, *y = b;
	int c = cmp_dir(x, y);

	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_rank_name(const void *a, const void *b)
{
	const struct grp *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->r.path, y->r.path);
}

int profile_group_dirs(struct profile_read *r, size_t n)
{
	struct grp *g;
	size_t i, first = 0;

	if (n < 2)
		return 0;
	g = calloc(n, sizeof(*g));
	if (!g)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const char *sl = strrchr(r[i].path, '/');

		g[i].r = r[i];
		g[i].dlen = sl ? (size_t)(sl - r[i].path) : 0;
		g[i].idx = i;
	}
	/* each directory's files together, the first one read first */
	qsort(g, n, sizeof(*g), cmp_dir_idx);
	for (i = 0; i < n; i++) {
		if (i > 0 && cmp_dir(&g[i - 1], &g[i]) != 0)
			first = i;
		g[i].rank = g[first].idx;
	}
	qsort(g, n, sizeof(*g), cmp_rank_name);
	for (i = 0; i < n; i++)
		r[i] = g[i].r;
	free(g);
	return 0;
}

/* mksquashfs reads a name up to the first white space, a backslash
 * quoting the next character; a line starting with '#' is a comment.
 * A newline cannot be quoted (it reads line by line), nor a name that
 * ends in "/" and "*" (taken for its directory). */
static bool sortable(const char *path)
{
	size_t l = strlen(path);

	return !strchr(path, '\n') && !(l >= 2 && !strcmp(path + l - 2, "/*"));
}

int profile_sortfile(const struct profile_read *r, size_t n, char **text, size_t *len,
		     size_t *skipped)
{
	size_t cap = 256, used = 0, i, rank = 0;
	char *t = malloc(cap);

	*skipped = 0;
	if (!t)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const char *c;
		int prio;

		if (!sortable(r[i].path)) {
			(*skipped)++;
			continue;
		}
		prio = rank < PROFILE_SORT_TOP ? (int)(PROFILE_SORT_TOP - rank) : 1;
		rank++;
		/* each byte quoted at most, and the priority */
		while (cap - used < 2 * strlen(r[i].path) + 16) {
			char *q = realloc(t, cap * 2);

			if (!q) {
				free(t);
				return -ENOMEM;
			}
			t = q;
			cap *= 2;
		}
		for (c = r[i].path; *c; c++) {
			if (*c == '\\' || *c == ' ' || *c == '\t' || *c == '\v' || *c == '\f' ||
			    *c == '\r' || (c == r[i].path && *c == '#'))
				t[used++] = '\\';
			t[used++] = *c;
		}
		used += (size_t)snprintf(t + used, cap - used, " %d\n", prio);
	}
	*text = t;
	*len = used;
	return 0;
}

static int cmp_range_off(const void *a, const void *b)
{
	const struct profile_range *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

int profile_spread(const struct profile *p, struct profile_spread *sp)
{
	struct profile_range *r;
	size_t i;

	memset(sp, 0, sizeof(*sp));
	if (!p->n)
		return 0;
	for (i = 1; i < p->n; i++)
		if (p->r[i].off != p->r[i - 1].off + p->r[i - 1].len)
			sp->seeks++;
	r = malloc(p->n * sizeof(*r));
	if (!r)
		return -ENOMEM;
	memcpy(r, p->r, p->n * sizeof(*r));
	qsort(r, p->n, sizeof(*r), cmp_range_off);
	sp->extents = 1;
	for (i = 1; i < p->n; i++)
		if (r[i].off != r[i - 1].off + r[i - 1].len)
			sp->extents++;
	sp->spread = r[p->n - 1].off + r[p->n - 1].len - r[0].off;
	free(r);
	return 0;
}
