// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lzop files with liblzo2: the header (lzop.c), then blocks of at most
 * 256 KiB, each decoded with lzo1x_decompress_safe and checked against
 * the block's adler32/crc32 checksums. A block of uncompressed length 0
 * ends the file; nothing may follow it. A block is decoded straight into
 * the output when it fits; else it goes through buffers of its size, so
 * a block may need twice its size (at most 64 MiB each, by the format).
 */
#include <errno.h>
#include <lzo/lzo1x.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lib/fdio.h"
#include "lib/units.h"
#include "codec/codec.h"
#include "format/lzop.h"

#define HDR_CAP (64u * 1024 + 512)

enum lzo_phase { PH_HDR, PH_BLKHDR, PH_DATA, PH_OUT, PH_END };

struct lzo {
	enum lzo_phase ph;
	struct lzop_header h;
	uint8_t *hbuf;           /* header bytes collected so far */
	size_t hlen;
	uint8_t bh[24];          /* block header */
	size_t bhlen, bhwant;
	uint32_t dlen, clen;
	uint8_t *cbuf;           /* compressed block collected so far */
	size_t clen_have, cbuf_cap;
	uint8_t *dbuf;           /* decoded block waiting for output room */
	size_t dpos, dend, dbuf_cap;
	uint64_t memlimit;
};

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int lzop_init(void **state, const struct codec_cfg *cfg)
{
	struct lzo *l;

	if (lzo_init() != LZO_E_OK)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->memlimit = codec_memlimit(cfg);
	l->hbuf = malloc(HDR_CAP);
	if (!l->hbuf) {
		free(l);
		return -ENOMEM;
	}
	*state = l;
	return 0;
}

/* A buffer of at least len bytes: *buf grows to the largest block seen. */
static int buf_fit(uint8_t **buf, size_t *cap, size_t len)
{
	uint8_t *nb;

	if (*cap >= len)
		return 0;
	nb = malloc(len);
	if (!nb)
		return -ENOMEM;
	free(*buf);
	*buf = nb;
	*cap = len;
	return 0;
}

static size_t take(struct codec_buf *b, uint8_t *dst, size_t want)
{
	size_t n = b->in_len < want ? b->in_len : want;

	memcpy(dst, b->in, n);
	b->in += n;
	b->in_len -= n;
	return n;
}

static int check_sums(const struct lzo *l, const uint8_t *cdata, const uint8_t *ddata,
		      char *msg, size_t msglen)
{
	const uint8_t *p = l->bh + 8;
	uint32_t f = l->h.flags;

	if (f & LZOP_F_ADLER32_D) {
		if ((uint32_t)adler32(1, ddata, l->dlen) != be32(p))
			goto bad;
		p += 4;
	}
	if (f & LZOP_F_CRC32_D) {
		if ((uint32_t)crc32(0, ddata, l->dlen) != be32(p))
			goto bad;
		p += 4;
	}
	if (l->clen < l->dlen) {
		if (f & LZOP_F_ADLER32_C) {
			if ((uint32_t)adler32(1, cdata, l->clen) != be32(p))
				goto bad;
			p += 4;
		}
		if ((f & LZOP_F_CRC32_C) && (uint32_t)crc32(0, cdata, l->clen) != be32(p))
			goto bad;
	}
	return 0;
bad:
	snprintf(msg, msglen, "block checksum mismatch");
	return -EBADMSG;
}

/* Decode the collected block straight into the output when it fits,
 * else into dbuf to be copied out as room appears. */
