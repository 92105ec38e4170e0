// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Binary deltas between two versions of an image (delta.h).
 *
 * The decoder writes straight into a shared mapping of the output file
 * (ZSTD_d_stableOutBuffer: the output is the decoder's window) and reads
 * the old image through a mapping (the frame's prefix). A fault in either
 * mapping raises SIGBUS; it is caught for the time of the decode only and
 * turned into an error (siglongjmp out of the decoder, whose context is
 * then freed, never used again).
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/sha256.h"
#include "codec/delta.h"

#define DELTA_READ (256u * 1024)      /* the delta is read this much at a time */

#if RAMBOOT_DELTA_WRITE
/* The smallest window that reaches from the end of the new image back to
 * the start of the old one, within what decoders accept. */
static int window_log(uint64_t span)
{
	int w = ZSTD_WINDOWLOG_MIN;

	while (w < ZSTD_WINDOWLOG_MAX && ((uint64_t)1 << w) < span)
		w++;
	return w;
}

int delta_make(const void *old, size_t oldlen, const void *new_, size_t newlen, size_t cap,
	       void **out, size_t *outlen, char *err, size_t errlen)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	ZSTD_inBuffer in = { new_, newlen, 0 };
	ZSTD_outBuffer ob = { NULL, cap, 0 };
	size_t r = 0;
	int rc = 0;

	*out = NULL;
	*outlen = 0;
	ob.dst = cap ? malloc(cap) : NULL;
	if (!c || !ob.dst) {
		ZSTD_freeCCtx(c);
		free(ob.dst);
		return rb_errfmt(err, errlen, -ENOMEM, "out of memory");
	}
	/* Long-distance matching finds the old image's runs wherever the
	 * rebuild moved them; the content size lets a client check the
	 * frame against the manifest before it writes a byte. */
	if (ZSTD_isError(r = ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, DELTA_LEVEL)) ||
	    ZSTD_isError(r = ZSTD_CCtx_setParameter(c, ZSTD_c_enableLongDistanceMatching, 1)) ||
	    ZSTD_isError(r = ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog,
						    window_log((uint64_t)oldlen + newlen))) ||
	    ZSTD_isError(r = ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1)) ||
	    ZSTD_isError(r = ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(r = ZSTD_CCtx_setPledgedSrcSize(c, newlen)) ||
	    (oldlen && ZSTD_isError(r = ZSTD_CCtx_refPrefix(c, old, oldlen)))) {
		rc = rb_errfmt(err, errlen, -EINVAL, "zstd: %s", ZSTD_getErrorName(r));
		goto out;
	}
	do {
		r = ZSTD_compressStream2(c, &ob, &in, ZSTD_e_end);
		if (ZSTD_isError(r)) {
			rc = rb_errfmt(err, errlen, -EINVAL, "zstd: %s", ZSTD_getErrorName(r));
			goto out;
		}
		if (r && ob.pos == ob.size) {
			rc = rb_errfmt(err, errlen, -EFBIG, "the delta would be larger than %zu "
				       "bytes", cap);
			goto out;
		}
	} while (r);
	*out = ob.dst;
	*outlen = ob.pos;
	ob.dst = NULL;
out:
	free(ob.dst);
	ZSTD_freeCCtx(c);
	return rc;
}
#else
int delta_make(const void *old, size_t oldlen, const void *new_, size_t newlen, size_t cap,
	       void **out, size_t *outlen, char *err, size_t errlen)
{
	(void)old, (void)oldlen, (void)new_, (void)newlen, (void)cap;
	*out = NULL;
	*outlen = 0;
	return rb_errfmt(err, errlen, -ENOTSUP, "deltas are made by the host build of ramboot, "
			 "not this one");
}
#endif

/* The decode, with the state a SIGBUS leaves behind in it. */
struct apply {
	ZSTD_DCtx *d;
	const uint8_t *old;
	uint8_t *dst;
	uint64_t oldlen, newlen, dlen;
	int dfd;
	const uint8_t *dsha;
	uint8_t *buf;
	char *err;
	size_t errlen;
};

static _Thread_local sigjmp_buf *bus_jump;

static void on_bus(int sig)
{
	if (bus_jump)
		siglongjmp(*bus_jump, 1);
	/* Not ours: the default action, as if no handler were there. */
	(void)signal(sig, SIG_DFL);
	(void)raise(sig);
}

