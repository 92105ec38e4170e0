// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The load pipeline: buffers, queues and the reader, writer and hasher
 * threads. Codec drivers sit in the middle (codec.c and the codec files).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "lib/proc.h"
#include "codec/pipe.h"

/* How often the writer looks at MemAvailable, and drops written block
 * device pages from the page cache (else a zram target holds the image
 * twice: once compressed in zram and once in the block device's cache). */
#define CHECK_EVERY (64u * 1024 * 1024)

#define PIPE_WORKER_NICE 5

/* The queues of chunks and of segments: singly linked, first in first
 * out, through the item's next. */
#define FIFO_PUSH(q, x)                                                               \
	do {                                                                          \
		(x)->next = NULL;                                                     \
		if ((q)->tail)                                                        \
			(q)->tail->next = (x);                                        \
		else                                                                  \
			(q)->head = (x);                                              \
		(q)->tail = (x);                                                      \
	} while (0)
/* x = the first of q, taken off; NULL when q is empty. */
#define FIFO_POP(q, x)                                                                \
	do {                                                                          \
		(x) = (q)->head;                                                      \
		if (x) {                                                              \
			(q)->head = (x)->next;                                        \
			if (!(q)->head)                                               \
				(q)->tail = NULL;                                     \
			(x)->next = NULL;                                             \
		}                                                                     \
	} while (0)

static void q_push(struct queue *q, struct chunk *c)
{
	FIFO_PUSH(q, c);
	q->n++;
}

static struct chunk *q_pop(struct queue *q)
{
	struct chunk *c;

	FIFO_POP(q, c);
	if (c)
		q->n--;
	return c;
}

/* Wake every thread of the pipeline waiting on its state, which the
 * caller changed under the lock, and let go of the lock. */
/* Under the lock, for a thread behind the writer (the hasher, a chunk
 * worker): wait until queue q has an item, or none will come (an error,
 * or the writer done with q empty). */
#define WAIT_WORK(p, q)                                                               \
	do {                                                                          \
		while (!(p)->error && !(q)->head && !(p)->writer_done)                \
			pthread_cond_wait(&(p)->cond, &(p)->lock);                    \
	} while (0)

