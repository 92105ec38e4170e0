// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * gzip (RFC 1952) with zlib. Several members in a row are one stream, as
 * gzip -dc reads them; anything else after the last member is an error.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "lib/base.h"
#include "lib/fdio.h"
#include "codec/codec.h"

struct gz {
	z_stream z;
	bool at_end;             /* the last member ended exactly here */
	bool members;            /* at least one member ended */
};

static int gz_init(void **state, const struct codec_cfg *cfg)
{
	struct gz *g = calloc(1, sizeof(*g));

	(void)cfg;
	if (!g)
		return -ENOMEM;
	/* 16 + MAX_WBITS: gzip wrapper only, no zlib or raw deflate. */
	if (inflateInit2(&g->z, 16 + MAX_WBITS) != Z_OK) {
		free(g);
		return -ENOMEM;
	}
	*state = g;
	return 0;
}

static int gz_step(void *state, struct codec_buf *b, char *msg, size_t msglen)
{
	struct gz *g = state;
	int zr;

	if (g->at_end) {
		/* Another member must start with the gzip magic. */
		if (b->in[0] != 0x1f || (b->in_len > 1 && b->in[1] != 0x8b)) {
			snprintf(msg, msglen, "trailing garbage after the compressed stream");
			return -EBADMSG;
		}
		inflateReset(&g->z);
		g->at_end = false;
	}
	g->z.next_in = (Bytef *)(uintptr_t)b->in;
	g->z.avail_in = (uInt)(b->in_len > UINT32_MAX ? UINT32_MAX : b->in_len);
	g->z.next_out = b->out;
	g->z.avail_out = (uInt)(b->out_len > UINT32_MAX ? UINT32_MAX : b->out_len);
	zr = inflate(&g->z, Z_NO_FLUSH);
	b->in_len -= (size_t)(g->z.next_in - b->in);
	b->in = g->z.next_in;
	b->out_len -= (size_t)(g->z.next_out - b->out);
	b->out = g->z.next_out;
	switch (zr) {
	case Z_OK:
		return 0;
	case Z_BUF_ERROR:       /* no progress possible: needs more input */
		return 0;
	case Z_STREAM_END:
		g->at_end = true;
		g->members = true;
		return 0;
	case Z_MEM_ERROR:
		return -ENOMEM;
	default:
		snprintf(msg, msglen, "%s", g->z.msg ? g->z.msg : "corrupt data");
		return -EBADMSG;
	}
}

static int gz_finish(void *state, struct codec_buf *b, char *msg, size_t msglen)
{
	struct gz *g = state;

	(void)b;
	if (g->at_end)
		return 0;
	snprintf(msg, msglen, g->members || g->z.total_in ? "truncated input" :
		 "empty input, not a gzip stream");
	return -EBADMSG;
}

static void gz_end(void *state)
{
	struct gz *g = state;

	inflateEnd(&g->z);
	free(g);
}

/* inflate's state (7 KiB) and its 32 KiB window; the header's optional
 * fields (name, comment, extra) are skipped, never stored. */
static uint64_t gz_mem_bound(const struct codec_cfg *cfg)
{
	(void)cfg;
	return 64 * KiB;
}

/* ISIZE, the last 4 bytes, is the size modulo 2^32 of the last member
 * only: good enough for an estimate, never exact. */
static int gz_content_size(int fd, uint64_t file_size, uint64_t *out, int *exact)
{
	uint8_t t[4];
	uint64_t v;

	if (file_size < 18 || pread_full(fd, t, 4, (off_t)file_size - 4) != 4)
		return -EINVAL;
	v = (uint64_t)t[0] | (uint64_t)t[1] << 8 | (uint64_t)t[2] << 16 | (uint64_t)t[3] << 24;
	/* stored deflate blocks cost 5 bytes in 64K: output >= input - 1/64 */
	while (v + file_size / 64 + 1024 < file_size)
		v += 1ULL << 32;
	*out = v;
	*exact = 0;
	return 0;
}

static const uint8_t gz_magic[] = { 0x1f, 0x8b, 0x08 };

const struct codec codec_gzip = {
	.name = "gzip", CODEC_MAGIC(gz_magic),
	.stream = { gz_init, gz_step, gz_finish, gz_end },
	.content_size = gz_content_size,
	.mem_bound = gz_mem_bound,
};
