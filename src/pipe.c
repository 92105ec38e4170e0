// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The load pipeline: buffers, queues and the reader, writer and hasher
 * threads. Codec drivers sit in the middle (codec.c and the codec files).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ramboot.h"
#include "pipe.h"

/* How often the writer looks at MemAvailable, and drops written block
 * device pages from the page cache (else a zram target holds the image
 * twice: once compressed in zram and once in the block device's cache). */
#define CHECK_EVERY (64u * 1024 * 1024)

static void q_push(struct queue *q, struct chunk *c)
{
	c->next = NULL;
	if (q->tail)
		q->tail->next = c;
	else
		q->head = c;
	q->tail = c;
	q->n++;
}

static struct chunk *q_pop(struct queue *q)
{
	struct chunk *c = q->head;

	if (!c)
		return NULL;
	q->head = c->next;
	if (!q->head)
		q->tail = NULL;
	q->n--;
	c->next = NULL;
	return c;
}

static int pool_init(struct pool *pl, unsigned int n)
{
	unsigned int i;

	pl->all = calloc(n, sizeof(*pl->all));
	if (!pl->all)
		return -ENOMEM;
	pl->nall = n;
	for (i = 0; i < n; i++) {
		struct chunk *c = &pl->all[i];
		void *mem;

		mem = alloc_big(PIPE_BUF_SIZE);
		if (!mem)
			return -ENOMEM;
		c->data = mem;
		c->cap = PIPE_BUF_SIZE;
		c->pool = pl;
		c->next = pl->free;
		pl->free = c;
		pl->nfree++;
	}
	return 0;
}

static void pool_destroy(struct pool *pl)
{
	unsigned int i;

	if (!pl->all)
		return;
	for (i = 0; i < pl->nall; i++)
		free(pl->all[i].data);
	free(pl->all);
	memset(pl, 0, sizeof(*pl));
}

/* Called with the lock held. */
static void chunk_release_locked(struct pipe *p, struct chunk *c)
{
	if (c->pool) {
		c->len = 0;
		c->eof = false;
		c->ready = false;
		c->error = 0;
		c->next = c->pool->free;
		c->pool->free = c;
		c->pool->nfree++;
		pthread_cond_broadcast(&p->cond);
	} else {
		free(c->data);
		free(c);
	}
}

static struct chunk *pool_get(struct pipe *p, struct pool *pl)
{
	struct chunk *c = NULL;

	pthread_mutex_lock(&p->lock);
	while (!pl->free && !p->error)
		pthread_cond_wait(&p->cond, &p->lock);
	if (!p->error) {
		c = pl->free;
		pl->free = c->next;
		pl->nfree--;
		c->next = NULL;
		c->len = 0;
		c->eof = false;
		c->ready = false;
	}
	pthread_mutex_unlock(&p->lock);
	return c;
}

void pipe_fail(struct pipe *p, int err, enum pipe_stage where, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&p->lock);
	if (!p->error) {
		p->error = err ? err : -EIO;
		p->error_where = where;
		p->error_msg[0] = '\0';
		if (fmt) {
			va_start(ap, fmt);
			vsnprintf(p->error_msg, sizeof(p->error_msg), fmt, ap);
			va_end(ap);
		}
	}
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

int pipe_error(struct pipe *p)
{
	int e;

	pthread_mutex_lock(&p->lock);
	e = p->error;
	pthread_mutex_unlock(&p->lock);
	return e;
}

int pipe_init(struct pipe *p)
{
	int rc;

	memset(p, 0, sizeof(*p));
	p->src_fd = p->dst_fd = -1;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	SHA256_Init(&p->sha);
	rc = pool_init(&p->inpool, PIPE_NBUF_IN);
	if (rc == 0)
		rc = pool_init(&p->outpool, PIPE_NBUF_OUT);
	return rc;
}

void pipe_destroy(struct pipe *p)
{
	struct chunk *c;

	/* An abandoned reader may still wake up and touch the pipe: the
	 * whole pipe is then left to the process exit. */
	if (p->reader_abandoned)
		return;

	/* Chunks still queued after an error: malloc'd ones are freed here,
	 * pool ones with their pool. */
	while ((c = q_pop(&p->outq)) != NULL)
		if (!c->pool) {
			free(c->data);
			free(c);
		}
	while ((c = q_pop(&p->hashq)) != NULL)
		if (!c->pool) {
			free(c->data);
			free(c);
		}
	pool_destroy(&p->inpool);
	pool_destroy(&p->outpool);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
}

/* ---- reader ---- */

