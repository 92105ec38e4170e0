// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Image manifests: parse, format, load. See manifest.h for the format.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/hex.h"
#include "format/manifest.h"

int sha256_hex_parse(const char *s, char out[65])
{
	char hex[65];
	size_t i;

	/* out is left alone unless the whole string is good. */
	for (i = 0; i < 64; i++) {
		char c = s[i];

		if (c >= 'A' && c <= 'F')
			c = (char)(c - 'A' + 'a');
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return -EINVAL;
		hex[i] = c;
	}
	if (s[64] != '\0')
		return -EINVAL;
	hex[64] = '\0';
	memcpy(out, hex, sizeof(hex));
	return 0;
}

struct mstate {
	struct manifest *m;
	size_t len;              /* of the whole text: the size limit */
	unsigned int seen;       /* bit per key of the table */
	uint32_t next_chunk;
	bool keep_chunks;
	int rc;                  /* -ENOMEM: the chunk hashes did not fit */
};

/* A key's value parser: 0, or the reason it is refused. */
typedef const char *(*key_fn)(struct mstate *st, char *val);

static const char *parse_u64(const char *val, uint64_t *out)
{
	unsigned long long v;
	char *e;

	if (*val < '0' || *val > '9')
		return "bad";
	errno = 0;
	v = strtoull(val, &e, 10);
	if (errno || *e)
		return "bad";
	*out = v;
	return NULL;
}

static const char *key_size(struct mstate *st, char *val)
{
	return parse_u64(val, &st->m->size) ? "bad size" : NULL;
}

static const char *key_sha256(struct mstate *st, char *val)
{
	if (strlen(val) != 64 || sha256_hex_parse(val, st->m->sha256) < 0)
		return "bad sha256";
	return NULL;
}

static const char *key_memlimit(struct mstate *st, char *val)
{
	return parse_u64(val, &st->m->memlimit) ? "bad memlimit" : NULL;
}

static const char *key_compression(struct mstate *st, char *val)
{
	if (strlen(val) >= sizeof(st->m->compression))
		return "bad compression";
	strcpy(st->m->compression, val);
	return NULL;
}

static const char *key_chunk_size(struct mstate *st, char *val)
{
	uint64_t v;

	if (parse_u64(val, &v) || !manifest_chunk_size_ok(v))
		return "bad chunk-size (a power of two from 65536 to 1073741824)";
	st->m->chunk_size = v;
	return NULL;
}

static const char *key_verity_root(struct mstate *st, char *val)
{
	if (strlen(val) != 64 || sha256_hex_parse(val, st->m->verity_root) < 0)
		return "bad verity-root (64 hex digits)";
	return NULL;
}

static const char *key_verity_salt(struct mstate *st, char *val)
{
	size_t n = strlen(val), i;

	if (!strcmp(val, "-")) {
		strcpy(st->m->verity_salt, "-");
		return NULL;
	}
	if (!n || n % 2 || n > MANIFEST_SALT_HEX_MAX)
		return "bad verity-salt (hex, at most 64 bytes, or -)";
	for (i = 0; i < n; i++) {
		char c = val[i];

		if (c >= 'A' && c <= 'F')
			c = (char)(c - 'A' + 'a');
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return "bad verity-salt (hex, at most 64 bytes, or -)";
		st->m->verity_salt[i] = c;
	}
	st->m->verity_salt[n] = '\0';
	return NULL;
}

/* A name beside the image, never a path elsewhere. */
static bool name_ok(const char *val)
{
	return *val && strlen(val) <= MANIFEST_NAME_MAX && !strchr(val, '/') &&
	       strcmp(val, ".") && strcmp(val, "..");
}

/* A key whose value is a file name beside the image into dst (room for
 * MANIFEST_NAME_MAX + 1): NULL, or the error naming the key. */
static const char *take_name(char *dst, const char *val, const char *bad)
{
	if (!name_ok(val))
		return bad;
	strcpy(dst, val);
	return NULL;
}

