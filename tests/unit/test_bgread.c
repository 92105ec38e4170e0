// SPDX-License-Identifier: GPL-2.0-or-later
/* The background reader (bgread/): ranges from a mincore() vector, the
 * scheduler's order, the back-off, pacing and memory rules, the loop
 * device's counters; and the reader pool on a real file: it reads every
 * byte once, and its cancellation never touches a reader that has ended
 * (a joined thread's ID is not valid any more). */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "lib/base.h"
#include "bgread/loopstat.h"
#include "bgread/pool.h"
#include "bgread/resident.h"
#include "bgread/sched.h"
#include "bgread/yield.h"
#include "profile/profile.h"

#define PG 4096ULL

static void ranges_merge(void)
{
	struct bgread_ranges r = { 0 };

	CHECK_EQ_INT(bgread_ranges_add(&r, 0, 100), 0);
	CHECK_EQ_INT(bgread_ranges_add(&r, 100, 50), 0);     /* adjacent: extends */
	CHECK_EQ_INT(bgread_ranges_add(&r, 200, 0), 0);      /* empty: ignored */
	CHECK_EQ_INT(bgread_ranges_add(&r, 300, 10), 0);
	CHECK_EQ_INT(bgread_ranges_add(&r, 0, 10), 0);       /* out of order: kept */
	CHECK_EQ_INT(r.n, 3);
	CHECK_EQ_INT(r.v[0].off, 0);
	CHECK_EQ_INT(r.v[0].len, 150);
	CHECK_EQ_INT(r.v[1].off, 300);
	CHECK_EQ_INT(r.v[2].off, 0);
	bgread_ranges_free(&r);
	CHECK_EQ_INT(r.n, 0);
	CHECK(r.v == NULL);
}

static void ranges_from_mincore(void)
{
	/* Only bit 0 counts: the other bits are reserved. */
	const unsigned char vec[] = { 1, 1, 0, 1, 0x2, 0, 0x81, 1, 1 };
	struct bgread_ranges r = { 0 };
	uint64_t limit = 9 * PG - 100;

	CHECK_EQ_INT(bgread_ranges_from_mincore(&r, vec, sizeof(vec), 0, PG, limit), 0);
	CHECK_EQ_INT(r.n, 3);
	CHECK_EQ_INT(r.v[0].off, 0);
	CHECK_EQ_INT(r.v[0].len, 2 * PG);
	CHECK_EQ_INT(r.v[1].off, 3 * PG);
	CHECK_EQ_INT(r.v[1].len, PG);
	CHECK_EQ_INT(r.v[2].off, 6 * PG);
	CHECK_EQ_INT(r.v[2].len, limit - 6 * PG);          /* cut at the file size */
	bgread_ranges_free(&r);

	/* A second window continues the list; a run that goes on across
	 * the windows' border becomes one range. */
	{
		const unsigned char w1[] = { 0, 1 }, w2[] = { 1, 0 };

		CHECK_EQ_INT(bgread_ranges_from_mincore(&r, w1, 2, 0, PG, 100 * PG), 0);
		CHECK_EQ_INT(bgread_ranges_from_mincore(&r, w2, 2, 2 * PG, PG, 100 * PG), 0);
		CHECK_EQ_INT(r.n, 1);
		CHECK_EQ_INT(r.v[0].off, PG);
		CHECK_EQ_INT(r.v[0].len, 2 * PG);
		bgread_ranges_free(&r);
	}
	/* Nothing resident, nothing at all. */
	{
		const unsigned char none[4] = { 0 };

		CHECK_EQ_INT(bgread_ranges_from_mincore(&r, none, 4, 0, PG, 4 * PG), 0);
		CHECK_EQ_INT(r.n, 0);
	}
}

static void resident_bytes(void)
{
	const unsigned char vec[] = { 1, 0, 1 };

	CHECK_EQ_INT(bgread_resident_bytes(vec, 8 * PG, 3 * PG, PG), 2 * PG);
	/* The last page is partial: only what the range covers counts. */
	CHECK_EQ_INT(bgread_resident_bytes(vec, 0, 2 * PG + 10, PG), PG + 10);
	CHECK_EQ_INT(bgread_resident_bytes(vec, 0, 100, PG), 100);
	CHECK_EQ_INT(bgread_resident_bytes(vec + 1, 0, 100, PG), 0);
}

