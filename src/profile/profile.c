// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Boot profiles: parse, format, load, write, match, merge; recording by
 * sampling the page cache; the copy order (rangeq). See profile.h for
 * the format and docs/profiles.md for the commands.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/sha256.h"

#include "cmd.h"
#include "lib/ramboot.h"
#include "lib/hex.h"
#include "format/manifest.h"
#include "lib/outfile.h"
#include "profile/profile.h"

#define LINE_MAX_LEN 256          /* with the NUL: 255 bytes of text */
#define MERGE_PIECE (64u << 10)   /* rank resolution of profile_merge() */
#define MERGE_PIECES_LOG2 18      /* about this many pieces per input at most */


/* ---- the profile in memory ---- */

void profile_init(struct profile *p)
{
	memset(p, 0, sizeof(*p));
}

void profile_free(struct profile *p)
{
	free(p->r);
	profile_init(p);
}

static int grow(struct profile *p)
{
	struct profile_range *r;
	size_t cap;

	if (p->n < p->cap)
		return 0;
	cap = p->cap ? p->cap * 2 : 64;
	if (cap > SIZE_MAX / sizeof(*r))
		return -ENOMEM;
	r = realloc(p->r, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	p->r = r;
	p->cap = cap;
	return 0;
}

/* Append as the next range, joined to nothing (the parser keeps the
 * ranges as written). */
static int append(struct profile *p, uint64_t off, uint64_t len)
{
	int rc = grow(p);

	if (rc < 0)
		return rc;
	p->r[p->n].off = off;
	p->r[p->n].len = len;
	p->n++;
	return 0;
}

int profile_add(struct profile *p, uint64_t off, uint64_t len)
{
	if (len == 0)
		return 0;
	if (p->n && p->r[p->n - 1].off + p->r[p->n - 1].len == off) {
		p->r[p->n - 1].len += len;
		return 0;
	}
	return append(p, off, len);
}

uint64_t profile_bytes(const struct profile *p)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < p->n; i++)
		sum += p->r[i].len;
	return sum;
}

/* ---- validation, shared by the parser and the formatter ---- */

static bool page_size_ok(uint64_t v)
{
	return v >= PROFILE_PAGE_MIN && v <= PROFILE_PAGE_MAX && !(v & (v - 1));
}

/* One range against the header; NULL when good, else why not. */
static const char *range_bad(const struct profile *p, uint64_t off, uint64_t len)
{
	uint64_t size = p->id.size;

	if (len == 0)
		return "empty range";
	if (off % p->page_size)
		return "range offset not a multiple of page-size";
	if (off >= size || len > size - off)
		return "range beyond image-size";
	if (len % p->page_size && off + len != size)
		return "range length not a multiple of page-size";
	return NULL;
}

struct sorted {
	uint64_t off, len;
	size_t idx;               /* position in first-touch order */
};

static int cmp_sorted(const void *a, const void *b)
{
	const struct sorted *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Do two ranges overlap? 0 (no), 1 with the pair in *first, *second
 * (positions in order, first < second), or -ENOMEM. */
static int find_overlap(const struct profile_range *r, size_t n, size_t *first, size_t *second)
{
	struct sorted *s;
	size_t i;
	int found = 0;

	if (n < 2)
		return 0;
	if (n > SIZE_MAX / sizeof(*s))
		return -ENOMEM;
	s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		s[i].off = r[i].off;
		s[i].len = r[i].len;
		s[i].idx = i;
	}
	qsort(s, n, sizeof(*s), cmp_sorted);
	for (i = 0; i + 1 < n; i++) {
		/* ranges were checked against the image size: no overflow */
		if (s[i].off + s[i].len > s[i + 1].off) {
			size_t a = s[i].idx, b = s[i + 1].idx;

			*first = a < b ? a : b;
			*second = a < b ? b : a;
			found = 1;
			break;
		}
	}
	free(s);
	return found;
}

static bool hex64_ok(const char *s)
{
	char tmp[65];

	return sha256_hex_parse(s, tmp) == 0 && !strcmp(tmp, s);
}

/* The whole profile, as the parser would see it. */
static int profile_check(const struct profile *p, char *err, size_t errlen)
{
	size_t i, a, b;
	int rc;

	if (!page_size_ok(p->page_size))
		return rb_errfmt(err, errlen, -EINVAL, "bad page-size %" PRIu32, p->page_size);
	if (!p->id.sha256[0] && !p->id.ends_sha256[0])
		return rb_errfmt(err, errlen, -EINVAL, "no image-sha256 or image-ends-sha256");
	if ((p->id.sha256[0] && !hex64_ok(p->id.sha256)) ||
	    (p->id.ends_sha256[0] && !hex64_ok(p->id.ends_sha256)))
		return rb_errfmt(err, errlen, -EINVAL, "bad image hash");
	for (i = 0; i < p->n; i++) {
		const char *why = range_bad(p, p->r[i].off, p->r[i].len);

		if (why)
			return rb_errfmt(err, errlen, -EINVAL, "range %zu (%" PRIu64 " %" PRIu64 "): %s",
				      i + 1, p->r[i].off, p->r[i].len, why);
	}
	rc = find_overlap(p->r, p->n, &a, &b);
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "out of memory");
	if (rc)
		return rb_errfmt(err, errlen, -EINVAL, "range %zu overlaps range %zu", b + 1, a + 1);
	return 0;
}

/* ---- text ---- */

static int perr(char *err, size_t errlen, unsigned int line, const char *what)
{
	return rb_errfmt(err, errlen, -EINVAL, "line %u: %s", line, what);
}

