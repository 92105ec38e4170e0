// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The copy from a multicast stream (--udpcast).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lazy/lazyint.h"
#include "bgread/yield.h"
#include "codec/codec.h"
#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/sha256.h"
#include "source/source.h"
#include "lib/text.h"

/*
 * udp-receiver writes the image to a pipe, in image order; each piece is
 * written at its offset in the copy. The stream reads nothing of the
 * image, so nothing yields to the boot. Whatever goes wrong with the
 * stream (no session, a lost or stalled stream, another or a compressed
 * image, a hash mismatch) is a fallback, not a failure: the copy is then
 * made from the image as without --udpcast, over every byte the stream
 * wrote. A failure of the copy itself (memory, a write error) or a
 * signal gives up as it always does.
 */

void lazy_stream_fallback(struct lazy *L, enum run_err f, const char *fmt, ...)
{
	struct lazy_result *r = L->r;
	va_list ap;

	r->fallback = f;
	va_start(ap, fmt);
	vsnprintf(r->fallback_msg, sizeof(r->fallback_msg), fmt, ap);
	va_end(ap);
	/* One line in the status file. */
	text_scrub(r->fallback_msg, sizeof(r->fallback_msg), r->fallback_msg, SIZE_MAX, ' ');
	rb_warn("%s; copying from %s", r->fallback_msg, L->o->image);
}

/* The chunk hashes of a version 2 manifest, checked as the stream comes
 * in: another image is told after its first chunk, not at its end. */
struct stream_chunks {
	const struct manifest *m;   /* NULL: none */
	uint64_t pos;               /* bytes of the stream hashed */
	SHA256_CTX sha;             /* of the chunk pos is in */
};

/* Hash len more bytes of the stream; 0, or 1 with the first chunk that
 * is not the manifest's in *bad. Bytes past the image are the size
 * check's. */
static int chunks_feed(struct stream_chunks *k, const uint8_t *p, size_t len, uint32_t *bad)
{
	const uint64_t cs = k->m->chunk_size;

	while (len > 0 && k->pos < k->m->size) {
		uint64_t i = k->pos / cs, end = (i + 1) * cs;
		size_t take = len;
		uint8_t d[32];

		if (end > k->m->size)
			end = k->m->size;
		if (take > end - k->pos)
			take = (size_t)(end - k->pos);
		if (k->pos % cs == 0)
			SHA256_Init(&k->sha);
		SHA256_Update(&k->sha, p, take);
		k->pos += take;
		p += take;
		len -= take;
		if (k->pos < end)
			break;
		SHA256_Final(d, &k->sha);
		if (i >= k->m->nchunks || memcmp(d, k->m->chunk[i], sizeof(d))) {
			*bad = (uint32_t)i;
			return 1;
		}
	}
	return 0;
}

/* Seconds to wait for the next data before the stream counts as lost:
 * udp-receiver's own timeouts end it first, this is the backstop; once
 * data came, --stall-timeout too. */
static double stream_limit(const struct lazy *L, uint64_t got)
{
	double lim;

	if (got == 0)
		return L->uo.start_timeout + STREAM_GRACE_S;
	lim = L->uo.receive_timeout + STREAM_GRACE_S;
	if (L->o->stall_timeout > 0 && L->o->stall_timeout < lim)
		lim = L->o->stall_timeout;
	return lim;
}

/* The next bytes of the stream into buf after fill bytes, the piece at
 * off; at the image's end, one byte more tells a longer stream. */
static ssize_t stream_read(struct source *s, void *buf, uint64_t off, uint64_t fill,
			   uint64_t size)
{
	uint64_t want = BGREAD_CHUNK - fill;
	char extra;

	if (off + fill >= size)
		return source_read(s, &extra, 1);
	if (want > size - off - fill)
		want = size - off - fill;
	return source_read(s, (char *)buf + fill, want);
}

/* A whole piece of the stream into the copy at off. 0 (*f set when the
 * stream is not the raw image), or the exit code of a failure. */
static int stream_put(struct lazy *L, const void *buf, uint64_t off, uint64_t fill,
		      uint64_t *next_mem, enum run_err *f, char *msg, size_t msglen)
{
	int rc;

	if (off == 0) {
		/* The first piece: the format from its magic bytes. */
		const struct codec *cd = codec_detect(buf, fill);

		if (cd != &codec_none) {
			*f = LAZY_FB_COMPRESSED;
			snprintf(msg, msglen, "udpcast: the stream is %s-compressed; the copy "
				 "needs the raw image (serve the uncompressed file)", cd->name);
			return 0;
		}
	}
	if (off >= *next_mem) {
		char m[256];

		if (bgread_mem_check(L->meminfo_fd, L->size - off, L->o->min_free, m, sizeof(m)) < 0)
			return lazy_fail(L, LAZY_NOMEM, "%s", m);
		*next_mem = off + BGREAD_MEM_STEP;
	}
	rc = pwrite_full(L->copy_fd, buf, fill, (off_t)off);
	if (rc < 0)
		return lazy_fail(L, rc == -ENOSPC ? LAZY_NOMEM : LAZY_DEST, "%s: write error at %"
				 PRIu64 ": %s", L->r->copy, off, strerror(-rc));
	return 0;
}

