// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zstd with libzstd. A stream made of several independent frames that
 * (pzstd output, or images compressed in chunks) is decoded frame-
 * parallel: the driver cuts the input into frames, workers decode them,
 * and their output chunks are queued in stream order. A large frame is
 * decoded streaming in the driver's thread. Skippable frames are dropped.
 *
 * Memory (codec.h): a frame whose window is above half the memlimit is
 * refused from its header, before a window is allocated. The frames
 * decoded in parallel share what is left: their input, and their output
 * until the writer is done with it (the output chunks come back to the
 * driver's pool), so the driver waits for the writer rather than take
 * more. The sizes of a parallel frame are bounded so that one frame
 * always fits.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>

#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/proc.h"
#include "lib/units.h"
#include "codec/codec.h"
#include "codec/pipe.h"

/* A frame is decoded by a worker in one piece when its output is at most
 * FRAME_PAR_MAX and its input at most FRAME_COLLECT_MAX (less with a small
 * memlimit); a larger one is decoded streaming, overlapped with reading
 * and writing. */
#define FRAME_PAR_MAX (32u * 1024 * 1024)
#define FRAME_COLLECT_MAX (16u * 1024 * 1024)
#define BLOCK_MAX (128u * 1024)
#define STEP (64u * 1024)                  /* input taken into fb at a time */
#define FB_MIN (2 * STEP)                  /* fb while only headers are parsed */
#define FB_SLACK (STEP + BLOCK_MAX + 16)   /* fb beyond collect_max: the last block */
#define PAR_MIN (4u * 1024 * 1024)         /* less for frames in flight: no workers */
#define WORKERS_MAX 64
#define ZSTD_MAGIC 0xFD2FB528u
#define SKIP_MAGIC 0x184D2A50u             /* ... to 0x184D2A5F */

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- limits from the configuration ---- */

struct zlimits {
	unsigned int wlog;       /* windows up to 1 << wlog */
	int workers;             /* 0: no frame-parallel decoding */
	uint64_t budget;         /* frames in flight: inputs, outputs, fb */
	size_t par_max;          /* largest output of a parallel frame */
	size_t collect_max;      /* input collected before a frame streams */
};

static void zstd_limits(const struct codec_cfg *cfg, struct zlimits *l)
{
	uint64_t m = codec_memlimit(cfg), fixed;
	int n = cfg->threads > WORKERS_MAX ? WORKERS_MAX : cfg->threads;

	memset(l, 0, sizeof(*l));
	/* The largest power of two within half the limit: 27 at 256 MiB. */
	l->wlog = ZSTD_WINDOWLOG_MIN;
	while (l->wlog < ZSTD_WINDOWLOG_MAX && (2ULL << l->wlog) <= m / 2)
		l->wlog++;
	if (n <= 1)
		return;
	fixed = ZSTD_estimateDStreamSize((size_t)1 << l->wlog) + (uint64_t)n * ZSTD_estimateDCtxSize();
	if (m < fixed + PAR_MIN)
		return;
	l->workers = n;
	/* No more than two frames per worker, one decoded while the
	 * writer has the other: more would only wait. */
	l->budget = m - fixed;
	if (l->budget > (2 * (uint64_t)n + 2) * (FRAME_PAR_MAX + FRAME_COLLECT_MAX + FB_SLACK))
		l->budget = (2 * (uint64_t)n + 2) * (FRAME_PAR_MAX + FRAME_COLLECT_MAX + FB_SLACK);
	/* Two input buffers (one collecting, one handed over) and an
	 * output: one frame fits the budget on its own. */
	l->par_max = l->budget / 2 > FRAME_PAR_MAX ? FRAME_PAR_MAX : (size_t)(l->budget / 2);
	l->collect_max = l->budget / 4 - FB_SLACK > FRAME_COLLECT_MAX ? FRAME_COLLECT_MAX :
			 (size_t)(l->budget / 4 - FB_SLACK);
}

/* The streaming decoder and its collect buffer; with workers, their
 * decoders and the frames in flight (the collect buffer among them). */
static uint64_t zstd_mem_bound(const struct codec_cfg *cfg)
{
	uint64_t b;
	struct zlimits l;

	zstd_limits(cfg, &l);
	b = ZSTD_estimateDStreamSize((size_t)1 << l.wlog);
	if (l.workers)
		return b + (uint64_t)l.workers * ZSTD_estimateDCtxSize() + l.budget;
	return b + FB_MIN;
}

/* The first frame's header: its window, and the frame's size, which the
 * parallel decoder holds a few of at a time per worker. */
static uint64_t zstd_mem_need(int fd, uint64_t file_size, const struct codec_cfg *cfg)
{
	uint8_t h[ZSTD_FRAMEHEADERSIZE_MAX];
	ZSTD_frameHeader fh;
	struct zlimits l;
	uint64_t need, frame;
	off_t off = 0;
	ssize_t n;
	int skips = 0;

	(void)file_size;
	for (;;) {
		n = pread_full(fd, h, sizeof(h), off);
		if (n < 8 || (le32(h) & 0xFFFFFFF0u) != SKIP_MAGIC || ++skips > 16)
			break;
		off += 8 + (off_t)le32(h + 4);
	}
	if (n < 6 || ZSTD_getFrameHeader(&fh, h, (size_t)n) != 0 || fh.frameType != ZSTD_frame)
		return zstd_mem_bound(cfg);
	zstd_limits(cfg, &l);
	if (fh.windowSize > (1ULL << l.wlog))
		return zstd_mem_bound(cfg);      /* refused anyway */
	need = ZSTD_estimateDStreamSize((size_t)fh.windowSize) + FB_MIN;
	if (!l.workers)
		return need;
	if (fh.frameContentSize == ZSTD_CONTENTSIZE_UNKNOWN || fh.frameContentSize > l.par_max)
		return need + l.budget;          /* frames of unknown size */
	/* Two frames per worker in flight, input and output each. */
	frame = fh.frameContentSize + FB_SLACK;
	need += (uint64_t)l.workers * ZSTD_estimateDCtxSize();
	need += (4 * (uint64_t)l.workers + 4) * frame < l.budget ?
		(4 * (uint64_t)l.workers + 4) * frame : l.budget;
	return need;
}

/* ---- frame-parallel workers ---- */

struct job {
	uint8_t *src;
	size_t src_len;
	size_t src_cap;
	bool known;              /* the frame header records the size */
	size_t want;             /* content size, or a bound on it */
	struct chunk *out;       /* queued already; cap = content size */
	struct job *next;
};

/* An output chunk of the parallel decoder. Its pool is the driver's: the
 * pipe gives it back there (under the pipe's lock) once written and
 * hashed. When the driver returns, chunks still in the pipe are handed
 * over (pool NULL): the pipe frees them as malloc'd chunks. */
struct zchunk {
	struct chunk c;          /* first: freed as a struct chunk */
	struct zchunk *prev, *next;
};

/* Input buffers given back by the workers, for reuse: fresh memory costs
 * a page fault per page, more than the copy into it. */
struct sbuf {
	struct sbuf *next;
	size_t cap;
};

struct zpar {
	struct pipe *p;
	pthread_mutex_t lock;    /* the job queue */
	pthread_cond_t cond;
	struct job *head, *tail;
	bool closing;
	int nworkers;
	pthread_t tid[WORKERS_MAX];
	unsigned int inflight;   /* jobs queued or running */

	/* Memory, under the pipe's lock (p->lock), which the pipe holds when
	 * it gives a chunk back to pool and signals p->cond. */
	struct pool pool;        /* output chunks given back */
	struct zchunk *chunks;   /* every output chunk made */
	unsigned int nchunks;
	struct sbuf *spare;      /* input buffers given back */
	uint64_t held;           /* bytes: fb, spares, job inputs, chunks */
	uint64_t budget;
};

static void *worker_main(void *arg)
{
	struct zpar *z = arg;
	ZSTD_DCtx *d = NULL;

	for (;;) {
		struct sbuf *sb;
		struct job *j;
		size_t r = 0;
		int err;

		pthread_mutex_lock(&z->lock);
		while (!z->head && !z->closing)
			pthread_cond_wait(&z->cond, &z->lock);
		j = z->head;
		if (!j) {
			pthread_mutex_unlock(&z->lock);
			break;
		}
		z->head = j->next;
		if (!z->head)
			z->tail = NULL;
		pthread_mutex_unlock(&z->lock);

		err = pipe_error(z->p);
		if (!err && !d && !(d = ZSTD_createDCtx())) {
			err = -ENOMEM;
			pipe_fail(z->p, err, PS_DECODE, "zstd: cannot allocate a decoder");
		}
		if (!err) {
			r = ZSTD_decompressDCtx(d, j->out->data, j->want, j->src, j->src_len);
			if (ZSTD_isError(r)) {
				err = -EBADMSG;
				pipe_fail(z->p, err, PS_DECODE, "zstd: %s", ZSTD_getErrorName(r));
			} else if (j->known && r != j->want) {
				err = -EBADMSG;
				pipe_fail(z->p, err, PS_DECODE, "zstd: frame size differs from its header");
			}
		}
		/* The input buffer goes back before the chunk is done: the
		 * driver may be waiting for memory. */
		sb = (struct sbuf *)(void *)j->src;
		pthread_mutex_lock(&z->p->lock);
		sb->cap = j->src_cap;
		sb->next = z->spare;
		z->spare = sb;
		pthread_mutex_unlock(&z->p->lock);
		if (!err)
			j->out->len = r;
		pipe_chunk_done(z->p, j->out, err);

		pthread_mutex_lock(&z->lock);
		free(j);
		z->inflight--;
		pthread_cond_broadcast(&z->cond);
		pthread_mutex_unlock(&z->lock);
	}
	ZSTD_freeDCtx(d);
	return NULL;
}

/* ---- the driver ---- */

enum scan { SCAN_MORE, SCAN_FRAME, SCAN_SKIP, SCAN_STREAM, SCAN_WINDOW, SCAN_BAD };

struct zdrv {
	struct pipe *p;
	struct zlimits lim;
	struct zpar par;
	bool parallel;
	ZSTD_DCtx *dctx;         /* streaming decoder */
	bool streaming;          /* inside a frame decoded streaming */
	uint8_t *fb;             /* bytes of the frame being collected */
	size_t fb_len, fb_cap, fb_max;
	size_t scan_pos;         /* next block header in fb, 0: none yet */
	bool scan_last;          /* the last block has been seen */
	size_t frame_end;        /* frame size once known */
	uint64_t skip;           /* bytes of a skippable frame still to drop */
	uint64_t window;         /* window of a frame refused */
	uint64_t content;        /* content size of the frame in fb, or ... */
	bool content_known;      /* ... an upper bound from its block headers */
	uint64_t frames, par_frames;
	char msg[160];
};

/* Look at the frame collected in fb: is it complete, and how big? Walks
 * block headers incrementally (3 bytes each: last, type, size). */
static enum scan scan_frame(struct zdrv *z)
{
	const uint8_t *b = z->fb;
	size_t n = z->fb_len;
	uint32_t magic;

	if (n < 4)
		return SCAN_MORE;
	magic = le32(b);
	if ((magic & 0xFFFFFFF0u) == SKIP_MAGIC) {
		if (n < 8)
			return SCAN_MORE;
		z->skip = 8 + (uint64_t)le32(b + 4);
		return SCAN_SKIP;
	}
	if (magic != ZSTD_MAGIC)
		return SCAN_BAD;
	if (z->scan_pos == 0) {
		size_t h = ZSTD_frameHeaderSize(b, n), r;
		ZSTD_frameHeader fh;
		unsigned long long cs;

		if (ZSTD_isError(h))
			return n < ZSTD_FRAMEHEADERSIZE_MAX ? SCAN_MORE : SCAN_BAD;
		if (n < h)
			return SCAN_MORE;
		r = ZSTD_getFrameHeader(&fh, b, n);
		if (ZSTD_isError(r) && ZSTD_getErrorCode(r) == ZSTD_error_frameParameter_windowTooLarge) {
			/* beyond what this build of libzstd takes at all */
			z->window = 1ULL << (10 + (b[5] >> 3));
			return SCAN_WINDOW;
		}
		if (r != 0)
			return SCAN_STREAM;      /* libzstd says what is wrong */
		/* The window a streaming decoder allocates; a single-segment
		 * frame's is its content size. */
		if (fh.windowSize > (1ULL << z->lim.wlog)) {
			z->window = fh.windowSize;
			return SCAN_WINDOW;
		}
		cs = fh.frameContentSize;
		if (!z->parallel || (cs != ZSTD_CONTENTSIZE_UNKNOWN && cs > z->lim.par_max))
			return SCAN_STREAM;
		z->content_known = cs != ZSTD_CONTENTSIZE_UNKNOWN;
		z->content = z->content_known ? cs : 0;
		z->scan_pos = h;
		z->scan_last = false;
	}
	while (!z->scan_last) {
		uint32_t bh, type, size;

		if (n < z->scan_pos + 3)
			return n > z->lim.collect_max ? SCAN_STREAM : SCAN_MORE;
		bh = (uint32_t)b[z->scan_pos] | (uint32_t)b[z->scan_pos + 1] << 8 |
		     (uint32_t)b[z->scan_pos + 2] << 16;
		type = (bh >> 1) & 3;
		size = bh >> 3;
		if (type == 3)
			return SCAN_BAD;
		if (size > BLOCK_MAX)
			return SCAN_STREAM;      /* corrupt: libzstd says so */
		z->scan_last = bh & 1;
		/* RLE blocks store one byte; raw and compressed store size.
		 * Without a content size, bound the output: raw and RLE
		 * blocks give their size, compressed ones at most 128 KiB. */
		z->scan_pos += 3 + (type == 1 ? 1 : size);
		if (!z->content_known) {
			z->content += type == 2 ? BLOCK_MAX : size;
			if (z->content > z->lim.par_max)
				return SCAN_STREAM;
		}
		if (z->scan_last && (b[4] & 0x04))
			z->scan_pos += 4;        /* content checksum */
	}
	z->frame_end = z->scan_pos;
	return n >= z->frame_end ? SCAN_FRAME : SCAN_MORE;
}

/* ---- memory of the parallel decoder ---- */

static struct zchunk *zchunk_of(struct chunk *c)
{
	return (struct zchunk *)(void *)c;
}

static void chunk_unlink(struct zpar *m, struct zchunk *zc)
{
	if (zc->prev)
		zc->prev->next = zc->next;
	else
		m->chunks = zc->next;
	if (zc->next)
		zc->next->prev = zc->prev;
	m->nchunks--;
}

/* Under the pipe's lock: free the largest cached buffer (an output chunk
 * given back or a spare input buffer). False when nothing is cached. */
static bool drop_cached(struct zpar *m)
{
	struct chunk **cp = NULL, **pp;
	struct sbuf **sp = NULL, **qq;

	for (pp = &m->pool.free; *pp; pp = &(*pp)->next)
		if (!cp || (*pp)->cap > (*cp)->cap)
			cp = pp;
	for (qq = &m->spare; *qq; qq = &(*qq)->next)
		if (!sp || (*qq)->cap > (*sp)->cap)
			sp = qq;
	if (cp && (!sp || (*cp)->cap >= (*sp)->cap)) {
		struct chunk *c = *cp;

		*cp = c->next;
		m->pool.nfree--;
		chunk_unlink(m, zchunk_of(c));
		m->held -= c->cap;
		free(c->data);
		free(zchunk_of(c));
		return true;
	}
	if (sp) {
		struct sbuf *sb = *sp;

		*sp = sb->next;
		m->held -= sb->cap;
		free(sb);
		return true;
	}
	return false;
}

/* Under the pipe's lock: count bytes more, once they fit the budget.
 * Cached buffers go first, then the writer is waited for; with nothing
 * in flight it goes anyway (the limits make one frame fit). */
static int room_locked(struct zdrv *z, uint64_t bytes)
{
	struct zpar *m = &z->par;

	for (;;) {
		if (z->p->error)
			return z->p->error;
		if (m->held + bytes <= m->budget)
			break;
		if (drop_cached(m))
			continue;
		if (m->nchunks == m->pool.nfree)
			break;
		pthread_cond_wait(&z->p->cond, &z->p->lock);
	}
	m->held += bytes;
	return 0;
}

static int mem_take(struct zdrv *z, uint64_t bytes)
{
	int rc;

	pthread_mutex_lock(&z->p->lock);
	rc = room_locked(z, bytes);
	pthread_mutex_unlock(&z->p->lock);
	return rc;
}

static void mem_give(struct zdrv *z, uint64_t bytes)
{
	pthread_mutex_lock(&z->p->lock);
	z->par.held -= bytes;
	pthread_mutex_unlock(&z->p->lock);
}

/* An output chunk of want bytes: one given back that fits, or a new one
 * once the memory is there. NULL with *rc set on error. */
static struct chunk *out_get(struct zdrv *z, size_t want, int *rc)
{
	struct zpar *m = &z->par;
	struct chunk **pp, **best = NULL, *c;
	struct zchunk *zc;

	pthread_mutex_lock(&z->p->lock);
	for (pp = &m->pool.free; *pp; pp = &(*pp)->next)
		if ((*pp)->cap >= want && (!best || (*pp)->cap < (*best)->cap))
			best = pp;
	if (best) {
		c = *best;
		*best = c->next;
		m->pool.nfree--;
		pthread_mutex_unlock(&z->p->lock);
		c->next = NULL;
		return c;
	}
	*rc = room_locked(z, want);
	pthread_mutex_unlock(&z->p->lock);
	if (*rc < 0)
		return NULL;
	zc = calloc(1, sizeof(*zc));
	if (zc)
		zc->c.data = alloc_big(want);
	if (!zc || !zc->c.data) {
		free(zc);
		mem_give(z, want);
		*rc = -ENOMEM;
		return NULL;
	}
	zc->c.cap = want;
	zc->c.pool = &m->pool;
	pthread_mutex_lock(&z->p->lock);
	zc->next = m->chunks;
	if (zc->next)
		zc->next->prev = zc;
	m->chunks = zc;
	m->nchunks++;
	pthread_mutex_unlock(&z->p->lock);
	return &zc->c;
}

/* At the end: free what came back, hand what is still in the pipe over
 * to it (as malloc'd chunks), free the spare input buffers. */
static void mem_end(struct zdrv *z)
{
	struct zpar *m = &z->par;
	struct zchunk *zc;
	struct chunk *c;
	struct sbuf *sb;

	pthread_mutex_lock(&z->p->lock);
	while ((c = m->pool.free) != NULL) {
		m->pool.free = c->next;
		chunk_unlink(m, zchunk_of(c));
		free(c->data);
		free(zchunk_of(c));
	}
	m->pool.nfree = 0;
	for (zc = m->chunks; zc; zc = zc->next)
		zc->c.pool = NULL;
	m->chunks = NULL;
	m->nchunks = 0;
	while ((sb = m->spare) != NULL) {
		m->spare = sb->next;
		free(sb);
	}
	pthread_mutex_unlock(&z->p->lock);
}

/* ---- the collect buffer ---- */

static int fb_append(struct zdrv *z, const uint8_t *d, size_t n)
{
	if (n == 0)
		return 0;
	if (z->fb_len + n > z->fb_cap) {
		size_t need = z->fb_len + n, cap = z->fb_cap ? z->fb_cap * 2 : FB_MIN;
		uint8_t *nb;
		int rc;

		if (cap < need)
			cap = need;
		if (cap > z->fb_max && need <= z->fb_max)
			cap = z->fb_max;
		rc = mem_take(z, cap);
		if (rc < 0)
			return rc;
		nb = alloc_big(cap);
		if (!nb) {
			mem_give(z, cap);
			return -ENOMEM;
		}
		if (z->fb_len)
			memcpy(nb, z->fb, z->fb_len);
		free(z->fb);
		mem_give(z, z->fb_cap);
		z->fb = nb;
		z->fb_cap = cap;
	}
	memcpy(z->fb + z->fb_len, d, n);
	z->fb_len += n;
	return 0;
}

/* Drop the first n bytes of fb (a frame decoded streaming, or skipped). */
static void fb_drop(struct zdrv *z, size_t n)
{
	size_t rest = z->fb_len - n;

	if (rest && n)
		memmove(z->fb, z->fb + n, rest);
	z->fb_len = rest;
	z->scan_pos = 0;
	z->scan_last = false;
}

/* A buffer to collect into after fb is handed over: the largest spare,
 * or a new one. */
static int spare_get(struct zdrv *z, uint8_t **buf, size_t *cap)
{
	struct sbuf **pp, **best = NULL, *sb;
	int rc;

	pthread_mutex_lock(&z->p->lock);
	for (pp = &z->par.spare; *pp; pp = &(*pp)->next)
		if (!best || (*pp)->cap > (*best)->cap)
			best = pp;
	if (best) {
		sb = *best;
		*best = sb->next;
		pthread_mutex_unlock(&z->p->lock);
		*cap = sb->cap;
		*buf = (uint8_t *)sb;
		return 0;
	}
	rc = room_locked(z, FB_MIN);
	pthread_mutex_unlock(&z->p->lock);
	if (rc < 0)
		return rc;
	*buf = alloc_big(FB_MIN);
	if (!*buf) {
		mem_give(z, FB_MIN);
		return -ENOMEM;
	}
	*cap = FB_MIN;
	return 0;
}

static void spare_put(struct zdrv *z, uint8_t *buf, size_t cap)
{
	struct sbuf *sb = (struct sbuf *)(void *)buf;

	pthread_mutex_lock(&z->p->lock);
	sb->cap = cap;
	sb->next = z->par.spare;
	z->par.spare = sb;
	pthread_mutex_unlock(&z->p->lock);
}

/* Hand the frame at the start of fb to a worker; its output chunk is
 * queued now, in stream order, and filled later. */
static int dispatch(struct zdrv *z)
{
	struct job *j = calloc(1, sizeof(*j));
	size_t len = z->frame_end, rest = z->fb_len - len, cap;
	struct chunk *out;
	uint8_t *nb;
	int rc;

	if (!j)
		return -ENOMEM;
	rc = spare_get(z, &nb, &cap);
	if (rc < 0) {
		free(j);
		return rc;
	}
	out = out_get(z, (size_t)z->content, &rc);
	if (!out) {
		spare_put(z, nb, cap);
		free(j);
		return rc;
	}
	/* fb goes with the job; what follows the frame (less than STEP)
	 * starts the next one. */
	if (rest)
		memcpy(nb, z->fb + len, rest);
	j->src = z->fb;
	j->src_cap = z->fb_cap;
	j->src_len = len;
	z->fb = nb;
	z->fb_cap = cap;
	z->fb_len = rest;
	z->scan_pos = 0;
	z->scan_last = false;

	j->known = z->content_known;
	j->want = (size_t)z->content;
	j->out = out;
	out->len = (size_t)z->content;
	pipe_emit(z->p, out);
	z->par_frames++;

	pthread_mutex_lock(&z->par.lock);
	/* A few frames queued per worker: more would only wait. */
	while (z->par.inflight >= (unsigned int)z->par.nworkers + 1 && !pipe_error(z->p))
		pthread_cond_wait(&z->par.cond, &z->par.lock);
	z->par.inflight++;
	if (z->par.tail)
		z->par.tail->next = j;
	else
		z->par.head = j;
	z->par.tail = j;
	pthread_cond_broadcast(&z->par.cond);
	pthread_mutex_unlock(&z->par.lock);
	z->frames++;
	return 0;
}

/* Feed bytes to the streaming decoder until the current frame ends.
 * Returns the bytes used; *done when the frame ended. */
static ssize_t stream_feed(struct zdrv *z, const uint8_t *d, size_t n, bool *done)
{
	ZSTD_inBuffer in = { d, n, 0 };

	*done = false;
	for (;;) {
		struct chunk *o = pipe_get_outbuf(z->p);
		ZSTD_outBuffer out;
		size_t r;

		if (!o)
			return pipe_error(z->p);
		out = (ZSTD_outBuffer){ o->data, o->cap, 0 };
		do {
			r = ZSTD_decompressStream(z->dctx, &out, &in);
			if (ZSTD_isError(r)) {
				snprintf(z->msg, sizeof(z->msg), "%s", ZSTD_getErrorName(r));
				pipe_put_input(z->p, o);
				return -EBADMSG;
			}
		} while (r != 0 && out.pos < out.size && in.pos < in.size);
		o->len = out.pos;
		if (o->len)
			pipe_pass_through(z->p, o);
		else
			pipe_put_input(z->p, o);
		if (r == 0) {            /* the frame ended and is flushed */
			*done = true;
			z->frames++;
			break;
		}
		if (out.pos < out.size)  /* input used up: wait for more */
			break;
	}
	return (ssize_t)in.pos;
}

/* A frame refused for its window: what it needs, what would take it. */
static void window_msg(struct zdrv *z)
{
	char a[16], b[16], c[16];
	uint64_t pow2 = 1ULL << ZSTD_WINDOWLOG_MIN;

	while (pow2 < z->window)
		pow2 *= 2;
	fmt_size(z->window, a, sizeof(a));
	if (pow2 > 1ULL << ZSTD_WINDOWLOG_MAX)
		snprintf(z->msg, sizeof(z->msg), "the frame needs a %s window, more than zstd "
			 "decodes (%s)", a, fmt_size(1ULL << ZSTD_WINDOWLOG_MAX, b, sizeof(b)));
	else
		snprintf(z->msg, sizeof(z->msg), "the frame needs a %s window, above the %s limit "
			 "(a manifest memlimit of %s allows it)", a,
			 fmt_size(1ULL << z->lim.wlog, b, sizeof(b)), fmt_size(2 * pow2, c, sizeof(c)));
}

static void par_stop(struct zdrv *z)
{
	int i;

	if (!z->par.nworkers)
		return;
	pthread_mutex_lock(&z->par.lock);
	z->par.closing = true;
	pthread_cond_broadcast(&z->par.cond);
	pthread_mutex_unlock(&z->par.lock);
	for (i = 0; i < z->par.nworkers; i++)
		pthread_join(z->par.tid[i], NULL);
	z->par.nworkers = 0;
}

static int zstd_drive(struct pipe *p, struct chunk *first, const struct codec_cfg *cfg)
{
	struct zdrv z;
	struct chunk *in = first;
	int rc = 0, i;

	memset(&z, 0, sizeof(z));
	z.p = p;
	z.par.p = p;
	zstd_limits(cfg, &z.lim);
	z.par.budget = z.lim.budget;
	z.fb_max = z.lim.workers ? z.lim.collect_max + FB_SLACK : FB_MIN;
	pthread_mutex_init(&z.par.lock, NULL);
	pthread_cond_init(&z.par.cond, NULL);
	z.dctx = ZSTD_createDCtx();
	if (!z.dctx) {
		rc = -ENOMEM;
		goto out_in;
	}
	/* Checked from each frame header first (scan_frame), for a clear
	 * message; this is libzstd's own guard. */
	ZSTD_DCtx_setParameter(z.dctx, ZSTD_d_windowLogMax, (int)z.lim.wlog);
	for (i = 0; i < z.lim.workers; i++) {
		if (pthread_create(&z.par.tid[i], NULL, worker_main, &z.par))
			break;
		z.par.nworkers++;
	}
	z.parallel = z.par.nworkers > 0;

	while (in) {
		const uint8_t *d = in->data;
		size_t n = in->len;

		while (n > 0) {
			enum scan s;

			if (z.skip) {            /* inside a skippable frame */
				size_t t = n < z.skip ? n : (size_t)z.skip;

				d += t;
				n -= t;
				z.skip -= t;
				continue;
			}
			if (z.streaming) {
				bool done;
				ssize_t used = stream_feed(&z, d, n, &done);

				if (used < 0) {
					rc = (int)used;
					goto out_in;
				}
				d += used;
				n -= (size_t)used;
				if (done)
					z.streaming = false;
				continue;
			}
			/* Collect the next frame; take only what it needs
			 * once its size is known. */
			if (z.scan_pos && z.scan_last) {
				size_t want = z.frame_end - z.fb_len, t = n < want ? n : want;

				rc = fb_append(&z, d, t);
				d += t;
				n -= t;
			} else {
				size_t t = n < STEP ? n : STEP;

				rc = fb_append(&z, d, t);
				d += t;
				n -= t;
			}
			if (rc < 0)
				goto out_in;
			while (z.fb_len) {
				s = scan_frame(&z);
				if (s == SCAN_MORE)
					break;
				if (s == SCAN_BAD) {
					snprintf(z.msg, sizeof(z.msg), "%s", z.frames ?
						 "trailing garbage after the compressed stream" :
						 "not a zstd stream");
					rc = -EBADMSG;
					goto out_in;
				}
				if (s == SCAN_WINDOW) {
					window_msg(&z);
					rc = -ENOMEM;
					goto out_in;
				}
				if (s == SCAN_SKIP) {
					size_t t = z.fb_len < z.skip ? z.fb_len : (size_t)z.skip;

					z.skip -= t;
					fb_drop(&z, t);
				} else if (s == SCAN_FRAME) {
					rc = dispatch(&z);
					if (rc < 0)
						goto out_in;
				} else {  /* SCAN_STREAM: decode what we hold */
					bool done;
					ssize_t used;

					ZSTD_DCtx_reset(z.dctx, ZSTD_reset_session_only);
					z.streaming = true;
					used = stream_feed(&z, z.fb, z.fb_len, &done);
					if (used < 0) {
						rc = (int)used;
						goto out_in;
					}
					fb_drop(&z, (size_t)used);
					if (done)
						z.streaming = false;
					else
						break;
				}
			}
		}
		rc = pipe_next_input(p, &in);
		if (rc < 0)
			goto out;
	}
	rc = 0;
	if (z.streaming || z.fb_len || z.skip) {
		snprintf(z.msg, sizeof(z.msg), "%s", z.frames || z.skip || z.fb_len >= 4 ?
			 "truncated input" : "not a zstd stream");
		rc = -EBADMSG;
	} else if (!z.frames) {
		snprintf(z.msg, sizeof(z.msg), "empty input, not a zstd stream");
		rc = -EBADMSG;
	}
	rb_debug("zstd: %llu frames, %llu decoded in parallel by %d workers",
		 (unsigned long long)z.frames, (unsigned long long)z.par_frames, z.par.nworkers);
	goto out;
out_in:
	if (in)
		pipe_put_input(p, in);
out:
	if (rc < 0)
		pipe_fail(p, rc, PS_DECODE, "zstd: %s", z.msg[0] ? z.msg : strerror(-rc));
	par_stop(&z);
	mem_end(&z);
	ZSTD_freeDCtx(z.dctx);
	free(z.fb);
	pthread_cond_destroy(&z.par.cond);
	pthread_mutex_destroy(&z.par.lock);
	return rc;
}

/* Compressed size of the frame at off, walking its block headers with
 * small reads; -E2BIG past *blocks reads (a large frame). */
static int64_t frame_size_at(int fd, off_t off, size_t hdr, uint8_t fhd, unsigned int *blocks)
{
	off_t pos = off + (off_t)hdr;

	while (*blocks > 0) {
		uint8_t b[3];
		uint32_t bh, type;

		(*blocks)--;
		if (pread_full(fd, b, 3, pos) != 3)
			return -EINVAL;
		bh = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16;
		type = (bh >> 1) & 3;
		if (type == 3)
			return -EINVAL;
		pos += 3 + (type == 1 ? 1 : (off_t)(bh >> 3));
		if (bh & 1)
			return (int64_t)(pos - off + ((fhd & 0x04) ? 4 : 0));
	}
	return -E2BIG;
}

/* a * b / c without overflow: saturated at UINT64_MAX. */
static uint64_t scale(uint64_t a, uint64_t b, uint64_t c)
{
	double v = (double)a * ((double)b / (double)c);

	/* 2^64: the first double above UINT64_MAX */
	return v >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)v;
}

