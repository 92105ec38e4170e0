// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The lzop file header. Layout as lzop 1.0x writes it (big-endian):
 *   magic[9] version:16 lib_version:16 [version_needed:16] method:8
 *   [level:8] flags:32 [filter:32] mode:32 mtime_low:32 [mtime_high:32]
 *   name_len:8 name[name_len] header_checksum:32
 *   [extra_len:32 extra[extra_len] extra_checksum:32]
 * Fields in [] depend on the version (>= 0x0940) or on a flag. The header
 * checksum is adler32 (crc32 with F_H_CRC32) of everything after the magic.
 */
#include <errno.h>
#include <string.h>
#include <zlib.h>

#include "format/lzop.h"

const unsigned char lzop_magic[LZOP_MAGIC_LEN] = {
	0x89, 0x4c, 0x5a, 0x4f, 0x00, 0x0d, 0x0a, 0x1a, 0x0a,
};

#define EXTRA_MAX (64u * 1024)

struct rd {
	const uint8_t *buf;
	size_t len, pos;
};

static int get(struct rd *r, size_t n, uint32_t *v)
{
	size_t i;

	if (r->len - r->pos < n)
		return -EAGAIN;
	*v = 0;
	for (i = 0; i < n; i++)
		*v = *v << 8 | r->buf[r->pos + i];
	r->pos += n;
	return 0;
}

#define GET(r, n, v) do { int _rc = get(r, n, v); if (_rc) return _rc; } while (0)

int lzop_parse_header(const uint8_t *buf, size_t len, struct lzop_header *h)
{
	struct rd r = { buf, len, 0 };
	uint32_t v, sum, name_len, want;
	size_t cover;

	memset(h, 0, sizeof(*h));
	if (len < LZOP_MAGIC_LEN)
		return memcmp(buf, lzop_magic, len) ? -EINVAL : -EAGAIN;
	if (memcmp(buf, lzop_magic, LZOP_MAGIC_LEN))
		return -EINVAL;
	r.pos = LZOP_MAGIC_LEN;
	GET(&r, 2, &v);
	h->version = (uint16_t)v;
	GET(&r, 2, &v);
	h->lib_version = (uint16_t)v;
	if (h->version < 0x0900)
		return -EINVAL;
	if (h->version >= 0x0940) {
		GET(&r, 2, &v);
		h->version_needed = (uint16_t)v;
		/* lzop refuses files that need a newer lzop than 1.04 too. */
		if (h->version_needed > 0x1040 || h->version_needed < 0x0900)
			return -ENOTSUP;
	}
	GET(&r, 1, &v);
	h->method = (uint8_t)v;
	/* 1: LZO1X-1, 2: LZO1X-1(15), 3: LZO1X-999; all decode as LZO1X. */
	if (h->method < 1 || h->method > 3)
		return -ENOTSUP;
	if (h->version >= 0x0940) {
		GET(&r, 1, &v);
		h->level = (uint8_t)v;
	}
	GET(&r, 4, &h->flags);
	if (h->flags & LZOP_F_H_FILTER)
		return -ENOTSUP;
	if (h->flags & LZOP_F_MULTIPART)
		return -ENOTSUP;
	GET(&r, 4, &h->mode);
	GET(&r, 4, &v);          /* mtime_low */
	if (h->version >= 0x0940)
		GET(&r, 4, &v);  /* mtime_high */
	GET(&r, 1, &name_len);
	if (r.len - r.pos < name_len)
		return -EAGAIN;
	r.pos += name_len;
	cover = r.pos - LZOP_MAGIC_LEN;
	GET(&r, 4, &want);
	if (h->flags & LZOP_F_H_CRC32)
		sum = (uint32_t)crc32(0, buf + LZOP_MAGIC_LEN, (uInt)cover);
	else
		sum = (uint32_t)adler32(1, buf + LZOP_MAGIC_LEN, (uInt)cover);
	if (sum != want)
		return -EBADMSG;
	if (h->flags & LZOP_F_H_EXTRA) {
		uint32_t elen;

		GET(&r, 4, &elen);
		if (elen > EXTRA_MAX)
			return -ENOTSUP;
		if (r.len - r.pos < (size_t)elen + 4)
			return -EAGAIN;
		r.pos += (size_t)elen + 4;   /* extra data and its checksum */
	}
	h->header_len = r.pos;
	return 0;
}

size_t lzop_block_header_len(uint32_t flags, uint32_t dlen, uint32_t clen)
{
	size_t n = 8;

	if (flags & LZOP_F_ADLER32_D)
		n += 4;
	if (flags & LZOP_F_CRC32_D)
		n += 4;
	/* Checksums of the compressed data only for compressed blocks. */
	if (clen < dlen) {
		if (flags & LZOP_F_ADLER32_C)
			n += 4;
		if (flags & LZOP_F_CRC32_C)
			n += 4;
	}
	return n;
}