/* Hand out everything, checking each piece against the expected
 * (page, pages, list) triples; then nothing is left. */
struct piece {
	uint64_t page, pages;
	int list;
};

static void expect_pieces(struct bgread_sched *s, uint64_t max, const struct piece *want, size_t n,
			  uint64_t last_len)
{
	uint64_t off, len;
	size_t i;
	int list;

	for (i = 0; i < n; i++) {
		if (!bgread_sched_next(s, max, &off, &len, &list)) {
			printf("#   piece %zu missing\n", i);
			tap_case_failed = 1;
			return;
		}
		CHECK_EQ_INT(off, want[i].page * PG);
		CHECK_EQ_INT(list, want[i].list);
		if (i + 1 == n && last_len)
			CHECK_EQ_INT(len, last_len);
		else
			CHECK_EQ_INT(len, want[i].pages * PG);
	}
	CHECK(!bgread_sched_next(s, max, &off, &len, &list));
	CHECK(bgread_sched_done(s));
}

static void sched_order(void)
{
	struct bgread_sched s;
	struct bgread_ranges res = { 0 }, ord = { 0 };
	const uint64_t size = 10 * PG + 100;                /* 11 pages, the last partial */
	const struct piece want[] = {
		{ 2, 2, BGREAD_LIST_RESIDENT },
		{ 8, 1, BGREAD_LIST_PROFILE },
		{ 4, 2, BGREAD_LIST_PROFILE },     /* [3, 6): page 3 is taken already */
		{ 0, 2, BGREAD_LIST_SEQ },
		{ 6, 2, BGREAD_LIST_SEQ },
		{ 9, 2, BGREAD_LIST_SEQ },
	};

	CHECK_EQ_INT(bgread_sched_init(&s, size, PG, 0), 0);
	CHECK_EQ_INT(s.npages, 11);
	CHECK_EQ_INT(bgread_ranges_add(&res, 2 * PG, 2 * PG), 0);
	CHECK_EQ_INT(bgread_sched_set(&s, BGREAD_LIST_RESIDENT, &res), 0);
	CHECK_EQ_INT(res.n, 0);                               /* taken over */
	CHECK_EQ_INT(bgread_ranges_add(&ord, 8 * PG + 7, 10), 0); /* widened to page 8 */
	CHECK_EQ_INT(bgread_ranges_add(&ord, 3 * PG, 3 * PG), 0);
	CHECK_EQ_INT(bgread_sched_set(&s, BGREAD_LIST_PROFILE, &ord), 0);
	CHECK_EQ_INT(bgread_sched_set(&s, BGREAD_LIST_SEQ, &ord), -EINVAL);
	expect_pieces(&s, 2 * PG, want, ARRAY_SIZE(want), PG + 100);
	bgread_sched_free(&s);
}

static void sched_chunks(void)
{
	struct bgread_sched s;
	uint64_t off, len, total = 0, next = 0;

	/* Plain offset order in pieces of at most max, max not a multiple
	 * of the page rounded down, a max below a page still one page. */
	CHECK_EQ_INT(bgread_sched_init(&s, 1000 * PG, PG, 0), 0);
	while (bgread_sched_next(&s, 256 * PG + 5, &off, &len, NULL)) {
		CHECK_EQ_INT(off, next);
		CHECK(len <= 256 * PG);
		next = off + len;
		total += len;
	}
	CHECK_EQ_INT(total, 1000 * PG);
	bgread_sched_free(&s);

	CHECK_EQ_INT(bgread_sched_init(&s, 3 * PG, PG, 0), 0);
	CHECK(bgread_sched_next(&s, 10, &off, &len, NULL));
	CHECK_EQ_INT(len, PG);
	bgread_sched_free(&s);

	/* A one-byte image: one piece of one byte. */
	CHECK_EQ_INT(bgread_sched_init(&s, 1, PG, 0), 0);
	CHECK(bgread_sched_next(&s, 1 << 20, &off, &len, NULL));
	CHECK_EQ_INT(off, 0);
	CHECK_EQ_INT(len, 1);
	CHECK(!bgread_sched_next(&s, 1 << 20, &off, &len, NULL));
	bgread_sched_free(&s);
}