/* Decimal digits, no sign, no leading zero, no overflow. */
static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (*s < '0' || *s > '9' || (s[0] == '0' && s[1]))
		return -EINVAL;
	for (; *s; s++) {
		unsigned int d = (unsigned int)(*s - '0');

		if (*s < '0' || *s > '9' || v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* Split line into at most max fields at spaces and tabs; the number of
 * fields (max + 1 when there are more). */
static int fields(char *line, char **f, int max)
{
	int n = 0;

	for (;;) {
		line += strspn(line, " \t");
		if (!*line)
			return n;
		if (n == max)
			return max + 1;
		f[n++] = line;
		line += strcspn(line, " \t");
		if (*line)
			*line++ = '\0';
	}
}

int profile_parse(const char *buf, size_t len, struct profile *p, char *err, size_t errlen)
{
	bool magic = false, have_size = false, have_page = false;
	unsigned int lineno = 0, *lines = NULL;
	size_t pos = 0, ncap = 0, a, b;
	int rc;

	profile_init(p);
	if (err && errlen)
		err[0] = '\0';
	if (len > PROFILE_MAX)
		return perr(err, errlen, 0, "profile too large");
	while (pos < len) {
		char line[LINE_MAX_LEN], *f[4];
		const char *why;
		uint64_t v, w;
		size_t n = 0;
		int nf;

		lineno++;
		while (pos < len && buf[pos] != '\n') {
			if (buf[pos] == '\0') {
				rc = perr(err, errlen, lineno, "NUL byte");
				goto fail;
			}
			if (n + 1 >= sizeof(line)) {
				rc = perr(err, errlen, lineno, "line too long");
				goto fail;
			}
			line[n++] = buf[pos++];
		}
		pos++;   /* the newline */
		if (n && line[n - 1] == '\r')
			n--;
		line[n] = '\0';
		nf = fields(line, f, 3);
		if (nf == 0 || f[0][0] == '#')
			continue;
		if (!magic) {
			if (strcmp(f[0], "ramboot-profile")) {
				rc = perr(err, errlen, lineno, "not a ramboot profile");
				goto fail;
			}
			if (nf != 2 || strcmp(f[1], "1")) {
				rc = perr(err, errlen, lineno, "unsupported profile version");
				goto fail;
			}
			magic = true;
			continue;
		}
		if (!strcmp(f[0], "range")) {
			if (nf != 3 || parse_u64(f[1], &v) < 0 || parse_u64(f[2], &w) < 0) {
				rc = perr(err, errlen, lineno, "bad range");
				goto fail;
			}
			if (!have_size || !have_page) {
				rc = perr(err, errlen, lineno, have_size ? "range before page-size" :
					  "range before image-size");
				goto fail;
			}
			why = range_bad(p, v, w);
			if (why) {
				rc = perr(err, errlen, lineno, why);
				goto fail;
			}
			if (p->n == ncap) {
				unsigned int *nl;

				ncap = ncap ? ncap * 2 : 64;
				nl = ncap <= SIZE_MAX / sizeof(*nl) ? realloc(lines, ncap * sizeof(*nl))
								     : NULL;
				if (!nl) {
					rc = rb_errfmt(err, errlen, -ENOMEM, "out of memory");
					goto fail;
				}
				lines = nl;
			}
			rc = append(p, v, w);
			if (rc < 0) {
				rb_errfmt(err, errlen, rc, "out of memory");
				goto fail;
			}
			lines[p->n - 1] = lineno;
			continue;
		}
		/* A header key: before the ranges, once, one value. */
		if (p->n) {
			rc = perr(err, errlen, lineno, "header key after the ranges");
			goto fail;
		}
		if (!strcmp(f[0], "image-size")) {
			if (have_size) {
				rc = perr(err, errlen, lineno, "image-size given twice");
				goto fail;
			}
			if (nf != 2 || parse_u64(f[1], &p->id.size) < 0) {
				rc = perr(err, errlen, lineno, "bad image-size");
				goto fail;
			}
			have_size = true;
		} else if (!strcmp(f[0], "page-size")) {
			if (have_page) {
				rc = perr(err, errlen, lineno, "page-size given twice");
				goto fail;
			}
			if (nf != 2 || parse_u64(f[1], &v) < 0 || !page_size_ok(v)) {
				rc = perr(err, errlen, lineno, "bad page-size");
				goto fail;
			}
			p->page_size = (uint32_t)v;
			have_page = true;
		} else if (!strcmp(f[0], "image-sha256") || !strcmp(f[0], "image-ends-sha256")) {
			bool whole = !strcmp(f[0], "image-sha256");
			char *dst = whole ? p->id.sha256 : p->id.ends_sha256;

			if (dst[0]) {
				rc = perr(err, errlen, lineno, whole ? "image-sha256 given twice" :
					  "image-ends-sha256 given twice");
				goto fail;
			}
			if (nf != 2 || strlen(f[1]) != 64 || sha256_hex_parse(f[1], dst) < 0) {
				rc = perr(err, errlen, lineno, whole ? "bad image-sha256" :
					  "bad image-ends-sha256");
				goto fail;
			}
		} else {
			rc = perr(err, errlen, lineno, "unknown key");
			goto fail;
		}
	}
	if (!magic) {
		rc = perr(err, errlen, lineno, "empty profile");
		goto fail;
	}
	if (!have_size) {
		rc = perr(err, errlen, lineno, "no image-size");
		goto fail;
	}
	if (!have_page) {
		rc = perr(err, errlen, lineno, "no page-size");
		goto fail;
	}
	if (!p->id.sha256[0] && !p->id.ends_sha256[0]) {
		rc = perr(err, errlen, lineno, "no image-sha256 or image-ends-sha256");
		goto fail;
	}
	rc = find_overlap(p->r, p->n, &a, &b);
	if (rc < 0) {
		rb_errfmt(err, errlen, rc, "out of memory");
		goto fail;
	}
	if (rc) {
		char why[64];

		snprintf(why, sizeof(why), "range overlaps the range on line %u", lines[a]);
		rc = perr(err, errlen, lines[b], why);
		goto fail;
	}
	free(lines);
	return 0;
fail:
	free(lines);
	profile_free(p);
	return rc;
}

int profile_load(const char *path, struct profile *p, char *err, size_t errlen)
{
	struct stat st;
	size_t cap;
	ssize_t n;
	char *buf;
	int fd, rc;

	profile_init(p);
	/* O_NONBLOCK: a FIFO planted as the profile must not hang a boot. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		rc = -errno;
		return rb_errfmt(err, errlen, rc, "%s", strerror(-rc));
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		(void)close(fd);
		return rb_errfmt(err, errlen, rc, "%s", strerror(-rc));
	}
	if (!S_ISREG(st.st_mode)) {
		(void)close(fd);
		return rb_errfmt(err, errlen, S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL,
			      "not a regular file");
	}
	if ((uint64_t)st.st_size > PROFILE_MAX) {
		(void)close(fd);
		return rb_errfmt(err, errlen, -EFBIG, "larger than %u bytes", PROFILE_MAX);
	}
	/* One byte more than the size: a file that grew is seen to. */
	cap = (size_t)st.st_size + 1;
	buf = malloc(cap);
	if (!buf) {
		(void)close(fd);
		return rb_errfmt(err, errlen, -ENOMEM, "%s", strerror(ENOMEM));
	}
	n = read_full(fd, buf, cap);
	rc = close_checked(fd);
	if (n < 0 || rc < 0) {
		rc = n < 0 ? (int)n : rc;
		free(buf);
		return rb_errfmt(err, errlen, rc, "%s", strerror(-rc));
	}
	if ((size_t)n == cap) {
		free(buf);
		return rb_errfmt(err, errlen, -EAGAIN, "changed while it was read");
	}
	rc = profile_parse(buf, (size_t)n, p, err, errlen);
	free(buf);
	return rc;
}

int profile_format(const struct profile *p, char **text, size_t *len, char *err, size_t errlen)
{
	/* "range " + two 20-digit numbers, a space and a newline */
	const size_t per_range = 6 + 20 + 1 + 20 + 1;
	size_t cap, n = 0, i;
	char *buf;
	int rc, m;

	*text = NULL;
	*len = 0;
	rc = profile_check(p, err, errlen);
	if (rc < 0)
		return rc;
	if (p->n > (SIZE_MAX - 512) / per_range)
		return rb_errfmt(err, errlen, -ENOMEM, "out of memory");
	cap = 512 + p->n * per_range;
	buf = malloc(cap);
	if (!buf)
		return rb_errfmt(err, errlen, -ENOMEM, "out of memory");
	m = snprintf(buf, cap, "ramboot-profile 1\nimage-size %" PRIu64 "\n", p->id.size);
	n += (size_t)m;
	if (p->id.sha256[0])
		n += (size_t)snprintf(buf + n, cap - n, "image-sha256 %s\n", p->id.sha256);
	if (p->id.ends_sha256[0])
		n += (size_t)snprintf(buf + n, cap - n, "image-ends-sha256 %s\n", p->id.ends_sha256);
	n += (size_t)snprintf(buf + n, cap - n, "page-size %" PRIu32 "\n", p->page_size);
	for (i = 0; i < p->n; i++)
		n += (size_t)snprintf(buf + n, cap - n, "range %" PRIu64 " %" PRIu64 "\n",
				      p->r[i].off, p->r[i].len);
	*text = buf;
	*len = n;
	return 0;
}

int profile_write(const struct profile *p, const char *path, char *err, size_t errlen)
{
	struct outfile of;
	char *text;
	size_t len;
	int rc;

	rc = profile_format(p, &text, &len, err, errlen);
	if (rc < 0)
		return rc;
	rc = outfile_open(&of, path, 0644, OUTFILE_REPLACE | OUTFILE_SYNC, NULL, err, errlen);
	if (rc < 0) {
		free(text);
		return rc;
	}
	rc = write_all(of.fd, text, len);
	free(text);
	if (rc == 0)
		rc = outfile_commit(&of);
	else
		outfile_abort(&of);
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "%s: write error: %s", path, strerror(-rc));
	return 0;
}

/* ---- identity ---- */

int profile_image_id(int fd, uint64_t size, struct profile_id *id)
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	uint64_t head, tail_off, tail;
	unsigned char *buf;
	ssize_t n;

	memset(id, 0, sizeof(*id));
	id->size = size;
	head = size < PROFILE_ENDS ? size : PROFILE_ENDS;
	tail_off = size - head < PROFILE_ENDS ? head : size - PROFILE_ENDS;
	tail = size - tail_off;
	buf = malloc((size_t)(head + tail) + 1);
	if (!buf)
		return -ENOMEM;
	n = pread_full(fd, buf, (size_t)head, 0);
	if (n >= 0 && (uint64_t)n != head)
		n = -EIO;
	if (n >= 0 && tail) {
		n = pread_full(fd, buf + head, (size_t)tail, (off_t)tail_off);
		if (n >= 0 && (uint64_t)n != tail)
			n = -EIO;
	}
	if (n < 0) {
		free(buf);
		return (int)n;
	}
	/* The low-level calls, as pipe.c: SHA256() goes through EVP, which
	 * drags the provider loader (dlopen) into the static binary. */
	{
		SHA256_CTX c;

		SHA256_Init(&c);
		SHA256_Update(&c, buf, (size_t)(head + tail));
		SHA256_Final(md, &c);
	}
	free(buf);
	hex_encode(md, 32, id->ends_sha256);
	return 0;
}

