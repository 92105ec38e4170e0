// SPDX-License-Identifier: GPL-2.0-or-later
/* The pure parts of the lazy copier: ranges from a mincore() vector, the
 * scheduler's order, the back-off, pacing and memory rules, the parsers;
 * and the loop device arithmetic LOOP_CHANGE_FD depends on. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "lib/ramboot.h"
#include "lazy/lazy.h"
#include "dev/loopdev.h"
#include "profile/profile.h"

#define PG 4096ULL

static void ranges_merge(void)
{
	struct lazy_ranges r = { 0 };

	CHECK_EQ_INT(lazy_ranges_add(&r, 0, 100), 0);
	CHECK_EQ_INT(lazy_ranges_add(&r, 100, 50), 0);     /* adjacent: extends */
	CHECK_EQ_INT(lazy_ranges_add(&r, 200, 0), 0);      /* empty: ignored */
	CHECK_EQ_INT(lazy_ranges_add(&r, 300, 10), 0);
	CHECK_EQ_INT(lazy_ranges_add(&r, 0, 10), 0);       /* out of order: kept */
	CHECK_EQ_INT(r.n, 3);
	CHECK_EQ_INT(r.v[0].off, 0);
	CHECK_EQ_INT(r.v[0].len, 150);
	CHECK_EQ_INT(r.v[1].off, 300);
	CHECK_EQ_INT(r.v[2].off, 0);
	lazy_ranges_free(&r);
	CHECK_EQ_INT(r.n, 0);
	CHECK(r.v == NULL);
}

static void ranges_from_mincore(void)
{
	/* Only bit 0 counts: the other bits are reserved. */
	const unsigned char vec[] = { 1, 1, 0, 1, 0x2, 0, 0x81, 1, 1 };
	struct lazy_ranges r = { 0 };
	uint64_t limit = 9 * PG - 100;

	CHECK_EQ_INT(lazy_ranges_from_mincore(&r, vec, sizeof(vec), 0, PG, limit), 0);
	CHECK_EQ_INT(r.n, 3);
	CHECK_EQ_INT(r.v[0].off, 0);
	CHECK_EQ_INT(r.v[0].len, 2 * PG);
	CHECK_EQ_INT(r.v[1].off, 3 * PG);
	CHECK_EQ_INT(r.v[1].len, PG);
	CHECK_EQ_INT(r.v[2].off, 6 * PG);
	CHECK_EQ_INT(r.v[2].len, limit - 6 * PG);          /* cut at the file size */
	lazy_ranges_free(&r);

	/* A second window continues the list; a run that goes on across
	 * the windows' border becomes one range. */
	{
		const unsigned char w1[] = { 0, 1 }, w2[] = { 1, 0 };

		CHECK_EQ_INT(lazy_ranges_from_mincore(&r, w1, 2, 0, PG, 100 * PG), 0);
		CHECK_EQ_INT(lazy_ranges_from_mincore(&r, w2, 2, 2 * PG, PG, 100 * PG), 0);
		CHECK_EQ_INT(r.n, 1);
		CHECK_EQ_INT(r.v[0].off, PG);
		CHECK_EQ_INT(r.v[0].len, 2 * PG);
		lazy_ranges_free(&r);
	}
	/* Nothing resident, nothing at all. */
	{
		const unsigned char none[4] = { 0 };

		CHECK_EQ_INT(lazy_ranges_from_mincore(&r, none, 4, 0, PG, 4 * PG), 0);
		CHECK_EQ_INT(r.n, 0);
	}
}

static void resident_bytes(void)
{
	const unsigned char vec[] = { 1, 0, 1 };

	CHECK_EQ_INT(lazy_resident_bytes(vec, 8 * PG, 3 * PG, PG), 2 * PG);
	/* The last page is partial: only what the range covers counts. */
	CHECK_EQ_INT(lazy_resident_bytes(vec, 0, 2 * PG + 10, PG), PG + 10);
	CHECK_EQ_INT(lazy_resident_bytes(vec, 0, 100, PG), 100);
	CHECK_EQ_INT(lazy_resident_bytes(vec + 1, 0, 100, PG), 0);
}

/* Hand out everything, checking each piece against the expected
 * (page, pages, list) triples; then nothing is left. */
struct piece {
	uint64_t page, pages;
	int list;
};

