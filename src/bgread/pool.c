// SPDX-License-Identifier: GPL-2.0-or-later
/* The reader pool (pool.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bgread/pool.h"
#include "bgread/yield.h"
#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/proc.h"

#define JOIN_WAIT_MS 500

struct reader {
	struct bgread_pool *p;
	int i;
	void *buf;
};

struct bgread_pool {
	struct bgread_cfg cfg;
	pthread_mutex_t lock;
	struct bgread_sched sched;           /* under lock */
	struct bgread_loop loop;             /* under lock */
	bool loop_known, loop_owned;         /* under lock */
	double next_look;                    /* no loop device yet: look then, 0: never */
	double t0;
	uint64_t dispatched, next_mem;       /* under lock */
	uint64_t done, cached, network;      /* under lock */
	enum bgread_stop why;                /* under lock */
	int err;
	uint64_t err_off, err_len;
	char msg[256];
	atomic_bool stop;
	atomic_uint_fast64_t paced;          /* source bytes let through */
	atomic_uint_fast64_t yields;
	atomic_uint_fast64_t completed;      /* reads done (the guard's clock) */
	atomic_uint_fast64_t idle_ticks;
	atomic_int reading;                  /* reads of the image in progress */
	int nthreads;
	bool abandoned;
	pthread_t tid[BGREAD_THREADS];
	bool exited[BGREAD_THREADS];         /* under lock */
	struct reader w[BGREAD_THREADS];
};

