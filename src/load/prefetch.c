// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Prefetch: read the source once into the page cache, keep nothing,
 * without slowing down the boot that reads the same image meanwhile.
 *
 * The boot's own reads go first. Reading ahead of them on a link they
 * share only helps if ours never make theirs wait: so at most
 * BGREAD_THREADS reads are in flight, each sized to take about BGREAD_READ_MS
 * on the link (no read-ahead hint for the whole file: that is the
 * flood), they run in the idle I/O class, an optional rate caps them,
 * while the loop device the boot reads the image through has reads in
 * flight ours hold back, and reads in offset order (guesses) go only
 * once the boot has read nothing for a while: in its idle time. The
 * same rules as the lazy copier's: both run on the reader pool of
 * bgread/ (pool.h, yield.h).
 *
 * Order: the ranges of a matching boot profile (profile.h) first, in the
 * order the boot first read them, then the rest from start to end. What
 * the page cache holds already (mincore) is read without waiting and is
 * not counted against the rate: it costs no read of the source.
 *
 * A stalled source or a signal cancels the readers (pread is a
 * cancellation point); one the kernel will not let go of is left behind
 * with its memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bgread/pool.h"
#include "lib/clock.h"
#include "lib/msg.h"
#include "lib/proc.h"
#include "lib/units.h"
#include "load/loadint.h"
#include "profile/profile.h"

#define PF_PROFILE_NONE "none"

/*
 * The loop device to yield to: --loop, or the one backed by the source.
 * The boot may set that one up after the prefetch started (it mounts the
 * image it is reading ahead), so until there is one the pool looks for
 * it again now and then. Without one, or without its counters, nothing
 * is yielded to: only the other limits hold.
 */
static void setup_loop(struct run *u, struct bgread_cfg *c, struct bgread_loop *lp)
{
	const char *o = u->o->loop, *base;
	int rc;

	bgread_loop_init(lp);
	if (!o) {
		c->find_path = u->o->source;
		c->find_st = &u->src.st;
		return;
	}
	base = strrchr(o, '/');
	base = base ? base + 1 : o;
	rc = bgread_loop_open(lp, -1, base);
	if (rc < 0) {
		rb_warn("/sys/block/%s/inflight: %s; the prefetch cannot tell when the boot "
			"is reading", base, strerror(-rc));
		bgread_loop_close(lp);
		return;
	}
	rb_debug("yielding to the reads of %s", lp->name);
	c->loop = lp;
}

/*
 * The boot profile: used only when it was recorded on this image
 * (profile_matches: the size and the ends hash, profile.h); else a
 * warning and the plain order. Never a reason to fail. The ranges of a
 * matching one are appended to out.
 */
static void load_order(struct run *u, uint64_t size, struct bgread_ranges *out)
{
	const char *path = u->o->profile;
	char def[PATH_MAX], err[256];
	struct profile prof;
	struct profile_id id;
	struct stat st;
	size_t i;
	int rc;

	if (path && !strcmp(path, PF_PROFILE_NONE)) {
		path = NULL;
	} else if (!path) {
		/* SOURCE.profile, when the admin put one there. */
		if (snprintf(def, sizeof(def), "%s.profile", u->o->source) < (int)sizeof(def) &&
		    stat(def, &st) == 0 && S_ISREG(st.st_mode))
			path = def;
	}
	if (!path)
		return;
	profile_init(&prof);
	rc = profile_load(path, &prof, err, sizeof(err));
	if (rc == 0) {
		rc = profile_image_id(u->src.fd, size, &id);
		if (rc < 0)
			snprintf(err, sizeof(err), "cannot hash the ends of %s: %s", u->o->source,
				 strerror(-rc));
	}
	if (rc < 0) {
		rb_warn("profile %s: %s; prefetching in offset order", path, err);
	} else if (!profile_matches(&prof, &id)) {
		rb_warn("profile %s was not recorded on %s; prefetching in offset order", path,
			u->o->source);
	} else {
		rb_debug("profile %s: %zu ranges, %" PRIu64 " bytes first", path, prof.n,
			 profile_bytes(&prof));
		for (i = 0; i < prof.n; i++)
			(void)bgread_ranges_add(out, prof.r[i].off, prof.r[i].len);
	}
	profile_free(&prof);
}