/* Output size from the frame headers at the start of the file: exact
 * when a few frames that record their size span the file, else the
 * ratio of the frames seen, scaled to the file size. An estimate is
 * never 0 (that would read as "empty"): unknown instead. */
#define SIZE_FRAMES 16
#define SIZE_BLOCKS 4096

static int zstd_content_size(int fd, uint64_t file_size, uint64_t *out, int *exact)
{
	uint64_t content = 0, seen = 0;
	unsigned int frames = 0, blocks = SIZE_BLOCKS;
	bool whole = false;      /* the frames seen end at the end of the file */
	off_t off = 0;

	while (frames < SIZE_FRAMES && (uint64_t)off < file_size) {
		uint8_t h[ZSTD_FRAMEHEADERSIZE_MAX];
		ssize_t n = pread_full(fd, h, sizeof(h), off);
		unsigned long long cs;
		size_t hs;
		int64_t fs;

		/* pzstd starts each frame with a skippable frame. */
		if (n >= 8 && (le32(h) & 0xFFFFFFF0u) == SKIP_MAGIC) {
			off += 8 + (off_t)le32(h + 4);
			seen += 8 + (uint64_t)le32(h + 4);
			whole = (uint64_t)off == file_size;
			continue;
		}
		if (n < 6 || le32(h) != ZSTD_MAGIC)
			break;
		cs = ZSTD_getFrameContentSize(h, (size_t)n);
		hs = ZSTD_frameHeaderSize(h, (size_t)n);
		if (cs == ZSTD_CONTENTSIZE_UNKNOWN || cs == ZSTD_CONTENTSIZE_ERROR || ZSTD_isError(hs))
			break;
		fs = frame_size_at(fd, off, hs, h[4], &blocks);
		if (fs == -E2BIG) {
			/* A large frame: taken to run to the end (it mostly
			 * is the only one). */
			content = cs > UINT64_MAX - content ? UINT64_MAX : content + cs;
			seen = file_size;
			frames++;
			break;
		}
		if (fs <= 0)
			break;
		content = cs > UINT64_MAX - content ? UINT64_MAX : content + cs;
		off += (off_t)fs;
		seen += (uint64_t)fs;
		frames++;
		whole = (uint64_t)off == file_size;
	}
	if (!frames)
		return -EINVAL;
	if (whole && content < UINT64_MAX) {
		*out = content;
		*exact = 1;
		return 0;
	}
	*out = seen >= file_size ? content : scale(content, file_size, seen);
	*exact = 0;
	return *out ? 0 : -EINVAL;
}

static const uint8_t zstd_magic[] = { 0x28, 0xb5, 0x2f, 0xfd };

const struct codec codec_zstd = {
	.name = "zstd", CODEC_MAGIC(zstd_magic),
	.drive = zstd_drive,
	.content_size = zstd_content_size,
	.mem_bound = zstd_mem_bound,
	.mem_need = zstd_mem_need,
};