static void sched_refresh(void)
{
	struct bgread_sched s;
	struct bgread_ranges r = { 0 };
	uint64_t off, len;
	int list;

	/* The resident list is replaced while the copy runs (a rescan):
	 * new resident pages come first, pages handed out never again, and
	 * the offset order goes on where it was. */
	CHECK_EQ_INT(bgread_sched_init(&s, 200 * PG, PG, 0), 0);
	CHECK(bgread_sched_next(&s, 10 * PG, &off, &len, &list));
	CHECK_EQ_INT(off, 0);
	CHECK_EQ_INT(list, BGREAD_LIST_SEQ);
	CHECK_EQ_INT(bgread_ranges_add(&r, 5 * PG, 10 * PG), 0);   /* 5..9 taken already */
	CHECK_EQ_INT(bgread_ranges_add(&r, 100 * PG, 2 * PG), 0);
	CHECK_EQ_INT(bgread_sched_set(&s, BGREAD_LIST_RESIDENT, &r), 0);
	CHECK(bgread_sched_next(&s, 10 * PG, &off, &len, &list));
	CHECK_EQ_INT(off, 10 * PG);
	CHECK_EQ_INT(len, 5 * PG);
	CHECK_EQ_INT(list, BGREAD_LIST_RESIDENT);
	CHECK(bgread_sched_next(&s, 10 * PG, &off, &len, &list));
	CHECK_EQ_INT(off, 100 * PG);
	CHECK_EQ_INT(len, 2 * PG);
	CHECK(bgread_sched_next(&s, 10 * PG, &off, &len, &list));
	CHECK_EQ_INT(off, 15 * PG);                  /* sequential: 10..14 are gone */
	CHECK_EQ_INT(list, BGREAD_LIST_SEQ);
	/* Ranges past the end are cut; one that wraps around is cut too. */
	CHECK_EQ_INT(bgread_ranges_add(&r, 199 * PG, 50 * PG), 0);
	CHECK_EQ_INT(bgread_ranges_add(&r, 198 * PG, UINT64_MAX - 100), 0);
	CHECK_EQ_INT(bgread_ranges_add(&r, 500 * PG, PG), 0);
	CHECK_EQ_INT(bgread_sched_set(&s, BGREAD_LIST_PROFILE, &r), 0);
	CHECK_EQ_INT(s.list[BGREAD_LIST_PROFILE].n, 2);
	CHECK(bgread_sched_next(&s, 10 * PG, &off, &len, &list));
	CHECK_EQ_INT(off, 199 * PG);
	CHECK_EQ_INT(len, PG);
	CHECK(bgread_sched_next(&s, 10 * PG, &off, &len, &list));
	CHECK_EQ_INT(off, 198 * PG);
	CHECK_EQ_INT(len, PG);
	bgread_sched_free(&s);
}

static void backoff(void)
{
	const long want[] = { 5, 10, 20, 40, 80, 160, 200, 200 };
	struct bgread_backoff b = { 0 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(want); i++)
		CHECK_EQ_INT(bgread_backoff_step(&b, true), want[i]);
	CHECK_EQ_INT(bgread_backoff_step(&b, false), 0);
	CHECK_EQ_INT(bgread_backoff_step(&b, true), BGREAD_BACKOFF_MIN_MS);
	CHECK_EQ_INT(bgread_backoff_step(&b, false), 0);
	CHECK_EQ_INT(bgread_backoff_step(&b, false), 0);
}

static void stat_line(void)
{
	uint64_t r = 99;

	CHECK_EQ_INT(bgread_parse_stat("     1234        0    56789      100        0        0"
				     "        0        0        2      120      120\n", &r), 0);
	CHECK_EQ_INT(r, 1234);
	r = 99;
	CHECK_EQ_INT(bgread_parse_stat("", &r), -EINVAL);
	CHECK_EQ_INT(bgread_parse_stat("x 1", &r), -EINVAL);
	CHECK_EQ_INT(bgread_parse_stat("12x 1", &r), -EINVAL);
	CHECK_EQ_INT(bgread_parse_stat("99999999999999999999999 1", &r), -EINVAL);
	CHECK_EQ_INT(r, 99);
}

/* Guesses wait for the boot's idle time; predicted reads only for its
 * reads in flight. */
