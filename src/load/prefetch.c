// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Prefetch: read the source once into the page cache, keep nothing,
 * without slowing down the boot that reads the same image meanwhile.
 *
 * The boot's own reads go first. Reading ahead of them on a link they
 * share only helps if ours never make theirs wait: so at most
 * PF_THREADS reads are in flight, each sized to take about LAZY_READ_MS
 * on the link (no read-ahead hint for the whole file: that is the
 * flood), they run in the idle I/O class, an optional rate caps them,
 * while the loop device the boot reads the image through has reads in
 * flight ours hold back, and reads in offset order (guesses) go only
 * once the boot has read nothing for a while: in its idle time. The
 * same rules as the lazy copier's (lazy.h, struct lazy_yield).
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
#include <linux/ioprio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/ramboot.h"
#include "lazy/lazy.h"
#include "load/loadint.h"
#include "dev/loopdev.h"
#include "profile/profile.h"

#define PF_CHUNK LAZY_CHUNK      /* bytes per read, at most */
#define PF_THREADS LAZY_THREADS  /* reads in flight, at most */
#define PF_GRACE_S 2
#define PF_PROFILE_NONE "none"
#define PF_LOOK_S 1.0            /* no loop device yet: looked for this often */

struct pf {
	int fd;
	uint64_t size;
	uint32_t page;
	bool mincore_ok;          /* the kernel shows us the file's page cache */
	bool profile_only;
	int inflight_fd;          /* the loop device's counters, -1: none (under lock) */
	int stat_fd;              /* its reads completed, -1: not known (under lock) */
	char loop[64];            /* its name, for the log */
	char source[PATH_MAX];    /* to look for the loop device */
	struct stat st;
	double next_look;         /* no loop device yet: when to look again, 0: never */
	double wait_until;        /* no loop device yet: read nothing before this */
	uint64_t rate;
	double t0;
	pthread_mutex_t lock;
	struct rangeq q;          /* under lock */
	atomic_uint_fast64_t done;      /* bytes read */
	atomic_uint_fast64_t resident;  /* of them, in the page cache already */
	atomic_uint_fast64_t paced;     /* bytes counted against the rate */
	atomic_uint_fast64_t completed; /* reads done, for the guard */
	atomic_uint_fast64_t idle_ticks;
	atomic_uint yields;
	atomic_int reading;
	atomic_int err;
	atomic_bool stop;
	int nthreads;
	pthread_t tid[PF_THREADS];
};

/* The kernel shows the page cache of a file only to a process that owns
 * it, may write it, or has CAP_FOWNER (mm/mincore.c, can_do_mincore());
 * to others it says every page is resident, which would skip them all. */
/* Bytes of [off, off + len) the page cache holds now: what the read
 * takes without the source. 0 when the kernel does not tell. */
static uint64_t chunk_resident(const struct pf *f, uint64_t off, uint64_t len)
{
	unsigned char vec[PF_CHUNK / PROFILE_PAGE_MIN + 1];
	uint64_t res = 0;
	void *m;

	if (!f->mincore_ok || (len + f->page - 1) / f->page > sizeof(vec))
		return 0;
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, f->fd, (off_t)off);
	if (m == MAP_FAILED)
		return 0;
	if (mincore(m, len, vec) == 0)
		res = lazy_resident_bytes(vec, off, len, f->page);
	(void)munmap(m, len);
	return res;
}

/* The next range to read, or false when all is handed out or the run
 * stops. Under the lock, so the log shows the order handed out. */
static bool pf_take(struct pf *f, uint64_t max, uint64_t *off, uint64_t *len, bool *predicted)
{
	bool ok = false;

	pthread_mutex_lock(&f->lock);
	if (!atomic_load(&f->stop) && !atomic_load(&f->err) &&
	    rangeq_next(&f->q, max, off, len)) {
		/* rangeq hands out a profile range's pages while it has any. */
		bool prof = f->q.ri < f->q.npr;

		*predicted = prof;

		if (!prof && f->profile_only) {
			atomic_store(&f->stop, true);
		} else {
			rb_debug("read %" PRIu64 " %" PRIu64 " (%s)", *off, *len,
				 prof ? "profile" : "sequential");
			ok = true;
		}
	}
	pthread_mutex_unlock(&f->lock);
	return ok;
}

static void look_for_loop(struct pf *f, bool quiet);