static const char *key_verity_hash(struct mstate *st, char *val)
{
	return take_name(st->m->verity_hash, val,
			 "bad verity-hash (a file name beside the image)");
}

static const char *key_cindex(struct mstate *st, char *val)
{
	return take_name(st->m->cindex, val, "bad cindex (a file name beside the image)");
}

static const char *key_delta(struct mstate *st, char *val)
{
	return take_name(st->m->delta, val, "bad delta (a file name beside the image)");
}

static const char *key_delta_from(struct mstate *st, char *val)
{
	if (strlen(val) != 64 || sha256_hex_parse(val, st->m->delta_from) < 0)
		return "bad delta-from (64 hex digits)";
	return NULL;
}

static const char *key_delta_sha256(struct mstate *st, char *val)
{
	if (strlen(val) != 64 || sha256_hex_parse(val, st->m->delta_sha256) < 0)
		return "bad delta-sha256 (64 hex digits)";
	return NULL;
}

static const char *key_image(struct mstate *st, char *val)
{
	return take_name(st->m->image, val, "bad image (a file name beside the image)");
}

static const char *key_cindex_sha256(struct mstate *st, char *val)
{
	if (strlen(val) != 64 || sha256_hex_parse(val, st->m->cindex_sha256) < 0)
		return "bad cindex-sha256 (64 hex digits)";
	return NULL;
}

/* The keys' places in the table below: a bit each in mstate.seen. */
enum { KI_SIZE, KI_SHA256, KI_MEMLIMIT, KI_COMPRESSION, KI_CHUNK_SIZE, KI_CHUNK,
       KI_VERITY_ROOT, KI_VERITY_SALT, KI_VERITY_HASH, KI_CINDEX, KI_CINDEX_SHA256,
       KI_IMAGE, KI_DELTA, KI_DELTA_FROM, KI_DELTA_SHA256, KI_COUNT };
#define K_SIZE       (1u << KI_SIZE)
#define K_SHA256     (1u << KI_SHA256)
#define K_CHUNK_SIZE (1u << KI_CHUNK_SIZE)
#define K_CHUNK      (1u << KI_CHUNK)

static const char *key_chunk(struct mstate *st, char *val)
{
	struct manifest *m = st->m;
	char hex[65], *sp = val + strcspn(val, " \t"), *h;
	uint64_t idx;

	if ((st->seen & (K_SIZE | K_CHUNK_SIZE)) != (K_SIZE | K_CHUNK_SIZE))
		return "chunk before size and chunk-size";
	if (st->next_chunk == 0) {
		uint64_t n = m->size / m->chunk_size + (m->size % m->chunk_size != 0);

		if (n > MANIFEST_CHUNKS_MAX)
			return "more than 65536 chunks (a larger chunk-size is needed)";
		m->nchunks = (uint32_t)n;
		if (st->len > MANIFEST_MAX + (size_t)n * MANIFEST_CHUNK_LINE)
			return "manifest too large for its chunks";
		if (n && st->keep_chunks) {
			m->chunk = calloc((size_t)n, sizeof(*m->chunk));
			if (!m->chunk) {
				st->rc = -ENOMEM;
				return "out of memory";
			}
		}
	}
	if (!*sp)
		return "bad chunk (need INDEX SHA256)";
	*sp++ = '\0';
	h = sp + strspn(sp, " \t");
	if (parse_u64(val, &idx) || (val[0] == '0' && val[1]))
		return "bad chunk index";
	if (idx != st->next_chunk)
		return "chunk out of order";
	if (idx >= m->nchunks)
		return "more chunks than size and chunk-size make";
	if (strlen(h) != 64 || sha256_hex_parse(h, hex) < 0)
		return "bad chunk sha256";
	if (m->chunk)
		hex_decode(hex, 32, m->chunk[idx]);
	st->next_chunk++;
	return NULL;
}

/* The keys, by the version that brought them. Later sets (a signature,
 * dm-verity) are one line here and a parser each. */