static void wake_unlock(struct pipe *p)
{
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
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
		c->bad = false;
		c->refs = 0;
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

/* The last hasher is done with c: back to its pool. */
static void chunk_unref_locked(struct pipe *p, struct chunk *c)
{
	if (--c->refs == 0) {
		p->hash_held--;
		/* The writer may wait for room (hash_enqueue): a chunk that
		 * is not a pool's is freed without a word to anyone. */
		pthread_cond_broadcast(&p->cond);
		chunk_release_locked(p, c);
	}
}

static struct chunk *pool_take_locked(struct pool *pl)
{
	struct chunk *c = pl->free;

	pl->free = c->next;
	pl->nfree--;
	c->next = NULL;
	c->len = 0;
	c->eof = false;
	c->ready = false;
	c->bad = false;
	c->refs = 0;
	return c;
}

static struct chunk *pool_get(struct pipe *p, struct pool *pl)
{
	struct chunk *c = NULL;

	pthread_mutex_lock(&p->lock);
	while (!pl->free && !p->error)
		pthread_cond_wait(&p->cond, &p->lock);
	if (!p->error)
		c = pool_take_locked(pl);
	pthread_mutex_unlock(&p->lock);
	return c;
}

static void segq_push(struct segq *q, struct seg *s)
{
	FIFO_PUSH(q, s);
}

static struct seg *segq_pop(struct segq *q)
{
	struct seg *s;

	FIFO_POP(q, s);
	return s;
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
	wake_unlock(p);
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
	int rc, i;

	memset(p, 0, sizeof(*p));
	p->src_fd = p->dst_fd = -1;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	SHA256_Init(&p->sha);
	for (i = 0; i < PIPE_WORKERS_MAX; i++)
		p->wk[i].p = p;
	rc = pool_init(&p->inpool, PIPE_NBUF_IN);
	if (rc == 0)
		rc = pool_init(&p->outpool, PIPE_NBUF_OUT);
	return rc;
}

void pipe_destroy(struct pipe *p)
{
	struct chunk *c;
	int i;

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
	/* What the hashers still held: each reference given back. */
	while ((c = q_pop(&p->hashq)) != NULL)
		chunk_unref_locked(p, c);
	for (i = 0; i < PIPE_WORKERS_MAX; i++) {
		struct seg *sg;

		while ((sg = segq_pop(&p->wk[i].q)) != NULL) {
			if (sg->c)
				chunk_unref_locked(p, sg->c);
			free(sg);
		}
	}
	{
		struct seg *sg;

		while ((sg = segq_pop(&p->retryq)) != NULL)
			free(sg);
	}
	free(p->retry_buf);
	p->retry_buf = NULL;
	pool_destroy(&p->inpool);
	pool_destroy(&p->outpool);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
}

/* ---- reader ---- */

/* Errors that another try may not see: a disk or a network that hiccups
 * (NFS, NBD). Anything else (EBADF, EISDIR, ...) will not go away. */
static bool transient(int err)
{
	switch (err) {
	case EIO: case ETIMEDOUT: case ECONNRESET: case ECONNABORTED: case ENETDOWN:
	case ENETUNREACH: case ENETRESET: case EHOSTUNREACH: case ENOLINK: case EREMOTEIO:
	case ESTALE:
		return true;
	default:
		return false;
	}
}

static void chunk_range(const struct pipe *p, uint32_t idx, uint64_t *off, size_t *len)
{
	uint64_t end;

	*off = (uint64_t)idx * p->ck.size;
	end = *off + p->ck.size;
	if (end > p->ck.total)
		end = p->ck.total;
	*len = (size_t)(end - *off);
}

/* Chunk idx failed: read it again from the source, up to ck.retries
 * times, and write it over what was written once a read hashes right.
 * In the reader, the one thread that reads the source (a read the
 * kernel holds is cancelled or left behind as any other). */
static void reader_retry(struct pipe *p, uint32_t idx)
{
	uint8_t d[32];
	uint64_t off;
	size_t len;
	int attempt, rc = 0;
	const char *why = "SHA-256 mismatch";

	chunk_range(p, idx, &off, &len);
	if (!p->retry_buf && !(p->retry_buf = alloc_big(p->ck.size))) {
		pipe_fail(p, -ENOMEM, PS_START, "no memory to read a chunk again");
		return;
	}
	for (attempt = 1; attempt <= p->ck.retries; attempt++) {
		ssize_t n;

		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		n = pread_full(p->src_fd, p->retry_buf, len, (off_t)off);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		if (n < 0)
			rb_debug("chunk %" PRIu32 ": read again (%d of %d): %s", idx, attempt,
				 p->ck.retries, strerror((int)-n));
		if (n < 0 && transient((int)-n)) {
			why = "read error";
			continue;
		}
		if (n < 0) {
			pipe_fail(p, (int)n, PS_READ, NULL);
			return;
		}
		pthread_mutex_lock(&p->lock);
		p->st.bytes_retried += (uint64_t)n;
		pthread_mutex_unlock(&p->lock);
		if ((size_t)n != len) {
			why = "source shorter than the manifest";
			break;
		}
		SHA256(p->retry_buf, len, d);
		rb_debug("chunk %" PRIu32 ": read again (%d of %d): %s", idx, attempt,
			 p->ck.retries, memcmp(d, p->ck.want[idx], 32) ? "SHA-256 mismatch" : "ok");
		if (memcmp(d, p->ck.want[idx], 32)) {
			why = "SHA-256 mismatch";
			continue;
		}
		rc = pwrite_full(p->dst_fd, p->retry_buf, len, (off_t)off);
		if (rc < 0) {
			pipe_fail(p, rc, PS_WRITE, NULL);
			return;
		}
		pthread_mutex_lock(&p->lock);
		p->st.chunks++;
		p->st.chunks_retried++;
		pthread_mutex_unlock(&p->lock);
		return;
	}
	pipe_fail(p, -EBADMSG, PS_VERIFY, "chunk %" PRIu32 " (bytes %" PRIu64 " to %" PRIu64
		  "): %s, also when read again (%d times)", idx, off, off + len, why,
		  p->ck.retries);
}

static void *reader_main(void *arg)
{
	struct pipe *p = arg;
	bool at_eof = false;

	/* Cancelled only while blocked in read(): never with the lock held. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	for (;;) {
		struct chunk *c;
		struct seg *again;
		size_t want;
		ssize_t n;
		bool eof;

		/* A chunk to read again goes first; after the end of the
		 * source, only those, until every chunk is hashed. */
		pthread_mutex_lock(&p->lock);
		while (!p->error && !p->retryq.head &&
		       (at_eof ? !p->verify_done : !p->inpool.free))
			pthread_cond_wait(&p->cond, &p->lock);
		if (p->error || (at_eof && !p->retryq.head)) {
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		if ((again = segq_pop(&p->retryq)) != NULL) {
			p->retry_busy = true;
			pthread_mutex_unlock(&p->lock);
			reader_retry(p, again->idx);
			free(again);
			pthread_mutex_lock(&p->lock);
			p->retry_busy = false;
			wake_unlock(p);
			continue;
		}
		c = pool_take_locked(&p->inpool);
		pthread_mutex_unlock(&p->lock);

		want = c->cap;
		if (p->max_in && p->max_in - p->st.bytes_in < want)
			want = (size_t)(p->max_in - p->st.bytes_in);
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		n = want ? read_full(p->src_fd, c->data, want) : 0;
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		if (n < 0 && p->ck.retries > 0 && p->max_in && transient((int)-n)) {
			/* Zeros stand in for the bytes; the chunks they fall
			 * in are read again. The source is seekable here. */
			rb_debug("read error at byte %" PRIu64 " (%s): read again later",
				 p->st.bytes_in, strerror((int)-n));
			if (lseek(p->src_fd, (off_t)(p->st.bytes_in + want), SEEK_SET) >= 0) {
				memset(c->data, 0, want);
				c->bad = true;
				n = (ssize_t)want;
			}
		}
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
		wake_unlock(p);
		if (eof) {
			if (p->ck.retries <= 0)
				return NULL;
			at_eof = true;
		}
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
	wake_unlock(p);
}

void pipe_chunk_done(struct pipe *p, struct chunk *c, int err)
{
	pthread_mutex_lock(&p->lock);
	c->ready = true;
	c->error = err;
	wake_unlock(p);
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

/* Written chunk c, output bytes [at, at + c->len): to the hashers. The
 * hashers may lag, not without bound: big decoder chunks are not from a
 * pool. */
static void hash_enqueue(struct pipe *p, struct chunk *c, uint64_t at)
{
	const uint64_t cs = p->ck.size;
	struct segq segs = { NULL, NULL };
	unsigned int n = 0;
	struct seg *sg;
	size_t pos = 0;

	while (cs && pos < c->len) {
		uint64_t abs = at + pos, idx = abs / cs, end = (idx + 1) * cs;
		size_t len = end - abs < c->len - pos ? (size_t)(end - abs) : c->len - pos;

		if (idx >= p->ck.count) {
			pipe_fail(p, -EFBIG, PS_VERIFY, "more than %" PRIu32 " chunks of %" PRIu64
				  " bytes", p->ck.count, cs);
			break;
		}
		sg = calloc(1, sizeof(*sg));
		if (!sg) {
			pipe_fail(p, -ENOMEM, PS_START, NULL);
			break;
		}
		sg->c = c;
		sg->off = pos;
		sg->len = len;
		sg->idx = (uint32_t)idx;
		sg->first = abs % cs == 0;
		sg->last = abs + len == end || (p->ck.want && abs + len == p->ck.total);
		segq_push(&segs, sg);
		n++;
		pos += len;
	}
	pthread_mutex_lock(&p->lock);
	while ((p->hash || n) && p->hash_held >= PIPE_HASHQ_MAX && !p->error)
		pthread_cond_wait(&p->cond, &p->lock);
	if (p->error || (!p->hash && !n)) {
		while ((sg = segq_pop(&segs)) != NULL)
			free(sg);
		chunk_release_locked(p, c);
		pthread_mutex_unlock(&p->lock);
		return;
	}
	c->refs = n + (p->hash ? 1 : 0);
	p->hash_held++;
	if (p->hash)
		q_push(&p->hashq, c);
	while ((sg = segq_pop(&segs)) != NULL)
		segq_push(&p->wk[sg->idx % (uint32_t)p->ck.workers].q, sg);
	wake_unlock(p);
}

/* At the end of the output, recording chunk hashes: the last chunk,
 * shorter than the others, is complete. Called with the lock held. */
static void hash_flush_locked(struct pipe *p, uint64_t out)
{
	struct seg *sg;

	if (!p->ck.size || !p->ck.got || p->error || out % p->ck.size == 0)
		return;
	sg = calloc(1, sizeof(*sg));
	if (!sg) {
		p->error = -ENOMEM;
		p->error_where = PS_START;
		return;
	}
	sg->idx = (uint32_t)(out / p->ck.size);
	sg->last = true;
	segq_push(&p->wk[sg->idx % (uint32_t)p->ck.workers].q, sg);
}

static void *writer_main(void *arg)
{
	struct pipe *p = arg;
	uint64_t out = 0, next_check = 0, at;

	for (;;) {
		struct chunk *c;
		int rc;

		pthread_mutex_lock(&p->lock);
		while (!p->error && !(p->out_closed && !p->outq.head) &&
		       !(p->outq.head && p->outq.head->ready))
			pthread_cond_wait(&p->cond, &p->lock);
		if (p->error || (p->out_closed && !p->outq.head)) {
			hash_flush_locked(p, out);
			p->writer_done = true;
			wake_unlock(p);
			return NULL;
		}
		c = q_pop(&p->outq);
		wake_unlock(p);

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
		/* dst_fd -1: hashed, not written (load_hash_only). */
		rc = c->len && p->dst_fd >= 0 ? write_all(p->dst_fd, c->data, c->len) : 0;
		if (rc < 0) {
			pipe_fail(p, rc, PS_WRITE, NULL);
			pipe_put_input(p, c);
			continue;
		}
		at = out;
		out += c->len;
		pthread_mutex_lock(&p->lock);
		p->st.bytes_out = out;
		pthread_mutex_unlock(&p->lock);
		hash_enqueue(p, c, at);    /* c is the hashers' from here */
	}
}

static void chunk_unref(struct pipe *p, struct chunk *c)
{
	pthread_mutex_lock(&p->lock);
	chunk_unref_locked(p, c);
	pthread_mutex_unlock(&p->lock);
}

static void *hasher_main(void *arg)
{
	struct pipe *p = arg;

	for (;;) {
		struct chunk *c;

		pthread_mutex_lock(&p->lock);
		WAIT_WORK(p, &p->hashq);
		if (p->error || !p->hashq.head) {
			p->hasher_done = true;
			wake_unlock(p);
			return NULL;
		}
		c = q_pop(&p->hashq);
		wake_unlock(p);
		SHA256_Update(&p->sha, c->data, c->len);
		chunk_unref(p, c);
	}
}

/* ---- chunk workers ---- */

/* Chunk idx hashed to d: recorded, verified, or queued to be read again. */
static void chunk_hashed(struct pipe *p, uint32_t idx, const uint8_t d[32], bool bad)
{
	struct seg *again;
	uint64_t off;
	size_t len;

	if (p->ck.got || (!bad && !memcmp(d, p->ck.want[idx], 32))) {
		if (p->ck.got)
			memcpy(p->ck.got[idx], d, 32);
		pthread_mutex_lock(&p->lock);
		p->st.chunks++;
		pthread_mutex_unlock(&p->lock);
		return;
	}
	if (p->ck.retries > 0 && (again = calloc(1, sizeof(*again))) != NULL) {
		again->idx = idx;
		pthread_mutex_lock(&p->lock);
		segq_push(&p->retryq, again);
		wake_unlock(p);
		return;
	}
	chunk_range(p, idx, &off, &len);
	pipe_fail(p, -EBADMSG, PS_VERIFY, "chunk %" PRIu32 " (bytes %" PRIu64 " to %" PRIu64
		  "): %s", idx, off, off + len, bad ? "read error" : "SHA-256 mismatch");
}

static void *worker_main(void *arg)
{
	struct pipe_worker *w = arg;
	struct pipe *p = w->p;
	SHA256_CTX ctx;
	bool bad = false;

	/* A little below the other threads (Linux: per thread): a decoder
	 * is the critical path and keeps its core; the hashers take what is
	 * left, and the bound on what they hold stops the rest when they
	 * fall behind. */
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), PIPE_WORKER_NICE);
	SHA256_Init(&ctx);
	for (;;) {
		struct seg *sg;

		pthread_mutex_lock(&p->lock);
		WAIT_WORK(p, &w->q);
		if (p->error || !w->q.head) {
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		sg = segq_pop(&w->q);
		pthread_mutex_unlock(&p->lock);
		/* The segments of one chunk come to one worker, in order. */
		if (sg->first) {
			SHA256_Init(&ctx);
			bad = false;
		}
		if (sg->c) {
			SHA256_Update(&ctx, sg->c->data + sg->off, sg->len);
			bad |= sg->c->bad;
			pthread_mutex_lock(&p->lock);
			chunk_unref_locked(p, sg->c);
			pthread_mutex_unlock(&p->lock);
		}
		if (sg->last) {
			uint8_t d[32];

			SHA256_Final(d, &ctx);
			chunk_hashed(p, sg->idx, d, bad);
		}
		free(sg);
	}
}

int pipe_start(struct pipe *p)
{
	int rc, i;

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
	if (p->ck.size) {
		if (p->ck.workers < 1)
			p->ck.workers = 1;
		if (p->ck.workers > PIPE_WORKERS_MAX)
			p->ck.workers = PIPE_WORKERS_MAX;
		for (i = 0; i < p->ck.workers; i++) {
			rc = pthread_create(&p->wk[i].t, NULL, worker_main, &p->wk[i]);
			if (rc)
				return -rc;
			p->wk[i].started = true;
		}
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

/* The whole-image hasher saw the zeros that stood in for a failed read,
 * not the bytes reader_retry() wrote over them: once a chunk was read
 * again, the image's SHA-256 is that of the output as it now is, read
 * back from it (RAM; every chunk of it matched the manifest). */
static void rehash_output(struct pipe *p)
{
	uint64_t off = 0, total = p->st.bytes_out;

	SHA256_Init(&p->sha);
	while (off < total) {
		size_t want = total - off < p->ck.size ? (size_t)(total - off) : p->ck.size;
		ssize_t n = pread_full(p->dst_fd, p->retry_buf, want, (off_t)off);

		if (n < 0 || (size_t)n != want) {
			pipe_fail(p, n < 0 ? (int)n : -EIO, PS_WRITE, "cannot read the copy back "
				  "to hash it: %s", n < 0 ? strerror((int)-n) : "short read");
			return;
		}
		SHA256_Update(&p->sha, p->retry_buf, want);
		off += want;
	}
}

int pipe_finish(struct pipe *p)
{
	int i;

	/* The codec driver is done: no more output. */
	pthread_mutex_lock(&p->lock);
	p->out_closed = true;
	wake_unlock(p);
	if (p->writer_started)
		pthread_join(p->writer, NULL);
	if (p->hasher_started)
		pthread_join(p->hasher, NULL);
	for (i = 0; i < PIPE_WORKERS_MAX; i++)
		if (p->wk[i].started) {
			pthread_join(p->wk[i].t, NULL);
			p->wk[i].started = false;
		}
	/* Every chunk is hashed: the reader reads again those that failed
	 * (a stalled re-read is the guard's to cancel), then may go. */
	pthread_mutex_lock(&p->lock);
	while (!p->error && p->reader_started && (p->retryq.head || p->retry_busy))
		pthread_cond_wait(&p->cond, &p->lock);
	p->verify_done = true;
	wake_unlock(p);
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
	if (!p->error && p->hash && p->st.chunks_retried)
		rehash_output(p);
	if (!p->error && p->dst_is_blk && p->st.bytes_out)
		drop_cache(p, p->st.bytes_out);
	return p->error;
}

uint64_t pipe_progress(void *arg)
{
	struct pipe *p = arg;
	uint64_t n;

	pthread_mutex_lock(&p->lock);
	n = p->st.bytes_in + p->st.bytes_retried;
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
