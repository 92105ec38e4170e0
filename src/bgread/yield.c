// SPDX-License-Identifier: GPL-2.0-or-later
/* The yield, pace and memory rules of the background readers (yield.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bgread/yield.h"
#include "lib/fdio.h"
#include "lib/path.h"
#include "lib/units.h"

long bgread_backoff_step(struct bgread_backoff *b, bool busy)
{
	if (!busy) {
		b->ms = 0;
		return 0;
	}
	if (b->ms <= 0)
		b->ms = BGREAD_BACKOFF_MIN_MS;
	else if (b->ms < BGREAD_BACKOFF_MAX_MS)
		b->ms = b->ms * 2 > BGREAD_BACKOFF_MAX_MS ? BGREAD_BACKOFF_MAX_MS : b->ms * 2;
	return b->ms;
}

long bgread_yield_step(struct bgread_yield *y, double now, const uint64_t *done,
		       uint64_t inflight, bool predicted)
{
	double quiet = BGREAD_QUIET_MS / 1000.0;

	/* Idle: the count has not moved for the quiet time, as far as our
	 * looks can tell (a count first seen now may have moved just now). */
	if (done && (!y->seen || *done != y->last_done)) {
		y->quiet_until = now + quiet;
		y->last_done = *done;
		y->seen = true;
	}
	if (inflight > 0) {
		y->quiet_until = now + quiet;
		y->why = BGREAD_BOOT_WAITS;
		return bgread_backoff_step(&y->bo, true);
	}
	(void)bgread_backoff_step(&y->bo, false);
	if (!predicted && now < y->quiet_until) {
		long ms = (long)((y->quiet_until - now) * 1000.0) + 1;

		y->why = BGREAD_BOOT_READ;
		return ms > BGREAD_QUIET_MS ? BGREAD_QUIET_MS : ms;
	}
	y->why = BGREAD_GO;
	return 0;
}

void bgread_yield_own(struct bgread_yield *y, uint64_t done)
{
	y->last_done = done;
	y->seen = true;
}

void bgread_yield_took(struct bgread_yield *y, uint64_t bytes, double secs)
{
	double r;

	if (bytes < BGREAD_READ_MIN / 2 || !(secs > 0))
		return;     /* too small to tell, or a clock that did not move */
	r = (double)bytes / secs;
	y->rate = y->rate > 0 ? 0.7 * y->rate + 0.3 * r : r;
}

uint64_t bgread_yield_size(const struct bgread_yield *y, uint64_t page)
{
	double want = y->rate > 0 ? y->rate * BGREAD_READ_MS / 1000.0 : BGREAD_READ_FIRST;
	uint64_t sz = BGREAD_READ_MIN;

	while (sz < BGREAD_CHUNK && (double)(sz * 2) <= want)
		sz *= 2;
	if (page > sz)
		sz = page;
	return sz;
}

long bgread_pace_ms(uint64_t bytes, uint64_t rate, double elapsed)
{
	double due, ms;

	if (!rate)
		return 0;
	due = (double)bytes / (double)rate;
	if (due <= elapsed)
		return 0;
	ms = (due - elapsed) * 1000.0;
	if (ms > 1000)
		return 1000;
	return ms < 1 ? 1 : (long)ms;
}

bool bgread_mem_ok(uint64_t avail, uint64_t remaining, uint64_t min_free)
{
	return avail >= min_free && avail - min_free >= remaining;
}

int bgread_mem_available(int meminfo_fd, uint64_t *avail)
{
	char buf[8192];
	ssize_t n = pread_text(meminfo_fd, buf, sizeof(buf));

	return n < 0 ? (int)n : meminfo_parse(buf, "MemAvailable", avail);
}

int bgread_mem_check(int meminfo_fd, uint64_t remaining, uint64_t min_free, char *msg,
		     size_t msglen)
{
	char a[32], b[32], m[32];
	uint64_t avail = 0;
	int rc = bgread_mem_available(meminfo_fd, &avail);

	if (rc < 0) {
		snprintf(msg, msglen, "cannot read MemAvailable: %s", strerror(-rc));
		return -ENOMEM;
	}
	if (!bgread_mem_ok(avail, remaining, min_free)) {
		snprintf(msg, msglen, "memory ran short: %s still to copy, MemAvailable %s, "
			 "reserve %s", fmt_size(remaining, a, sizeof(a)),
			 fmt_size(avail, b, sizeof(b)), fmt_size(min_free, m, sizeof(m)));
		return -ENOMEM;
	}
	return 0;
}