static const struct mkey {
	const char *name;
	unsigned int version;
	bool repeat;             /* may appear more than once (chunk) */
	key_fn parse;
} keys[KI_COUNT] = {
	[KI_SIZE] = { "size", 1, false, key_size },
	[KI_SHA256] = { "sha256", 1, false, key_sha256 },
	[KI_MEMLIMIT] = { "memlimit", 1, false, key_memlimit },
	[KI_COMPRESSION] = { "compression", 1, false, key_compression },
	[KI_CHUNK_SIZE] = { "chunk-size", 2, false, key_chunk_size },
	[KI_CHUNK] = { "chunk", 2, true, key_chunk },
	[KI_VERITY_ROOT] = { "verity-root", 2, false, key_verity_root },
	[KI_VERITY_SALT] = { "verity-salt", 2, false, key_verity_salt },
	[KI_VERITY_HASH] = { "verity-hash", 2, false, key_verity_hash },
	[KI_CINDEX] = { "cindex", 2, false, key_cindex },
	[KI_CINDEX_SHA256] = { "cindex-sha256", 2, false, key_cindex_sha256 },
	[KI_IMAGE] = { "image", 1, false, key_image },
	[KI_DELTA] = { "delta", 2, false, key_delta },
	[KI_DELTA_FROM] = { "delta-from", 2, false, key_delta_from },
	[KI_DELTA_SHA256] = { "delta-sha256", 2, false, key_delta_sha256 },
};

static int perr(char *err, size_t errlen, unsigned int line, const char *what)
{
	if (err && errlen)
		snprintf(err, errlen, "line %u: %s", line, what);
	return -EINVAL;
}