static int decode_block(struct lzo *l, const uint8_t *cdata, struct codec_buf *b,
			char *msg, size_t msglen)
{
	uint8_t *dst;
	lzo_uint got = l->dlen;
	bool direct = b->out_len >= l->dlen;
	int rc;

	if (direct) {
		dst = b->out;
	} else {
		if (buf_fit(&l->dbuf, &l->dbuf_cap, l->dlen) < 0)
			return -ENOMEM;
		dst = l->dbuf;
	}
	if (l->clen == l->dlen) {
		memcpy(dst, cdata, l->dlen);          /* a stored block */
	} else if (lzo1x_decompress_safe(cdata, l->clen, dst, &got, NULL) != LZO_E_OK ||
		   got != l->dlen) {
		snprintf(msg, msglen, "corrupt block");
		return -EBADMSG;
	}
	rc = check_sums(l, cdata, dst, msg, msglen);
	if (rc < 0)
		return rc;
	if (direct) {
		b->out += l->dlen;
		b->out_len -= l->dlen;
		l->ph = PH_BLKHDR;
	} else {
		l->dpos = 0;
		l->dend = l->dlen;
		l->ph = PH_OUT;
	}
	l->bhlen = 0;
	return 0;
}

static int lzo_step(void *state, struct codec_buf *b, char *msg, size_t msglen)
{
	struct lzo *l = state;
	int rc;

	while (b->in_len > 0 || l->ph == PH_OUT) {
		switch (l->ph) {
		case PH_HDR: {
			size_t before = l->hlen, n = take(b, l->hbuf + l->hlen,
							   HDR_CAP - l->hlen);

			l->hlen += n;
			rc = lzop_parse_header(l->hbuf, l->hlen, &l->h);
			if (rc == -EAGAIN && l->hlen < HDR_CAP)
				break;
			if (rc < 0) {
				snprintf(msg, msglen, "%s", rc == -EAGAIN ? "header too large" :
					 rc == -ENOTSUP ? "unsupported lzop file (method, filter or multipart)" :
					 rc == -EBADMSG ? "header checksum mismatch" : "not an lzop file");
				return rc == -ENOTSUP ? -ENOTSUP : -EBADMSG;
			}
			/* Give back what was taken beyond the header: it
			 * came from this input (the earlier part did not
			 * hold a whole header). */
			n = l->hlen - l->h.header_len;
			if (n > l->hlen - before)
				n = l->hlen - before;
			b->in -= n;
			b->in_len += n;
			l->ph = PH_BLKHDR;
			l->bhlen = 0;
			break;
		}
		case PH_BLKHDR:
			/* The end mark is a lone zero uncompressed length. */
			if (l->bhlen < 4) {
				l->bhlen += take(b, l->bh + l->bhlen, 4 - l->bhlen);
				if (l->bhlen < 4)
					break;
				l->dlen = be32(l->bh);
				if (l->dlen == 0) {
					l->ph = PH_END;
					break;
				}
			}
			if (l->bhlen < 8) {
				l->bhlen += take(b, l->bh + l->bhlen, 8 - l->bhlen);
				if (l->bhlen < 8)
					break;
				l->clen = be32(l->bh + 4);
				if (l->dlen > LZOP_BLOCK_MAX || l->clen > l->dlen || l->clen == 0) {
					snprintf(msg, msglen, "corrupt block header");
					return -EBADMSG;
				}
				/* Checked before anything is allocated for it. */
				if (2 * (uint64_t)l->dlen > l->memlimit) {
					char s1[16], s2[16], s3[16];

					snprintf(msg, msglen, "a block of %s needs %s of buffers, above the "
						 "%s memory limit (raise it with a manifest memlimit)",
						 fmt_size(l->dlen, s1, sizeof(s1)),
						 fmt_size(2 * (uint64_t)l->dlen, s2, sizeof(s2)),
						 fmt_size(l->memlimit, s3, sizeof(s3)));
					return -ENOMEM;
				}
				l->bhwant = lzop_block_header_len(l->h.flags, l->dlen, l->clen);
			}
			l->bhlen += take(b, l->bh + l->bhlen, l->bhwant - l->bhlen);
			if (l->bhlen < l->bhwant)
				break;
			l->clen_have = 0;
			l->ph = PH_DATA;
			break;
		case PH_DATA:
			/* Fast path: the whole block is in the input. */
			if (l->clen_have == 0 && b->in_len >= l->clen) {
				const uint8_t *cdata = b->in;

				b->in += l->clen;
				b->in_len -= l->clen;
				rc = decode_block(l, cdata, b, msg, msglen);
				if (rc < 0)
					return rc;
				break;
			}
			if (buf_fit(&l->cbuf, &l->cbuf_cap, l->clen) < 0)
				return -ENOMEM;
			l->clen_have += take(b, l->cbuf + l->clen_have, l->clen - l->clen_have);
			if (l->clen_have < l->clen)
				break;
			rc = decode_block(l, l->cbuf, b, msg, msglen);
			if (rc < 0)
				return rc;
			break;
		case PH_OUT: {
			size_t n = l->dend - l->dpos;

			if (n > b->out_len)
				n = b->out_len;
			memcpy(b->out, l->dbuf + l->dpos, n);
			b->out += n;
			b->out_len -= n;
			l->dpos += n;
			if (l->dpos < l->dend)
				return 0;        /* output full */
			l->ph = PH_BLKHDR;
			break;
		}
		case PH_END:
			snprintf(msg, msglen, "trailing garbage after the compressed stream");
			return -EBADMSG;
		}
		if (b->out_len == 0 && l->ph == PH_DATA && b->in_len >= l->clen)
			return 0;
	}
	return 0;
}