static void expect_pieces(struct lazy_sched *s, uint64_t max, const struct piece *want, size_t n,
			  uint64_t last_len)
{
	uint64_t off, len;
	size_t i;
	int list;

	for (i = 0; i < n; i++) {
		if (!lazy_sched_next(s, max, &off, &len, &list)) {
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
	CHECK(!lazy_sched_next(s, max, &off, &len, &list));
	CHECK(lazy_sched_done(s));
}

static void sched_order(void)
{
	struct lazy_sched s;
	struct lazy_ranges res = { 0 }, ord = { 0 };
	const uint64_t size = 10 * PG + 100;                /* 11 pages, the last partial */
	const struct piece want[] = {
		{ 2, 2, LAZY_LIST_RESIDENT },
		{ 8, 1, LAZY_LIST_ORDER },
		{ 4, 2, LAZY_LIST_ORDER },     /* [3, 6): page 3 is taken already */
		{ 0, 2, LAZY_LIST_SEQ },
		{ 6, 2, LAZY_LIST_SEQ },
		{ 9, 2, LAZY_LIST_SEQ },
	};

	CHECK_EQ_INT(lazy_sched_init(&s, size, PG), 0);
	CHECK_EQ_INT(s.npages, 11);
	CHECK_EQ_INT(lazy_ranges_add(&res, 2 * PG, 2 * PG), 0);
	CHECK_EQ_INT(lazy_sched_set(&s, LAZY_LIST_RESIDENT, &res), 0);
	CHECK_EQ_INT(res.n, 0);                               /* taken over */
	CHECK_EQ_INT(lazy_ranges_add(&ord, 8 * PG + 7, 10), 0); /* widened to page 8 */
	CHECK_EQ_INT(lazy_ranges_add(&ord, 3 * PG, 3 * PG), 0);
	CHECK_EQ_INT(lazy_sched_set(&s, LAZY_LIST_ORDER, &ord), 0);
	CHECK_EQ_INT(lazy_sched_set(&s, LAZY_LIST_SEQ, &ord), -EINVAL);
	expect_pieces(&s, 2 * PG, want, ARRAY_SIZE(want), PG + 100);
	lazy_sched_free(&s);
}

static void sched_chunks(void)
{
	struct lazy_sched s;
	uint64_t off, len, total = 0, next = 0;

	/* Plain offset order in pieces of at most max, max not a multiple
	 * of the page rounded down, a max below a page still one page. */
	CHECK_EQ_INT(lazy_sched_init(&s, 1000 * PG, PG), 0);
	while (lazy_sched_next(&s, 256 * PG + 5, &off, &len, NULL)) {
		CHECK_EQ_INT(off, next);
		CHECK(len <= 256 * PG);
		next = off + len;
		total += len;
	}
	CHECK_EQ_INT(total, 1000 * PG);
	lazy_sched_free(&s);

	CHECK_EQ_INT(lazy_sched_init(&s, 3 * PG, PG), 0);
	CHECK(lazy_sched_next(&s, 10, &off, &len, NULL));
	CHECK_EQ_INT(len, PG);
	lazy_sched_free(&s);

	/* A one-byte image: one piece of one byte. */
	CHECK_EQ_INT(lazy_sched_init(&s, 1, PG), 0);
	CHECK(lazy_sched_next(&s, 1 << 20, &off, &len, NULL));
	CHECK_EQ_INT(off, 0);
	CHECK_EQ_INT(len, 1);
	CHECK(!lazy_sched_next(&s, 1 << 20, &off, &len, NULL));
	lazy_sched_free(&s);
}

static void sched_refresh(void)
{
	struct lazy_sched s;
	struct lazy_ranges r = { 0 };
	uint64_t off, len;
	int list;

	/* The resident list is replaced while the copy runs (a rescan):
	 * new resident pages come first, pages handed out never again, and
	 * the offset order goes on where it was. */
	CHECK_EQ_INT(lazy_sched_init(&s, 200 * PG, PG), 0);
	CHECK(lazy_sched_next(&s, 10 * PG, &off, &len, &list));
	CHECK_EQ_INT(off, 0);
	CHECK_EQ_INT(list, LAZY_LIST_SEQ);
	CHECK_EQ_INT(lazy_ranges_add(&r, 5 * PG, 10 * PG), 0);   /* 5..9 taken already */
	CHECK_EQ_INT(lazy_ranges_add(&r, 100 * PG, 2 * PG), 0);
	CHECK_EQ_INT(lazy_sched_set(&s, LAZY_LIST_RESIDENT, &r), 0);
	CHECK(lazy_sched_next(&s, 10 * PG, &off, &len, &list));
	CHECK_EQ_INT(off, 10 * PG);
	CHECK_EQ_INT(len, 5 * PG);
	CHECK_EQ_INT(list, LAZY_LIST_RESIDENT);
	CHECK(lazy_sched_next(&s, 10 * PG, &off, &len, &list));
	CHECK_EQ_INT(off, 100 * PG);
	CHECK_EQ_INT(len, 2 * PG);
	CHECK(lazy_sched_next(&s, 10 * PG, &off, &len, &list));
	CHECK_EQ_INT(off, 15 * PG);                  /* sequential: 10..14 are gone */
	CHECK_EQ_INT(list, LAZY_LIST_SEQ);
	/* Ranges past the end are cut; one that wraps around is cut too. */
	CHECK_EQ_INT(lazy_ranges_add(&r, 199 * PG, 50 * PG), 0);
	CHECK_EQ_INT(lazy_ranges_add(&r, 198 * PG, UINT64_MAX - 100), 0);
	CHECK_EQ_INT(lazy_ranges_add(&r, 500 * PG, PG), 0);
	CHECK_EQ_INT(lazy_sched_set(&s, LAZY_LIST_ORDER, &r), 0);
	CHECK_EQ_INT(s.list[LAZY_LIST_ORDER].n, 2);
	CHECK(lazy_sched_next(&s, 10 * PG, &off, &len, &list));
	CHECK_EQ_INT(off, 199 * PG);
	CHECK_EQ_INT(len, PG);
	CHECK(lazy_sched_next(&s, 10 * PG, &off, &len, &list));
	CHECK_EQ_INT(off, 198 * PG);
	CHECK_EQ_INT(len, PG);
	lazy_sched_free(&s);
}

static void backoff(void)
{
	const long want[] = { 5, 10, 20, 40, 80, 160, 200, 200 };
	struct lazy_backoff b = { 0 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(want); i++)
		CHECK_EQ_INT(lazy_backoff_step(&b, true), want[i]);
	CHECK_EQ_INT(lazy_backoff_step(&b, false), 0);
	CHECK_EQ_INT(lazy_backoff_step(&b, true), LAZY_BACKOFF_MIN_MS);
	CHECK_EQ_INT(lazy_backoff_step(&b, false), 0);
	CHECK_EQ_INT(lazy_backoff_step(&b, false), 0);
}

static void stat_line(void)
{
	uint64_t r = 99;

	CHECK_EQ_INT(lazy_parse_stat("     1234        0    56789      100        0        0"
				     "        0        0        2      120      120\n", &r), 0);
	CHECK_EQ_INT(r, 1234);
	r = 99;
	CHECK_EQ_INT(lazy_parse_stat("", &r), -EINVAL);
	CHECK_EQ_INT(lazy_parse_stat("x 1", &r), -EINVAL);
	CHECK_EQ_INT(lazy_parse_stat("12x 1", &r), -EINVAL);
	CHECK_EQ_INT(lazy_parse_stat("99999999999999999999999 1", &r), -EINVAL);
	CHECK_EQ_INT(r, 99);
}

/* Guesses wait for the boot's idle time; predicted reads only for its
 * reads in flight. */
static void yield_rules(void)
{
	struct lazy_yield y = { 0 };
	uint64_t d = 10;

	/* First look: the count may have moved just now; a guess waits the
	 * quiet time, a predicted read does not. */
	CHECK(lazy_yield_step(&y, 99.0, &d, 0, false) > 0);
	CHECK_EQ_INT(lazy_yield_step(&y, 99.0, &d, 0, true), 0);
	/* The count stood still for the quiet time: go. */
	CHECK_EQ_INT(lazy_yield_step(&y, 100.0, &d, 0, false), 0);
	/* The boot completed reads since: a guess waits the quiet time... */
	d = 11;
	CHECK(lazy_yield_step(&y, 100.01, &d, 0, false) > 0);
	CHECK(lazy_yield_step(&y, 100.01, &d, 0, false) <= LAZY_QUIET_MS);
	/* ...a predicted read does not. */
	CHECK_EQ_INT(lazy_yield_step(&y, 100.02, &d, 0, true), 0);
	/* Quiet long enough: the guess goes. */
	CHECK_EQ_INT(lazy_yield_step(&y, 100.01 + LAZY_QUIET_MS / 1000.0 + 0.001, &d, 0, false), 0);
	/* Reads in flight: everyone backs off, doubling. */
	CHECK_EQ_INT(lazy_yield_step(&y, 101.0, &d, 2, true), LAZY_BACKOFF_MIN_MS);
	CHECK_EQ_INT(lazy_yield_step(&y, 101.1, &d, 2, false), 2 * LAZY_BACKOFF_MIN_MS);
	/* In flight counts as activity: a guess then waits the quiet time. */
	CHECK(lazy_yield_step(&y, 101.15, &d, 0, false) > 0);
	CHECK_EQ_INT(lazy_yield_step(&y, 101.15, &d, 0, true), 0);
	/* Without the completed count, reads in flight alone decide. */
	CHECK_EQ_INT(lazy_yield_step(&y, 105.0, NULL, 0, false), 0);
	CHECK_EQ_INT(lazy_yield_step(&y, 105.0, NULL, 1, false), LAZY_BACKOFF_MIN_MS);
}

static void yield_sizes(void)
{
	struct lazy_yield y = { 0 };

	CHECK_EQ_INT(lazy_yield_size(&y, 4096), LAZY_READ_FIRST);
	/* 2.5 MB/s (20 Mbit): 125 KB in 50 ms -> 64 KiB reads. */
	lazy_yield_took(&y, 256 * 1024, 256 * 1024 / 2.5e6);
	CHECK_EQ_INT(lazy_yield_size(&y, 4096), 64 * 1024);
	/* A fast link: up to LAZY_CHUNK, never more. */
	y.rate = 0;
	lazy_yield_took(&y, 1 << 20, 0.001);
	CHECK_EQ_INT(lazy_yield_size(&y, 4096), LAZY_CHUNK);
	/* 12.5 MB/s (100 Mbit): 625 KB in 50 ms -> 512 KiB. */
	y.rate = 12.5e6;
	CHECK_EQ_INT(lazy_yield_size(&y, 4096), 512 * 1024);
	/* Tiny reads and a clock that did not move teach nothing. */
	lazy_yield_took(&y, 4096, 0.5);
	lazy_yield_took(&y, 1 << 20, 0);
	CHECK(y.rate == 12.5e6);
	/* Pages larger than the smallest read. */
	y.rate = 1;
	CHECK_EQ_INT(lazy_yield_size(&y, 256 * 1024), 256 * 1024);
}

static void inflight(void)
{
	uint64_t r = 99;

	CHECK_EQ_INT(lazy_parse_inflight("       0        0", &r), 0);
	CHECK_EQ_INT(r, 0);
	CHECK_EQ_INT(lazy_parse_inflight("       3        1\n", &r), 0);
	CHECK_EQ_INT(r, 3);
	r = 99;
	CHECK_EQ_INT(lazy_parse_inflight("", &r), -EINVAL);
	CHECK_EQ_INT(lazy_parse_inflight("7", &r), -EINVAL);
	CHECK_EQ_INT(lazy_parse_inflight("x y", &r), -EINVAL);
	CHECK_EQ_INT(r, 99);
}

static void pacing(void)
{
	CHECK_EQ_INT(lazy_pace_ms(1 << 30, 0, 0), 0);                 /* no cap */
	CHECK_EQ_INT(lazy_pace_ms(MiB, MiB, 0.5), 500);
	CHECK_EQ_INT(lazy_pace_ms(MiB, MiB, 1.0), 0);
	CHECK_EQ_INT(lazy_pace_ms(MiB, MiB, 2.0), 0);
	CHECK_EQ_INT(lazy_pace_ms(100 * MiB, MiB, 0), 1000);          /* one step at most */
	CHECK_EQ_INT(lazy_pace_ms(MiB + 1, MiB, 1.0), 1);             /* never 0 when due */
	CHECK_EQ_INT(lazy_pace_ms(0, 1, 0), 0);
}

static void memory_rule(void)
{
	CHECK(lazy_mem_ok(1000, 500, 400));
	CHECK(lazy_mem_ok(1000, 600, 400));
	CHECK(!lazy_mem_ok(1000, 601, 400));
	CHECK(!lazy_mem_ok(300, 0, 400));
	CHECK(lazy_mem_ok(400, 0, 400));
	CHECK(!lazy_mem_ok(0, 1, 0));
	CHECK(lazy_mem_ok(UINT64_MAX, UINT64_MAX - 1, 1));
}

static void meminfo(void)
{
	const char *text = "MemTotal:       24683620 kB\n"
			   "MemFree:         1000 kB\n"
			   "MemAvailableX:   5 kB\n"
			   "MemAvailable:   2048 kB\n";
	uint64_t v = 0;

	CHECK_EQ_INT(meminfo_parse(text, "MemAvailable", &v), 0);
	CHECK_EQ_INT(v, 2048 * 1024);
	CHECK_EQ_INT(meminfo_parse(text, "MemTotal", &v), 0);
	CHECK_EQ_INT(v, 24683620ULL * 1024);
	CHECK_EQ_INT(meminfo_parse(text, "SwapFree", &v), -ENOENT);
	CHECK_EQ_INT(meminfo_parse("MemAvailable: lots\n", "MemAvailable", &v), -EINVAL);
	CHECK_EQ_INT(meminfo_parse("", "MemAvailable", &v), -ENOENT);
	CHECK_EQ_INT(meminfo_parse("MemAvailable: 99999999999999999999 kB", "MemAvailable",
					&v), -EINVAL);
}

static void loop_sizes(void)
{
	/* As the kernel's get_size(): whole sectors after the offset,
	 * capped at the size limit. */
	CHECK_EQ_INT(loopdev_sectors(1024, 0, 0), 2);
	CHECK_EQ_INT(loopdev_sectors(1000, 0, 0), 1);
	CHECK_EQ_INT(loopdev_sectors(4096, 512, 0), 7);
	CHECK_EQ_INT(loopdev_sectors(4096, 0, 1024), 2);
	CHECK_EQ_INT(loopdev_sectors(4096, 0, 8192), 8);
	CHECK_EQ_INT(loopdev_sectors(4096, 4096, 0), 0);
	CHECK_EQ_INT(loopdev_sectors(4096, 9999, 0), 0);
}

static void loop_names(void)
{
	CHECK(loopdev_name_valid("loop0"));
	CHECK(loopdev_name_valid("loop123"));
	CHECK(!loopdev_name_valid("loop"));
	CHECK(!loopdev_name_valid("loop1p1"));
	CHECK(!loopdev_name_valid("zram0"));
	CHECK(!loopdev_name_valid("loop-control"));

	CHECK(loopdev_backing_matches("/root/images/x.img", "/root/images/x.img", NULL));
	CHECK(loopdev_backing_matches("/srv/x.img", "images/x.img", "/srv/x.img"));
	CHECK(!loopdev_backing_matches("/srv/x.img", "/srv/y.img", "/srv/y.img"));
	CHECK(!loopdev_backing_matches("/srv/x.img (deleted)", "/srv/x.img (deleted)", NULL));
	CHECK(!loopdev_backing_matches("", "", NULL));
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
		{ 0, PG, LAZY_LIST_RESIDENT },
		{ 40960, 100, LAZY_LIST_ORDER },
		{ 8192, 2 * PG, LAZY_LIST_ORDER },
		{ PG, PG, LAZY_LIST_SEQ },              /* page 0: resident, taken */
		{ 4 * PG, 6 * PG, LAZY_LIST_SEQ },
	};
	struct lazy_ranges res = { 0 }, ord = { 0 };
	struct lazy_sched s;
	struct profile p;
	char err[128];
	uint64_t off, len;
	size_t i;
	int list;

	CHECK_EQ_INT(profile_parse(text, sizeof(text) - 1, &p, err, sizeof(err)), 0);
	for (i = 0; i < p.n; i++)
		CHECK_EQ_INT(lazy_ranges_add(&ord, p.r[i].off, p.r[i].len), 0);
	CHECK_EQ_INT(lazy_sched_init(&s, p.id.size, PG), 0);
	CHECK_EQ_INT(lazy_ranges_add(&res, 0, PG), 0);
	CHECK_EQ_INT(lazy_sched_set(&s, LAZY_LIST_RESIDENT, &res), 0);
	CHECK_EQ_INT(lazy_sched_set(&s, LAZY_LIST_ORDER, &ord), 0);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		CHECK(lazy_sched_next(&s, 64 * PG, &off, &len, &list));
		CHECK_EQ_INT(off, want[i].off);
		CHECK_EQ_INT(len, want[i].len);
		CHECK_EQ_INT(list, want[i].list);
	}
	CHECK(!lazy_sched_next(&s, 64 * PG, &off, &len, &list));
	CHECK(lazy_sched_done(&s));
	lazy_sched_free(&s);
	lazy_ranges_free(&res);
	lazy_ranges_free(&ord);
	profile_free(&p);
}