static void yield_rules(void)
{
	struct bgread_yield y = { 0 };
	uint64_t d = 10;

	/* First look: the count may have moved just now; a guess waits the
	 * quiet time, a predicted read does not. */
	CHECK(bgread_yield_step(&y, 99.0, &d, 0, false) > 0);
	CHECK_EQ_INT(bgread_yield_step(&y, 99.0, &d, 0, true), 0);
	/* The count stood still for the quiet time: go. */
	CHECK_EQ_INT(bgread_yield_step(&y, 100.0, &d, 0, false), 0);
	/* The boot completed reads since: a guess waits the quiet time... */
	d = 11;
	CHECK(bgread_yield_step(&y, 100.01, &d, 0, false) > 0);
	CHECK(bgread_yield_step(&y, 100.01, &d, 0, false) <= BGREAD_QUIET_MS);
	/* ...a predicted read does not. */
	CHECK_EQ_INT(bgread_yield_step(&y, 100.02, &d, 0, true), 0);
	/* Quiet long enough: the guess goes. */
	CHECK_EQ_INT(bgread_yield_step(&y, 100.01 + BGREAD_QUIET_MS / 1000.0 + 0.001, &d, 0, false), 0);
	/* Reads in flight: everyone backs off, doubling. */
	CHECK_EQ_INT(bgread_yield_step(&y, 101.0, &d, 2, true), BGREAD_BACKOFF_MIN_MS);
	CHECK_EQ_INT(bgread_yield_step(&y, 101.1, &d, 2, false), 2 * BGREAD_BACKOFF_MIN_MS);
	/* In flight counts as activity: a guess then waits the quiet time. */
	CHECK(bgread_yield_step(&y, 101.15, &d, 0, false) > 0);
	CHECK_EQ_INT(bgread_yield_step(&y, 101.15, &d, 0, true), 0);
	/* Without the completed count, reads in flight alone decide. */
	CHECK_EQ_INT(bgread_yield_step(&y, 105.0, NULL, 0, false), 0);
	CHECK_EQ_INT(bgread_yield_step(&y, 105.0, NULL, 1, false), BGREAD_BACKOFF_MIN_MS);
}

/* A reader that reads through the device it yields to: the count after
 * its own read is not the boot's; what comes after it is. */
static void yield_own(void)
{
	struct bgread_yield y = { 0 };
	uint64_t d = 10;

	CHECK(bgread_yield_step(&y, 99.0, &d, 0, false) > 0);
	CHECK_EQ_INT(bgread_yield_step(&y, 100.0, &d, 0, false), 0);
	/* Our read completed 3 requests: taken as ours, no wait. */
	d = 13;
	bgread_yield_own(&y, d);
	CHECK_EQ_INT(bgread_yield_step(&y, 100.01, &d, 0, false), 0);
	/* The boot read one since: a guess waits the quiet time. */
	d = 14;
	CHECK(bgread_yield_step(&y, 100.02, &d, 0, false) > 0);
}

static void yield_sizes(void)
{
	struct bgread_yield y = { 0 };

	CHECK_EQ_INT(bgread_yield_size(&y, 4096), BGREAD_READ_FIRST);
	/* 2.5 MB/s (20 Mbit): 125 KB in 50 ms -> 64 KiB reads. */
	bgread_yield_took(&y, 256 * 1024, 256 * 1024 / 2.5e6);
	CHECK_EQ_INT(bgread_yield_size(&y, 4096), 64 * 1024);
	/* A fast link: up to BGREAD_CHUNK, never more. */
	y.rate = 0;
	bgread_yield_took(&y, 1 << 20, 0.001);
	CHECK_EQ_INT(bgread_yield_size(&y, 4096), BGREAD_CHUNK);
	/* 12.5 MB/s (100 Mbit): 625 KB in 50 ms -> 512 KiB. */
	y.rate = 12.5e6;
	CHECK_EQ_INT(bgread_yield_size(&y, 4096), 512 * 1024);
	/* Tiny reads and a clock that did not move teach nothing. */
	bgread_yield_took(&y, 4096, 0.5);
	bgread_yield_took(&y, 1 << 20, 0);
	CHECK(y.rate == 12.5e6);
	/* Pages larger than the smallest read. */
	y.rate = 1;
	CHECK_EQ_INT(bgread_yield_size(&y, 256 * 1024), 256 * 1024);
}

