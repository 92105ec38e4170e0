// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The copy from the image, over the reader pool of bgread/ (pool.h):
 * the pool reads, this writes what it read into the copy.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lazy/lazyint.h"
#include "bgread/yield.h"
#include "lib/clock.h"
#include "lib/fdio.h"

/* The pool's put: the piece into the copy (bgread/pool.h). */
static int copy_put(void *arg, const void *buf, uint64_t off, uint64_t len)
{
	struct copy *c = arg;
	int rc;

	pthread_rwlock_rdlock(&c->wlock);
	rc = c->copy_fd < 0 || bgread_pool_stopped(c->pool) ? -ECANCELED :
		pwrite_full(c->copy_fd, buf, len, (off_t)off);
	pthread_rwlock_unlock(&c->wlock);
	return rc;
}

uint64_t lazy_copy_yields(struct lazy *L)
{
	struct bgread_stats st;

	if (!L->cp || !L->cp->pool)
		return 0;
	bgread_pool_stats(L->cp->pool, &st);
	return st.yields;
}

void lazy_copy_counters(struct lazy *L)
{
	struct bgread_stats st;

	if (!L->cp || !L->cp->pool)
		return;
	bgread_pool_stats(L->cp->pool, &st);
	L->r->bytes_cached = st.cached;
	L->r->bytes_network = st.network;
}

/* The pool's tick: the status file and the page cache rescan. */
static void copy_tick(void *arg)
{
	struct lazy *L = ((struct copy *)arg)->L;

	if (now_sec() - L->last_status >= STATUS_EVERY_S) {
		bgread_pool_refresh_resident(L->cp->pool);
		lazy_copy_counters(L);
		lazy_status_write(L);
	}
}

/* The pool's reason to stop, as the run's. */
static enum run_err copy_err(const struct bgread_stats *st)
{
	switch (st->why) {
	case BGREAD_DONE: return LAZY_OK;
	case BGREAD_ENOMEM:
	case BGREAD_EMEMORY: return LAZY_NOMEM;
	case BGREAD_EREAD: return LAZY_SOURCE;
	case BGREAD_ESHORT: return LAZY_CHANGED;
	case BGREAD_EPUT: return st->err == -ENOSPC ? LAZY_NOMEM : LAZY_DEST;
	case BGREAD_ESTALL: return LAZY_STALL;
	case BGREAD_ESIGNAL:
	case BGREAD_ESTOPPED:
	default: return LAZY_SIGNAL;
	}
}

static struct bgread_pool *copy_pool(struct lazy *L)
{
	struct bgread_cfg cfg = { 0 };

	cfg.fd = L->img_fd;
	cfg.size = L->size;
	cfg.page = L->page;
	cfg.rate = L->o->rate;
	cfg.mincore_ok = L->mincore_ok;
	cfg.meminfo_fd = L->meminfo_fd;
	cfg.min_free = L->o->min_free;
	cfg.loop = &L->lp;
	cfg.verb = "copy";
	cfg.list_name[BGREAD_LIST_RESIDENT] = "page cache";
	cfg.list_name[BGREAD_LIST_PROFILE] = "profile";
	cfg.list_name[BGREAD_LIST_SEQ] = "offset order";
	cfg.put = copy_put;
	cfg.tick = copy_tick;
	cfg.arg = L->cp;
	return bgread_pool_new(&cfg);
}

int lazy_run_copy(struct lazy *L)
{
	struct copy *c = L->cp;
	struct bgread_stats st;
	enum run_err e;
	int rc;

	c->pool = copy_pool(L);
	if (!c->pool || bgread_pool_set_list(c->pool, BGREAD_LIST_PROFILE, &c->order) < 0)
		return lazy_fail(L, LAZY_NOMEM, "out of memory");
	bgread_pool_refresh_resident(c->pool);
	if (bgread_pool_run(c->pool, L->guard) < 0)
		return lazy_fail(L, LAZY_NOMEM, "cannot start a copy thread");
	bgread_pool_stats(c->pool, &st);
	L->cp_abandoned = st.abandoned;
	lazy_copy_counters(L);
	if ((rc = lazy_guard_outcome(L)) != 0)
		return rc;
	e = copy_err(&st);
	if (e != LAZY_OK)
		return lazy_fail(L, e, "%s: %s", e == LAZY_DEST || e == LAZY_NOMEM ?
				 L->r->copy : L->o->image, st.msg);
	if (!st.all_taken || st.done != L->size)
		return lazy_fail(L, LAZY_DEST, "%s: %" PRIu64 " of %" PRIu64 " bytes copied",
				 L->r->copy, st.done, L->size);
	return 0;
}
