// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zstd with libzstd. A stream made of several independent frames that
 * (pzstd output, or images compressed in chunks) is decoded frame-
 * parallel: the driver cuts the input into frames, workers decode them,
 * and their output chunks are queued in stream order. A large frame is
 * decoded streaming in the driver's thread. Skippable frames are dropped.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "ramboot.h"
#include "codec.h"
#include "pipe.h"

/* A frame is decoded by a worker in one piece when its output is at most
 * FRAME_PAR_MAX and its input at most FRAME_COLLECT_MAX; a larger one is
 * decoded streaming, overlapped with reading and writing. */
#define FRAME_PAR_MAX (32u * 1024 * 1024)
#define FRAME_COLLECT_MAX (16u * 1024 * 1024)
#define BLOCK_MAX (128u * 1024)
#define ZSTD_MAGIC 0xFD2FB528u
#define SKIP_MAGIC 0x184D2A50u             /* ... to 0x184D2A5F */

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
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

struct zpar {
	struct pipe *p;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct job *head, *tail;
	bool closing;
	int nworkers;
	pthread_t tid[64];
	unsigned int inflight;   /* jobs queued or running */
	struct sbuf *spare;      /* frame input buffers for reuse */
};

/* Frame input buffers are reused: fresh memory costs a page fault per
 * page, more than the copy into it. */
struct sbuf {
	struct sbuf *next;
	size_t cap;
};

static void *worker_main(void *arg)
{
	struct zpar *z = arg;
	ZSTD_DCtx *d = ZSTD_createDCtx();

	if (d)
		ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, ZSTD_WINDOWLOG_MAX);
	for (;;) {
		struct job *j;
		size_t r;

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

		if (!d) {
			pipe_fail(z->p, -ENOMEM, PS_DECODE, "zstd: cannot allocate a decoder");
			pipe_chunk_done(z->p, j->out, -ENOMEM);
		} else if (pipe_error(z->p)) {
			pipe_chunk_done(z->p, j->out, pipe_error(z->p));
		} else {
			r = ZSTD_decompressDCtx(d, j->out->data, j->want, j->src, j->src_len);
			if (ZSTD_isError(r)) {
				pipe_fail(z->p, -EBADMSG, PS_DECODE, "zstd: %s", ZSTD_getErrorName(r));
				pipe_chunk_done(z->p, j->out, -EBADMSG);
			} else if (j->known && r != j->want) {
				pipe_fail(z->p, -EBADMSG, PS_DECODE, "zstd: frame size differs from its header");
				pipe_chunk_done(z->p, j->out, -EBADMSG);
			} else {
				j->out->len = r;
				pipe_chunk_done(z->p, j->out, 0);
			}
		}
		pthread_mutex_lock(&z->lock);
		{
			struct sbuf *sb = (struct sbuf *)(void *)j->src;

			sb->cap = j->src_cap;
			sb->next = z->spare;
			z->spare = sb;
		}
		free(j);
		z->inflight--;
		pthread_cond_broadcast(&z->cond);
		pthread_mutex_unlock(&z->lock);
	}
	ZSTD_freeDCtx(d);
	return NULL;
}

/* ---- the driver ---- */

enum scan { SCAN_MORE, SCAN_FRAME, SCAN_SKIP, SCAN_STREAM, SCAN_BAD };