static void err_names(void)
{
	CHECK_EQ_STR(lazy_err_name(LAZY_HASH), "hash-mismatch");
	CHECK_EQ_STR(lazy_err_name(LAZY_STALL), "stall");
	CHECK_EQ_STR(lazy_err_name(LAZY_NOMEM), "memory");
	CHECK_EQ_STR(lazy_err_name(LAZY_NOLOOP), "no-loop-device");
	CHECK_EQ_INT(lazy_exit_code(LAZY_NOLOOP), RB_EXIT_FAIL);
	CHECK_EQ_STR(lazy_err_name((enum lazy_err)999), "unknown");
	CHECK_EQ_INT(lazy_exit_code(LAZY_OK), RB_EXIT_OK);
	CHECK_EQ_INT(lazy_exit_code(LAZY_USAGE), RB_EXIT_USAGE);
	CHECK_EQ_INT(lazy_exit_code(LAZY_NOMEM), RB_EXIT_NOMEM);
	CHECK_EQ_INT(lazy_exit_code(LAZY_STALL), RB_EXIT_FAIL);
	CHECK_EQ_INT(lazy_exit_code(LAZY_SWITCH), RB_EXIT_FAIL);
}

/* --udpcast: how a stream that reached its end of file is judged. */
static void stream_end(void)
{
	const uint64_t sz = 100 * PG;

	CHECK_EQ_INT(lazy_stream_end(sz, sz, true), LAZY_FB_NONE);
	/* udp-receiver failed: nothing came (no sender), or it broke off;
	 * a whole image is not trusted either (a lost final ack). */
	CHECK_EQ_INT(lazy_stream_end(0, sz, false), LAZY_FB_NO_SESSION);
	CHECK_EQ_INT(lazy_stream_end(PG, sz, false), LAZY_FB_LOST);
	CHECK_EQ_INT(lazy_stream_end(sz, sz, false), LAZY_FB_LOST);
	/* Another image: shorter, or one byte past this one. */
	CHECK_EQ_INT(lazy_stream_end(sz - 1, sz, true), LAZY_FB_SIZE);
	CHECK_EQ_INT(lazy_stream_end(0, sz, true), LAZY_FB_SIZE);
	CHECK_EQ_INT(lazy_stream_end(sz + 1, sz, true), LAZY_FB_SIZE);
	CHECK_EQ_INT(lazy_stream_end(sz + 1, sz, false), LAZY_FB_SIZE);
}

