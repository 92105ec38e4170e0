// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Prefetch: read the source once into the page cache, keep nothing.
 * Several reads are in flight, which is what NFS and NBD need to fill
 * the link. A stalled source or a signal cancels the readers (pread is
 * a cancellation point); one the kernel will not let go of is left
 * behind with its memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ramboot.h"
#include "loadint.h"

#define PF_CHUNK (2u * 1024 * 1024)
#define PF_MAX_THREADS 128
#define PF_GRACE_S 2

struct pf {
	int fd;
	uint64_t size;
	atomic_uint_fast64_t next, done;
	atomic_int err;
	int nthreads;
	pthread_t tid[PF_MAX_THREADS];
};

static void *pf_main(void *arg)
{
	struct pf *f = arg;
	void *buf = malloc(PF_CHUNK);

	if (!buf) {
		atomic_store(&f->err, -ENOMEM);
		return NULL;
	}
	pthread_cleanup_push(free, buf);
	while (!atomic_load(&f->err)) {
		uint64_t off = atomic_fetch_add(&f->next, PF_CHUNK);
		ssize_t n;

		if (off >= f->size)
			break;
		n = pread_full(f->fd, buf, PF_CHUNK, (off_t)off);
		if (n < 0) {
			atomic_store(&f->err, (int)n);
			break;
		}
		atomic_fetch_add(&f->done, (uint64_t)n);
		if ((size_t)n < PF_CHUNK)
			break;
	}
	pthread_cleanup_pop(1);
	return NULL;
}

static uint64_t pf_progress(void *arg)
{
	struct pf *f = arg;

	return atomic_load(&f->done);
}

static void pf_cancel(void *arg, enum guard_why why)
{
	struct pf *f = arg;
	int i, expected = 0;

	atomic_compare_exchange_strong(&f->err, &expected, why == GUARD_STALL ? -ETIMEDOUT : -EINTR);
	for (i = 0; i < f->nthreads; i++)
		pthread_cancel(f->tid[i]);
}

int prefetch_run(struct run *u)
{
	struct pf *f;
	int n = (u->o->threads > 0 ? u->o->threads : online_cpus()) * 2, i, err;
	bool abandoned = false;

	if (!u->src.seekable)
		return load_fail(u, LOAD_USAGE, "--prefetch needs a file or block device");
	f = calloc(1, sizeof(*f));
	if (!f)
		return load_fail(u, LOAD_NOMEM, "out of memory");
	f->fd = u->src.fd;
	f->size = u->src.size;
	if (n < 4)
		n = 4;
	if (n > PF_MAX_THREADS)
		n = PF_MAX_THREADS;
	/* Ask for read-ahead of the whole file first; the threads' reads
	 * then keep several requests in flight on NFS or NBD. */
	(void)posix_fadvise(f->fd, 0, 0, POSIX_FADV_WILLNEED);
	for (i = 0; i < n; i++)
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
	u->r->bytes_in = u->r->bytes_out = atomic_load(&f->done);
	u->r->reader_stuck = abandoned;
	err = atomic_load(&f->err);
	if (!abandoned)
		free(f);
	if (err == -ETIMEDOUT)
		return load_fail(u, LOAD_STALL, "%s: no data for %.0f s; prefetch stopped",
				 u->o->source, u->o->stall_timeout);
	if (err == -EINTR)
		return load_fail(u, LOAD_SIGNAL, "interrupted");
	if (err)
		return load_fail(u, LOAD_SOURCE, "%s: read error: %s", u->o->source, strerror(-err));
	return 0;
}
