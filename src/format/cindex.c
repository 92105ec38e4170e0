// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The chunk index of an image: parse, format, load, build. See cindex.h
 * for the format, cdc.h for the chunker.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/hex.h"
#include "lib/msg.h"
#include "lib/sha256.h"
#include "format/cdc.h"
#include "format/cindex.h"
#include "format/squashfs.h"

/* The shortest chunk line: "chunk 0 1 " + hash + LF. */
#define CINDEX_LINE_MIN (5 + 1 + 1 + 1 + 1 + 1 + 64 + 1)

struct cursor {
	const char *p, *end;
	unsigned long line;
};

/* The literal word w, then one space (sep ' ') or the end of the line
 * (sep '\n'). */
static bool take_word(struct cursor *c, const char *w, char sep)
{
	size_t n = strlen(w);

	if ((size_t)(c->end - c->p) < n + 1 || memcmp(c->p, w, n) || c->p[n] != sep)
		return false;
	c->p += n + 1;
	return true;
}

/* A decimal number without sign or leading zero, at most max, then sep. */
static bool take_u64(struct cursor *c, uint64_t max, char sep, uint64_t *out)
{
	const char *p = c->p;
	uint64_t v = 0;

	if (p == c->end || *p < '0' || *p > '9')
		return false;
	if (*p == '0' && p + 1 < c->end && p[1] >= '0' && p[1] <= '9')
		return false;
	for (; p < c->end && *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (p == c->end || *p != sep)
		return false;
	c->p = p + 1;
	*out = v;
	return true;
}

/* 64 lower-case hex digits into 32 bytes, then LF. */
static bool take_sha256(struct cursor *c, uint8_t out[32])
{
	int i;

	if (c->end - c->p < 65 || c->p[64] != '\n')
		return false;
	for (i = 0; i < 64; i++)
		if (hex_digit(c->p[i]) < 0 || (c->p[i] >= 'A' && c->p[i] <= 'F'))
			return false;
	if (hex_decode(c->p, 32, out) < 0)
		return false;
	c->p += 65;
	return true;
}

/* The chunker's name: [a-z0-9-], 1 to CINDEX_NAME_MAX of them, a space. */
static bool take_name(struct cursor *c, char out[CINDEX_NAME_MAX + 1])
{
	size_t n = 0;

	while (c->p + n < c->end && n <= CINDEX_NAME_MAX &&
	       ((c->p[n] >= 'a' && c->p[n] <= 'z') || (c->p[n] >= '0' && c->p[n] <= '9') ||
		c->p[n] == '-'))
		n++;
	if (!n || n > CINDEX_NAME_MAX || c->p + n == c->end || c->p[n] != ' ')
		return false;
	memcpy(out, c->p, n);
	out[n] = '\0';
	c->p += n + 1;
	return true;
}

static int parse_header(struct cursor *c, struct cindex *ci, uint64_t *count, char *err,
			size_t errlen)
{
	uint64_t mn, avg, mx, max_n;

	c->line = 1;
	if (!take_word(c, CINDEX_MAGIC, '\n'))
		return rb_errfmt(err, errlen, -EINVAL, "line 1: not a chunk index (\"%s\")",
				 CINDEX_MAGIC);
	c->line = 2;
	if (!take_word(c, "chunker", ' ') || !take_name(c, ci->chunker) ||
	    !take_u64(c, CINDEX_LEN_LIMIT, ' ', &mn) || !take_u64(c, CINDEX_LEN_LIMIT, ' ', &avg) ||
	    !take_u64(c, CINDEX_LEN_LIMIT, '\n', &mx))
		return rb_errfmt(err, errlen, -EINVAL, "line 2: bad chunker (need "
				 "\"chunker NAME MIN AVG MAX\")");
	if (mn < CINDEX_LEN_FLOOR || mn > avg || avg > mx)
		return rb_errfmt(err, errlen, -EINVAL, "line 2: bad chunker lengths (need "
				 "%u <= MIN <= AVG <= MAX <= %u)", CINDEX_LEN_FLOOR, CINDEX_LEN_LIMIT);
	ci->min = (uint32_t)mn;
	ci->avg = (uint32_t)avg;
	ci->max = (uint32_t)mx;
	c->line = 3;
	if (!take_word(c, "size", ' ') || !take_u64(c, UINT64_MAX, '\n', &ci->size))
		return rb_errfmt(err, errlen, -EINVAL, "line 3: bad size");
	c->line = 4;
	if (!take_word(c, "chunks", ' ') || !take_u64(c, UINT64_MAX, '\n', count))
		return rb_errfmt(err, errlen, -EINVAL, "line 4: bad chunks");
	/* Every chunk but the first and the last is at least MIN long. */
	max_n = ci->size > 1 ? (ci->size - 2) / ci->min + 2 : ci->size;
	if (*count > max_n || (ci->size && !*count))
		return rb_errfmt(err, errlen, -EINVAL, "line 4: %" PRIu64 " chunks cannot tile "
				 "%" PRIu64 " bytes", *count, ci->size);
	if (*count > CINDEX_CHUNKS_MAX)
		return rb_errfmt(err, errlen, -EINVAL, "line 4: more than %u chunks (a larger "
				 "minimum chunk is needed)", CINDEX_CHUNKS_MAX);
	/* Before anything is allocated: the lines must be there. */
	if (*count > (size_t)(c->end - c->p) / CINDEX_LINE_MIN)
		return rb_errfmt(err, errlen, -EINVAL, "line 4: %" PRIu64 " chunks, the text "
				 "is too short for them", *count);
	return 0;
}

int cindex_parse(const char *buf, size_t len, struct cindex *ci, char *err, size_t errlen)
{
	struct cursor c = { buf, buf + len, 0 };
	uint64_t count, i, next = 0;
	int rc;

	memset(ci, 0, sizeof(*ci));
	rc = parse_header(&c, ci, &count, err, errlen);
	if (rc < 0)
		goto fail;
	if (count) {
		ci->chunk = calloc((size_t)count, sizeof(*ci->chunk));
		if (!ci->chunk) {
			rc = rb_errfmt(err, errlen, -ENOMEM, "out of memory for %" PRIu64 " chunks",
				       count);
			goto fail;
		}
	}
	for (i = 0; i < count; i++) {
		struct cindex_chunk *k = &ci->chunk[i];
		uint64_t off, clen;

		c.line = 5 + i;
		if (!take_word(&c, "chunk", ' ') || !take_u64(&c, UINT64_MAX, ' ', &off) ||
		    !take_u64(&c, CINDEX_LEN_LIMIT, ' ', &clen) || !take_sha256(&c, k->sha256)) {
			rc = rb_errfmt(err, errlen, -EINVAL, "line %lu: bad chunk (need \"chunk "
				       "OFFSET LENGTH SHA256\", lower-case hex)", c.line);
			goto fail;
		}
		if (off < next) {
			rc = rb_errfmt(err, errlen, -EINVAL, "line %lu: chunk at %" PRIu64
				       " overlaps the previous one (ends at %" PRIu64 ")",
				       c.line, off, next);
			goto fail;
		}
		if (off > next) {
			rc = rb_errfmt(err, errlen, -EINVAL, "line %lu: gap before the chunk at %"
				       PRIu64 " (the previous one ends at %" PRIu64 ")",
				       c.line, off, next);
			goto fail;
		}
		if (clen > ci->max || clen == 0 || (clen < ci->min && i && i + 1 < count)) {
			rc = rb_errfmt(err, errlen, -EINVAL, "line %lu: chunk length %" PRIu64
				       " not from %u to %u", c.line, clen,
				       i && i + 1 < count ? ci->min : 1u, ci->max);
			goto fail;
		}
		if (clen > ci->size - off) {
			rc = rb_errfmt(err, errlen, -EINVAL, "line %lu: chunk ends past the "
				       "image's size %" PRIu64, c.line, ci->size);
			goto fail;
		}
		k->off = off;
		k->len = (uint32_t)clen;
		next = off + clen;
	}
	if (next != ci->size) {
		rc = rb_errfmt(err, errlen, -EINVAL, "the chunks end at %" PRIu64 ", the image "
			       "at %" PRIu64, next, ci->size);
		goto fail;
	}
	if (c.p != c.end) {
		rc = rb_errfmt(err, errlen, -EINVAL, "line %lu: trailing bytes after the last "
			       "chunk", (unsigned long)(5 + count));
		goto fail;
	}
	ci->n = (uint32_t)count;
	return 0;
fail:
	cindex_free(ci);
	return rc;
}

void cindex_free(struct cindex *ci)
{
	free(ci->chunk);
	ci->chunk = NULL;
	ci->n = 0;
}

size_t cindex_text_max(uint32_t n)
{
	return CINDEX_HEADER_MAX + (size_t)n * CINDEX_LINE_MAX;
}

ssize_t cindex_format(const struct cindex *ci, char *buf, size_t len)
{
	size_t at;
	uint32_t i;
	int n;

	n = snprintf(buf, len, "%s\nchunker %s %u %u %u\nsize %" PRIu64 "\nchunks %u\n",
		     CINDEX_MAGIC, ci->chunker, ci->min, ci->avg, ci->max, ci->size, ci->n);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	at = (size_t)n;
	for (i = 0; i < ci->n; i++) {
		char hex[65];

		hex_encode(ci->chunk[i].sha256, 32, hex);
		n = snprintf(buf + at, len - at, "chunk %" PRIu64 " %u %s\n", ci->chunk[i].off,
			     ci->chunk[i].len, hex);
		if (n < 0 || (size_t)n >= len - at)
			return -ENOSPC;
		at += (size_t)n;
	}
	return (ssize_t)at;
}

int cindex_load(const char *path, struct cindex *ci, char *err, size_t errlen)
{
	return cindex_load_checked(path, NULL, ci, err, errlen);
}

int cindex_load_checked(const char *path, const char *want, struct cindex *ci, char *err,
			size_t errlen)
{
	size_t cap = cindex_text_max(CINDEX_CHUNKS_MAX);
	struct stat st;
	char *buf = NULL;
	ssize_t n;
	int fd, rc;

	memset(ci, 0, sizeof(*ci));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return rb_errfmt(err, errlen, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		rc = rb_errfmt(err, errlen, -errno, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = rb_errfmt(err, errlen, -EINVAL, "%s: not a regular file", path);
		goto out;
	}
	if ((uint64_t)st.st_size > cap) {
		rc = rb_errfmt(err, errlen, -EFBIG, "%s: larger than any chunk index (%zu bytes)",
			       path, cap);
		goto out;
	}
	/* One byte more than its size: a file that grows is seen. */
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		rc = rb_errfmt(err, errlen, -ENOMEM, "%s: out of memory", path);
		goto out;
	}
	n = read_full(fd, buf, (size_t)st.st_size + 1);
	if (n < 0) {
		rc = rb_errfmt(err, errlen, (int)n, "%s: %s", path, strerror((int)-n));
		goto out;
	}
	if (n != st.st_size) {
		rc = rb_errfmt(err, errlen, -EIO, "%s: changed while read", path);
		goto out;
	}
	if (want) {
		/* The bytes that are parsed are the bytes that were hashed. */
		uint8_t md[32];
		char hex[65];

		sha256(buf, (size_t)n, md);
		hex_encode(md, 32, hex);
		if (strcmp(hex, want)) {
			rc = rb_errfmt(err, errlen, -EBADMSG, "%s: sha256 %s, not %s", path, hex,
				       want);
			goto out;
		}
	}
	rc = cindex_parse(buf, (size_t)n, ci, err, errlen);
	if (rc < 0) {
		char why[256];

		snprintf(why, sizeof(why), "%s", err);
		rb_errfmt(err, errlen, rc, "%s: %s", path, why);
	}
out:
	free(buf);
	if (close_checked(fd) < 0 && rc == 0) {
		cindex_free(ci);
		rc = rb_errfmt(err, errlen, -EIO, "%s: close failed", path);
	}
	return rc;
}

/* Add the chunk that ends at `end` with the hash in ctx. */
static int add_chunk(struct cindex *ci, uint32_t *cap, uint64_t end, uint32_t len,
		     struct sha256 *ctx, char *err, size_t errlen)
{
	struct cindex_chunk *k;

	if (ci->n == *cap) {
		uint32_t ncap = *cap ? *cap * 2 : 1024;
		void *p;

		if (ci->n >= CINDEX_CHUNKS_MAX)
			return rb_errfmt(err, errlen, -EFBIG, "more than %u chunks: the image is "
					 "too large for a chunk index", CINDEX_CHUNKS_MAX);
		if (ncap > CINDEX_CHUNKS_MAX)
			ncap = CINDEX_CHUNKS_MAX;
		p = realloc(ci->chunk, (size_t)ncap * sizeof(*ci->chunk));
		if (!p)
			return rb_errfmt(err, errlen, -ENOMEM, "out of memory for %u chunks", ncap);
		ci->chunk = p;
		*cap = ncap;
	}
	k = &ci->chunk[ci->n++];
	k->off = end - len;
	k->len = len;
	sha256_final(ctx, k->sha256);
	sha256_init(ctx);
	return 0;
}

#define CINDEX_READ (1u << 20)

/* The marker for an image that starts with buf[0..n) (cdc.h): its
 * squashfs compressor's, if it has one. */
static unsigned marker_of(const uint8_t *buf, size_t n)
{
	switch (squashfs_compression(buf, n)) {
	case SQUASHFS_COMP_GZIP:
		return CDC_MARK_ZLIB;
	case SQUASHFS_COMP_XZ:
		return CDC_MARK_XZ;
	case SQUASHFS_COMP_ZSTD:
		return CDC_MARK_ZSTD;
	default:
		return CDC_MARK_NONE;
	}
}

const char *cindex_chunker_for(const uint8_t *head, size_t n)
{
	return cdc_name(marker_of(head, n));
}

int cindex_build(int fd, struct cindex *ci, char *err, size_t errlen)
{
	struct sha256 ctx;
	struct cdc cdc;
	uint8_t *buf;
	uint64_t pos = 0;
	uint32_t cap = 0;
	int rc = 0;

	memset(ci, 0, sizeof(*ci));
	snprintf(ci->chunker, sizeof(ci->chunker), "%s", CDC_NAME);
	ci->min = CDC_MIN;
	ci->avg = CDC_AVG;
	ci->max = CDC_MAX;
	buf = malloc(CINDEX_READ);
	if (!buf)
		return rb_errfmt(err, errlen, -ENOMEM, "out of memory");
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	cdc_init(&cdc);
	sha256_init(&ctx);
	for (;;) {
		ssize_t n = read_full(fd, buf, CINDEX_READ);
		size_t at = 0;

		if (n < 0) {
			rc = rb_errfmt(err, errlen, (int)n, "read error at %" PRIu64 ": %s", pos,
				       strerror((int)-n));
			goto fail;
		}
		if (!pos) {
			unsigned mark = marker_of(buf, (size_t)n);

			cdc_set_marker(&cdc, mark);
			snprintf(ci->chunker, sizeof(ci->chunker), "%s", cdc_name(mark));
		}
		while (at < (size_t)n) {
			bool cut;
			uint32_t before = cdc_pending(&cdc);
			size_t k = cdc_next(&cdc, buf + at, (size_t)n - at, &cut);

			sha256_update(&ctx, buf + at, k);
			at += k;
			pos += k;
			if (cut) {
				rc = add_chunk(ci, &cap, pos, before + (uint32_t)k, &ctx, err, errlen);
				if (rc < 0)
					goto fail;
			}
		}
		if ((size_t)n < CINDEX_READ)
			break;
	}
	if (cdc_pending(&cdc)) {
		rc = add_chunk(ci, &cap, pos, cdc_pending(&cdc), &ctx, err, errlen);
		if (rc < 0)
			goto fail;
	}
	ci->size = pos;
	free(buf);
	return 0;
fail:
	free(buf);
	cindex_free(ci);
	return rc;
}