static int lzo_finish(void *state, struct codec_buf *b, char *msg, size_t msglen)
{
	struct lzo *l = state;

	if (l->ph == PH_OUT) {
		int rc = lzo_step(state, b, msg, msglen);

		if (rc < 0)
			return rc;
		if (l->ph == PH_OUT)
			return -EAGAIN;
	}
	if (l->ph == PH_END)
		return 0;
	snprintf(msg, msglen, l->ph == PH_HDR && l->hlen == 0 ? "empty input, not an lzop file" :
		 "truncated input");
	return -EBADMSG;
}

static void lzo_end(void *state)
{
	struct lzo *l = state;

	free(l->hbuf);
	free(l->cbuf);
	free(l->dbuf);
	free(l);
}

/* The header buffer and a compressed and a decoded block buffer. */
static uint64_t lzo_mem_bound(const struct codec_cfg *cfg)
{
	uint64_t blocks = 2 * (uint64_t)LZOP_BLOCK_MAX, m = codec_memlimit(cfg);

	return (m < blocks ? m : blocks) + HDR_CAP + sizeof(struct lzo);
}

/* The first block's size (lzop writes 256 KiB blocks): the buffers are
 * made for it, and grow only if a later block is larger. */
static uint64_t lzo_mem_need(int fd, uint64_t file_size, const struct codec_cfg *cfg)
{
	uint8_t b[HDR_CAP + 4];
	struct lzop_header h;
	ssize_t n = pread_full(fd, b, sizeof(b), 0);
	uint32_t dlen;

	(void)file_size;
	if (n < 0 || lzop_parse_header(b, (size_t)n, &h) < 0 || h.header_len + 4 > (size_t)n)
		return lzo_mem_bound(cfg);
	dlen = (uint32_t)b[h.header_len] << 24 | (uint32_t)b[h.header_len + 1] << 16 |
	       (uint32_t)b[h.header_len + 2] << 8 | b[h.header_len + 3];
	if (dlen > LZOP_BLOCK_MAX)
		return lzo_mem_bound(cfg);
	return 2 * (uint64_t)dlen + HDR_CAP + sizeof(struct lzo);
}

const struct codec codec_lzo = {
	.name = "lzo", CODEC_MAGIC(lzop_magic),
	.stream = { lzop_init, lzo_step, lzo_finish, lzo_end },
	.mem_bound = lzo_mem_bound,
	.mem_need = lzo_mem_need,
};
