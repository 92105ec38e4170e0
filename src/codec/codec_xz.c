// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xz with liblzma. Files made with `xz -T0` have several blocks, which
 * the multi-threaded decoder (liblzma >= 5.4) decodes in parallel.
 * Concatenated streams and stream padding are accepted, as xz -dc does.
 * liblzma counts its memory: the decoder gets the codec memlimit, checked
 * against each block header before the block's dictionary is allocated.
 */
#include <errno.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base.h"
#include "lib/fdio.h"
#include "lib/proc.h"
#include "lib/units.h"
#include "codec/codec.h"

struct xz {
	lzma_stream s;
	uint64_t memlimit;
};

/* The dictionary (8 MiB at -6, per thread) is read at random offsets:
 * backed by huge pages it costs far fewer TLB misses. */
static void *xz_alloc(void *opaque, size_t nmemb, size_t size)
{
	(void)opaque;
	if (size && nmemb > SIZE_MAX / size)
		return NULL;
	return alloc_big(nmemb * size);
}

static void xz_free(void *opaque, void *ptr)
{
	(void)opaque;
	free(ptr);
}

static const lzma_allocator xz_allocator = { xz_alloc, xz_free, NULL };

static int xz_init(void **state, const struct codec_cfg *cfg)
{
	struct xz *x = calloc(1, sizeof(*x));
	uint32_t flags = LZMA_CONCATENATED;
	lzma_ret r;

	if (!x)
		return -ENOMEM;
	x->s = (lzma_stream)LZMA_STREAM_INIT;
	x->s.allocator = &xz_allocator;
	x->memlimit = codec_memlimit(cfg);
	if (cfg->threads > 1) {
		lzma_mt mt;

		memset(&mt, 0, sizeof(mt));
		mt.flags = flags;
		/* liblzma refuses more than 16384 */
		mt.threads = (uint32_t)(cfg->threads < 16384 ? cfg->threads : 16384);
		/* Threads are added while the total (dictionaries, block
		 * buffers) stays below memlimit_threading; a block that does
		 * not fit even one thread under memlimit_stop is refused. */
		mt.memlimit_threading = x->memlimit;
		mt.memlimit_stop = x->memlimit;
		r = lzma_stream_decoder_mt(&x->s, &mt);
	} else {
		r = lzma_stream_decoder(&x->s, x->memlimit, flags);
	}
	if (r != LZMA_OK) {
		free(x);
		return r == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
	}
	*state = x;
	return 0;
}

static int xz_err(const struct xz *x, lzma_ret r, char *msg, size_t msglen)
{
	const char *what;

	switch (r) {
	case LZMA_MEM_ERROR: return -ENOMEM;
	case LZMA_FORMAT_ERROR: what = "not an xz stream, or trailing garbage"; break;
	case LZMA_OPTIONS_ERROR: what = "unsupported options"; break;
	case LZMA_DATA_ERROR: what = "corrupt data (or trailing garbage)"; break;
	case LZMA_BUF_ERROR: what = "truncated input (or trailing garbage)"; break;
	case LZMA_MEMLIMIT_ERROR: {
		/* The single-threaded decoder reports what the block needs;
		 * the threaded one only what it holds. */
		uint64_t need = lzma_memusage(&x->s);
		char a[16], b[16];

		if (need > x->memlimit)
			snprintf(msg, msglen, "the stream needs %s of memory, above the %s limit "
				 "(raise it with a manifest memlimit)", fmt_size(need, a, sizeof(a)),
				 fmt_size(x->memlimit, b, sizeof(b)));
		else
			snprintf(msg, msglen, "the stream needs more than the %s memory limit "
				 "(raise it with a manifest memlimit)",
				 fmt_size(x->memlimit, b, sizeof(b)));
		return -ENOMEM;
	}
	default: what = "decoder error"; break;
	}
	snprintf(msg, msglen, "%s", what);
	return -EBADMSG;
}

static int xz_code(struct xz *x, struct codec_buf *b, lzma_action a, char *msg, size_t msglen)
{
	lzma_ret r;

	x->s.next_in = b->in;
	x->s.avail_in = b->in_len;
	x->s.next_out = b->out;
	x->s.avail_out = b->out_len;
	r = lzma_code(&x->s, a);
	b->in = x->s.next_in;
	b->in_len = x->s.avail_in;
	b->out = x->s.next_out;
	b->out_len = x->s.avail_out;
	if (r == LZMA_OK)
		return a == LZMA_FINISH ? -EAGAIN : 0;
	if (r == LZMA_STREAM_END)
		return 0;
	if (r == LZMA_BUF_ERROR && a == LZMA_RUN)
		return 0;
	return xz_err(x, r, msg, msglen);
}

static int xz_step(void *state, struct codec_buf *b, char *msg, size_t msglen)
{
	return xz_code(state, b, LZMA_RUN, msg, msglen);
}

static int xz_finish(void *state, struct codec_buf *b, char *msg, size_t msglen)
{
	struct xz *x = state;
	size_t before = b->out_len;
	int rc = xz_code(x, b, LZMA_FINISH, msg, msglen);

	/* OK without any output while room is left: no progress is
	 * possible, the input ended inside a stream. */
	if (rc == -EAGAIN && b->out_len > 0 && b->out_len == before)
		return xz_err(x, LZMA_BUF_ERROR, msg, msglen);
	return rc;
}

static void xz_end(void *state)
{
	struct xz *x = state;

	lzma_end(&x->s);
	free(x);
}

/* Stream padding (zero bytes, a multiple of four) is read backwards in
 * blocks: one read per 64 KiB, not per 4 bytes. More than PAD_MAX of it
 * is not an xz file worth an estimate. */