static void fail_locked(struct bgread_pool *p, enum bgread_stop why, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Record the first reason to stop, and stop. */
static void fail_locked(struct bgread_pool *p, enum bgread_stop why, int err, const char *fmt, ...)
{
	va_list ap;

	if (p->why == BGREAD_DONE) {
		p->why = why;
		p->err = err;
		va_start(ap, fmt);
		vsnprintf(p->msg, sizeof(p->msg), fmt, ap);
		va_end(ap);
	}
	atomic_store(&p->stop, true);
}

static void look_for_loop(struct bgread_pool *p, bool quiet);

struct bgread_pool *bgread_pool_new(const struct bgread_cfg *cfg)
{
	struct bgread_pool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->cfg = *cfg;
	if (bgread_sched_init(&p->sched, cfg->size, cfg->page, cfg->sched_flags) < 0) {
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	bgread_loop_init(&p->loop);
	if (cfg->loop && cfg->loop->name[0]) {
		p->loop = *cfg->loop;
		p->loop_known = true;
	} else if (cfg->find_path) {
		look_for_loop(p, false);
	}
	return p;
}

int bgread_pool_set_list(struct bgread_pool *p, int list, struct bgread_ranges *r)
{
	int rc;

	pthread_mutex_lock(&p->lock);
	rc = bgread_sched_set(&p->sched, list, r);
	pthread_mutex_unlock(&p->lock);
	return rc;
}

void bgread_pool_refresh_resident(struct bgread_pool *p)
{
	struct bgread_ranges res = { 0 };

	if (p->cfg.mincore_ok &&
	    bgread_scan_resident(p->cfg.fd, p->cfg.size, p->cfg.page, &res) == 0)
		(void)bgread_pool_set_list(p, BGREAD_LIST_RESIDENT, &res);
	bgread_ranges_free(&res);
}

/* The next piece to read, or false when there is none or the pool
 * stops. Under the lock: the log shows the order handed out. */
static bool take(struct bgread_pool *p, uint64_t max, uint64_t *off, uint64_t *len,
		 bool *predicted)
{
	const struct bgread_cfg *c = &p->cfg;
	bool ok = false;
	int list = BGREAD_LIST_SEQ;

	pthread_mutex_lock(&p->lock);
	if (atomic_load(&p->stop))
		goto out;
	if (c->meminfo_fd >= 0 && p->dispatched >= p->next_mem) {
		char msg[sizeof(p->msg)];

		if (bgread_mem_check(c->meminfo_fd, c->size - p->dispatched, c->min_free, msg,
				     sizeof(msg)) < 0) {
			fail_locked(p, BGREAD_EMEMORY, -ENOMEM, "%s", msg);
			goto out;
		}
		p->next_mem = p->dispatched + BGREAD_MEM_STEP;
	}
	ok = bgread_sched_next(&p->sched, max, off, len, &list);
	if (ok) {
		*predicted = list != BGREAD_LIST_SEQ;
		p->dispatched += *len;
		rb_debug("%s %" PRIu64 " %" PRIu64 " (%s)", c->verb ? c->verb : "read", *off, *len,
			 c->list_name[list] ? c->list_name[list] : "");
	}
out:
	pthread_mutex_unlock(&p->lock);
	return ok;
}

/* Under the lock: one look for the loop device (cfg.find_path). */
static void look_for_loop(struct bgread_pool *p, bool quiet)
{
	char err[512];
	int rc = bgread_loop_find(&p->loop, p->cfg.find_path, p->cfg.find_st, err, sizeof(err));

	p->next_look = now_sec() + BGREAD_LOOK_S;
	if (rc == -ENOENT) {
		if (!quiet)
			rb_debug("%s; looking again every %.0f s", err, BGREAD_LOOK_S);
		return;
	}
	if (rc < 0) {
		rb_debug("%s", err);
		bgread_loop_close(&p->loop);
		return;
	}
	p->loop_known = p->loop_owned = true;
	p->next_look = 0;
	rb_debug("yielding to the reads of %s", p->loop.name);
}

/* A look at the boot's reads through the loop device: the wait before
 * our next read (yield.h). */
static long boot_look(struct bgread_pool *p, struct bgread_yield *y, bool predicted)
{
	uint64_t reads = 0, done = 0;
	bool have_done = false;

	pthread_mutex_lock(&p->lock);
	if (!p->loop_known && p->next_look > 0 && now_sec() >= p->next_look)
		look_for_loop(p, true);
	if (p->loop_known) {
		have_done = bgread_loop_read(&p->loop, &reads, &done);
	} else if (p->cfg.wait_until > 0 && now_sec() < p->cfg.wait_until) {
		pthread_mutex_unlock(&p->lock);
		return BGREAD_BACKOFF_MAX_MS;
	}
	pthread_mutex_unlock(&p->lock);
	return bgread_yield_step(y, now_sec(), have_done ? &done : NULL, reads, predicted);
}

/* Before a read that goes to the source: let the boot's reads go first,
 * and keep to the rate. false when the pool stops meanwhile. */
static bool wait_turn(struct bgread_pool *p, struct bgread_yield *y, uint64_t net,
		      bool predicted)
{
	for (;;) {
		long ms;

		if (atomic_load(&p->stop))
			return false;
		ms = boot_look(p, y, predicted);
		if (ms) {
			atomic_fetch_add(&p->yields, 1);
			rb_debug("yield: %s %s, waiting %ld ms", p->loop.name,
				 y->why == BGREAD_BOOT_READ ? "read just now" : "has reads in flight",
				 ms);
		} else {
			ms = bgread_pace_ms(atomic_load(&p->paced), p->cfg.rate, now_sec() - p->t0);
			if (!ms)
				break;
		}
		nap_ms(ms);
	}
	atomic_fetch_add(&p->paced, net);
	return true;
}

/* The size of the next read: sized to the link while there is a boot to
 * yield to, else whole chunks. */
static uint64_t next_size(struct bgread_pool *p, const struct bgread_yield *y)
{
	bool polite;

	pthread_mutex_lock(&p->lock);
	polite = p->loop_known || (p->cfg.wait_until > 0 && now_sec() < p->cfg.wait_until);
	pthread_mutex_unlock(&p->lock);
	return polite ? bgread_yield_size(y, p->cfg.page) : BGREAD_CHUNK;
}

static void reader_exit(void *arg)
{
	struct reader *w = arg;
	struct bgread_pool *p = w->p;

	free(w->buf);
	w->buf = NULL;
	pthread_mutex_lock(&p->lock);
	p->exited[w->i] = true;
	pthread_mutex_unlock(&p->lock);
}

/* One read and what follows it: true to go on. */
static bool read_one(struct bgread_pool *p, struct reader *w, struct bgread_yield *y, uint64_t off,
		     uint64_t len, uint64_t res)
{
	const struct bgread_cfg *c = &p->cfg;
	ssize_t n;
	double t;
	int old, rc;

	atomic_fetch_add(&p->reading, 1);
	t = now_sec();
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
	n = pread_full(c->fd, w->buf, len, (off_t)off);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	atomic_fetch_sub(&p->reading, 1);
	if (res == 0 && n > 0)
		bgread_yield_took(y, (uint64_t)n, now_sec() - t);
	rc = 0;
	if (n < 0) {
		pthread_mutex_lock(&p->lock);
		if (p->why == BGREAD_DONE) {
			p->err_off = off;
			p->err_len = len;
		}
		fail_locked(p, BGREAD_EREAD, (int)n, "read error at %" PRIu64 ": %s", off,
			    strerror((int)-n));
		pthread_mutex_unlock(&p->lock);
		return false;
	}
	if ((uint64_t)n < len && !c->short_ends) {
		pthread_mutex_lock(&p->lock);
		fail_locked(p, BGREAD_ESHORT, 0, "the image ends at %" PRIu64 ", before its size %"
			    PRIu64, off + (uint64_t)n, c->size);
		pthread_mutex_unlock(&p->lock);
		return false;
	}
	if ((uint64_t)n == len && c->put)
		rc = c->put(c->arg, w->buf, off, len);
	if (rc == -ECANCELED)
		return false;
	if (res > (uint64_t)n)
		res = (uint64_t)n;
	pthread_mutex_lock(&p->lock);
	if (rc < 0) {
		fail_locked(p, BGREAD_EPUT, rc, "write error at %" PRIu64 ": %s", off, strerror(-rc));
	} else {
		p->done += (uint64_t)n;
		p->cached += res;
		p->network += (uint64_t)n - res;
	}
	pthread_mutex_unlock(&p->lock);
	atomic_fetch_add(&p->completed, 1);
	/* A short read (short_ends): the image got shorter, nothing more. */
	return rc == 0 && (uint64_t)n == len;
}

/* After a read of ours through the device the counters count
 * (cfg.reads_counted): what they show now is ours. */
static void own_reads(struct bgread_pool *p, struct bgread_yield *y)
{
	uint64_t reads, done;

	pthread_mutex_lock(&p->lock);
	if (p->loop_known && bgread_loop_read(&p->loop, &reads, &done))
		bgread_yield_own(y, done);
	pthread_mutex_unlock(&p->lock);
}

/*
 * One reader. Cancellation (a stall or a signal) is enabled only around
 * the read of the image: a reader is never cancelled while it holds the
 * lock or is in put.
 */
static void *reader_main(void *arg)
{
	struct reader *w = arg;
	struct bgread_pool *p = w->p;
	struct bgread_yield y = { 0 };
	volatile bool niced = false;
	int old;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	pthread_cleanup_push(reader_exit, w);
	/* Page aligned: a RAM copy on zram is written with O_DIRECT. */
	if (posix_memalign(&w->buf, 4096, BGREAD_CHUNK) != 0) {
		w->buf = NULL;
		pthread_mutex_lock(&p->lock);
		fail_locked(p, BGREAD_ENOMEM, -ENOMEM, "cannot allocate a buffer");
		pthread_mutex_unlock(&p->lock);
	}
	while (w->buf) {
		uint64_t off, len, res = 0;
		bool predicted = false;

		if (!take(p, next_size(p, &y), &off, &len, &predicted))
			break;
		/* What the page cache holds costs no wait: the read takes it
		 * from there (and keeps it from being the first evicted). */
		if (p->cfg.mincore_ok)
			res = bgread_chunk_resident(p->cfg.fd, off, len, p->cfg.page);
		if (res < len && !wait_turn(p, &y, len - res, predicted))
			break;
		/* Reading: from now on at nice 19, the boot's CPU first. Not
		 * before: until then this thread may look for the boot's loop
		 * device, which must not miss it for want of CPU. */
		if (!niced) {
			(void)cpu_nice_bg();
			niced = true;
		}
		if (!read_one(p, w, &y, off, len, res))
			break;
		if (p->cfg.reads_counted && res < len)
			own_reads(p, &y);
	}
	pthread_cleanup_pop(1);
	return NULL;
}

/* The guard's clock: reads that complete, and time in which none of
 * ours is waiting (yielding to the boot or keeping to the rate is no
 * stall; a read that does not return is). */
static uint64_t pool_progress(void *arg)
{
	struct bgread_pool *p = arg;

	if (atomic_load(&p->reading) == 0)
		atomic_fetch_add(&p->idle_ticks, 1);
	return atomic_load(&p->completed) + atomic_load(&p->idle_ticks);
}

int bgread_pool_cancel(struct bgread_pool *p, enum guard_why why)
{
	int i, n = 0;

	pthread_mutex_lock(&p->lock);
	fail_locked(p, why == GUARD_STALL ? BGREAD_ESTALL : BGREAD_ESIGNAL, 0, "%s",
		    why == GUARD_STALL ? "stalled" : "interrupted");
	/* pread is a cancellation point: a read the source never answers
	 * ends here (one the kernel holds uninterruptibly does not). A
	 * reader that has ended may be joined already: its ID is not
	 * touched. */
	for (i = 0; i < p->nthreads; i++) {
		if (!p->exited[i]) {
			pthread_cancel(p->tid[i]);
			n++;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return n;
}

static void pool_cancel(void *arg, enum guard_why why)
{
	(void)bgread_pool_cancel(arg, why);
}

void bgread_pool_stop(struct bgread_pool *p)
{
	pthread_mutex_lock(&p->lock);
	fail_locked(p, BGREAD_ESTOPPED, 0, "stopped");
	pthread_mutex_unlock(&p->lock);
}

bool bgread_pool_stopped(struct bgread_pool *p)
{
	return atomic_load(&p->stop);
}

/* Wait for reader i; after a stop, a grace period only. */
static void join_one(struct bgread_pool *p, int i, double *stop_at)
{
	for (;;) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += JOIN_WAIT_MS * 1000L * 1000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_timedjoin_np(p->tid[i], NULL, &ts) == 0)
			return;
		if (atomic_load(&p->stop)) {
			/* A read the kernel will not give up: leave it. */
			if (!*stop_at) {
				*stop_at = now_sec();
			} else if (now_sec() - *stop_at > BGREAD_GRACE_S) {
				pthread_detach(p->tid[i]);
				p->abandoned = true;
				return;
			}
			continue;
		}
		if (p->cfg.tick)
			p->cfg.tick(p->cfg.arg);
	}
}

int bgread_pool_run(struct bgread_pool *p, struct guard *g)
{
	double stop_at = 0;
	int i;

	p->t0 = now_sec();
	pthread_mutex_lock(&p->lock);
	for (i = 0; i < (p->cfg.reads_counted ? 1 : BGREAD_THREADS); i++) {
		struct reader *w = &p->w[p->nthreads];

		w->p = p;
		w->i = p->nthreads;
		if (pthread_create(&p->tid[p->nthreads], NULL, reader_main, w) == 0)
			p->nthreads++;
	}
	pthread_mutex_unlock(&p->lock);
	if (!p->nthreads)
		return -EAGAIN;
	guard_target(g, pool_progress, pool_cancel, p);
	for (i = 0; i < p->nthreads; i++)
		join_one(p, i, &stop_at);
	guard_target(g, NULL, NULL, NULL);
	return 0;
}

void bgread_pool_stats(struct bgread_pool *p, struct bgread_stats *st)
{
	pthread_mutex_lock(&p->lock);
	st->done = p->done;
	st->cached = p->cached;
	st->network = p->network;
	st->yields = atomic_load(&p->yields);
	st->all_taken = bgread_sched_done(&p->sched);
	st->abandoned = p->abandoned;
	st->why = p->why;
	st->err = p->err;
	st->err_off = p->err_off;
	st->err_len = p->err_len;
	snprintf(st->msg, sizeof(st->msg), "%s", p->msg);
	pthread_mutex_unlock(&p->lock);
}

void bgread_pool_free(struct bgread_pool *p)
{
	if (!p || p->abandoned)
		return;
	if (p->loop_owned)
		bgread_loop_close(&p->loop);
	bgread_sched_free(&p->sched);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
