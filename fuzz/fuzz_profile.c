// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: profile_parse() on arbitrary bytes (a boot profile
 * comes from the network at boot). Besides the sanitizers, it checks
 * that a refusal says why and leaves nothing behind, and that an accepted
 * profile is what profile.h promises: canonical hashes, ranges inside
 * the image that never overlap, the same text after profile_format()
 * and a second parse, a match with its own identity, a merge with
 * itself that covers the same bytes, and a copy order (the background
 * reader's scheduler, the profile as its profile list) that hands out
 * every page of the image exactly once, the profile's first.
 * See docs/fuzzing.md.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bgread/sched.h"
#include "profile/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_hash(const char *h)
{
	size_t i;

	if (!memchr(h, '\0', 65))
		abort();
	if (!h[0])
		return;
	if (strlen(h) != 64)
		abort();
	for (i = 0; i < 64; i++)
		if (!strchr("0123456789abcdef", h[i]))
			abort();
}

static int same(const struct profile *a, const struct profile *b)
{
	return a->id.size == b->id.size && a->page_size == b->page_size && a->n == b->n &&
	       !strcmp(a->id.sha256, b->id.sha256) &&
	       !strcmp(a->id.ends_sha256, b->id.ends_sha256) &&
	       (a->n == 0 || !memcmp(a->r, b->r, a->n * sizeof(*a->r)));
}

/* The copy order: every page once, the profile's first range first. */
static void check_order(const struct profile *p, uint64_t max)
{
	uint64_t npages = p->id.size / 4096 + (p->id.size % 4096 != 0);
	uint64_t off, len, total = 0, first = 1;
	struct bgread_ranges r = { 0 };
	struct bgread_sched q;
	unsigned char *seen;
	size_t i;

	if (npages > (1u << 16))
		return;
	seen = calloc(npages + 1, 1);
	if (!seen || bgread_sched_init(&q, p->id.size, 4096, 0))
		abort();
	for (i = 0; i < p->n; i++)
		if (bgread_ranges_add(&r, p->r[i].off, p->r[i].len))
			abort();
	if (bgread_sched_set(&q, BGREAD_LIST_PROFILE, &r))
		abort();
	while (bgread_sched_next(&q, max, &off, &len, NULL)) {
		uint64_t pg;

		if (off % 4096 || !len || off + len > p->id.size || len > (max < 4096 ? 4096 : max))
			abort();
		if (first && p->n && (off < p->r[0].off - p->r[0].off % 4096 ||
				      off >= p->r[0].off + p->r[0].len))
			abort();
		first = 0;
		for (pg = off / 4096; pg * 4096 < off + len; pg++) {
			if (seen[pg])
				abort();
			seen[pg] = 1;
		}
		total += len;
	}
	if (total != p->id.size || !bgread_sched_done(&q))
		abort();
	bgread_sched_free(&q);
	free(seen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile p, back, merged, twice;
	const struct profile *in[2];
	char err[160], *text, *text2;
	size_t len, len2, i, j;
	int rc;

	memset(err, 0x5a, sizeof(err));
	rc = profile_parse((const char *)data, size, &p, err, sizeof(err));
	if (rc) {
		if (rc != -EINVAL || !memchr(err, '\0', sizeof(err)) || !err[0] || p.n || p.r)
			abort();
		return 0;
	}
	check_hash(p.id.sha256);
	check_hash(p.id.ends_sha256);
	if (!p.id.sha256[0] && !p.id.ends_sha256[0])
		abort();
	if (p.page_size < PROFILE_PAGE_MIN || p.page_size > PROFILE_PAGE_MAX ||
	    (p.page_size & (p.page_size - 1)))
		abort();
	for (i = 0; i < p.n; i++) {
		if (!p.r[i].len || p.r[i].off % p.page_size || p.r[i].off >= p.id.size ||
		    p.r[i].len > p.id.size - p.r[i].off)
			abort();
		for (j = 0; j < i && p.n <= 256; j++)
			if (p.r[i].off < p.r[j].off + p.r[j].len && p.r[j].off < p.r[i].off + p.r[i].len)
				abort();
	}
	if (!profile_matches(&p, &p.id))
		abort();

	/* format: reads back the same, and formats to the same text */
	if (profile_format(&p, &text, &len, err, sizeof(err)))
		abort();
	if (profile_parse(text, len, &back, err, sizeof(err)) || !same(&p, &back))
		abort();
	if (profile_format(&back, &text2, &len2, err, sizeof(err)) || len2 != len ||
	    memcmp(text, text2, len))
		abort();
	free(text);
	free(text2);
	profile_free(&back);

	/* merge with itself: the same bytes, the same as a merge of one */
	in[0] = in[1] = &p;
	if (profile_merge(in, 1, &merged, err, sizeof(err)) ||
	    profile_merge(in, 2, &twice, err, sizeof(err)))
		abort();
	if (profile_bytes(&merged) != profile_bytes(&p) || !same(&merged, &twice))
		abort();
	if (profile_format(&merged, &text, &len, err, sizeof(err)))
		abort();
	free(text);
	profile_free(&merged);
	profile_free(&twice);

	check_order(&p, size > 0 ? (uint64_t)data[0] * 1024 : 4096);
	profile_free(&p);
	return 0;
}