#define PAD_BLOCK (64 * 1024)
#define PAD_MAX (64 * MiB)

/* The start of the zero bytes that end at pos, or -errno. */
static int64_t padding_start(int fd, uint64_t pos, uint8_t **buf)
{
	uint64_t end = pos;

	if (!*buf && !(*buf = malloc(PAD_BLOCK)))
		return -ENOMEM;
	while (pos > 0) {
		size_t n = pos < PAD_BLOCK ? (size_t)pos : PAD_BLOCK, i = n;

		if (pread_full(fd, *buf, n, (off_t)(pos - n)) != (ssize_t)n)
			return -EIO;
		while (i > 0 && (*buf)[i - 1] == 0)
			i--;
		pos -= n - i;
		if (i > 0)
			break;
		if (end - pos > PAD_MAX)
			return -EINVAL;
	}
	return (int64_t)pos;
}

/* Walk the streams backwards from the end: footer, index, header. Only
 * the last few KiB of each stream are read. */
static int xz_content_size(int fd, uint64_t file_size, uint64_t *out, int *exact)
{
	uint64_t pos = file_size, total = 0;
	uint8_t *pad = NULL;
	int streams = 0, rc = -EINVAL;

	while (pos > 0) {
		uint8_t foot[LZMA_STREAM_HEADER_SIZE], *ibuf;
		lzma_stream_flags sf;
		lzma_index *idx = NULL;
		uint64_t memlimit = 64 * MiB, ssize;
		size_t inpos = 0;
		lzma_ret r;

		if (pos < 2 * LZMA_STREAM_HEADER_SIZE)
			goto out;
		if (pread_full(fd, foot, sizeof(foot), (off_t)(pos - sizeof(foot))) != sizeof(foot)) {
			rc = -EIO;
			goto out;
		}
		/* A footer ends with "YZ": zero bytes there are padding. */
		if (!memcmp(foot + sizeof(foot) - 4, "\0\0\0\0", 4)) {
			int64_t start = padding_start(fd, pos, &pad);

			if (start < 0) {
				rc = (int)start;
				goto out;
			}
			if ((pos - (uint64_t)start) % 4)
				goto out;
			pos = (uint64_t)start;
			continue;
		}
		if (lzma_stream_footer_decode(&sf, foot) != LZMA_OK)
			goto out;
		if (sf.backward_size > 64 * MiB || sf.backward_size + sizeof(foot) > pos)
			goto out;
		ibuf = malloc(sf.backward_size);
		if (!ibuf) {
			rc = -ENOMEM;
			goto out;
		}
		if (pread_full(fd, ibuf, sf.backward_size,
			       (off_t)(pos - sizeof(foot) - sf.backward_size)) != (ssize_t)sf.backward_size) {
			free(ibuf);
			rc = -EIO;
			goto out;
		}
		r = lzma_index_buffer_decode(&idx, &memlimit, NULL, ibuf, &inpos, sf.backward_size);
		free(ibuf);
		if (r != LZMA_OK)
			goto out;
		total += lzma_index_uncompressed_size(idx);
		ssize = lzma_index_stream_size(idx);
		lzma_index_end(idx, NULL);
		if (ssize > pos)
			goto out;
		pos -= ssize;
		if (++streams > 1024)
			goto out;
	}
	if (!streams)
		goto out;
	*out = total;
	*exact = 1;
	rc = 0;
out:
	free(pad);
	return rc;
}

/* liblzma keeps itself within the limit (xz_init). */
static uint64_t xz_mem_bound(const struct codec_cfg *cfg)
{
	return codec_memlimit(cfg);
}

/* The first block's header: its filters (the dictionary) and, where the
 * encoder wrote them (xz -T), its sizes. Each decoder thread holds a
 * dictionary and a block in and out. */
static uint64_t xz_mem_need(int fd, uint64_t file_size, const struct codec_cfg *cfg)
{
	uint8_t b[LZMA_BLOCK_HEADER_SIZE_MAX];
	lzma_filter filters[LZMA_FILTERS_MAX + 1];
	lzma_block block;
	uint64_t per, dec, threads = cfg->threads > 1 ? (uint64_t)cfg->threads : 1;
	size_t i;

	(void)file_size;
	if (pread_full(fd, b, sizeof(b), LZMA_STREAM_HEADER_SIZE) < 8 || b[0] == 0)
		return xz_mem_bound(cfg);
	memset(&block, 0, sizeof(block));
	block.version = 1;
	block.check = LZMA_CHECK_CRC64;  /* the header's length is what counts */
	block.filters = filters;
	block.header_size = lzma_block_header_size_decode(b[0]);
	if (block.header_size > sizeof(b) ||
	    lzma_block_header_decode(&block, NULL, b) != LZMA_OK)
		return xz_mem_bound(cfg);
	dec = lzma_raw_decoder_memusage(filters);
	for (i = 0; filters[i].id != LZMA_VLI_UNKNOWN; i++)
		free(filters[i].options);
	if (dec == UINT64_MAX)
		return xz_mem_bound(cfg);
	if (threads == 1 || block.uncompressed_size == LZMA_VLI_UNKNOWN ||
	    block.compressed_size == LZMA_VLI_UNKNOWN)
		return dec;
	per = dec + block.uncompressed_size + block.compressed_size;
	return threads * per;
}

static const uint8_t xz_magic[] = { 0xfd, '7', 'z', 'X', 'Z', 0x00 };

const struct codec codec_xz = {
	.name = "xz", CODEC_MAGIC(xz_magic),
	.stream = { xz_init, xz_step, xz_finish, xz_end },
	.content_size = xz_content_size,
	.mem_bound = xz_mem_bound,
	.mem_need = xz_mem_need,
};