static void inflight(void)
{
	uint64_t r = 99;

	CHECK_EQ_INT(bgread_parse_inflight("       0        0", &r), 0);
	CHECK_EQ_INT(r, 0);
	CHECK_EQ_INT(bgread_parse_inflight("       3        1\n", &r), 0);
	CHECK_EQ_INT(r, 3);
	r = 99;
	CHECK_EQ_INT(bgread_parse_inflight("", &r), -EINVAL);
	CHECK_EQ_INT(bgread_parse_inflight("7", &r), -EINVAL);
	CHECK_EQ_INT(bgread_parse_inflight("x y", &r), -EINVAL);
	CHECK_EQ_INT(r, 99);
}

static void pacing(void)
{
	CHECK_EQ_INT(bgread_pace_ms(1 << 30, 0, 0), 0);                 /* no cap */
	CHECK_EQ_INT(bgread_pace_ms(MiB, MiB, 0.5), 500);
	CHECK_EQ_INT(bgread_pace_ms(MiB, MiB, 1.0), 0);
	CHECK_EQ_INT(bgread_pace_ms(MiB, MiB, 2.0), 0);
	CHECK_EQ_INT(bgread_pace_ms(100 * MiB, MiB, 0), 1000);          /* one step at most */
	CHECK_EQ_INT(bgread_pace_ms(MiB + 1, MiB, 1.0), 1);             /* never 0 when due */
	CHECK_EQ_INT(bgread_pace_ms(0, 1, 0), 0);
}

static void memory_rule(void)
{
	CHECK(bgread_mem_ok(1000, 500, 400));
	CHECK(bgread_mem_ok(1000, 600, 400));
	CHECK(!bgread_mem_ok(1000, 601, 400));
	CHECK(!bgread_mem_ok(300, 0, 400));
	CHECK(bgread_mem_ok(400, 0, 400));
	CHECK(!bgread_mem_ok(0, 1, 0));
	CHECK(bgread_mem_ok(UINT64_MAX, UINT64_MAX - 1, 1));
}

/* A boot profile's ranges as the copy order: first-touch order, the
 * image's partial last page included, after what is resident and before
 * the rest in offset order. */
static void sched_profile_order(void)
{
	static const char text[] =
		"ramboot-profile 1\n"
		"image-size 41060\n"
		"image-ends-sha256 2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae\n"
		"page-size 4096\n"
		"range 40960 100\n"
		"range 8192 8192\n"
		"range 0 4096\n";
	static const struct { uint64_t off, len; int list; } want[] = {
		{ 0, PG, BGREAD_LIST_RESIDENT },
		{ 40960, 100, BGREAD_LIST_PROFILE },
		{ 8192, 2 * PG, BGREAD_LIST_PROFILE },
		{ PG, PG, BGREAD_LIST_SEQ },              /* page 0: resident, taken */
		{ 4 * PG, 6 * PG, BGREAD_LIST_SEQ },
	};
	struct bgread_ranges res = { 0 }, ord = { 0 };
	struct bgread_sched s;
	struct profile p;
	char err[128];
	uint64_t off, len;
	size_t i;
	int list;

	CHECK_EQ_INT(profile_parse(text, sizeof(text) - 1, &p, err, sizeof(err)), 0);
	for (i = 0; i < p.n; i++)
		CHECK_EQ_INT(bgread_ranges_add(&ord, p.r[i].off, p.r[i].len), 0);
	CHECK_EQ_INT(bgread_sched_init(&s, p.id.size, PG, 0), 0);
	CHECK_EQ_INT(bgread_ranges_add(&res, 0, PG), 0);
	CHECK_EQ_INT(bgread_sched_set(&s, BGREAD_LIST_RESIDENT, &res), 0);
	CHECK_EQ_INT(bgread_sched_set(&s, BGREAD_LIST_PROFILE, &ord), 0);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		CHECK(bgread_sched_next(&s, 64 * PG, &off, &len, &list));
		CHECK_EQ_INT(off, want[i].off);
		CHECK_EQ_INT(len, want[i].len);
		CHECK_EQ_INT(list, want[i].list);
	}
	CHECK(!bgread_sched_next(&s, 64 * PG, &off, &len, &list));
	CHECK(bgread_sched_done(&s));
	bgread_sched_free(&s);
	bgread_ranges_free(&res);
	bgread_ranges_free(&ord);
	profile_free(&p);
}


