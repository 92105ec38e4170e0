// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * profile_merge(): the profiles of one image recorded on several clients
 * as one, each byte ranked by its earliest normalised first touch
 * (profile/profile.h has the rule).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/msg.h"
#include "profile/profile.h"

#define MERGE_PIECE (64u << 10)   /* rank resolution of profile_merge() */
#define MERGE_PIECES_LOG2 18      /* about this many pieces per input at most */

struct piece {
	uint64_t off, len;
	double rank;              /* normalised first-touch position, [0, 1) */
	size_t in, seq;           /* input, piece number in it: tie-breakers */
};

static int cmp_piece(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->in != y->in)
		return x->in < y->in ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* [off, off+len) widened to whole pages of pg, within size. */
static void widen(uint64_t off, uint64_t len, uint64_t pg, uint64_t size, uint64_t *s, uint64_t *e)
{
	uint64_t end = off + len, rem = end % pg;

	*s = off - off % pg;
	if (rem)
		end = size - end > pg - rem ? end + (pg - rem) : size;
	*e = end;
}

/* Hash h (key name) of input i against the one the inputs before it
 * had (*seen): the same or none. *all stays true while every input has
 * one. 0 or -EINVAL. */
static int agree(const char *h, const char *name, size_t i, const char **seen, bool *all,
		 char *err, size_t errlen)
{
	if (!h[0]) {
		*all = false;
		return 0;
	}
	if (*seen && strcmp(*seen, h))
		return rb_errfmt(err, errlen, -EINVAL, "profile %zu has another %s", i + 1, name);
	*seen = h;
	return 0;
}

/* The identity the inputs share (see profile.h). */
static int merge_id(const struct profile *const *in, size_t n, struct profile_id *id,
		    char *err, size_t errlen)
{
	const char *sha = NULL, *ends = NULL;
	bool all_sha = true, all_ends = true;
	size_t i;
	int rc;

	memset(id, 0, sizeof(*id));
	id->size = in[0]->id.size;
	for (i = 0; i < n; i++) {
		const struct profile_id *x = &in[i]->id;

		if (x->size != id->size)
			return rb_errfmt(err, errlen, -EINVAL, "profile %zu is of an image of %" PRIu64
				      " bytes, profile 1 of %" PRIu64, i + 1, x->size, id->size);
		rc = agree(x->sha256, "image-sha256", i, &sha, &all_sha, err, errlen);
		if (rc == 0)
			rc = agree(x->ends_sha256, "image-ends-sha256", i, &ends, &all_ends, err, errlen);
		if (rc < 0)
			return rc;
	}
	if (all_sha)
		memcpy(id->sha256, sha, sizeof(id->sha256));
	if (all_ends)
		memcpy(id->ends_sha256, ends, sizeof(id->ends_sha256));
	if (!all_sha && !all_ends)
		return rb_errfmt(err, errlen, -EINVAL, "the profiles have no image hash in common");
	return 0;
}

/* Union-find over the elementary intervals: the first one at or after i
 * that no piece has claimed yet (m - 1: none). */
static size_t next_free(size_t *nx, size_t i)
{
	while (nx[i] != i) {
		nx[i] = nx[nx[i]];
		i = nx[i];
	}
	return i;
}

static size_t bound_index(const uint64_t *b, size_t m, uint64_t v)
{
	size_t lo = 0, hi = m;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The piece size: fine enough to rank within long ranges, coarse
 * enough that a huge profile stays a bounded number of pieces. */
static uint64_t piece_size(const struct profile *const *in, size_t n, uint64_t pg)
{
	uint64_t piece, maxt = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t t = profile_bytes(in[i]);   /* <= size: no overlaps */

		if (t > maxt)
			maxt = t;
	}
	piece = MERGE_PIECE > pg ? MERGE_PIECE : pg;
	if ((maxt >> MERGE_PIECES_LOG2) > piece)
		piece = ((maxt >> MERGE_PIECES_LOG2) + pg - 1) / pg * pg;
	return piece;
}

struct pieces {
	struct piece *pc;
	size_t n, cap;
};

/* Input i's ranges, widened to pages of pg, cut into pieces ranked by
 * their normalised first-touch position. 0 or -ENOMEM. */