bool profile_matches(const struct profile *p, const struct profile_id *id)
{
	bool common = false;

	if (p->id.size != id->size)
		return false;
	if (p->id.sha256[0] && id->sha256[0]) {
		if (strcmp(p->id.sha256, id->sha256))
			return false;
		common = true;
	}
	if (p->id.ends_sha256[0] && id->ends_sha256[0]) {
		if (strcmp(p->id.ends_sha256, id->ends_sha256))
			return false;
		common = true;
	}
	return common;
}

/* ---- merge ---- */

struct piece {
	uint64_t off, len;
	double rank;              /* normalised first-touch position, [0, 1) */
	size_t in, seq;           /* input, piece number in it: tie-breakers */
};

static int cmp_piece(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->in != y->in)
		return x->in < y->in ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* [off, off+len) widened to whole pages of pg, within size. */
static void widen(uint64_t off, uint64_t len, uint64_t pg, uint64_t size, uint64_t *s, uint64_t *e)
{
	uint64_t end = off + len, rem = end % pg;

	*s = off - off % pg;
	if (rem)
		end = size - end > pg - rem ? end + (pg - rem) : size;
	*e = end;
}

/* The identity the inputs share (see profile.h). */
static int merge_id(const struct profile *const *in, size_t n, struct profile_id *id,
		    char *err, size_t errlen)
{
	const char *sha = NULL, *ends = NULL;
	bool all_sha = true, all_ends = true;
	size_t i;

	memset(id, 0, sizeof(*id));
	id->size = in[0]->id.size;
	for (i = 0; i < n; i++) {
		const struct profile_id *x = &in[i]->id;

		if (x->size != id->size)
			return rb_errfmt(err, errlen, -EINVAL, "profile %zu is of an image of %" PRIu64
				      " bytes, profile 1 of %" PRIu64, i + 1, x->size, id->size);
		if (x->sha256[0]) {
			if (sha && strcmp(sha, x->sha256))
				return rb_errfmt(err, errlen, -EINVAL, "profile %zu has another "
					      "image-sha256", i + 1);
			sha = x->sha256;
		} else {
			all_sha = false;
		}
		if (x->ends_sha256[0]) {
			if (ends && strcmp(ends, x->ends_sha256))
				return rb_errfmt(err, errlen, -EINVAL, "profile %zu has another "
					      "image-ends-sha256", i + 1);
			ends = x->ends_sha256;
		} else {
			all_ends = false;
		}
	}
	if (all_sha)
		memcpy(id->sha256, sha, sizeof(id->sha256));
	if (all_ends)
		memcpy(id->ends_sha256, ends, sizeof(id->ends_sha256));
	if (!all_sha && !all_ends)
		return rb_errfmt(err, errlen, -EINVAL, "the profiles have no image hash in common");
	return 0;
}