struct zdrv {
	struct pipe *p;
	struct zpar par;
	bool parallel;
	ZSTD_DCtx *dctx;         /* streaming decoder */
	bool streaming;          /* inside a frame decoded streaming */
	uint8_t *fb;             /* bytes of the frame being collected */
	size_t fb_len, fb_cap;
	size_t scan_pos;         /* next block header in fb, 0: none yet */
	bool scan_last;          /* the last block has been seen */
	size_t frame_end;        /* frame size once known */
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
		z->frame_end = 8 + (size_t)le32(b + 4);
		return n >= z->frame_end ? SCAN_SKIP : SCAN_MORE;
	}
	if (magic != ZSTD_MAGIC)
		return SCAN_BAD;
	if (z->scan_pos == 0) {
		size_t h = ZSTD_frameHeaderSize(b, n);
		unsigned long long cs;

		if (ZSTD_isError(h))
			return n < ZSTD_FRAMEHEADERSIZE_MAX ? SCAN_MORE : SCAN_BAD;
		if (n < h)
			return SCAN_MORE;
		cs = ZSTD_getFrameContentSize(b, n);
		if (!z->parallel || cs == ZSTD_CONTENTSIZE_ERROR ||
		    (cs != ZSTD_CONTENTSIZE_UNKNOWN && cs > FRAME_PAR_MAX))
			return SCAN_STREAM;
		z->content_known = cs != ZSTD_CONTENTSIZE_UNKNOWN;
		z->content = z->content_known ? cs : 0;
		z->scan_pos = h;
		z->scan_last = false;
	}
	while (!z->scan_last) {
		uint32_t bh, type, size;

		if (n < z->scan_pos + 3)
			return n > FRAME_COLLECT_MAX ? SCAN_STREAM : SCAN_MORE;
		bh = (uint32_t)b[z->scan_pos] | (uint32_t)b[z->scan_pos + 1] << 8 |
		     (uint32_t)b[z->scan_pos + 2] << 16;
		type = (bh >> 1) & 3;
		size = bh >> 3;
		if (type == 3)
			return SCAN_BAD;
		z->scan_last = bh & 1;
		/* RLE blocks store one byte; raw and compressed store size.
		 * Without a content size, bound the output: raw and RLE
		 * blocks give their size, compressed ones at most 128 KiB. */
		z->scan_pos += 3 + (type == 1 ? 1 : size);
		if (!z->content_known) {
			z->content += type == 2 ? BLOCK_MAX : size;
			if (z->content > FRAME_PAR_MAX)
				return SCAN_STREAM;
		}
		if (z->scan_last && (b[4] & 0x04))
			z->scan_pos += 4;        /* content checksum */
	}
	z->frame_end = z->scan_pos;
	return n >= z->frame_end ? SCAN_FRAME : SCAN_MORE;
}

static int fb_append(struct zdrv *z, const uint8_t *d, size_t n)
{
	if (z->fb_len + n > z->fb_cap) {
		size_t cap = z->fb_cap ? z->fb_cap : 16u << 20;
		uint8_t *nb;

		while (cap < z->fb_len + n)
			cap *= 2;
		nb = alloc_big(cap);
		if (!nb)
			return -ENOMEM;
		memcpy(nb, z->fb, z->fb_len);
		free(z->fb);
		z->fb = nb;
		z->fb_cap = cap;
	}
	memcpy(z->fb + z->fb_len, d, n);
	z->fb_len += n;
	return 0;
}

/* A spare input buffer of at least cap bytes, or a new one. */
static uint8_t *spare_get(struct zdrv *z, size_t want, size_t *cap)
{
	struct sbuf **pp, *sb = NULL;

	pthread_mutex_lock(&z->par.lock);
	for (pp = &z->par.spare; *pp; pp = &(*pp)->next) {
		if ((*pp)->cap >= want) {
			sb = *pp;
			*pp = sb->next;
			break;
		}
	}
	pthread_mutex_unlock(&z->par.lock);
	if (sb) {
		*cap = sb->cap;
		return (uint8_t *)sb;
	}
	*cap = want < (16u << 20) ? 16u << 20 : want;
	return alloc_big(*cap);
}

/* Drop the first n bytes of fb (a frame handed over or skipped). With
 * taken, the buffer goes to the caller and the rest moves to another. */
static int fb_consume(struct zdrv *z, size_t n, uint8_t **taken, size_t *taken_cap)
{
	size_t rest = z->fb_len - n;

	if (taken) {
		size_t cap;
		uint8_t *nb = spare_get(z, rest > sizeof(struct sbuf) ? rest : sizeof(struct sbuf), &cap);

		if (!nb)
			return -ENOMEM;
		memcpy(nb, z->fb + n, rest);
		*taken = z->fb;
		*taken_cap = z->fb_cap;
		z->fb = nb;
		z->fb_cap = cap;
	} else {
		memmove(z->fb, z->fb + n, rest);
	}
	z->fb_len = rest;
	z->scan_pos = 0;
	z->scan_last = false;
	return 0;
}