static int decode(struct apply *a)
{
	ZSTD_outBuffer out = { a->dst, (size_t)a->newlen, 0 };
	struct sha256 h;
	uint64_t got = 0;
	uint8_t md[32];
	bool done = false;
	size_t r;

	if (ZSTD_isError(r = ZSTD_DCtx_setParameter(a->d, ZSTD_d_windowLogMax, ZSTD_WINDOWLOG_MAX)) ||
	    ZSTD_isError(r = ZSTD_DCtx_setParameter(a->d, ZSTD_d_stableOutBuffer, 1)) ||
	    (a->oldlen && ZSTD_isError(r = ZSTD_DCtx_refPrefix(a->d, a->old, (size_t)a->oldlen))))
		return rb_errfmt(a->err, a->errlen, -EINVAL, "zstd: %s", ZSTD_getErrorName(r));
	sha256_init(&h);
	for (;;) {
		ssize_t n = read_full(a->dfd, a->buf, DELTA_READ);
		ZSTD_inBuffer in = { a->buf, 0, 0 };

		if (n < 0)
			return rb_errfmt(a->err, a->errlen, (int)n, "the delta: %s",
					 strerror((int)-n));
		if (n == 0)
			break;
		if (got + (uint64_t)n > a->dlen)
			return rb_errfmt(a->err, a->errlen, -EINVAL, "the delta is longer than "
					 "its manifest says");
		if (got == 0) {
			unsigned long long fcs = ZSTD_getFrameContentSize(a->buf, (size_t)n);

			if (fcs != a->newlen)
				return rb_errfmt(a->err, a->errlen, -EINVAL, "the delta is not a "
						 "zstd frame of the image's %llu bytes",
						 (unsigned long long)a->newlen);
		}
		sha256_update(&h, a->buf, (size_t)n);
		got += (uint64_t)n;
		in.size = (size_t)n;
		while (in.pos < in.size) {
			if (done)
				return rb_errfmt(a->err, a->errlen, -EINVAL, "the delta has bytes "
						 "after its frame");
			r = ZSTD_decompressStream(a->d, &out, &in);
			if (ZSTD_isError(r))
				return rb_errfmt(a->err, a->errlen, -EINVAL, "the delta does not "
						 "decode: %s", ZSTD_getErrorName(r));
			done = r == 0;
		}
	}
	sha256_final(&h, md);
	if (got != a->dlen || memcmp(md, a->dsha, 32))
		return rb_errfmt(a->err, a->errlen, -EINVAL, "the delta is not the one its "
				 "manifest names (%s)", got != a->dlen ? "size" : "sha256");
	if (!done || out.pos != a->newlen)
		return rb_errfmt(a->err, a->errlen, -EINVAL, "the delta ends before the image does");
	return 0;
}

int delta_guard(int (*fn)(void *), void *arg, char *err, size_t errlen)
{
	struct sigaction sa, old;
	sigjmp_buf jb;
	int rc;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_bus;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &old) < 0)
		return rb_errfmt(err, errlen, -errno, "sigaction: %s", strerror(errno));
	/* Nothing this function keeps in locals changes between sigsetjmp
	 * and a jump back to it. */
	if (sigsetjmp(jb, 1)) {
		bus_jump = NULL;
		(void)sigaction(SIGBUS, &old, NULL);
		return rb_errfmt(err, errlen, -EIO, "a read or write of the mapped images "
				 "failed (SIGBUS: an I/O error, or a file cut short)");
	}
	bus_jump = &jb;
	rc = fn(arg);
	bus_jump = NULL;
	(void)sigaction(SIGBUS, &old, NULL);
	return rc;
}

static int decode_fn(void *arg)
{
	return decode(arg);
}

int delta_apply(int oldfd, uint64_t oldlen, int dfd, uint64_t dlen, const uint8_t dsha[32],
		int outfd, uint64_t newlen, char *err, size_t errlen)
{
	struct apply a = { .oldlen = oldlen, .newlen = newlen, .dlen = dlen, .dfd = dfd,
			   .dsha = dsha, .err = err, .errlen = errlen };
	void *om = MAP_FAILED, *nm = MAP_FAILED;
	int rc;

	if (!newlen || newlen > SIZE_MAX || oldlen > SIZE_MAX)
		return rb_errfmt(err, errlen, -EINVAL, "no delta for an image of %llu bytes",
				 (unsigned long long)newlen);
	if (oldlen) {
		om = mmap(NULL, (size_t)oldlen, PROT_READ, MAP_SHARED, oldfd, 0);
		if (om == MAP_FAILED)
			return rb_errfmt(err, errlen, -errno, "the old image: mmap: %s",
					 strerror(errno));
		a.old = om;
	}
	nm = mmap(NULL, (size_t)newlen, PROT_READ | PROT_WRITE, MAP_SHARED, outfd, 0);
	if (nm == MAP_FAILED) {
		rc = rb_errfmt(err, errlen, -errno, "the new image: mmap: %s", strerror(errno));
		goto out;
	}
	a.dst = nm;
	a.d = ZSTD_createDCtx();
	a.buf = malloc(DELTA_READ);
	if (!a.d || !a.buf) {
		rc = rb_errfmt(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	rc = delta_guard(decode_fn, &a, err, errlen);
out:
	free(a.buf);
	ZSTD_freeDCtx(a.d);
	if (nm != MAP_FAILED && munmap(nm, (size_t)newlen) < 0 && rc == 0)
		rc = rb_errfmt(err, errlen, -errno, "munmap: %s", strerror(errno));
	if (om != MAP_FAILED)
		(void)munmap(om, (size_t)oldlen);
	return rc;
}