/* Union-find over the elementary intervals: the first one at or after i
 * that no piece has claimed yet (m - 1: none). */
static size_t next_free(size_t *nx, size_t i)
{
	while (nx[i] != i) {
		nx[i] = nx[nx[i]];
		i = nx[i];
	}
	return i;
}

static size_t bound_index(const uint64_t *b, size_t m, uint64_t v)
{
	size_t lo = 0, hi = m;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int profile_merge(const struct profile *const *in, size_t n, struct profile *out,
		  char *err, size_t errlen)
{
	struct piece *pc = NULL;
	uint64_t *bounds = NULL, pg = 0, piece, maxt = 0, size;
	size_t *nx = NULL, np = 0, cap = 0, m = 0, i, j;
	int rc;

	profile_init(out);
	if (n == 0)
		return rb_errfmt(err, errlen, -EINVAL, "no profile to merge");
	for (i = 0; i < n; i++) {
		char why[160];

		rc = profile_check(in[i], why, sizeof(why));
		if (rc < 0)
			return rb_errfmt(err, errlen, rc, "profile %zu: %s", i + 1, why);
		if (in[i]->page_size > pg)
			pg = in[i]->page_size;
	}
	rc = merge_id(in, n, &out->id, err, errlen);
	if (rc < 0)
		return rc;
	out->page_size = (uint32_t)pg;
	size = out->id.size;

	/* Piece size: fine enough to rank within long ranges, coarse enough
	 * that a huge profile stays a bounded number of pieces. */
	for (i = 0; i < n; i++) {
		uint64_t t = profile_bytes(in[i]);   /* <= size: no overlaps */

		if (t > maxt)
			maxt = t;
	}
	piece = MERGE_PIECE > pg ? MERGE_PIECE : pg;
	if ((maxt >> MERGE_PIECES_LOG2) > piece)
		piece = ((maxt >> MERGE_PIECES_LOG2) + pg - 1) / pg * pg;

	for (i = 0; i < n; i++) {
		const struct profile *p = in[i];
		uint64_t total = 0, cum = 0;
		size_t seq = 0;

		for (j = 0; j < p->n; j++) {
			uint64_t s, e;

			widen(p->r[j].off, p->r[j].len, pg, size, &s, &e);
			total += e - s < UINT64_MAX - total ? e - s : UINT64_MAX - total;
		}
		for (j = 0; j < p->n; j++) {
			uint64_t s, e, o;

			widen(p->r[j].off, p->r[j].len, pg, size, &s, &e);
			for (o = s; o < e; ) {
				uint64_t l = e - o < piece ? e - o : piece;

				if (np == cap) {
					struct piece *q;

					cap = cap ? cap * 2 : 256;
					q = cap <= SIZE_MAX / sizeof(*q) ? realloc(pc, cap * sizeof(*q))
									 : NULL;
					if (!q) {
						rc = -ENOMEM;
						goto out;
					}
					pc = q;
				}
				pc[np].off = o;
				pc[np].len = l;
				pc[np].rank = (double)cum / (double)total;
				pc[np].in = i;
				pc[np].seq = seq++;
				np++;
				cum += l;
				o += l;
			}
		}
	}
	if (np == 0) {
		rc = 0;
		goto out;
	}
	qsort(pc, np, sizeof(*pc), cmp_piece);

	/* Elementary intervals: between consecutive piece boundaries. */
	if (np > SIZE_MAX / 2 / sizeof(*bounds)) {
		rc = -ENOMEM;
		goto out;
	}
	bounds = malloc(2 * np * sizeof(*bounds));
	nx = malloc(2 * np * sizeof(*nx));
	if (!bounds || !nx) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < np; i++) {
		bounds[2 * i] = pc[i].off;
		bounds[2 * i + 1] = pc[i].off + pc[i].len;
	}
	qsort(bounds, 2 * np, sizeof(*bounds), cmp_u64);
	for (i = 0; i < 2 * np; i++)
		if (m == 0 || bounds[m - 1] != bounds[i])
			bounds[m++] = bounds[i];
	for (i = 0; i < m; i++)
		nx[i] = i;

	/* By rank, each piece claims the intervals no earlier piece did. */
	for (i = 0; i < np; i++) {
		size_t a = bound_index(bounds, m, pc[i].off);
		size_t z = bound_index(bounds, m, pc[i].off + pc[i].len);
		size_t x;

		for (x = next_free(nx, a); x < z; x = next_free(nx, x)) {
			rc = profile_add(out, bounds[x], bounds[x + 1] - bounds[x]);
			if (rc < 0)
				goto out;
			nx[x] = x + 1;
		}
	}
	rc = 0;
out:
	free(pc);
	free(bounds);
	free(nx);
	if (rc < 0) {
		profile_free(out);
		rb_errfmt(err, errlen, rc, "out of memory");
	}
	return rc;
}

/* ---- bitmaps ---- */

static bool bit_get(const uint64_t *b, uint64_t i)
{
	return b[i >> 6] >> (i & 63) & 1;
}

/* The first bit in [from, to) that is val, or to. */
static uint64_t bit_find(const uint64_t *b, uint64_t from, uint64_t to, bool val)
{
	while (from < to) {
		uint64_t w = b[from >> 6];

		if (!val)
			w = ~w;
		w &= ~0ULL << (from & 63);
		if (w) {
			uint64_t i = (from & ~63ULL) + (uint64_t)__builtin_ctzll(w);

			return i < to ? i : to;
		}
		from = (from | 63) + 1;
	}
	return to;
}

/* Set the bits [from, to); how many were clear. */
static uint64_t bit_set_range(uint64_t *b, uint64_t from, uint64_t to)
{
	uint64_t set = 0;

	while (from < to) {
		unsigned int lo = (unsigned int)(from & 63);
		uint64_t span = to - from < 64 - lo ? to - from : 64 - lo;
		uint64_t mask = (span == 64 ? ~0ULL : ((1ULL << span) - 1)) << lo;
		uint64_t *w = &b[from >> 6];

		set += (uint64_t)__builtin_popcountll(mask & ~*w);
		*w |= mask;
		from += span;
	}
	return set;
}

static uint64_t *bitmap_new(uint64_t bits)
{
	uint64_t words = bits / 64 + 1;

	if (words > SIZE_MAX / sizeof(uint64_t))
		return NULL;
	return calloc((size_t)words, sizeof(uint64_t));
}