/* Without the offset-order list only the other lists are handed out. */
static void sched_no_seq(void)
{
	struct bgread_sched s;
	struct bgread_ranges r = { 0 };
	uint64_t off, len;
	int list;

	CHECK_EQ_INT(bgread_sched_init(&s, 100 * PG, PG, BGREAD_SCHED_NO_SEQ), 0);
	CHECK(!bgread_sched_next(&s, 10 * PG, &off, &len, &list));
	CHECK_EQ_INT(bgread_ranges_add(&r, 50 * PG, 2 * PG), 0);
	CHECK_EQ_INT(bgread_sched_set(&s, BGREAD_LIST_PROFILE, &r), 0);
	CHECK(bgread_sched_next(&s, 10 * PG, &off, &len, &list));
	CHECK_EQ_INT(off, 50 * PG);
	CHECK_EQ_INT(len, 2 * PG);
	CHECK_EQ_INT(list, BGREAD_LIST_PROFILE);
	CHECK(!bgread_sched_next(&s, 10 * PG, &off, &len, &list));
	CHECK(!bgread_sched_done(&s));
	bgread_sched_free(&s);
}

/* The mincore truth check: the owner of a file (and root) is told. */
static void mincore_truth(void)
{
	struct stat st;

	CHECK_EQ_INT(stat("/proc/self/exe", &st), 0);
	st.st_uid = geteuid();
	CHECK(bgread_mincore_shows(&st, "/proc/self/exe"));
}

/* A file of n bytes, each byte its offset's low bits. */
static int test_file(char *path, size_t plen, uint64_t n)
{
	uint8_t buf[4096];
	uint64_t off;
	int fd;

	snprintf(path, plen, "/tmp/test_bgread.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	for (off = 0; off < n; off += sizeof(buf)) {
		size_t i, len = n - off < sizeof(buf) ? (size_t)(n - off) : sizeof(buf);

		for (i = 0; i < len; i++)
			buf[i] = (uint8_t)((off + i) * 7);
		if (pwrite(fd, buf, len, (off_t)off) != (ssize_t)len)
			return -1;
	}
	return fd;
}

struct sink {
	uint8_t *copy;
	atomic_uint_fast64_t puts;
	int fail_at;              /* put number that fails, 0: none */
};

static int sink_put(void *arg, const void *buf, uint64_t off, uint64_t len)
{
	struct sink *k = arg;
	uint64_t n = atomic_fetch_add(&k->puts, 1) + 1;

	if (k->fail_at && n >= (uint64_t)k->fail_at)
		return -ENOSPC;
	memcpy(k->copy + off, buf, len);
	return 0;
}

static void pool_cfg(struct bgread_cfg *c, int fd, uint64_t size, struct sink *k)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->size = size;
	c->page = PG;
	c->meminfo_fd = -1;
	c->mincore_ok = true;
	c->put = sink_put;
	c->arg = k;
}

/* A test file of size bytes, its sink, the pool's settings over both. */
struct pool_fx {
	struct bgread_cfg c;
	struct sink k;
	char path[64];
	int fd;
};

static void pool_fx_open(struct pool_fx *f, uint64_t size)
{
	memset(f, 0, sizeof(*f));
	f->fd = test_file(f->path, sizeof(f->path), size);
	CHECK(f->fd >= 0);
	f->k.copy = calloc(1, size);
	CHECK(f->k.copy != NULL);
	pool_cfg(&f->c, f->fd, size, &f->k);
}

static void pool_fx_close(struct pool_fx *f)
{
	free(f->k.copy);
	(void)close(f->fd);
	(void)unlink(f->path);
}

