// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The codec table, detection by magic bytes, and the driver that runs a
 * stream codec over the pipeline.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/base.h"
#include "codec/codec.h"
#include "codec/pipe.h"

static const struct codec *const codecs[] = {
	&codec_zstd, &codec_xz, &codec_lzo, &codec_gzip, &codec_none,
};

const struct codec *codec_by_name(const char *name)
{
	const char *canon = codec_canonical(name);
	size_t i;

	for (i = 0; canon && i < ARRAY_SIZE(codecs); i++)
		if (!strcmp(codecs[i]->name, canon))
			return codecs[i];
	return NULL;
}

const struct codec *codec_detect(const uint8_t *buf, size_t len)
{
	size_t i;

	/* A zstd skippable frame (0x184D2A5?, little-endian) starts pzstd
	 * output. */
	if (len >= 4 && (buf[0] & 0xf0) == 0x50 && buf[1] == 0x2a && buf[2] == 0x4d && buf[3] == 0x18)
		return &codec_zstd;

	for (i = 0; i < ARRAY_SIZE(codecs); i++) {
		const struct codec *c = codecs[i];

		if (c->magic_len && len >= c->magic_len &&
		    !memcmp(buf, c->magic, c->magic_len))
			return c;
	}
	return &codec_none;
}

uint64_t codec_memlimit(const struct codec_cfg *cfg)
{
	return cfg && cfg->memlimit ? cfg->memlimit : CODEC_MEMLIMIT_DEFAULT;
}

uint64_t codec_mem_bound(const struct codec *c, const struct codec_cfg *cfg)
{
	uint64_t max = 0;
	size_t i;

	if (c)
		return c->mem_bound ? c->mem_bound(cfg) : 0;
	for (i = 0; i < ARRAY_SIZE(codecs); i++) {
		uint64_t b = codec_mem_bound(codecs[i], cfg);

		if (b > max)
			max = b;
	}
	return max;
}

uint64_t codec_mem_need(const struct codec *c, int fd, uint64_t file_size,
			const struct codec_cfg *cfg)
{
	uint64_t bound = codec_mem_bound(c, cfg), need;

	if (!c || !c->mem_need || fd < 0)
		return bound;
	need = c->mem_need(fd, file_size, cfg);
	return need < bound ? need : bound;
}

/* "none": input chunks go straight to the writer, no copy. */
static int none_drive(struct pipe *p, struct chunk *first, const struct codec_cfg *cfg)
{
	struct chunk *c = first;

	(void)cfg;
	for (;;) {
		bool eof = c->eof;

		pipe_pass_through(p, c);
		if (eof)
			return 0;
		c = pipe_get_input(p);
		if (!c)
			return pipe_error(p);
	}
}

const struct codec codec_none = {
	.name = "none",
	.drive = none_drive,
};

static int emit_full(struct pipe *p, struct chunk **out, struct codec_buf *b)
{
	struct chunk *o = *out;

	o->len = o->cap - b->out_len;
	pipe_pass_through(p, o);
	o = pipe_get_outbuf(p);
	*out = o;
	if (!o)
		return pipe_error(p);
	b->out = o->data;
	b->out_len = o->cap;
	return 0;
}

int codec_drive(const struct codec *c, struct pipe *p, struct chunk *first,
		const struct codec_cfg *cfg)
{
	struct codec_buf b;
	struct chunk *in = first, *out = NULL;
	void *st = NULL;
	char msg[160] = "";
	int rc;

	if (c->drive)
		return c->drive(p, first, cfg);
	rc = c->stream.init(&st, cfg);
	if (rc < 0) {
		pipe_put_input(p, in);
		pipe_fail(p, rc, PS_DECODE, "%s: cannot initialise the decoder", c->name);
		return rc;
	}
	out = pipe_get_outbuf(p);
	if (!out) {
		rc = pipe_error(p);
		goto fail_in;
	}
	b.out = out->data;
	b.out_len = out->cap;
	for (;;) {
		b.in = in->data;
		b.in_len = in->len;
		while (b.in_len > 0) {
			size_t il, ol;

			if (b.out_len == 0 && (rc = emit_full(p, &out, &b)) < 0)
				goto fail_in;
			il = b.in_len;
			ol = b.out_len;
			rc = c->stream.step(st, &b, msg, sizeof(msg));
			if (rc < 0)
				goto fail_in;
			if (il == b.in_len && ol == b.out_len) {
				rc = -EPROTO;
				snprintf(msg, sizeof(msg), "decoder made no progress");
				goto fail_in;
			}
		}
		rc = pipe_next_input(p, &in);
		if (rc < 0)
			goto fail;
		if (rc == 0)
			break;
	}
	b.in = NULL;
	b.in_len = 0;
	for (;;) {
		if (b.out_len == 0 && (rc = emit_full(p, &out, &b)) < 0)
			goto fail;
		rc = c->stream.finish(st, &b, msg, sizeof(msg));
		if (rc != -EAGAIN)
			break;
	}
	if (rc < 0)
		goto fail;
	out->len = out->cap - b.out_len;
	pipe_pass_through(p, out);
	c->stream.end(st);
	return 0;

fail_in:
	if (in)
		pipe_put_input(p, in);
fail:
	if (out)
		pipe_put_input(p, out);
	if (st)
		c->stream.end(st);
	pipe_fail(p, rc, PS_DECODE, "%s: %s", c->name, msg[0] ? msg : strerror(-rc));
	return rc;
}