/* ---- the sampler ---- */

int profile_sampler_init(struct profile_sampler *s, int fd, uint64_t size)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t w = 1u << 30;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (fd < 0 || pg < (long)PROFILE_PAGE_MIN || pg > (long)PROFILE_PAGE_MAX || (pg & (pg - 1)))
		return -EINVAL;
	s->fd = fd;
	s->size = size;
	s->page = (uint32_t)pg;
	s->npages = size / s->page + (size % s->page != 0);
	/* A power of two of at least a page, so halving it keeps windows
	 * page aligned; no larger than the file needs. */
	while (w > s->page && w / 2 >= size)
		w /= 2;
	if (w < s->page)
		w = s->page;
	s->window = w;
	s->seen = bitmap_new(s->npages);
	s->vec = malloc(w / s->page);
	if (!s->seen || !s->vec) {
		profile_sampler_free(s);
		return -ENOMEM;
	}
	return 0;
}

void profile_sampler_free(struct profile_sampler *s)
{
	free(s->seen);
	free(s->vec);
	s->seen = NULL;
	s->vec = NULL;
}

int profile_sample(struct profile_sampler *s, struct profile *p, uint64_t *added)
{
	uint64_t off = 0, got = 0;
	int rc = 0;

	while (off < s->size) {
		size_t len = s->size - off < s->window ? (size_t)(s->size - off) : s->window;
		uint64_t base = off / s->page, i, pages;
		void *map;

		/* Mapping the file reads nothing: no page table entry is made
		 * until the mapping is touched, and it never is. */
		map = mmap(NULL, len, PROT_READ, MAP_SHARED, s->fd, (off_t)off);
		if (map == MAP_FAILED) {
			rc = -errno;
			if (rc == -ENOMEM && s->window > s->page) {
				s->window /= 2;   /* short of address space */
				continue;
			}
			break;
		}
		/* For a file mapping, mincore() looks up each page in the
		 * file's page cache: bit 0 set when present and up to date
		 * (a page still being read is not, and shows up next time). */
		rc = mincore(map, len, s->vec) < 0 ? -errno : 0;
		(void)munmap(map, len);
		if (rc < 0)
			break;
		pages = len / s->page + (len % s->page != 0);
		for (i = 0; i < pages; i++) {
			uint64_t poff, plen;

			if (!(s->vec[i] & 1) || bit_get(s->seen, base + i))
				continue;
			s->seen[(base + i) >> 6] |= 1ULL << ((base + i) & 63);
			poff = (base + i) * s->page;
			plen = s->size - poff < s->page ? s->size - poff : s->page;
			rc = profile_add(p, poff, plen);
			if (rc < 0)
				goto out;
			got += plen;
		}
		off += len;
	}
out:
	if (added)
		*added = got;
	return rc;
}

/* ---- the copy order ---- */

int rangeq_init(struct rangeq *q, uint64_t size, uint32_t page, const struct profile *p)
{
	size_t i;

	memset(q, 0, sizeof(*q));
	if (page < PROFILE_PAGE_MIN || (page & (page - 1)))
		return -EINVAL;
	if (p && p->id.size != size)
		return -EINVAL;
	q->size = size;
	q->page = page;
	q->npages = size / page + (size % page != 0);
	q->left = q->npages;
	q->taken = bitmap_new(q->npages);
	if (!q->taken)
		return -ENOMEM;
	if (p && p->n) {
		if (p->n > SIZE_MAX / sizeof(*q->pr)) {
			rangeq_free(q);
			return -ENOMEM;
		}
		q->pr = malloc(p->n * sizeof(*q->pr));
		if (!q->pr) {
			rangeq_free(q);
			return -ENOMEM;
		}
		for (i = 0; i < p->n; i++) {
			uint64_t off = p->r[i].off, len = p->r[i].len, end;

			if (len == 0 || off >= size || len > size - off) {
				rangeq_free(q);
				return -EINVAL;
			}
			end = off + len;
			/* in pages: every page the range touches */
			q->pr[i].off = off / page;
			q->pr[i].len = end / page + (end % page != 0) - q->pr[i].off;
		}
		q->npr = p->n;
		q->cur = q->pr[0].off;
	}
	return 0;
}

void rangeq_free(struct rangeq *q)
{
	free(q->taken);
	free(q->pr);
	memset(q, 0, sizeof(*q));
}

void rangeq_mark_done(struct rangeq *q, uint64_t off, uint64_t len)
{
	uint64_t first, last, end;

	if (off >= q->size || len == 0)
		return;
	end = len >= q->size - off ? q->size : off + len;
	first = off / q->page + (off % q->page != 0);
	last = end == q->size ? q->npages : end / q->page;
	if (first < last)
		q->left -= bit_set_range(q->taken, first, last);
}

static int take(struct rangeq *q, uint64_t x, uint64_t lim, uint64_t *off, uint64_t *len)
{
	uint64_t y = bit_find(q->taken, x, lim, true);
	uint64_t end = y == q->npages ? q->size : y * q->page;

	q->left -= bit_set_range(q->taken, x, y);
	q->cur = y;
	*off = x * q->page;
	*len = end - *off;
	return 1;
}

int rangeq_next(struct rangeq *q, uint64_t max, uint64_t *off, uint64_t *len)
{
	uint64_t maxp = max / q->page ? max / q->page : 1, x;

	while (q->ri < q->npr) {
		const struct profile_range *r = &q->pr[q->ri];
		uint64_t end = r->off + r->len;

		x = bit_find(q->taken, q->cur > r->off ? q->cur : r->off, end, false);
		if (x < end)
			return take(q, x, end - x > maxp ? x + maxp : end, off, len);
		q->ri++;
		q->cur = q->ri < q->npr ? q->pr[q->ri].off : 0;
	}
	x = bit_find(q->taken, q->cur, q->npages, false);
	if (x >= q->npages)
		return 0;
	return take(q, x, q->npages - x > maxp ? x + maxp : q->npages, off, len);
}

uint64_t rangeq_left(const struct rangeq *q)
{
	uint64_t tail = q->size % q->page;

	if (q->left == 0)
		return 0;
	if (tail && !bit_get(q->taken, q->npages - 1))
		return (q->left - 1) * q->page + tail;
	return q->left * q->page;
}

/* ---- ramboot profile ---- */