static void *reader_main(void *arg)
{
	struct pipe *p = arg;

	/* Cancelled only while blocked in read(): never with the lock held. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	for (;;) {
		struct chunk *c = pool_get(p, &p->inpool);
		size_t want;
		ssize_t n;
		bool eof;

		if (!c)
			return NULL;
		want = c->cap;
		if (p->max_in && p->max_in - p->st.bytes_in < want)
			want = (size_t)(p->max_in - p->st.bytes_in);
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		n = want ? read_full(p->src_fd, c->data, want) : 0;
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		if (n < 0) {
			pipe_fail(p, (int)n, PS_READ, NULL);
			pthread_mutex_lock(&p->lock);
			chunk_release_locked(p, c);
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		c->len = (size_t)n;
		/* A short read is the end of a file or pipe. */
		eof = (size_t)n < want;
		pthread_mutex_lock(&p->lock);
		p->st.bytes_in += (uint64_t)n;
		if (p->max_in && p->st.bytes_in >= p->max_in)
			eof = true;
		c->eof = eof;
		/* Once queued, c belongs to the codec: not touched again. */
		q_push(&p->inq, c);
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
		if (eof)
			return NULL;
	}
}

struct chunk *pipe_get_input(struct pipe *p)
{
	struct chunk *c = NULL;

	pthread_mutex_lock(&p->lock);
	while (!p->inq.head && !p->error)
		pthread_cond_wait(&p->cond, &p->lock);
	if (!p->error)
		c = q_pop(&p->inq);
	pthread_mutex_unlock(&p->lock);
	return c;
}

void pipe_put_input(struct pipe *p, struct chunk *c)
{
	pthread_mutex_lock(&p->lock);
	chunk_release_locked(p, c);
	pthread_mutex_unlock(&p->lock);
}

int pipe_next_input(struct pipe *p, struct chunk **in)
{
	bool eof = (*in)->eof;

	pipe_put_input(p, *in);
	*in = NULL;
	if (eof)
		return 0;
	*in = pipe_get_input(p);
	return *in ? 1 : pipe_error(p);
}

/* ---- codec side: output ---- */

struct chunk *pipe_get_outbuf(struct pipe *p)
{
	return pool_get(p, &p->outpool);
}