/* The pool's outcome as the run's. */
static int pf_outcome(struct run *u, const struct bgread_stats *st)
{
	switch (st->why) {
	case BGREAD_DONE:
	case BGREAD_ESTOPPED:
		return 0;
	case BGREAD_ESTALL:
		return load_fail(u, LOAD_STALL, "%s: no data for %.0f s; prefetch stopped",
				 u->o->source, u->o->stall_timeout);
	case BGREAD_ESIGNAL:
		return load_fail(u, LOAD_SIGNAL, "interrupted");
	default:
		return load_fail(u, LOAD_SOURCE, "%s: read error: %s", u->o->source,
				 strerror(st->err ? -st->err : EIO));
	}
}

int prefetch_run(struct run *u)
{
	struct bgread_cfg c = { 0 };
	struct bgread_ranges order = { 0 };
	struct bgread_stats st;
	struct bgread_loop lp;
	struct bgread_pool *pool;
	char a[32], b[32];
	long page = sysconf(_SC_PAGESIZE);
	int ioprio, rc;

	if (!u->src.seekable)
		return load_fail(u, LOAD_USAGE, "--prefetch needs a file or block device");
	if (u->src.size == 0)
		return 0;
	c.fd = u->src.fd;
	c.size = u->src.size;
	c.page = page >= (long)PROFILE_PAGE_MIN && page <= (long)PROFILE_PAGE_MAX ?
		(uint64_t)page : 4096;
	c.rate = u->o->rate;
	c.meminfo_fd = -1;
	c.mincore_ok = bgread_mincore_shows(&u->src.st, u->o->source);
	c.short_ends = true;
	c.verb = "read";
	c.list_name[BGREAD_LIST_RESIDENT] = "page cache";
	c.list_name[BGREAD_LIST_PROFILE] = "profile";
	c.list_name[BGREAD_LIST_SEQ] = "sequential";
	/* Reads of exactly what is asked: no read-ahead on top of ours. */
	(void)posix_fadvise(c.fd, 0, 0, POSIX_FADV_RANDOM);
	load_order(u, c.size, &order);
	if (u->o->profile_only) {
		c.sched_flags = BGREAD_SCHED_NO_SEQ;
		if (!order.n)
			rb_debug("--profile-only without a profile: nothing to read");
	}
	setup_loop(u, &c, &lp);
	if (u->o->wait_loop > 0 && !u->o->loop)
		/* Started in the boot before the image is mounted: the
		 * boot's first reads (the mount, init) go first. */
		c.wait_until = now_sec() + u->o->wait_loop;
	pool = bgread_pool_new(&c);
	if (!pool || bgread_pool_set_list(pool, BGREAD_LIST_PROFILE, &order) < 0) {
		bgread_pool_free(pool);
		bgread_ranges_free(&order);
		bgread_loop_close(&lp);
		return load_fail(u, LOAD_NOMEM, "out of memory");
	}
	ioprio = io_prio_idle();
	rc = bgread_pool_run(pool, u->guard);
	io_prio_restore(ioprio);
	bgread_pool_stats(pool, &st);
	u->r->bytes_in = u->r->bytes_out = st.done;
	u->r->reader_stuck = st.abandoned;
	rb_debug("prefetch: %s read, %s of it from the page cache, %" PRIu64 " yields",
		 fmt_size(st.done, a, sizeof(a)), fmt_size(st.cached, b, sizeof(b)), st.yields);
	/* An abandoned reader keeps the pool (never freed under it), and
	 * the loop device's counters it reads. */
	bgread_pool_free(pool);
	if (!st.abandoned)
		bgread_loop_close(&lp);
	if (rc < 0)
		return load_fail(u, LOAD_NOMEM, "cannot start a reader: %s", strerror(-rc));
	return pf_outcome(u, &st);
}