static int dispatch(struct zdrv *z)
{
	struct job *j = calloc(1, sizeof(*j));
	struct chunk *out = j ? pipe_get_big(z->p, (size_t)z->content) : NULL;
	size_t len = z->frame_end;
	int rc;

	if (!out) {
		free(j);
		return -ENOMEM;
	}
	rc = fb_consume(z, len, &j->src, &j->src_cap);
	if (rc < 0) {
		free(out->data);
		free(out);
		free(j);
		return rc;
	}
	j->src_len = len;
	j->known = z->content_known;
	j->want = (size_t)z->content;
	j->out = out;
	out->len = (size_t)z->content;
	/* Bound what waits for the writer, then queue in stream order; a
	 * worker fills the chunk later. */
	pipe_wait_outq(z->p, (size_t)z->par.nworkers + 1);
	pipe_emit(z->p, out);
	z->par_frames++;

	pthread_mutex_lock(&z->par.lock);
	/* Bound the memory: a few frames in flight per worker. */
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
	pthread_mutex_init(&z.par.lock, NULL);
	pthread_cond_init(&z.par.cond, NULL);
	z.dctx = ZSTD_createDCtx();
	if (!z.dctx) {
		rc = -ENOMEM;
		goto out;
	}
	ZSTD_DCtx_setParameter(z.dctx, ZSTD_d_windowLogMax, ZSTD_WINDOWLOG_MAX);
	z.parallel = cfg->threads > 1;
	if (z.parallel) {
		int n = cfg->threads > 64 ? 64 : cfg->threads;

		for (i = 0; i < n; i++) {
			if (pthread_create(&z.par.tid[i], NULL, worker_main, &z.par))
				break;
			z.par.nworkers++;
		}
		z.parallel = z.par.nworkers > 0;
	}

	while (in) {
		const uint8_t *d = in->data;
		size_t n = in->len;

		while (n > 0) {
			enum scan s;

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
				size_t t = n < 65536 ? n : 65536;

				rc = fb_append(&z, d, t);
				d += t;
				n -= t;
			}
			if (rc < 0)
				goto out_in;
			for (;;) {
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
				if (s == SCAN_SKIP) {
					fb_consume(&z, z.frame_end, NULL, NULL);
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
					fb_consume(&z, (size_t)used, NULL, NULL);
					if (done)
						z.streaming = false;
					else
						break;
				}
				if (!z.fb_len)
					break;
			}
		}
		rc = pipe_next_input(p, &in);
		if (rc < 0)
			goto out;
	}
	rc = 0;
	if (z.streaming || z.fb_len) {
		snprintf(z.msg, sizeof(z.msg), "%s", z.frames || z.fb_len >= 4 ?
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
	while (z.par.spare) {
		struct sbuf *sb = z.par.spare;

		z.par.spare = sb->next;
		free(sb);
	}
	ZSTD_freeDCtx(z.dctx);
	free(z.fb);
	pthread_cond_destroy(&z.par.cond);
	pthread_mutex_destroy(&z.par.lock);
	return rc;
}

/* Compressed size of the frame at off, walking its block headers with
 * small reads; -E2BIG past max_blocks (a large single frame). */
static int64_t frame_size_at(int fd, off_t off, size_t hdr, uint8_t fhd, unsigned int max_blocks)
{
	off_t pos = off + (off_t)hdr;
	unsigned int i;

	for (i = 0; i < max_blocks; i++) {
		uint8_t b[3];
		uint32_t bh, type;

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

/* Output size from the first frame's header. One frame spanning the file
 * gives the exact size; for many frames the first frame's ratio is
 * scaled to the file (an estimate). */
static int zstd_content_size(int fd, uint64_t file_size, uint64_t *out, int *exact)
{
	uint8_t h[ZSTD_FRAMEHEADERSIZE_MAX];
	ssize_t n = pread_full(fd, h, sizeof(h), 0);
	unsigned long long cs;
	size_t hs;
	int64_t fs;
	off_t off = 0;

	/* pzstd starts each frame with a skippable frame. */
	while (n >= 8 && (le32(h) & 0xFFFFFFF0u) == SKIP_MAGIC) {
		off += 8 + (off_t)le32(h + 4);
		n = pread_full(fd, h, sizeof(h), off);
	}
	if (n < 6 || le32(h) != ZSTD_MAGIC)
		return -EINVAL;
	cs = ZSTD_getFrameContentSize(h, (size_t)n);
	hs = ZSTD_frameHeaderSize(h, (size_t)n);
	if (cs == ZSTD_CONTENTSIZE_UNKNOWN || cs == ZSTD_CONTENTSIZE_ERROR || ZSTD_isError(hs))
		return -EINVAL;
	fs = frame_size_at(fd, off, hs, h[4], 1024);
	if (fs == -E2BIG || (fs > 0 && (uint64_t)(off + fs) >= file_size)) {
		*out = cs;
		*exact = fs > 0 && (uint64_t)(off + fs) == file_size;
		return 0;
	}
	if (fs <= 0)
		return -EINVAL;
	*out = (uint64_t)((double)cs * (double)file_size / (double)(off + fs));
	*exact = 0;
	return 0;
}

static const uint8_t zstd_magic[] = { 0x28, 0xb5, 0x2f, 0xfd };

const struct codec codec_zstd = {
	.name = "zstd",
	.magic = zstd_magic,
	.magic_len = sizeof(zstd_magic),
	.drive = zstd_drive,
	.content_size = zstd_content_size,
};