static int cut(struct pieces *ps, const struct profile *p, size_t i, uint64_t pg, uint64_t size,
	       uint64_t piece)
{
	uint64_t total = 0, cum = 0, s, e, o;
	size_t seq = 0, j;

	for (j = 0; j < p->n; j++) {
		widen(p->r[j].off, p->r[j].len, pg, size, &s, &e);
		total += e - s < UINT64_MAX - total ? e - s : UINT64_MAX - total;
	}
	for (j = 0; j < p->n; j++) {
		widen(p->r[j].off, p->r[j].len, pg, size, &s, &e);
		for (o = s; o < e; ) {
			uint64_t l = e - o < piece ? e - o : piece;
			struct piece *pc;

			if (ps->n == ps->cap) {
				size_t cap = ps->cap ? ps->cap * 2 : 256;

				pc = cap <= SIZE_MAX / sizeof(*pc) ? realloc(ps->pc, cap * sizeof(*pc)) : NULL;
				if (!pc)
					return -ENOMEM;
				ps->pc = pc;
				ps->cap = cap;
			}
			pc = &ps->pc[ps->n++];
			pc->off = o;
			pc->len = l;
			pc->rank = (double)cum / (double)total;
			pc->in = i;
			pc->seq = seq++;
			cum += l;
			o += l;
		}
	}
	return 0;
}

/* The pieces pc[0..np), sorted by rank, into out: by rank, each piece
 * claims the elementary intervals (between consecutive piece
 * boundaries) that no earlier piece did. 0 or -ENOMEM. */
static int claim(const struct piece *pc, size_t np, struct profile *out)
{
	uint64_t *bounds = NULL;
	size_t *nx = NULL, m = 0, i;
	int rc = -ENOMEM;

	if (np > SIZE_MAX / 2 / sizeof(*bounds))
		return -ENOMEM;
	bounds = malloc(2 * np * sizeof(*bounds));
	nx = malloc(2 * np * sizeof(*nx));
	if (!bounds || !nx)
		goto out;
	for (i = 0; i < np; i++) {
		bounds[2 * i] = pc[i].off;
		bounds[2 * i + 1] = pc[i].off + pc[i].len;
	}
	qsort(bounds, 2 * np, sizeof(*bounds), cmp_u64);
	for (i = 0; i < 2 * np; i++)
		if (m == 0 || bounds[m - 1] != bounds[i])
			bounds[m++] = bounds[i];
	for (i = 0; i < m; i++)
		nx[i] = i;
	rc = 0;
	for (i = 0; i < np && rc == 0; i++) {
		size_t a = bound_index(bounds, m, pc[i].off);
		size_t z = bound_index(bounds, m, pc[i].off + pc[i].len);
		size_t x;

		for (x = next_free(nx, a); x < z && rc == 0; x = next_free(nx, x)) {
			rc = profile_add(out, bounds[x], bounds[x + 1] - bounds[x]);
			nx[x] = x + 1;
		}
	}
out:
	free(bounds);
	free(nx);
	return rc;
}

int profile_merge(const struct profile *const *in, size_t n, struct profile *out,
		  char *err, size_t errlen)
{
	struct pieces ps = { NULL, 0, 0 };
	uint64_t pg = 0, piece;
	size_t i;
	int rc;

	profile_init(out);
	if (n == 0)
		return rb_errfmt(err, errlen, -EINVAL, "no profile to merge");
	for (i = 0; i < n; i++) {
		char why[160];

		rc = profile_check(in[i], why, sizeof(why));
		if (rc < 0)
			return rb_errfmt(err, errlen, rc, "profile %zu: %s", i + 1, why);
		if (in[i]->page_size > pg)
			pg = in[i]->page_size;
	}
	rc = merge_id(in, n, &out->id, err, errlen);
	if (rc < 0)
		return rc;
	out->page_size = (uint32_t)pg;

	piece = piece_size(in, n, pg);
	for (i = 0, rc = 0; i < n && rc == 0; i++)
		rc = cut(&ps, in[i], i, pg, out->id.size, piece);
	if (rc == 0 && ps.n) {
		qsort(ps.pc, ps.n, sizeof(*ps.pc), cmp_piece);
		rc = claim(ps.pc, ps.n, out);
	}
	free(ps.pc);
	if (rc < 0) {
		profile_free(out);
		rb_errfmt(err, errlen, rc, "out of memory");
	}
	return rc;
}