static void fallback_names(void)
{
	CHECK_EQ_STR(lazy_fallback_name(LAZY_FB_NONE), "");
	CHECK_EQ_STR(lazy_fallback_name(LAZY_FB_UNVERIFIED), "unverified");
	CHECK_EQ_STR(lazy_fallback_name(LAZY_FB_RECEIVER), "receiver");
	CHECK_EQ_STR(lazy_fallback_name(LAZY_FB_NO_SESSION), "no-session");
	CHECK_EQ_STR(lazy_fallback_name(LAZY_FB_LOST), "stream-lost");
	CHECK_EQ_STR(lazy_fallback_name(LAZY_FB_STALL), "stall");
	CHECK_EQ_STR(lazy_fallback_name(LAZY_FB_SIZE), "size-mismatch");
	CHECK_EQ_STR(lazy_fallback_name(LAZY_FB_COMPRESSED), "compressed");
	CHECK_EQ_STR(lazy_fallback_name(LAZY_FB_HASH), "hash-mismatch");
	CHECK_EQ_STR(lazy_fallback_name(LAZY_FB_DIFFERS), "image-differs");
	CHECK_EQ_STR(lazy_fallback_name((enum lazy_fallback)999), "unknown");
}

int main(void)
{
	RUN(ranges_merge);
	RUN(ranges_from_mincore);
	RUN(resident_bytes);
	RUN(sched_order);
	RUN(sched_chunks);
	RUN(sched_refresh);
	RUN(sched_profile_order);
	RUN(backoff);
	RUN(inflight);
	RUN(stat_line);
	RUN(yield_rules);
	RUN(yield_sizes);
	RUN(pacing);
	RUN(memory_rule);
	RUN(meminfo);
	RUN(loop_sizes);
	RUN(loop_names);
	RUN(err_names);
	RUN(stream_end);
	RUN(fallback_names);
	return TAP_DONE();
}
