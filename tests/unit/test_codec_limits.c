// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Decoder memory limits and the size probes, through the real pipeline
 * (reader, codec driver, writer on memfds):
 *   - codec_mem_bound() for every codec, and how memlimit moves it;
 *   - zstd: a frame whose window is above the limit is refused from its
 *     header (streaming and frame-parallel), a raised limit takes it;
 *     multi-frame streams with skippable frames decode the same with one
 *     thread and with many;
 *   - xz: a block whose dictionary is above the limit is refused (one
 *     thread and the threaded decoder), a raised limit takes it;
 *   - lzop: a block whose buffers are above the limit is refused;
 *   - the zstd and xz size probes: a huge frame content size saturates
 *     (no float-to-integer overflow), an empty first frame is no "small"
 *     estimate, frames spanning the file give the exact size, xz stream
 *     padding of any multiple of four.
 * UBSan stops at the first report (__ubsan_default_options below), so
 * undefined behaviour on these paths fails the test.
 */
#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "tap.h"
#include "lib/base.h"
#include "lib/fdio.h"
#include "codec/codec.h"
#include "format/lzop.h"
#include "codec/pipe.h"

const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void)
{
	return "halt_on_error=1:print_stacktrace=1";
}

/* ---- helpers ---- */

static int memfd_with(const void *data, size_t len)
{
	int fd = memfd_create("codec-test", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (len && write_all(fd, data, len) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

struct result {
	int rc;
	char msg[160];
	uint8_t *out;            /* what the writer wrote */
	size_t out_len;
};

/* Decode in[0..len) with codec c through the pipeline, as the loader does. */
static void run(const struct codec *c, const void *in, size_t len, int threads, uint64_t memlimit,
		struct result *r)
{
	struct codec_cfg cfg = { .threads = threads, .memlimit = memlimit };
	struct pipe p;
	struct chunk *first;
	off_t end;

	memset(r, 0, sizeof(*r));
	r->rc = pipe_init(&p);
	if (r->rc < 0) {
		pipe_destroy(&p);
		return;
	}
	p.src_fd = memfd_with(in, len);
	p.dst_fd = memfd_create("codec-out", MFD_CLOEXEC);
	p.threads = threads;
	p.hash = true;           /* chunks come back from the hasher */
	if (p.src_fd < 0 || p.dst_fd < 0 || lseek(p.src_fd, 0, SEEK_SET) < 0) {
		r->rc = -EIO;
	} else if ((r->rc = pipe_start(&p)) == 0) {
		first = pipe_get_input(&p);
		if (first)
			codec_drive(c, &p, first, &cfg);
	}
	if (r->rc < 0)
		pipe_fail(&p, r->rc, PS_START, NULL);
	r->rc = pipe_finish(&p);
	snprintf(r->msg, sizeof(r->msg), "%s", p.error_msg);
	end = p.dst_fd >= 0 ? lseek(p.dst_fd, 0, SEEK_END) : 0;
	if (end > 0) {
		r->out = malloc((size_t)end);
		if (r->out && pread_full(p.dst_fd, r->out, (size_t)end, 0) == end)
			r->out_len = (size_t)end;
	}
	if (p.src_fd >= 0)
		close(p.src_fd);
	if (p.dst_fd >= 0)
		close(p.dst_fd);
	pipe_destroy(&p);
}

static void result_free(struct result *r)
{
	free(r->out);
	r->out = NULL;
}

static bool has(const char *s, const char *what)
{
	if (strstr(s, what))
		return true;
	printf("#   message \"%s\" lacks \"%s\"\n", s, what);
	return false;
}

/* A growing byte buffer for the hand-made streams. */
struct buf {
	uint8_t *d;
	size_t len, cap;
};

static uint8_t *grow(struct buf *b, size_t n)
{
	uint8_t *at;

	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->d = realloc(b->d, b->cap);
		if (!b->d)
			abort();
	}
	at = b->d + b->len;
	b->len += n;
	return at;
}

static void put(struct buf *b, const void *d, size_t n)
{
	memcpy(grow(b, n), d, n);
}

static void put_le(struct buf *b, uint64_t v, int n)
{
	uint8_t x[8];
	int i;

	for (i = 0; i < n; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	put(b, x, (size_t)n);
}

static void put_zeros(struct buf *b, size_t n)
{
	memset(grow(b, n), 0, n);
}

/* ---- zstd by hand ---- */

/* A frame header: no checksum, no dictionary; wlog 0 means single
 * segment (the window is the content size); fcs UINT64_MAX: unknown. */
static void zstd_header(struct buf *b, unsigned int wlog, uint64_t fcs)
{
	uint8_t fhd = 0;

	put_le(b, 0xFD2FB528u, 4);
	if (fcs == UINT64_MAX)
		fhd = 0;
	else if (fcs < 256 && !wlog)
		fhd = 0x00;               /* 1 byte, single segment only */
	else if (fcs >= 256 && fcs < 65536 + 256)
		fhd = 1 << 6;
	else if (fcs <= UINT32_MAX)
		fhd = 2 << 6;
	else
		fhd = 3 << 6;
	if (!wlog)
		fhd |= 0x20;
	put(b, &fhd, 1);
	if (wlog) {
		uint8_t wd = (uint8_t)((wlog - 10) << 3);

		put(b, &wd, 1);
	}
	if (fcs == UINT64_MAX)
		return;
	switch (fhd >> 6) {
	case 0: put_le(b, fcs, 1); break;
	case 1: put_le(b, fcs - 256, 2); break;
	case 2: put_le(b, fcs, 4); break;
	default: put_le(b, fcs, 8); break;
	}
}

/* An RLE block: size bytes of byte v. */
static void zstd_rle(struct buf *b, uint32_t size, uint8_t v, bool last)
{
	put_le(b, (uint64_t)size << 3 | 1 << 1 | (last ? 1 : 0), 3);
	put(b, &v, 1);
}

static bool all_bytes(const uint8_t *d, size_t n, uint8_t v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (d[i] != v)
			return false;
	return true;
}

/* ---- the tests ---- */

static void mem_bound(void)
{
	struct codec_cfg c1 = { .threads = 1 }, c2 = { .threads = 2 }, c64 = { .threads = 64 };
	struct codec_cfg big = { .threads = 1, .memlimit = 4 * GiB };
	struct codec_cfg tiny = { .threads = 8, .memlimit = 1 * MiB };
	struct codec_cfg mid = { .threads = 1, .memlimit = 64 * MiB };
	const struct codec *all[] = { &codec_none, &codec_zstd, &codec_xz, &codec_lzo, &codec_gzip };
	uint64_t max = 0;
	size_t i;

	CHECK_EQ_INT(codec_memlimit(&c1), CODEC_MEMLIMIT_DEFAULT);
	CHECK_EQ_INT(codec_memlimit(&big), 4 * GiB);
	CHECK_EQ_INT(codec_mem_bound(&codec_none, &c64), 0);
	/* one thread: the 128 MiB window and its block buffers */
	CHECK(codec_mem_bound(&codec_zstd, &c1) >= 128 * MiB);
	CHECK(codec_mem_bound(&codec_zstd, &c1) < 129 * MiB);
	/* threads: the limit, however many */
	CHECK_EQ_INT(codec_mem_bound(&codec_zstd, &c2), CODEC_MEMLIMIT_DEFAULT);
	CHECK_EQ_INT(codec_mem_bound(&codec_zstd, &c64), CODEC_MEMLIMIT_DEFAULT);
	/* a raised limit allows a 2 GiB window */
	CHECK(codec_mem_bound(&codec_zstd, &big) >= 2 * GiB);
	CHECK(codec_mem_bound(&codec_zstd, &big) < 2 * GiB + MiB);
	/* a tiny limit: no room for parallel frames, a 512 KiB window
	 * (and the decoder's own state, which is more than the rest) */
	CHECK(codec_mem_bound(&codec_zstd, &tiny) < 1 * MiB + 256 * KiB);
	CHECK(codec_mem_bound(&codec_zstd, &mid) <= 64 * MiB);
	CHECK_EQ_INT(codec_mem_bound(&codec_xz, &c64), CODEC_MEMLIMIT_DEFAULT);
	CHECK_EQ_INT(codec_mem_bound(&codec_xz, &tiny), 1 * MiB);
	/* lzop: two 64 MiB block buffers at most, whatever the limit */
	CHECK(codec_mem_bound(&codec_lzo, &c1) >= 128 * MiB);
	CHECK(codec_mem_bound(&codec_lzo, &big) < 129 * MiB);
	CHECK(codec_mem_bound(&codec_lzo, &tiny) < 2 * MiB);
	CHECK(codec_mem_bound(&codec_gzip, &big) <= 64 * KiB);
	CHECK(codec_mem_bound(&codec_gzip, &c1) > 0);
	for (i = 0; i < ARRAY_SIZE(all); i++)
		if (codec_mem_bound(all[i], &c2) > max)
			max = codec_mem_bound(all[i], &c2);
	CHECK_EQ_INT(codec_mem_bound(NULL, &c2), max);
}

/* windowLog 31 (2 GiB), no content size, RLE blocks: decoded, this
 * would allocate the window and fill it. */
static void zstd_window_refused(void)
{
	struct buf b = { 0 };
	struct result r;
	int threads[] = { 1, 64 };
	size_t i;

	zstd_header(&b, 31, UINT64_MAX);
	for (i = 0; i < 8; i++)
		zstd_rle(&b, 128 * 1024, 0, i == 7);
	for (i = 0; i < ARRAY_SIZE(threads); i++) {
		run(&codec_zstd, b.d, b.len, threads[i], 0, &r);
		CHECK(r.rc < 0);
		CHECK(has(r.msg, "2.0 GiB window"));
		CHECK(has(r.msg, "128.0 MiB limit"));
		CHECK(has(r.msg, "memlimit of 4.0 GiB"));
		CHECK_EQ_INT(r.out_len, 0);
		result_free(&r);
	}
	free(b.d);
}

/* A frame small enough for a worker (content size 256 KiB) that declares
 * a 2 GiB window is refused with threads too, as it is streaming. */
static void zstd_window_refused_parallel(void)
{
	struct buf b = { 0 };
	struct result r;

	zstd_header(&b, 31, 256 * 1024);
	zstd_rle(&b, 128 * 1024, 7, false);
	zstd_rle(&b, 128 * 1024, 7, true);
	run(&codec_zstd, b.d, b.len, 4, 0, &r);
	CHECK(r.rc < 0);
	CHECK(has(r.msg, "2.0 GiB window"));
	CHECK_EQ_INT(r.out_len, 0);
	result_free(&r);
	free(b.d);
}

/* windowLog 24 (16 MiB): refused under a 16 MiB limit (windows up to
 * 8 MiB), decoded under 64 MiB. */
static void zstd_window_raised(void)
{
	struct buf b = { 0 };
	struct result r;

	zstd_header(&b, 24, UINT64_MAX);
	zstd_rle(&b, 100000, 0x5a, false);
	zstd_rle(&b, 1000, 0xa5, true);
	run(&codec_zstd, b.d, b.len, 1, 16 * MiB, &r);
	CHECK(r.rc < 0);
	CHECK(has(r.msg, "16.0 MiB window, above the 8.0 MiB limit"));
	CHECK(has(r.msg, "memlimit of 32.0 MiB"));
	result_free(&r);
	run(&codec_zstd, b.d, b.len, 1, 64 * MiB, &r);
	CHECK_EQ_INT(r.rc, 0);
	CHECK_EQ_INT(r.out_len, 101000);
	CHECK(r.out_len == 101000 && all_bytes(r.out, 100000, 0x5a) &&
	      all_bytes(r.out + 100000, 1000, 0xa5));
	result_free(&r);
	free(b.d);
}

/* Frames of every kind in a row, with skippable frames (one of 3 MiB)
 * between them: the same output with 1, 2 and 64 threads and with a
 * small limit (fewer frames in flight, or none in parallel). */
static void zstd_frames(void)
{
	const size_t part = 300 * 1000;
	int threads[] = { 1, 2, 64 };
	uint8_t *src = malloc(4 * part), *z = malloc(ZSTD_compressBound(part));
	struct buf b = { 0 }, want = { 0 };
	struct result r;
	size_t i, n;

	if (!src || !z)
		abort();
	for (i = 0; i < 4 * part; i++)
		src[i] = (uint8_t)((i * 7) ^ (i >> 10));
	for (i = 0; i < 4; i++) {
		n = ZSTD_compress(z, ZSTD_compressBound(part), src + i * part, part, 1 + (int)i);
		CHECK(!ZSTD_isError(n));
		if (ZSTD_isError(n))
			n = 0;
		put(&b, z, n);
		put(&want, src + i * part, part);
		/* a skippable frame, 3 MiB after the second */
		put_le(&b, 0x184D2A50u + i, 4);
		put_le(&b, i == 1 ? 3 * MiB : i, 4);
		put_zeros(&b, i == 1 ? 3 * MiB : i);
	}
	/* an empty frame and one without a content size */
	n = ZSTD_compress(z, ZSTD_compressBound(part), src, 0, 3);
	put(&b, z, ZSTD_isError(n) ? 0 : n);
	zstd_header(&b, 17, UINT64_MAX);
	zstd_rle(&b, 5000, 0x11, true);
	memset(z, 0x11, 5000);
	put(&want, z, 5000);

	for (i = 0; i < ARRAY_SIZE(threads) + 2; i++) {
		/* then 12 MiB (a few frames in flight) and 1 MiB (none in
		 * parallel, windows up to 512 KiB) */
		int t = i < ARRAY_SIZE(threads) ? threads[i] : 64;
		uint64_t limit = i < ARRAY_SIZE(threads) ? 0 : i == ARRAY_SIZE(threads) ? 12 * MiB : MiB;

		run(&codec_zstd, b.d, b.len, t, limit, &r);
		CHECK_EQ_INT(r.rc, 0);
		CHECK_EQ_INT(r.out_len, want.len);
		CHECK(r.out_len == want.len && !memcmp(r.out, want.d, want.len));
		if (r.rc)
			printf("#   %d threads, limit %llu: %s\n", t, (unsigned long long)limit, r.msg);
		result_free(&r);
	}
	/* cut inside the big skippable frame: truncated */
	run(&codec_zstd, b.d, b.len / 2, 2, 0, &r);
	CHECK(r.rc < 0);
	CHECK(has(r.msg, "truncated"));
	result_free(&r);
	free(b.d);
	free(want.d);
	free(src);
	free(z);
}

/* Frames of 2 MiB under a limit that leaves room for only a few in
 * flight: the driver waits for the writer, the output is complete and
 * in order. */
static void zstd_parallel_budget(void)
{
	const size_t part = 2 * MiB;
	const size_t frames = 12;
	int threads[] = { 2, 64 };
	uint8_t *src = malloc(part), *z = malloc(ZSTD_compressBound(part));
	struct buf b = { 0 };
	struct result r;
	size_t i, n;

	if (!src || !z)
		abort();
	for (i = 0; i < frames; i++) {
		memset(src, (int)i, part);
		memcpy(src + i * 1000, "frame", 5);
		n = ZSTD_compress(z, ZSTD_compressBound(part), src, part, 1);
		if (ZSTD_isError(n))
			abort();
		put(&b, z, n);
	}
	for (i = 0; i < ARRAY_SIZE(threads); i++) {
		size_t k;
		bool ok = true;

		run(&codec_zstd, b.d, b.len, threads[i], 24 * MiB, &r);
		CHECK_EQ_INT(r.rc, 0);
		CHECK_EQ_INT(r.out_len, frames * part);
		for (k = 0; r.out_len == frames * part && k < frames; k++)
			ok = ok && r.out[k * part + k * 1000] == 'f' &&
			     r.out[k * part + (k ? 0 : part - 1)] == (uint8_t)k;
		CHECK(ok);
		result_free(&r);
	}
	free(b.d);
	free(src);
	free(z);
}

static int probe(const struct codec *c, const struct buf *b, uint64_t *out, int *exact)
{
	int fd = memfd_with(b->d, b->len), rc;

	*out = 0;
	*exact = -1;
	if (fd < 0)
		return -EIO;
	rc = c->content_size(fd, b->len, out, exact);
	close(fd);
	return rc;
}

static void zstd_size_probe(void)
{
	struct buf b = { 0 };
	uint64_t out;
	int exact;

	/* 2^62 bytes in a 16-byte frame, in a 100-byte file: the ratio
	 * scaled to the file overflows; saturated, never 0 */
	zstd_header(&b, 0, 1ULL << 62);
	put_le(&b, 1, 3);                       /* last raw block, 0 bytes */
	CHECK_EQ_INT(b.len, 16);
	put_zeros(&b, 84);
	CHECK_EQ_INT(probe(&codec_zstd, &b, &out, &exact), 0);
	CHECK(out == UINT64_MAX);
	CHECK_EQ_INT(exact, 0);

	/* an empty first frame, then 1 MiB: not an estimate of 0 */
	b.len = 0;
	zstd_header(&b, 0, 0);
	put_le(&b, 1, 3);
	zstd_header(&b, 20, 1 * MiB);
	zstd_rle(&b, 128 * 1024, 0, true);
	put_zeros(&b, 1000);                    /* not a frame: stop */
	CHECK_EQ_INT(probe(&codec_zstd, &b, &out, &exact), 0);
	CHECK(out >= 1 * MiB);
	CHECK_EQ_INT(exact, 0);

	/* empty frames only, then something else: unknown, not 0 */
	b.len = 0;
	zstd_header(&b, 0, 0);
	put_le(&b, 1, 3);
	put_zeros(&b, 1000);
	CHECK(probe(&codec_zstd, &b, &out, &exact) < 0);

	/* frames that span the file (a skippable one between): exact */
	b.len = 0;
	zstd_header(&b, 0, 300);
	zstd_rle(&b, 300, 1, true);
	put_le(&b, 0x184D2A5Fu, 4);
	put_le(&b, 10, 4);
	put_zeros(&b, 10);
	zstd_header(&b, 20, 1 * MiB);
	zstd_rle(&b, 128 * 1024, 0, true);
	CHECK_EQ_INT(probe(&codec_zstd, &b, &out, &exact), 0);
	CHECK_EQ_INT(out, 1 * MiB + 300);
	CHECK_EQ_INT(exact, 1);
	free(b.d);
}

/* ---- xz ---- */

static size_t varint_len(const uint8_t *p)
{
	size_t n = 1;

	while (*p++ & 0x80)
		n++;
	return n;
}

/* An xz stream of len bytes of v whose LZMA2 dictionary property is
 * dict_prop (40: 4 GiB), the block header's CRC32 fixed after the
 * change. */
static void xz_with_dict(struct buf *b, size_t len, uint8_t v, uint8_t dict_prop)
{
	lzma_options_lzma opt;
	lzma_filter f[2];
	uint8_t *src = malloc(len ? len : 1), *h;
	size_t cap = lzma_stream_buffer_bound(len), pos = 0, hsize, off;
	uint32_t crc;

	b->d = realloc(b->d, cap);
	if (!src || !b->d)
		abort();
	memset(src, v, len);
	lzma_lzma_preset(&opt, 0);
	opt.dict_size = 1 * MiB;
	f[0] = (lzma_filter){ LZMA_FILTER_LZMA2, &opt };
	f[1] = (lzma_filter){ LZMA_VLI_UNKNOWN, NULL };
	if (lzma_stream_buffer_encode(f, LZMA_CHECK_CRC32, NULL, src, len, b->d, &pos, cap) != LZMA_OK)
		abort();
	b->len = pos;
	b->cap = cap;
	/* block header after the 12-byte stream header: size, flags,
	 * [compressed size] [uncompressed size], filter id 0x21, props
	 * size 1, the dictionary byte */
	h = b->d + 12;
	hsize = ((size_t)h[0] + 1) * 4;
	off = 2;
	if (h[1] & 0x40)
		off += varint_len(h + off);
	if (h[1] & 0x80)
		off += varint_len(h + off);
	CHECK(h[off] == 0x21 && h[off + 1] == 1);
	h[off + 2] = dict_prop;
	crc = lzma_crc32(h, hsize - 4, 0);
	h[hsize - 4] = (uint8_t)crc;
	h[hsize - 3] = (uint8_t)(crc >> 8);
	h[hsize - 2] = (uint8_t)(crc >> 16);
	h[hsize - 1] = (uint8_t)(crc >> 24);
	free(src);
}

static void xz_dict_refused(void)
{
	struct buf b = { 0 };
	struct result r;
	int threads[] = { 1, 2 };
	size_t i;

	xz_with_dict(&b, 100000, 0x33, 40);
	for (i = 0; i < ARRAY_SIZE(threads); i++) {
		run(&codec_xz, b.d, b.len, threads[i], 0, &r);
		CHECK(r.rc < 0);
		CHECK(has(r.msg, "256.0 MiB"));
		CHECK(has(r.msg, "memlimit"));
		/* the single-threaded decoder says what the block needs */
		if (threads[i] == 1)
			CHECK(has(r.msg, "needs 4.0 GiB"));
		CHECK_EQ_INT(r.out_len, 0);
		result_free(&r);
	}
	free(b.d);
}

/* A 64 MiB dictionary: refused under a 32 MiB limit, decoded under
 * 128 MiB. */
static void xz_dict_raised(void)
{
	struct buf b = { 0 };
	struct result r;
	int threads[] = { 1, 2 };
	size_t i;

	xz_with_dict(&b, 100000, 0x44, 28);
	run(&codec_xz, b.d, b.len, 2, 32 * MiB, &r);
	CHECK(r.rc < 0);
	CHECK(has(r.msg, "32.0 MiB"));
	CHECK(has(r.msg, "memlimit"));
	result_free(&r);
	for (i = 0; i < ARRAY_SIZE(threads); i++) {
		run(&codec_xz, b.d, b.len, threads[i], 128 * MiB, &r);
		CHECK_EQ_INT(r.rc, 0);
		CHECK(r.out_len == 100000 && all_bytes(r.out, 100000, 0x44));
		result_free(&r);
	}
	free(b.d);
}

/* Stream padding (any multiple of four, between and after streams) is
 * skipped by the size probe; a run that is not a multiple of four is
 * no xz file. */
static void xz_size_padding(void)
{
	size_t pads[] = { 0, 4, 8, 12, 65536, 65540, 3 * MiB + 4 };
	struct buf one = { 0 }, b = { 0 };
	uint64_t out;
	int exact;
	size_t i;

	xz_with_dict(&one, 5000, 0x55, 16);
	for (i = 0; i < ARRAY_SIZE(pads); i++) {
		b.len = 0;
		put(&b, one.d, one.len);
		put_zeros(&b, pads[i]);
		put(&b, one.d, one.len);
		put_zeros(&b, pads[i]);
		CHECK_EQ_INT(probe(&codec_xz, &b, &out, &exact), 0);
		CHECK_EQ_INT(out, 10000);
		CHECK_EQ_INT(exact, 1);
		if (out != 10000)
			printf("#   padding %zu\n", pads[i]);
	}
	b.len = 0;
	put(&b, one.d, one.len);
	put_zeros(&b, 6);
	CHECK(probe(&codec_xz, &b, &out, &exact) < 0);
	free(one.d);
	free(b.d);
}

/* ---- lzop ---- */

/* The header of `lzop -1` on a 6-byte file (tests/unit/test_lzop.c). */
static const uint8_t lzop_hdr[] = {
	0x89, 0x4c, 0x5a, 0x4f, 0x00, 0x0d, 0x0a, 0x1a, 0x0a, 0x10, 0x40, 0x20,
	0xa0, 0x09, 0x40, 0x02, 0x01, 0x03, 0x00, 0x00, 0x01, 0x00, 0x00, 0x81,
	0xa4, 0x65, 0x53, 0xf1, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x68, 0x2e,
	0x74, 0x78, 0x74, 0x51, 0xb7, 0x06, 0x2a,
};

static void put_be32(struct buf *b, uint32_t v)
{
	uint8_t x[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };

	put(b, x, 4);
}

/* A block header for a 64 MiB block (the format's largest): refused
 * under a 64 MiB limit before anything is allocated for it, accepted
 * (and then truncated) under the default. */
static void lzo_block_limit(void)
{
	struct lzop_header h;
	struct buf b = { 0 };
	struct result r;

	CHECK_EQ_INT(lzop_parse_header(lzop_hdr, sizeof(lzop_hdr), &h), 0);
	CHECK_EQ_INT(h.header_len, sizeof(lzop_hdr));
	put(&b, lzop_hdr, sizeof(lzop_hdr));
	put_be32(&b, LZOP_BLOCK_MAX);
	put_be32(&b, 1000);
	put_be32(&b, 0);                        /* adler32 of the data */
	put_zeros(&b, 1000);
	run(&codec_lzo, b.d, b.len, 1, 64 * MiB, &r);
	CHECK(r.rc < 0);
	CHECK(has(r.msg, "a block of 64.0 MiB needs 128.0 MiB"));
	CHECK(has(r.msg, "memlimit"));
	result_free(&r);
	run(&codec_lzo, b.d, b.len, 1, 0, &r);
	CHECK(r.rc < 0);
	CHECK(!strstr(r.msg, "memory limit"));
	result_free(&r);
	free(b.d);
}

int main(void)
{
	RUN(mem_bound);
	RUN(zstd_window_refused);
	RUN(zstd_window_refused_parallel);
	RUN(zstd_window_raised);
	RUN(zstd_frames);
	RUN(zstd_parallel_budget);
	RUN(zstd_size_probe);
	RUN(xz_dict_refused);
	RUN(xz_dict_raised);
	RUN(xz_size_padding);
	RUN(lzo_block_limit);
	return TAP_DONE();
}