void pipe_emit(struct pipe *p, struct chunk *c)
{
	pthread_mutex_lock(&p->lock);
	q_push(&p->outq, c);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

void pipe_chunk_done(struct pipe *p, struct chunk *c, int err)
{
	pthread_mutex_lock(&p->lock);
	c->ready = true;
	c->error = err;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

void pipe_pass_through(struct pipe *p, struct chunk *c)
{
	c->ready = true;
	pipe_emit(p, c);
}

/* ---- writer ---- */

/* Fails closed: a MemAvailable that cannot be read is no licence to
 * go on filling RAM. */
static int check_memory(struct pipe *p)
{
	uint64_t avail;
	int rc;

	if (!p->min_free)
		return 0;
	rc = rb_meminfo("MemAvailable", &avail);
	if (rc < 0)
		return rc;
	return avail < p->min_free ? -ENOMEM : 0;
}

static void drop_cache(struct pipe *p, uint64_t upto)
{
	off_t off = (off_t)p->dropped_cache, len = (off_t)(upto - p->dropped_cache);

	/* Write the dirty pages out to the device, then drop them. */
	if (sync_file_range(p->dst_fd, off, len, SYNC_FILE_RANGE_WAIT_BEFORE |
			    SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) == 0)
		(void)posix_fadvise(p->dst_fd, off, len, POSIX_FADV_DONTNEED);
	p->dropped_cache = upto;
}

static void *writer_main(void *arg)
{
	struct pipe *p = arg;
	uint64_t out = 0, next_check = 0;

	for (;;) {
		struct chunk *c;
		int rc;

		pthread_mutex_lock(&p->lock);
		while (!p->error && !(p->out_closed && !p->outq.head) &&
		       !(p->outq.head && p->outq.head->ready))
			pthread_cond_wait(&p->cond, &p->lock);
		if (p->error || (p->out_closed && !p->outq.head)) {
			p->writer_done = true;
			pthread_cond_broadcast(&p->cond);
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		c = q_pop(&p->outq);
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);

		if (c->error) {
			pipe_fail(p, c->error, PS_DECODE, NULL);
			pipe_put_input(p, c);
			continue;
		}
		if (p->cap_out && out + c->len > p->max_out) {
			pipe_fail(p, -EFBIG, PS_WRITE, "output larger than expected (%llu bytes)",
				  (unsigned long long)p->max_out);
			pipe_put_input(p, c);
			continue;
		}
		if (out >= next_check) {
			rc = check_memory(p);
			if (rc < 0) {
				pipe_fail(p, rc == -ENOMEM ? rc : -ENOMEM, PS_MEMORY, rc == -ENOMEM ?
					  "MemAvailable fell below the reserve" :
					  "cannot read MemAvailable (%s)", strerror(-rc));
				pipe_put_input(p, c);
				continue;
			}
			if (p->dst_is_blk && out > 0)
				drop_cache(p, out);
			next_check = out + CHECK_EVERY;
		}
		rc = c->len ? write_all(p->dst_fd, c->data, c->len) : 0;
		if (rc < 0) {
			pipe_fail(p, rc, PS_WRITE, NULL);
			pipe_put_input(p, c);
			continue;
		}
		out += c->len;
		pthread_mutex_lock(&p->lock);
		p->st.bytes_out = out;
		if (p->hash) {
			/* The hasher may lag, not without bound: big decoder
			 * chunks are not from a pool. */
			while (p->hashq.n >= PIPE_HASHQ_MAX && !p->error)
				pthread_cond_wait(&p->cond, &p->lock);
			q_push(&p->hashq, c);
			pthread_cond_broadcast(&p->cond);
		} else {
			chunk_release_locked(p, c);
		}
		pthread_mutex_unlock(&p->lock);
	}
}

static void *hasher_main(void *arg)
{
	struct pipe *p = arg;

	for (;;) {
		struct chunk *c;

		pthread_mutex_lock(&p->lock);
		while (!p->error && !p->hashq.head && !p->writer_done)
			pthread_cond_wait(&p->cond, &p->lock);
		if (p->error || (!p->hashq.head && p->writer_done)) {
			p->hasher_done = true;
			pthread_cond_broadcast(&p->cond);
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		c = q_pop(&p->hashq);
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
		SHA256_Update(&p->sha, c->data, c->len);
		pipe_put_input(p, c);
	}
}

int pipe_start(struct pipe *p)
{
	int rc;

	rc = pthread_create(&p->reader, NULL, reader_main, p);
	if (rc)
		return -rc;
	p->reader_started = true;
	rc = pthread_create(&p->writer, NULL, writer_main, p);
	if (rc)
		return -rc;
	p->writer_started = true;
	if (p->hash) {
		rc = pthread_create(&p->hasher, NULL, hasher_main, p);
		if (rc)
			return -rc;
		p->hasher_started = true;
	}
	return 0;
}

#define READER_GRACE_S 2

static int join_within(pthread_t t, int seconds)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += seconds;
	return -pthread_timedjoin_np(t, NULL, &ts);
}

int pipe_finish(struct pipe *p)
{
	/* The codec driver is done: no more output. */
	pthread_mutex_lock(&p->lock);
	p->out_closed = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	if (p->writer_started)
		pthread_join(p->writer, NULL);
	if (p->hasher_started)
		pthread_join(p->hasher, NULL);
	if (p->reader_started) {
		/* A reader blocked on a pipe or a dead NFS server is not
		 * waited for after an error: cancelled in read(). One that
		 * the kernel holds in an uninterruptible read is left behind
		 * after a grace period, with its buffers (they are leaked,
		 * not freed under it); it dies with the process. */
		if (pipe_error(p))
			pthread_cancel(p->reader);
		if (join_within(p->reader, READER_GRACE_S) < 0) {
			pthread_detach(p->reader);
			p->reader_abandoned = true;
		}
	}
	p->writer_started = p->hasher_started = p->reader_started = false;
	if (!p->error && p->dst_is_blk && p->st.bytes_out)
		drop_cache(p, p->st.bytes_out);
	return p->error;
}

uint64_t pipe_progress(void *arg)
{
	struct pipe *p = arg;
	uint64_t n;

	pthread_mutex_lock(&p->lock);
	n = p->st.bytes_in;
	pthread_mutex_unlock(&p->lock);
	return n;
}

void pipe_cancel(void *arg, int why_stall)
{
	struct pipe *p = arg;

	if (why_stall)
		pipe_fail(p, -ETIMEDOUT, PS_STALL, NULL);
	else
		pipe_fail(p, -EINTR, PS_CANCEL, NULL);
}

void pipe_stats(struct pipe *p, struct pipe_stats *out)
{
	pthread_mutex_lock(&p->lock);
	*out = p->st;
	pthread_mutex_unlock(&p->lock);
}

void pipe_digest(struct pipe *p, uint8_t digest[32])
{
	SHA256_Final(digest, &p->sha);
}