/* A small sysfs file, from its start; -1 when there is none. */
static ssize_t read_text(int fd, char *buf, size_t len)
{
	ssize_t n;

	if (fd < 0)
		return -1;
	do
		n = pread(fd, buf, len - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/* A look at the boot's reads through the loop device: the wait before
 * our next read (lazy.h). */
static long boot_look(struct pf *f, struct lazy_yield *y, bool predicted)
{
	char in[64], st[256];
	uint64_t reads = 0, done;
	ssize_t n = -1, m = -1;

	pthread_mutex_lock(&f->lock);
	if (f->inflight_fd < 0 && f->next_look > 0 && now_sec() >= f->next_look)
		look_for_loop(f, true);
	if (f->inflight_fd >= 0) {
		n = read_text(f->inflight_fd, in, sizeof(in));
		m = read_text(f->stat_fd, st, sizeof(st));
	} else if (f->wait_until > 0 && now_sec() < f->wait_until) {
		/* Started in the boot before the image is mounted: the
		 * boot's first reads (the mount, init) go first. */
		pthread_mutex_unlock(&f->lock);
		return LAZY_BACKOFF_MAX_MS;
	}
	pthread_mutex_unlock(&f->lock);
	if (n <= 0 || lazy_parse_inflight(in, &reads) < 0)
		reads = 0;
	if (m <= 0 || lazy_parse_stat(st, &done) < 0)
		return lazy_yield_step(y, now_sec(), NULL, reads, predicted);
	return lazy_yield_step(y, now_sec(), &done, reads, predicted);
}

/* Before a read: let the boot's reads go first, and keep to the rate.
 * false when the run stops meanwhile. */
static bool pf_wait_turn(struct pf *f, struct lazy_yield *y, uint64_t len, bool predicted)
{
	for (;;) {
		long ms;

		if (atomic_load(&f->stop) || atomic_load(&f->err))
			return false;
		ms = boot_look(f, y, predicted);
		if (ms) {
			atomic_fetch_add(&f->yields, 1);
			rb_debug("yield: %s %s, waiting %ld ms", f->loop,
				 y->why == LAZY_BOOT_READ ? "read just now" : "has reads in flight", ms);
		} else {
			ms = lazy_pace_ms(atomic_load(&f->paced), f->rate, now_sec() - f->t0);
			if (!ms)
				break;
		}
		nap_ms(ms);
	}
	atomic_fetch_add(&f->paced, len);
	return true;
}

/* The size of the next read: sized to the link while there is a boot to
 * yield to, else whole chunks. */
static uint64_t pf_size(struct pf *f, const struct lazy_yield *y)
{
	bool polite;

	pthread_mutex_lock(&f->lock);
	polite = f->inflight_fd >= 0 || (f->wait_until > 0 && now_sec() < f->wait_until);
	pthread_mutex_unlock(&f->lock);
	return polite ? lazy_yield_size(y, f->page) : PF_CHUNK;
}

/*
 * One reader. Cancellation (a stall or a signal) is enabled only around
 * the read: a thread is never cancelled while it holds the lock.
 */
static void *pf_main(void *arg)
{
	struct pf *f = arg;
	struct lazy_yield y = { 0 };
	volatile bool niced = false;
	void *buf = malloc(PF_CHUNK);
	int old;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	if (!buf) {
		int expected = 0;

		atomic_compare_exchange_strong(&f->err, &expected, -ENOMEM);
		return NULL;
	}
	pthread_cleanup_push(free, buf);
	for (;;) {
		uint64_t off, len, res;
		bool predicted = false;
		double t;
		ssize_t n;

		if (!pf_take(f, pf_size(f, &y), &off, &len, &predicted))
			break;
		/* What the page cache holds costs no wait: the read takes it
		 * from there (and keeps it from being the first evicted). */
		res = chunk_resident(f, off, len);
		if (res < len && !pf_wait_turn(f, &y, len - res, predicted))
			break;
		/* Reading: from now on at nice 19, the boot's CPU first. Not
		 * before: until then this thread looks for the boot's loop
		 * device, which must not miss it for want of CPU. */
		if (!niced) {
			(void)cpu_nice_bg();
			niced = true;
		}
		atomic_fetch_add(&f->reading, 1);
		t = now_sec();
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
		n = pread_full(f->fd, buf, len, (off_t)off);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
		atomic_fetch_sub(&f->reading, 1);
		if (res == 0 && n > 0)
			lazy_yield_took(&y, (uint64_t)n, now_sec() - t);
		if (n < 0) {
			int expected = 0;

			atomic_compare_exchange_strong(&f->err, &expected, (int)n);
			break;
		}
		atomic_fetch_add(&f->done, (uint64_t)n);
		atomic_fetch_add(&f->resident, res < (uint64_t)n ? res : (uint64_t)n);
		atomic_fetch_add(&f->completed, 1);
		if ((uint64_t)n < len)
			break;     /* the source got shorter: nothing more to read */
	}
	pthread_cleanup_pop(1);
	return NULL;
}

/* The guard's clock: reads that complete, and time in which none of ours
 * is waiting (yielding to the boot or keeping to the rate is no stall; a
 * read that does not return is). */
static uint64_t pf_progress(void *arg)
{
	struct pf *f = arg;

	if (atomic_load(&f->reading) == 0)
		atomic_fetch_add(&f->idle_ticks, 1);
	return atomic_load(&f->completed) + atomic_load(&f->idle_ticks);
}

static void pf_cancel(void *arg, enum guard_why why)
{
	struct pf *f = arg;
	int i, expected = 0;

	atomic_compare_exchange_strong(&f->err, &expected, why == GUARD_STALL ? -ETIMEDOUT : -EINTR);
	for (i = 0; i < f->nthreads; i++)
		pthread_cancel(f->tid[i]);
}

/* The counters of the loop device named in f->loop. */
static int open_inflight(struct pf *f)
{
	char p[PATH_MAX];

	if (rb_path(p, sizeof(p), "/sys/block/%s/inflight", f->loop) < 0)
		return -ENAMETOOLONG;
	f->inflight_fd = open(p, O_RDONLY | O_CLOEXEC);
	if (f->inflight_fd < 0)
		return -errno;
	/* Optional: without it, only reads in flight tell the boot reads. */
	if (rb_path(p, sizeof(p), "/sys/block/%s/stat", f->loop) == 0)
		f->stat_fd = open(p, O_RDONLY | O_CLOEXEC);
	return 0;
}

/* One look for the loop device backed by the source (its backing_file,
 * through the root prefix). */
static void look_for_loop(struct pf *f, bool quiet)
{
	char err[512];
	int rc = loopdev_find(f->source, &f->st, f->loop, sizeof(f->loop), err, sizeof(err));

	f->next_look = now_sec() + PF_LOOK_S;
	if (rc == -ENOENT) {
		if (!quiet)
			rb_debug("%s; looking again every %.0f s", err, PF_LOOK_S);
		return;
	}
	/* Several: the first one's reads stand for the boot's. */
	if (rc < 0)
		rb_debug("%s", err);
	if (open_inflight(f) < 0) {
		rb_debug("/sys/block/%s/inflight: %s", f->loop, strerror(errno));
		return;
	}
	f->next_look = 0;
	rb_debug("yielding to the reads of %s", f->loop);
}

/*
 * The loop device to yield to: --loop, or the one backed by the source.
 * The boot may set that one up after the prefetch started (it mounts the
 * image it is reading ahead), so until there is one it is looked for
 * again now and then. Without one, or without its counters, nothing is
 * yielded to: only the other limits hold.
 */
static void open_loop(struct run *u, struct pf *f)
{
	const char *o = u->o->loop, *base;

	snprintf(f->source, sizeof(f->source), "%s", u->o->source);
	f->st = u->src.st;
	if (!o) {
		look_for_loop(f, false);
		return;
	}
	base = strrchr(o, '/');
	base = base ? base + 1 : o;
	snprintf(f->loop, sizeof(f->loop), "%s", base);
	if (open_inflight(f) < 0)
		rb_warn("/sys/block/%s/inflight: %s; the prefetch cannot tell when the boot "
			"is reading", f->loop, strerror(errno));
	else
		rb_debug("yielding to the reads of %s", f->loop);
}

/*
 * The boot profile: used only when it was recorded on this image
 * (profile_matches: the size and the ends hash, profile.h); else a
 * warning and the plain order. Never a reason to fail. 0 or -ENOMEM.
 */
static int setup_order(struct run *u, struct pf *f)
{
	const char *path = u->o->profile;
	char def[PATH_MAX], err[256];
	struct profile prof;
	struct profile_id id;
	struct stat st;
	bool use = false;
	int rc;

	profile_init(&prof);
	if (path && !strcmp(path, PF_PROFILE_NONE)) {
		path = NULL;
	} else if (!path) {
		/* SOURCE.profile, when the admin put one there. */
		if (snprintf(def, sizeof(def), "%s.profile", u->o->source) < (int)sizeof(def) &&
		    stat(def, &st) == 0 && S_ISREG(st.st_mode))
			path = def;
	}
	if (path) {
		rc = profile_load(path, &prof, err, sizeof(err));
		if (rc == 0) {
			rc = profile_image_id(f->fd, f->size, &id);
			if (rc < 0)
				snprintf(err, sizeof(err), "cannot hash the ends of %s: %s",
					 u->o->source, strerror(-rc));
		}
		if (rc < 0)
			rb_warn("profile %s: %s; prefetching in offset order", path, err);
		else if (!profile_matches(&prof, &id))
			rb_warn("profile %s was not recorded on %s; prefetching in offset order",
				path, u->o->source);
		else
			use = true;
	}
	if (use)
		rb_debug("profile %s: %zu ranges, %" PRIu64 " bytes first", path, prof.n,
			 profile_bytes(&prof));
	else if (f->profile_only)
		rb_debug("--profile-only without a profile: nothing to read");
	rc = rangeq_init(&f->q, f->size, f->page, use ? &prof : NULL);
	profile_free(&prof);
	if (rc == 0 && f->profile_only && !use)
		atomic_store(&f->stop, true);
	return rc;
}


int prefetch_run(struct run *u)
{
	struct pf *f;
	char a[32], b[32];
	long page = sysconf(_SC_PAGESIZE);
	int i, err, ioprio;
	bool abandoned = false;

	if (!u->src.seekable)
		return load_fail(u, LOAD_USAGE, "--prefetch needs a file or block device");
	if (u->src.size == 0)
		return 0;
	f = calloc(1, sizeof(*f));
	if (!f)
		return load_fail(u, LOAD_NOMEM, "out of memory");
	f->fd = u->src.fd;
	f->size = u->src.size;
	f->page = page >= (long)PROFILE_PAGE_MIN && page <= (long)PROFILE_PAGE_MAX ?
		(uint32_t)page : 4096;
	f->rate = u->o->rate;
	f->profile_only = u->o->profile_only;
	f->inflight_fd = f->stat_fd = -1;
	f->mincore_ok = profile_mincore_shows(&u->src.st, u->o->source);
	pthread_mutex_init(&f->lock, NULL);
	/* Reads of exactly what is asked: no read-ahead on top of ours. */
	(void)posix_fadvise(f->fd, 0, 0, POSIX_FADV_RANDOM);
	if (setup_order(u, f) < 0) {
		pthread_mutex_destroy(&f->lock);
		free(f);
		return load_fail(u, LOAD_NOMEM, "out of memory");
	}
	open_loop(u, f);
	ioprio = io_prio_idle();
	f->t0 = now_sec();
	if (u->o->wait_loop > 0 && !u->o->loop)
		f->wait_until = f->t0 + u->o->wait_loop;
	for (i = 0; i < PF_THREADS; i++)
		if (pthread_create(&f->tid[f->nthreads], NULL, pf_main, f) == 0)
			f->nthreads++;
	guard_target(u->guard, pf_progress, pf_cancel, f);
	if (!f->nthreads)
		pf_main(f);
	for (i = 0; i < f->nthreads; i++) {
		struct timespec ts;

		/* Wait as long as the work goes on; after a cancellation,
		 * a grace period only. */
		for (;;) {
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += PF_GRACE_S;
			if (pthread_timedjoin_np(f->tid[i], NULL, &ts) == 0)
				break;
			if (guard_fired(u->guard, NULL) != GUARD_NONE) {
				pthread_detach(f->tid[i]);
				abandoned = true;
				break;
			}
		}
	}
	guard_target(u->guard, NULL, NULL, NULL);
	io_prio_restore(ioprio);
	u->r->bytes_in = u->r->bytes_out = atomic_load(&f->done);
	u->r->reader_stuck = abandoned;
	err = atomic_load(&f->err);
	rb_debug("prefetch: %s read, %s of it from the page cache, %u yields",
		 fmt_size(atomic_load(&f->done), a, sizeof(a)),
		 fmt_size(atomic_load(&f->resident), b, sizeof(b)), atomic_load(&f->yields));
	/* An abandoned reader keeps f (never freed under it). */
	if (!abandoned) {
		if (f->inflight_fd >= 0)
			(void)close(f->inflight_fd);
		if (f->stat_fd >= 0)
			(void)close(f->stat_fd);
		rangeq_free(&f->q);
		pthread_mutex_destroy(&f->lock);
		free(f);
	}
	if (err == -ETIMEDOUT)
		return load_fail(u, LOAD_STALL, "%s: no data for %.0f s; prefetch stopped",
				 u->o->source, u->o->stall_timeout);
	if (err == -EINTR)
		return load_fail(u, LOAD_SIGNAL, "interrupted");
	if (err)
		return load_fail(u, LOAD_SOURCE, "%s: read error: %s", u->o->source, strerror(-err));
	return 0;
}