/*
 * Read the stream s into the copy. Returns 0 or the exit code of a
 * failure; *f is the fallback when the stream is not the whole image
 * (LAZY_FB_NONE at its end of file, the caller asks udp-receiver then),
 * *got the bytes read.
 */
static int stream_receive(struct lazy *L, struct source *s, uint64_t *got, enum run_err *f,
			  char *msg, size_t msglen)
{
	const uint64_t size = L->size;
	struct stream_chunks k = { .m = NULL };
	uint64_t off = 0, fill = 0, next_mem = 0;
	double last = now_sec();
	uint32_t bad;
	void *buf;
	int rc = 0;

	*got = 0;
	*f = LAZY_FB_NONE;
	if (L->have_man && L->man.chunk && L->man.nchunks && L->man.chunk_size)
		k.m = &L->man;
	/* Page aligned: zram is written with O_DIRECT. */
	if (posix_memalign(&buf, 4096, BGREAD_CHUNK) != 0)
		return lazy_fail(L, LAZY_NOMEM, "out of memory");
	for (;;) {
		struct pollfd p = { .fd = s->fd, .events = POLLIN };
		ssize_t n;
		int pr;

		if ((rc = lazy_guard_outcome(L)) != 0)
			break;
		if (now_sec() - L->last_status >= STATUS_EVERY_S) {
			L->r->bytes_stream = off;
			lazy_status_write(L);
		}
		pr = poll(&p, 1, STREAM_POLL_MS);
		if (pr < 0 && errno != EINTR) {
			*f = LAZY_FB_LOST;
			snprintf(msg, msglen, "udpcast: poll: %s", strerror(errno));
			break;
		}
		if (pr <= 0) {
			if (now_sec() - last >= stream_limit(L, *got)) {
				*f = *got ? LAZY_FB_STALL : LAZY_FB_NO_SESSION;
				snprintf(msg, msglen, "udpcast: %s for %.0f s", *got ?
					 "the stream stalled" : "no session", now_sec() - last);
				break;
			}
			continue;
		}
		n = stream_read(s, buf, off, fill, size);
		if (n == -EAGAIN)
			continue;
		if (n < 0) {
			*f = LAZY_FB_LOST;
			snprintf(msg, msglen, "udpcast: read: %s", strerror((int)-n));
			break;
		}
		if (n == 0)
			break;                      /* end of file: the caller decides */
		*got += (uint64_t)n;
		last = now_sec();
		if (off + fill >= size) {
			*f = LAZY_FB_SIZE;
			snprintf(msg, msglen, "udpcast: the stream is longer than %s (%" PRIu64
				 " bytes)", L->o->image, size);
			break;
		}
		if (k.m && chunks_feed(&k, (uint8_t *)buf + fill, (size_t)n, &bad)) {
			*f = LAZY_FB_HASH;
			snprintf(msg, msglen, "udpcast: chunk %" PRIu32 " of the stream is not the "
				 "manifest's: another image", bad);
			break;
		}
		fill += (uint64_t)n;
		if (fill < BGREAD_CHUNK && off + fill < size)
			continue;
		rc = stream_put(L, buf, off, fill, &next_mem, f, msg, msglen);
		if (rc != 0 || *f != LAZY_FB_NONE)
			break;
		off += fill;
		fill = 0;
	}
	free(buf);
	L->r->bytes_stream = off;
	return rc;
}

/* The verified result of a stream undone: the copy is made again. */
void lazy_stream_forget(struct lazy *L)
{
	L->r->err = LAZY_OK;
	L->r->error[0] = '\0';
	L->r->verified = 0;
	L->r->sha256[0] = '\0';
	L->hash_done = L->hash_ok = false;
}

/*
 * The copy from the stream, verified. Returns 0 or the exit code of a
 * failure (the run gives up); *used is true when the copy is the
 * stream's and verified, false after a fallback (L->r->fallback).
 */