#define PROFILE_DIR "/run/ramboot"
#define PROFILE_OUT PROFILE_DIR "/profile"
#define PROFILE_PID PROFILE_DIR "/profile.pid"
#define STOP_WAIT_S 30

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static void usage(FILE *out)
{
	fputs("Usage: ramboot profile record --image=FILE [OPTIONS]\n"
	      "       ramboot profile --stop\n"
	      "       ramboot profile merge -o OUT PROFILE...\n"
	      "       ramboot profile show PROFILE\n"
	      "\n"
	      "record: note which ranges of the image FILE get read (its page cache, sampled\n"
	      "with mincore) in first-touch order until a stop point, then write the profile.\n"
	      "      --image=FILE      the image file (or block device) the boot reads\n"
	      "      --out=FILE        where to write it (default " PROFILE_OUT ")\n"
	      "      --interval=S      seconds between samples (default 0.2)\n"
	      "      --until=S         stop S seconds after the start (default: no limit)\n"
	      "      --stop-file=PATH  stop once PATH exists\n"
	      "      --manifest=FILE   tag the profile with the image's SHA-256 from its manifest\n"
	      "      --sha256=HEX      the same, given directly\n"
	      "    It also stops on SIGTERM, SIGINT and 'ramboot profile --stop' (the\n"
	      "    recorder's pid is in " PROFILE_PID ").\n"
	      "--stop: stop the running recorder and wait until it has written the profile.\n"
	      "merge:  merge profiles of one image recorded on several clients into OUT.\n"
	      "show:   print a profile: identity, ranges in order, bytes, coverage.\n"
	      "\n"
	      "Exit codes: 0 ok, 1 runtime error (I/O, bad profile, no recorder), 2 usage.\n",
	      out);
}


/* State and start time (clock ticks after boot: with the pid, a name
 * for a process that no later process gets) of pid, from /proc (never
 * prefixed: a process is not a setting). 0,
 * -ENOENT when there is no such process, or -errno. */