static int parse(const char *buf, size_t len, struct manifest *m, bool keep_chunks,
		 char *err, size_t errlen)
{
	struct mstate st = { .m = m, .len = len, .keep_chunks = keep_chunks, .rc = 0 };
	unsigned int lineno = 0;
	size_t pos = 0, k;

	memset(m, 0, sizeof(*m));
	if (len > MANIFEST_HARD_MAX)
		return perr(err, errlen, 0, "manifest too large");
	while (pos < len) {
		char line[256], *key, *val, *end;
		const char *why;
		size_t n = 0;

		lineno++;
		while (pos < len && buf[pos] != '\n') {
			if (buf[pos] == '\0')
				return perr(err, errlen, lineno, "NUL byte");
			if (n + 1 >= sizeof(line))
				return perr(err, errlen, lineno, "line too long");
			line[n++] = buf[pos++];
		}
		pos++;   /* the newline */
		if (n && line[n - 1] == '\r')
			n--;
		line[n] = '\0';
		key = line + strspn(line, " \t");
		if (*key == '\0' || *key == '#')
			continue;
		val = key + strcspn(key, " \t");
		if (*val)
			*val++ = '\0';
		val += strspn(val, " \t");
		end = val + strlen(val);
		while (end > val && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (!m->version) {
			if (strcmp(key, "ramboot-manifest"))
				return perr(err, errlen, lineno, "not a ramboot manifest");
			if (!strcmp(val, "1"))
				m->version = 1;
			else if (!strcmp(val, "2"))
				m->version = 2;
			else
				return perr(err, errlen, lineno, "unsupported manifest version");
			if (m->version == 1 && len > MANIFEST_MAX)
				return perr(err, errlen, 0, "manifest too large");
			continue;
		}
		for (k = 0; k < KI_COUNT; k++)
			if (!strcmp(key, keys[k].name))
				break;
		/* Other keys belong to later versions and are ignored. */
		if (k == KI_COUNT)
			continue;
		if (keys[k].version > m->version) {
			char what[64];

			snprintf(what, sizeof(what), "%s needs manifest version %u", keys[k].name,
				 keys[k].version);
			return perr(err, errlen, lineno, what);
		}
		if ((st.seen & (1u << k)) && !keys[k].repeat) {
			char what[64];

			snprintf(what, sizeof(what), "%s given twice", keys[k].name);
			return perr(err, errlen, lineno, what);
		}
		why = keys[k].parse(&st, val);
		if (why) {
			perr(err, errlen, lineno, why);
			return st.rc ? st.rc : -EINVAL;
		}
		st.seen |= 1u << k;
	}
	if (!m->version)
		return perr(err, errlen, lineno, "empty manifest");
	if (!(st.seen & K_SIZE))
		return perr(err, errlen, lineno, "no size");
	if (!(st.seen & K_SHA256))
		return perr(err, errlen, lineno, "no sha256");
	if (m->version >= 2) {
		uint64_t n;

		if (!(st.seen & K_CHUNK_SIZE))
			return perr(err, errlen, lineno, "no chunk-size");
		n = m->size / m->chunk_size + (m->size % m->chunk_size != 0);
		if (n > MANIFEST_CHUNKS_MAX)
			return perr(err, errlen, lineno, "more than 65536 chunks (a larger "
				    "chunk-size is needed)");
		if (len > MANIFEST_MAX + (size_t)n * MANIFEST_CHUNK_LINE)
			return perr(err, errlen, lineno, "manifest too large for its chunks");
		if (st.next_chunk != n) {
			char what[96];

			snprintf(what, sizeof(what), "%" PRIu32 " of %" PRIu64 " chunks",
				 st.next_chunk, n);
			return perr(err, errlen, lineno, what);
		}
		m->nchunks = (uint32_t)n;
	}
	{
		unsigned int v = st.seen & (1u << KI_VERITY_ROOT | 1u << KI_VERITY_SALT |
					    1u << KI_VERITY_HASH);

		if (v && v != (1u << KI_VERITY_ROOT | 1u << KI_VERITY_SALT | 1u << KI_VERITY_HASH))
			return perr(err, errlen, lineno, "verity-root, verity-salt and verity-hash "
				    "come together");
		if (v && (m->size == 0 || m->size % 4096))
			return perr(err, errlen, lineno, "verity: the image is not a whole number "
				    "of 4096-byte blocks");
	}
	if (!(st.seen & (1u << KI_CINDEX)) != !(st.seen & (1u << KI_CINDEX_SHA256)))
		return perr(err, errlen, lineno, "cindex and cindex-sha256 come together");
	{
		unsigned int d = st.seen & (1u << KI_DELTA | 1u << KI_DELTA_FROM |
					    1u << KI_DELTA_SHA256);

		if (d && d != (1u << KI_DELTA | 1u << KI_DELTA_FROM | 1u << KI_DELTA_SHA256))
			return perr(err, errlen, lineno, "delta, delta-from and delta-sha256 come "
				    "together");
	}
	return 0;
}

/* On failure nothing stays allocated. */
static int parse_or_free(const char *buf, size_t len, struct manifest *m, bool keep_chunks,
			 char *err, size_t errlen)
{
	int rc = parse(buf, len, m, keep_chunks, err, errlen);

	if (rc < 0)
		manifest_free(m);
	return rc;
}

int manifest_parse(const char *buf, size_t len, struct manifest *m,
		   char *err, size_t errlen)
{
	return parse_or_free(buf, len, m, true, err, errlen);
}

void manifest_free(struct manifest *m)
{
	free(m->chunk);
	m->chunk = NULL;
}

static int load(const char *path, struct manifest *m, bool keep_chunks,
		manifest_check_fn check, void *ctx, char *err, size_t errlen)
{
	struct stat st;
	size_t cap;
	char *buf;
	ssize_t n;
	int fd, rc;

	memset(m, 0, sizeof(*m));
	if (err && errlen)
		err[0] = '\0';
	/* O_NONBLOCK: a FIFO planted as the manifest must not hang a boot. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s", strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		snprintf(err, errlen, "not a regular file");
		(void)close(fd);
		return rc;
	}
	/* Read one byte more than the limit allows: the parser refuses it. */
	cap = st.st_size < (off_t)MANIFEST_HARD_MAX ? (size_t)st.st_size : MANIFEST_HARD_MAX;
	if (cap < MANIFEST_MAX)
		cap = MANIFEST_MAX;
	buf = malloc(cap + 1);
	if (!buf) {
		(void)close(fd);
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	n = read_full(fd, buf, cap + 1);
	rc = close_checked(fd);
	if (n < 0 || rc < 0) {
		rc = n < 0 ? (int)n : rc;
		snprintf(err, errlen, "%s", strerror(-rc));
		free(buf);
		return rc;
	}
	/* The bytes checked are the bytes parsed: one read. */
	rc = check ? check(buf, (size_t)n, ctx, err, errlen) : 0;
	if (rc == 0)
		rc = parse_or_free(buf, (size_t)n, m, keep_chunks, err, errlen);
	free(buf);
	return rc;
}

int manifest_load(const char *path, struct manifest *m, char *err, size_t errlen)
{
	return load(path, m, false, NULL, NULL, err, errlen);
}

int manifest_load_chunks(const char *path, struct manifest *m, char *err, size_t errlen)
{
	return load(path, m, true, NULL, NULL, err, errlen);
}

int manifest_load_checked(const char *path, struct manifest *m, manifest_check_fn check,
			  void *ctx, char *err, size_t errlen)
{
	return load(path, m, true, check, ctx, err, errlen);
}

size_t manifest_format_max(const struct manifest *m)
{
	return 256 + sizeof(m->compression) + 64 + sizeof(m->verity_root) +
		sizeof(m->verity_salt) + sizeof(m->verity_hash) + sizeof(m->cindex) +
		sizeof(m->cindex_sha256) + sizeof(m->image) + sizeof(m->delta) +
		sizeof(m->delta_from) + sizeof(m->delta_sha256) + 64 + (m->chunk_size ? (size_t)m->nchunks : 0) *
		MANIFEST_CHUNK_LINE;
}

int manifest_format(const struct manifest *m, char *buf, size_t len)
{
	size_t pos;
	uint32_t i;
	int n;

	n = snprintf(buf, len, "ramboot-manifest %u\nsize %" PRIu64 "\nsha256 %s\n%s%s%s",
		     m->chunk_size ? 2 : 1, m->size, m->sha256,
		     m->compression[0] ? "compression " : "", m->compression,
		     m->compression[0] ? "\n" : "");
	if (n >= 0 && (size_t)n < len && m->image[0])
		n += snprintf(buf + n, len - (size_t)n, "image %s\n", m->image);
	if (n >= 0 && (size_t)n < len && m->memlimit)
		n += snprintf(buf + n, len - (size_t)n, "memlimit %" PRIu64 "\n", m->memlimit);
	if (n >= 0 && (size_t)n < len && m->chunk_size)
		n += snprintf(buf + n, len - (size_t)n, "chunk-size %" PRIu64 "\n", m->chunk_size);
	if (n >= 0 && (size_t)n < len && m->chunk_size && m->verity_root[0])
		n += snprintf(buf + n, len - (size_t)n, "verity-root %s\nverity-salt %s\n"
			      "verity-hash %s\n", m->verity_root, m->verity_salt, m->verity_hash);
	if (n >= 0 && (size_t)n < len && m->chunk_size && m->cindex[0])
		n += snprintf(buf + n, len - (size_t)n, "cindex %s\ncindex-sha256 %s\n", m->cindex,
			      m->cindex_sha256);
	if (n >= 0 && (size_t)n < len && m->chunk_size && m->delta[0])
		n += snprintf(buf + n, len - (size_t)n, "delta %s\ndelta-from %s\ndelta-sha256 %s\n",
			      m->delta, m->delta_from, m->delta_sha256);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	pos = (size_t)n;
	for (i = 0; m->chunk_size && i < m->nchunks; i++) {
		char hex[65];

		hex_encode(m->chunk[i], 32, hex);
		n = snprintf(buf + pos, len - pos, "chunk %" PRIu32 " %s\n", i, hex);
		if (n < 0 || (size_t)n >= len - pos)
			return -ENOSPC;
		pos += (size_t)n;
	}
	return pos > INT32_MAX ? -ENOSPC : (int)pos;
}
