// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xz with liblzma. Files made with `xz -T0` have several blocks, which
 * the multi-threaded decoder (liblzma >= 5.4) decodes in parallel.
 * Concatenated streams and stream padding are accepted, as xz -dc does.
 */
#include <errno.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ramboot.h"
#include "codec.h"

struct xz {
	lzma_stream s;
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
	if (cfg->threads > 1) {
		lzma_mt mt;

		memset(&mt, 0, sizeof(mt));
		mt.flags = flags;
		mt.threads = (uint32_t)cfg->threads;
		/* Above this the decoder goes single-threaded instead of
		 * failing; memlimit_stop is where it gives up. */
		mt.memlimit_threading = cfg->memlimit ? cfg->memlimit : 256 * MiB;
		mt.memlimit_stop = UINT64_MAX;
		r = lzma_stream_decoder_mt(&x->s, &mt);
	} else {
		r = lzma_stream_decoder(&x->s, UINT64_MAX, flags);
	}
	if (r != LZMA_OK) {
		free(x);
		return r == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
	}
	*state = x;
	return 0;
}

static int xz_err(lzma_ret r, char *msg, size_t msglen)
{
	const char *what;

	switch (r) {
	case LZMA_MEM_ERROR: return -ENOMEM;
	case LZMA_FORMAT_ERROR: what = "not an xz stream, or trailing garbage"; break;
	case LZMA_OPTIONS_ERROR: what = "unsupported options"; break;
	case LZMA_DATA_ERROR: what = "corrupt data (or trailing garbage)"; break;
	case LZMA_BUF_ERROR: what = "truncated input (or trailing garbage)"; break;
	case LZMA_MEMLIMIT_ERROR: what = "memory limit reached"; break;
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
	return xz_err(r, msg, msglen);
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
		return xz_err(LZMA_BUF_ERROR, msg, msglen);
	return rc;
}

static void xz_end(void *state)
{
	struct xz *x = state;

	lzma_end(&x->s);
	free(x);
}

/* Walk the streams backwards from the end: footer, index, header. Only
 * the last few KiB of each stream are read. */
static int xz_content_size(int fd, uint64_t file_size, uint64_t *out, int *exact)
{
	uint64_t pos = file_size, total = 0;
	int streams = 0;

	while (pos > 0) {
		uint8_t foot[LZMA_STREAM_HEADER_SIZE], *ibuf;
		lzma_stream_flags sf;
		lzma_index *idx = NULL;
		uint64_t memlimit = 64 * MiB, ssize;
		size_t inpos = 0;
		lzma_ret r;

		if (pos < 2 * LZMA_STREAM_HEADER_SIZE)
			return -EINVAL;
		if (pread_full(fd, foot, sizeof(foot), (off_t)(pos - sizeof(foot))) != sizeof(foot))
			return -EIO;
		/* Stream padding: groups of four zero bytes. */
		if (!memcmp(foot, "\0\0\0\0", 4) && !memcmp(foot + 8, "\0\0\0\0", 4)) {
			pos -= 4;
			continue;
		}
		if (lzma_stream_footer_decode(&sf, foot) != LZMA_OK)
			return -EINVAL;
		if (sf.backward_size > 64 * MiB || sf.backward_size + sizeof(foot) > pos)
			return -EINVAL;
		ibuf = malloc(sf.backward_size);
		if (!ibuf)
			return -ENOMEM;
		if (pread_full(fd, ibuf, sf.backward_size,
			       (off_t)(pos - sizeof(foot) - sf.backward_size)) != (ssize_t)sf.backward_size) {
			free(ibuf);
			return -EIO;
		}
		r = lzma_index_buffer_decode(&idx, &memlimit, NULL, ibuf, &inpos, sf.backward_size);
		free(ibuf);
		if (r != LZMA_OK)
			return -EINVAL;
		total += lzma_index_uncompressed_size(idx);
		ssize = lzma_index_stream_size(idx);
		lzma_index_end(idx, NULL);
		if (ssize > pos)
			return -EINVAL;
		pos -= ssize;
		if (++streams > 1024)
			return -EINVAL;
	}
	*out = total;
	*exact = 1;
	return 0;
}

static const uint8_t xz_magic[] = { 0xfd, '7', 'z', 'X', 'Z', 0x00 };

const struct codec codec_xz = {
	.name = "xz",
	.magic = xz_magic,
	.magic_len = sizeof(xz_magic),
	.init = xz_init,
	.step = xz_step,
	.finish = xz_finish,
	.end = xz_end,
	.content_size = xz_content_size,
};