int lazy_stream_copy(struct lazy *L, bool *used)
{
	const struct source_spec sp = { .name = "udpcast", .fd = -1, .udpcast = &L->uo };
	char msg[256], err[256];
	struct source s;
	enum run_err f;
	uint64_t got = 0;
	int rc;

	*used = false;
	/* The stream can be any image: without a hash it is not used. */
	if (!L->want_sha[0]) {
		lazy_stream_fallback(L, LAZY_FB_UNVERIFIED, "udpcast: nothing to verify the stream "
				"against (--sha256 or --manifest)");
		return 0;
	}
	lazy_set_state(L, "receiving");
	if (source_open(&s, &sp, err, sizeof(err)) < 0) {
		(void)source_close(&s);
		lazy_stream_fallback(L, LAZY_FB_RECEIVER, "%s", err);
		return 0;
	}
	msg[0] = '\0';
	rc = stream_receive(L, &s, &got, &f, msg, sizeof(msg));
	if (rc == 0 && f == LAZY_FB_NONE) {
		/* End of file: complete only when udp-receiver says so. */
		bool ok = source_end(&s, err, sizeof(err)) == 0;

		f = lazy_stream_end(got, L->size, ok);
		if (!ok)
			snprintf(msg, sizeof(msg), "%s", err);
		else if (f != LAZY_FB_NONE)
			snprintf(msg, sizeof(msg), "udpcast: the stream ended after %" PRIu64
				 " bytes, %s has %" PRIu64, got, L->o->image, L->size);
	}
	/* Read only: a failed close() loses nothing (the copy is verified). */
	(void)source_close(&s);
	if (rc != 0)
		return rc;
	if (f != LAZY_FB_NONE) {
		lazy_stream_fallback(L, f, "%s", msg);
		return 0;
	}
	rc = lazy_verify(L);
	if (rc != 0 && L->r->err == LAZY_HASH) {
		snprintf(msg, sizeof(msg), "udpcast: the stream's SHA-256 is %s, not %s",
			 L->r->sha256, L->want_sha);
		lazy_stream_forget(L);
		lazy_stream_fallback(L, LAZY_FB_HASH, "%s", msg);
		return 0;
	}
	if (rc != 0)
		return rc;
	*used = true;
	return 0;
}

/*
 * The stream's copy is the image the hash names; the loop device reads
 * the image on the server. Before the switch, what the boot has read of
 * it (the pages the page cache holds: no network read) and its first
 * page must be the copy's bytes, or the file systems mounted from the
 * loop device would go on over another image. 0 with *same, or the exit
 * code of a failure.
 */
int lazy_stream_matches(struct lazy *L, bool *same, char *msg, size_t msglen)
{
	struct bgread_ranges res = { 0 };
	void *a = NULL, *b = NULL;
	size_t i;
	int rc = 0;

	*same = true;
	/* A scan that fails part way leaves less to compare, no error. */
	if (L->mincore_ok)
		(void)bgread_scan_resident(L->img_fd, L->size, L->page, &res);
	if (((res.n == 0 || res.v[0].off > 0) &&
	     bgread_ranges_add(&res, 0, L->page < L->size ? L->page : L->size) < 0) ||
	    posix_memalign(&a, 4096, BGREAD_CHUNK) != 0 || posix_memalign(&b, 4096, BGREAD_CHUNK) != 0) {
		rc = lazy_fail(L, LAZY_NOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < res.n && *same; i++) {
		uint64_t off = res.v[i].off, end = off + res.v[i].len;

		while (off < end && *same) {
			uint64_t len = end - off < BGREAD_CHUNK ? end - off : BGREAD_CHUNK;
			ssize_t n = pread_full(L->img_fd, a, len, (off_t)off);
			ssize_t m = n == (ssize_t)len ? pread_full(L->copy_fd, b, len, (off_t)off) : 0;

			if (n < 0 || (uint64_t)n != len) {
				rc = lazy_fail(L, LAZY_SOURCE, "%s: read error at %" PRIu64 ": %s",
					       L->o->image, off, n < 0 ? strerror((int)-n) : "short read");
				goto out;
			}
			if (m < 0 || (uint64_t)m != len) {
				rc = lazy_fail(L, LAZY_DEST, "%s: cannot read back: %s", L->r->copy,
					       m < 0 ? strerror((int)-m) : "short read");
				goto out;
			}
			L->r->bytes_compared += len;
			if (memcmp(a, b, len)) {
				*same = false;
				snprintf(msg, msglen, "udpcast: the stream's copy differs from %s near "
					 "offset %" PRIu64 " (read by the boot)", L->o->image, off);
			}
			off += len;
		}
	}
out:
	free(a);
	free(b);
	bgread_ranges_free(&res);
	return rc;
}

enum run_err lazy_stream_end(uint64_t got, uint64_t size, bool receiver_ok)
{
	if (got > size)
		return LAZY_FB_SIZE;
	/* udp-receiver fails when no sender came (nothing arrived) or when
	 * the stream went silent; the bytes before are not trusted. */
	if (!receiver_ok)
		return got == 0 ? LAZY_FB_NO_SESSION : LAZY_FB_LOST;
	return got == size ? LAZY_FB_NONE : LAZY_FB_SIZE;
}