static int proc_start(pid_t pid, char *state, unsigned long long *start)
{
	char path[PATH_MAX], buf[1024], *p, *f[20];
	uint64_t v;
	ssize_t n;
	int i;

	/* The processes of this machine, not of a fixture tree: the real
	 * /proc, whatever the root prefix. */
	if (snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	n = read_str_abs(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	/* "pid (comm) state ppid ...": comm may hold spaces and ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	p++;
	for (i = 0; i < 20; i++) {
		p += strspn(p, " ");
		if (!*p)
			return -EINVAL;
		f[i] = p;
		p += strcspn(p, " ");
		if (*p)
			*p++ = '\0';
	}
	/* f[0] is field 3 (state), f[19] field 22 (starttime) */
	if (parse_u64(f[19], &v) < 0)
		return -EINVAL;
	*state = f[0][0];
	*start = v;
	return 0;
}

/* Is pid the process that started at start, and not ended? */
static bool proc_alive(pid_t pid, unsigned long long start)
{
	unsigned long long s;
	char state;

	if (proc_start(pid, &state, &s) < 0)
		return false;
	return s == start && state != 'Z' && state != 'X';
}

/* "PID STARTTIME\n", from name in dirfd (or AT_FDCWD and a path). */
static int pidfile_read(int dirfd, const char *name, pid_t *pid, unsigned long long *start)
{
	char buf[64], *f[3];
	uint64_t a, b;
	ssize_t n;
	int fd, rc;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	n = read_full(fd, buf, sizeof(buf) - 1);
	rc = close_checked(fd);
	if (n < 0)
		return (int)n;
	if (rc < 0)
		return rc;
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	if (fields(buf, f, 2) != 2 || parse_u64(f[0], &a) < 0 || parse_u64(f[1], &b) < 0 ||
	    a == 0 || a > INT32_MAX)
		return -EINVAL;
	*pid = (pid_t)a;
	*start = b;
	return 0;
}

static int mkdir_one(const char *path)
{
	return mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

/* The kernel shows the page cache of a file only to a process that
 * owns it, may write it, or has CAP_FOWNER (mm/mincore.c,
 * can_do_mincore()); to others it says every page is resident. */
bool profile_mincore_shows(const struct stat *st, const char *path)
{
	if (geteuid() == 0 || st->st_uid == geteuid())
		return true;
	return faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0;
}

/* Sleep s seconds; a signal ends it early. */
static void nap_s(double s)
{
	struct timespec ts;

	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	(void)nanosleep(&ts, NULL);
}

/* Remove the pid file if it still names this process. By the directory
 * opened at the start: after a switch of root, the path names nothing. */
static void pidfile_remove(int dirfd, unsigned long long start)
{
	unsigned long long s;
	pid_t pid;

	if (pidfile_read(dirfd, "profile.pid", &pid, &s) == 0 && pid == getpid() && s == start)
		(void)unlinkat(dirfd, "profile.pid", 0);
}

enum { OPT_IMAGE = 256, OPT_OUT, OPT_INTERVAL, OPT_UNTIL, OPT_STOPFILE, OPT_MANIFEST, OPT_SHA };

static int cmd_record(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "image", required_argument, NULL, OPT_IMAGE },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "until", required_argument, NULL, OPT_UNTIL },
		{ "stop-file", required_argument, NULL, OPT_STOPFILE },
		{ "manifest", required_argument, NULL, OPT_MANIFEST },
		{ "sha256", required_argument, NULL, OPT_SHA },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *image = NULL, *out = NULL, *stop_file = NULL, *manifest = NULL;
	char sha[65] = "", dir[PATH_MAX], outbuf[PATH_MAX], pidpath[PATH_MAX], err[PATH_MAX + 128];
	double interval = 0.2, until = -1, t0;
	unsigned long long mystart;
	struct profile_sampler s;
	struct outfile of, pf;
	struct sigaction sa;
	struct profile p;
	struct stat st, inputs[2];
	size_t ninputs = 0;
	uint64_t size = 0;
	char state, *text = NULL;
	size_t len;
	pid_t other;
	int c, fd, dirfd, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case OPT_IMAGE: image = optarg; break;
		case OPT_OUT: out = optarg; break;
		case OPT_STOPFILE: stop_file = optarg; break;
		case OPT_MANIFEST: manifest = optarg; break;
		case OPT_INTERVAL:
			if (parse_seconds(optarg, &interval) < 0 || interval <= 0)
				return rb_usage("profile", "--interval: '%s' is not a number of seconds above 0",
						   optarg);
			break;
		case OPT_UNTIL:
			if (parse_seconds(optarg, &until) < 0)
				return rb_usage("profile", "--until: '%s' is not a number of seconds", optarg);
			break;
		case OPT_SHA:
			if (strlen(optarg) != 64 || sha256_hex_parse(optarg, sha) < 0)
				return rb_usage("profile", "--sha256: '%s' is not 64 hex digits", optarg);
			break;
		case 'h': usage(stdout); return RB_EXIT_OK;
		default:
			return rb_usage("profile", "unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc)
		return rb_usage("profile", "record takes no arguments, only options ('%s')", argv[optind]);
	if (!image)
		return rb_usage("profile", "record needs --image=FILE");
	if (manifest && sha[0])
		return rb_usage("profile", "--manifest and --sha256 both give the image's hash: one only");

	fd = open(image, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		rb_err("%s: %s", image, strerror(errno));
		return RB_EXIT_FAIL;
	}
	rc = fstat(fd, &st) < 0 ? -errno : 0;
	if (rc == 0 && S_ISREG(st.st_mode))
		size = (uint64_t)st.st_size;
	else if (rc == 0 && S_ISBLK(st.st_mode)) {
		/* a block device's size: its end (as BLKGETSIZE64 has it) */
		off_t end = lseek(fd, 0, SEEK_END);

		rc = end < 0 ? -errno : 0;
		size = end < 0 ? 0 : (uint64_t)end;
	} else if (rc == 0)
		rc = -EINVAL;
	if (rc < 0) {
		rb_err("%s: %s", image, rc == -EINVAL ? "not a regular file or block device" :
		       strerror(-rc));
		(void)close(fd);
		return RB_EXIT_FAIL;
	}
	if (!profile_mincore_shows(&st, image)) {
		rb_err("%s: the kernel shows the page cache of a file only to its owner, a "
		       "process that may write it, or root", image);
		(void)close(fd);
		return RB_EXIT_FAIL;
	}
	if (manifest) {
		struct manifest m;

		if (manifest_load(manifest, &m, err, sizeof(err)) < 0) {
			rb_err("%s: %s", manifest, err);
			(void)close(fd);
			return RB_EXIT_FAIL;
		}
		if (m.size != size) {
			rb_err("%s: describes an image of %" PRIu64 " bytes, %s has %" PRIu64,
			       manifest, m.size, image, size);
			(void)close(fd);
			return RB_EXIT_FAIL;
		}
		memcpy(sha, m.sha256, sizeof(sha));
	}

	/* Every name is resolved now: started in the initramfs, the
	 * recorder lives on after the switch of root, where "/run" in its
	 * own (old) root names nothing any more. The directories stay open. */
	rc = rb_path(dir, sizeof(dir), "/run");
	if (rc == 0)
		rc = mkdir_one(dir);
	if (rc == 0)
		rc = rb_path(dir, sizeof(dir), PROFILE_DIR);
	if (rc == 0)
		rc = mkdir_one(dir);
	if (rc == 0)
		rc = rb_path(pidpath, sizeof(pidpath), PROFILE_PID);
	if (rc == 0 && !out)
		rc = rb_path(outbuf, sizeof(outbuf), PROFILE_OUT);
	if (rc < 0) {
		rb_err("%s: %s", dir, strerror(-rc));
		(void)close(fd);
		return RB_EXIT_FAIL;
	}
	if (!out)
		out = outbuf;
	if (proc_start(getpid(), &state, &mystart) < 0) {
		rb_err("cannot read this process's start time from /proc");
		(void)close(fd);
		return RB_EXIT_FAIL;
	}
	{
		unsigned long long ostart;

		if (pidfile_read(AT_FDCWD, pidpath, &other, &ostart) == 0 && other != getpid() &&
		    proc_alive(other, ostart)) {
			rb_err("a recorder is running already (pid %d)", (int)other);
			(void)close(fd);
			return RB_EXIT_FAIL;
		}
	}
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		rb_err("%s: %s", dir, strerror(errno));
		(void)close(fd);
		return RB_EXIT_FAIL;
	}

	/* A stop request is handled from the moment the pid is out. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGINT, &sa, NULL);

	/* Never over what was read: the image, its manifest. */
	inputs[ninputs++] = st;
	if (manifest && stat(manifest, &inputs[ninputs]) == 0)
		ninputs++;
	rc = outfile_open_protect(&of, out, 0644, OUTFILE_REPLACE, inputs, ninputs, err,
				  sizeof(err));
	if (rc < 0) {
		rb_err("%s", err);
		goto fail_early;
	}
	rc = outfile_open(&pf, pidpath, 0644, OUTFILE_REPLACE, NULL, err, sizeof(err));
	if (rc == 0) {
		char line[64];
		int n = snprintf(line, sizeof(line), "%d %llu\n", (int)getpid(), mystart);

		rc = write_all(pf.fd, line, (size_t)n);
		if (rc == 0)
			rc = outfile_commit(&pf);
		else
			outfile_abort(&pf);
		if (rc < 0)
			snprintf(err, sizeof(err), "%s: %s", pidpath, strerror(-rc));
	}
	if (rc < 0) {
		rb_err("%s", err);
		outfile_abort(&of);
		goto fail_early;
	}

	profile_init(&p);
	rc = profile_sampler_init(&s, fd, size);
	if (rc < 0) {
		rb_err("%s: %s", image, strerror(-rc));
		goto fail;
	}
	p.page_size = s.page;
	t0 = now_sec();
	for (;;) {
		double left;

		rc = profile_sample(&s, &p, NULL);
		if (rc < 0) {
			rb_err("%s: sampling its page cache: %s", image, strerror(-rc));
			goto fail;
		}
		if (stop_signal || (stop_file && access(stop_file, F_OK) == 0))
			break;
		left = until >= 0 ? until - (now_sec() - t0) : interval;
		if (left <= 0)
			break;
		nap_s(left < interval ? left : interval);
	}

	/* The identity, read after the last sample: these reads are not
	 * the boot's. */
	rc = profile_image_id(fd, size, &p.id);
	if (rc < 0) {
		rb_err("%s: reading its first and last MiB: %s", image, strerror(-rc));
		goto fail;
	}
	memcpy(p.id.sha256, sha, sizeof(sha));
	rc = profile_format(&p, &text, &len, err, sizeof(err));
	if (rc < 0) {
		rb_err("%s", err);
		goto fail;
	}
	rc = write_all(of.fd, text, len);
	if (rc == 0)
		rc = outfile_commit(&of);
	if (rc < 0) {
		rb_err("%s: write error: %s", out, strerror(-rc));
		goto fail;
	}
	{
		char a[32];
		uint64_t bytes = profile_bytes(&p);

		rb_info("%s: ranges: %zu, %s (%.1f %% of the image) in %.1f s", out, p.n,
			fmt_size(bytes, a, sizeof(a)), size ? 100.0 * (double)bytes / (double)size : 0,
			now_sec() - t0);
	}
	free(text);
	profile_sampler_free(&s);
	profile_free(&p);
	pidfile_remove(dirfd, mystart);
	(void)close(dirfd);
	return close_checked(fd) < 0 ? RB_EXIT_FAIL : RB_EXIT_OK;

fail:
	/* The pid file stays: --stop, which waits for it to go, then finds
	 * a recorder that ended without removing it, and reports that no
	 * profile was written. The next recorder replaces it (its process
	 * has ended). */
	free(text);
	profile_sampler_free(&s);
	profile_free(&p);
	outfile_abort(&of);
fail_early:
	(void)close(dirfd);
	(void)close(fd);
	return RB_EXIT_FAIL;
}

static int cmd_stop(void)
{
	unsigned long long start, s2;
	char path[PATH_MAX];
	double deadline;
	pid_t pid, p2;
	int rc;

	if (rb_path(path, sizeof(path), PROFILE_PID) < 0) {
		rb_err("root prefix too long");
		return RB_EXIT_FAIL;
	}
	rc = pidfile_read(AT_FDCWD, path, &pid, &start);
	if (rc == -ENOENT) {
		rb_err("no recorder is running (no %s)", path);
		return RB_EXIT_FAIL;
	}
	if (rc < 0) {
		rb_err("%s: %s", path, rc == -EINVAL ? "not a recorder's pid file" : strerror(-rc));
		return RB_EXIT_FAIL;
	}
	if (!proc_alive(pid, start)) {
		rb_err("no recorder is running (%s names pid %d, which has ended)", path, (int)pid);
		return RB_EXIT_FAIL;
	}
	if (kill(pid, SIGTERM) < 0) {
		rb_err("cannot signal the recorder (pid %d): %s", (int)pid, strerror(errno));
		return RB_EXIT_FAIL;
	}
	/* Done when the recorder has removed its pid file, which it does
	 * only once the profile is written: one that fails leaves it. */
	deadline = now_sec() + STOP_WAIT_S;
	for (;;) {
		rc = pidfile_read(AT_FDCWD, path, &p2, &s2);
		if (rc == -ENOENT || (rc == 0 && (p2 != pid || s2 != start)))
			return RB_EXIT_OK;
		if (!proc_alive(pid, start)) {
			rc = pidfile_read(AT_FDCWD, path, &p2, &s2);
			if (rc == -ENOENT || (rc == 0 && (p2 != pid || s2 != start)))
				return RB_EXIT_OK;
			rb_err("the recorder (pid %d) ended without writing its profile", (int)pid);
			return RB_EXIT_FAIL;
		}
		if (now_sec() > deadline) {
			rb_err("the recorder (pid %d) did not finish within %d s", (int)pid,
			       STOP_WAIT_S);
			return RB_EXIT_FAIL;
		}
		nap_ms(20);
	}
}

static int cmd_merge(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	char err[PATH_MAX + 128];
	const struct profile **pp = NULL;
	struct profile *in = NULL, merged;
	int c, i, n, rc = RB_EXIT_FAIL;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'h': usage(stdout); return RB_EXIT_OK;
		default:
			return rb_usage("profile", "unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (!out)
		return rb_usage("profile", "merge needs -o OUT");
	n = argc - optind;
	if (n < 1)
		return rb_usage("profile", "merge needs at least one PROFILE");
	in = calloc((size_t)n, sizeof(*in));
	pp = calloc((size_t)n, sizeof(*pp));
	if (!in || !pp) {
		rb_err("%s", strerror(ENOMEM));
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (profile_load(argv[optind + i], &in[i], err, sizeof(err)) < 0) {
			rb_err("%s: %s", argv[optind + i], err);
			goto out;
		}
		pp[i] = &in[i];
	}
	if (profile_merge(pp, (size_t)n, &merged, err, sizeof(err)) < 0) {
		rb_err("%s", err);
		goto out;
	}
	if (profile_write(&merged, out, err, sizeof(err)) < 0)
		rb_err("%s", err);
	else
		rc = RB_EXIT_OK;
	profile_free(&merged);
out:
	for (i = 0; in && i < n; i++)
		profile_free(&in[i]);
	free(in);
	free(pp);
	return rc;
}

static int cmd_show(int argc, char **argv)
{
	char err[PATH_MAX + 128], a[32], b[32];
	struct profile p;
	uint64_t bytes;
	size_t i;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return RB_EXIT_OK;
	}
	if (argc != 2)
		return rb_usage("profile", "show needs one PROFILE");
	if (profile_load(argv[1], &p, err, sizeof(err)) < 0) {
		rb_err("%s: %s", argv[1], err);
		return RB_EXIT_FAIL;
	}
	bytes = profile_bytes(&p);
	printf("image:             %" PRIu64 " bytes (%s)\n", p.id.size,
	       fmt_size(p.id.size, a, sizeof(a)));
	if (p.id.sha256[0])
		printf("image-sha256:      %s\n", p.id.sha256);
	if (p.id.ends_sha256[0])
		printf("image-ends-sha256: %s\n", p.id.ends_sha256);
	printf("page size:         %" PRIu32 "\n", p.page_size);
	printf("ranges:            %zu, %" PRIu64 " bytes (%s), %.2f %% of the image\n", p.n,
	       bytes, fmt_size(bytes, b, sizeof(b)),
	       p.id.size ? 100.0 * (double)bytes / (double)p.id.size : 0.0);
	if (p.n)
		printf("\n%8s %20s %14s\n", "order", "offset", "length");
	for (i = 0; i < p.n; i++)
		printf("%8zu %20" PRIu64 " %14" PRIu64 "\n", i + 1, p.r[i].off, p.r[i].len);
	profile_free(&p);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		rb_err("stdout: write error");
		return RB_EXIT_FAIL;
	}
	return RB_EXIT_OK;
}

int cmd_profile(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;

	if (!sub)
		return rb_usage("profile", "need record, merge, show or --stop");
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
		usage(stdout);
		return RB_EXIT_OK;
	}
	if (!strcmp(sub, "--stop")) {
		if (argc != 2)
			return rb_usage("profile", "--stop takes nothing more");
		return cmd_stop();
	}
	if (!strcmp(sub, "record"))
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(sub, "merge"))
		return cmd_merge(argc - 1, argv + 1);
	if (!strcmp(sub, "show"))
		return cmd_show(argc - 1, argv + 1);
	return rb_usage("profile", "unknown command '%s'", sub);
}