/* Every byte read once, in pieces that cover the file. */
static void pool_reads_all(void)
{
	const uint64_t size = 3 * BGREAD_CHUNK + 12345;
	struct bgread_stats st;
	struct bgread_pool *p;
	uint8_t *want = malloc(size);
	struct pool_fx f;

	pool_fx_open(&f, size);
	CHECK(want != NULL);
	CHECK_EQ_INT(pread(f.fd, want, size, 0), (ssize_t)size);
	p = bgread_pool_new(&f.c);
	CHECK(p != NULL);
	bgread_pool_refresh_resident(p);
	CHECK_EQ_INT(bgread_pool_run(p, NULL), 0);
	bgread_pool_stats(p, &st);
	CHECK_EQ_INT(st.why, BGREAD_DONE);
	CHECK_EQ_INT(st.done, size);
	CHECK_EQ_INT(st.cached + st.network, size);
	CHECK(st.all_taken);
	CHECK(!st.abandoned);
	CHECK(memcmp(want, f.k.copy, size) == 0);
	bgread_pool_free(p);
	free(want);
	pool_fx_close(&f);
}

/* One reader that reads through the device it yields to (the scrub):
 * every byte read once, and a read error says where the read began. */
static void pool_reads_counted(void)
{
	const uint64_t size = 2 * BGREAD_CHUNK + 4096;
	struct bgread_stats st;
	struct bgread_pool *p;
	struct pool_fx f;

	pool_fx_open(&f, size);
	f.c.reads_counted = true;
	f.c.mincore_ok = false;
	p = bgread_pool_new(&f.c);
	CHECK(p != NULL);
	CHECK_EQ_INT(bgread_pool_run(p, NULL), 0);
	bgread_pool_stats(p, &st);
	CHECK_EQ_INT(st.why, BGREAD_DONE);
	CHECK_EQ_INT(st.done, size);
	CHECK(st.all_taken);
	bgread_pool_free(p);
	pool_fx_close(&f);
}

/* The guard may fire after the readers ended and were joined (its tick
 * and the join race): the cancellation then records why and touches no
 * thread. pthread_cancel() on a joined thread's ID is undefined
 * behaviour (the prefetch did that before the pool). */
static void pool_cancel_after_join(void)
{
	const uint64_t size = BGREAD_CHUNK;
	struct bgread_stats st;
	struct bgread_pool *p;
	struct pool_fx f;

	pool_fx_open(&f, size);
	p = bgread_pool_new(&f.c);
	CHECK(p != NULL);
	CHECK_EQ_INT(bgread_pool_run(p, NULL), 0);
	CHECK_EQ_INT(bgread_pool_cancel(p, GUARD_STALL), 0);
	CHECK_EQ_INT(bgread_pool_cancel(p, GUARD_SIGNAL), 0);
	bgread_pool_stats(p, &st);
	CHECK_EQ_INT(st.why, BGREAD_ESTALL);
	CHECK_EQ_INT(st.done, size);
	bgread_pool_free(p);
	pool_fx_close(&f);
}

/* A failing put stops the pool with its error. */
static void pool_put_fails(void)
{
	const uint64_t size = 8 * BGREAD_CHUNK;
	struct bgread_stats st;
	struct bgread_pool *p;
	struct pool_fx f;

	pool_fx_open(&f, size);
	f.k.fail_at = 2;
	p = bgread_pool_new(&f.c);
	CHECK(p != NULL);
	CHECK_EQ_INT(bgread_pool_run(p, NULL), 0);
	bgread_pool_stats(p, &st);
	CHECK_EQ_INT(st.why, BGREAD_EPUT);
	CHECK_EQ_INT(st.err, -ENOSPC);
	CHECK(st.done < size);
	CHECK(strstr(st.msg, "write error at ") != NULL);
	bgread_pool_free(p);
	pool_fx_close(&f);
}

int main(void)
{
	RUN(ranges_merge);
	RUN(ranges_from_mincore);
	RUN(resident_bytes);
	RUN(sched_order);
	RUN(sched_chunks);
	RUN(sched_refresh);
	RUN(sched_no_seq);
	RUN(sched_profile_order);
	RUN(backoff);
	RUN(inflight);
	RUN(stat_line);
	RUN(yield_rules);
	RUN(yield_own);
	RUN(yield_sizes);
	RUN(pacing);
	RUN(memory_rule);
	RUN(mincore_truth);
	RUN(pool_reads_all);
	RUN(pool_reads_counted);
	RUN(pool_cancel_after_join);
	RUN(pool_put_fails);
	return TAP_DONE();
}
