// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The boot profile text: the profile in memory, its checks, parse,
 * format, load and write; an image's identity and the match of a profile
 * to it. format/profile.h has the format.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/hex.h"
#include "lib/msg.h"
#include "lib/outfile.h"
#include "lib/sha256.h"
#include "format/manifest.h"
#include "format/profile.h"

#define LINE_MAX_LEN 256          /* with the NUL: 255 bytes of text */

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
int profile_check(const struct profile *p, char *err, size_t errlen)
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
int profile_parse_u64(const char *s, uint64_t *out)
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
int profile_fields(char *line, char **f, int max)
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

/* Where the parser is: what it has seen, and the line of each range
 * (an overlap names both lines). */
struct parser {
	struct profile *p;
	bool magic, have_size, have_page;
	unsigned int lineno;
	unsigned int *lines;      /* lines[i]: the line of range i */
	size_t ncap;
	char *err;
	size_t errlen;
};

static int perr_at(const struct parser *ps, const char *what)
{
	return perr(ps->err, ps->errlen, ps->lineno, what);
}

/* The next line of buf from *pos into line (NUL-terminated, without its
 * newline and a trailing CR). 0 or -EINVAL (a NUL byte, too long). */
static int next_line(struct parser *ps, const char *buf, size_t len, size_t *pos, char *line)
{
	size_t n = 0;

	while (*pos < len && buf[*pos] != '\n') {
		if (buf[*pos] == '\0')
			return perr_at(ps, "NUL byte");
		if (n + 1 >= LINE_MAX_LEN)
			return perr_at(ps, "line too long");
		line[n++] = buf[(*pos)++];
	}
	(*pos)++;   /* the newline */
	if (n && line[n - 1] == '\r')
		n--;
	line[n] = '\0';
	return 0;
}

static int parse_magic(struct parser *ps, char **f, int nf)
{
	if (strcmp(f[0], "ramboot-profile"))
		return perr_at(ps, "not a ramboot profile");
	if (nf != 2 || strcmp(f[1], "1"))
		return perr_at(ps, "unsupported profile version");
	ps->magic = true;
	return 0;
}

static int parse_range(struct parser *ps, char **f, int nf)
{
	struct profile *p = ps->p;
	const char *why;
	uint64_t v, w;
	int rc;

	if (nf != 3 || profile_parse_u64(f[1], &v) < 0 || profile_parse_u64(f[2], &w) < 0)
		return perr_at(ps, "bad range");
	if (!ps->have_size || !ps->have_page)
		return perr_at(ps, ps->have_size ? "range before page-size" : "range before image-size");
	why = range_bad(p, v, w);
	if (why)
		return perr_at(ps, why);
	if (p->n == ps->ncap) {
		size_t ncap = ps->ncap ? ps->ncap * 2 : 64;
		unsigned int *nl;

		nl = ncap <= SIZE_MAX / sizeof(*nl) ? realloc(ps->lines, ncap * sizeof(*nl)) : NULL;
		if (!nl)
			return rb_errfmt(ps->err, ps->errlen, -ENOMEM, "out of memory");
		ps->lines = nl;
		ps->ncap = ncap;
	}
	rc = append(p, v, w);
	if (rc < 0)
		return rb_errfmt(ps->err, ps->errlen, rc, "out of memory");
	ps->lines[p->n - 1] = ps->lineno;
	return 0;
}

static int parse_hash(struct parser *ps, char **f, int nf)
{
	bool whole = !strcmp(f[0], "image-sha256");
	char *dst = whole ? ps->p->id.sha256 : ps->p->id.ends_sha256;

	if (dst[0])
		return perr_at(ps, whole ? "image-sha256 given twice" : "image-ends-sha256 given twice");
	if (nf != 2 || strlen(f[1]) != 64 || sha256_hex_parse(f[1], dst) < 0)
		return perr_at(ps, whole ? "bad image-sha256" : "bad image-ends-sha256");
	return 0;
}

/* A header key: before the ranges, once, one value. */
static int parse_key(struct parser *ps, char **f, int nf)
{
	struct profile *p = ps->p;
	uint64_t v;

	if (p->n)
		return perr_at(ps, "header key after the ranges");
	if (!strcmp(f[0], "image-size")) {
		if (ps->have_size)
			return perr_at(ps, "image-size given twice");
		if (nf != 2 || profile_parse_u64(f[1], &p->id.size) < 0)
			return perr_at(ps, "bad image-size");
		ps->have_size = true;
		return 0;
	}
	if (!strcmp(f[0], "page-size")) {
		if (ps->have_page)
			return perr_at(ps, "page-size given twice");
		if (nf != 2 || profile_parse_u64(f[1], &v) < 0 || !page_size_ok(v))
			return perr_at(ps, "bad page-size");
		p->page_size = (uint32_t)v;
		ps->have_page = true;
		return 0;
	}
	if (!strcmp(f[0], "image-sha256") || !strcmp(f[0], "image-ends-sha256"))
		return parse_hash(ps, f, nf);
	return perr_at(ps, "unknown key");
}

/* After the last line: what is required, and no overlap. */
static int parse_end(struct parser *ps)
{
	const struct profile *p = ps->p;
	size_t a, b;
	int rc;

	if (!ps->magic)
		return perr_at(ps, "empty profile");
	if (!ps->have_size)
		return perr_at(ps, "no image-size");
	if (!ps->have_page)
		return perr_at(ps, "no page-size");
	if (!p->id.sha256[0] && !p->id.ends_sha256[0])
		return perr_at(ps, "no image-sha256 or image-ends-sha256");
	rc = find_overlap(p->r, p->n, &a, &b);
	if (rc < 0)
		return rb_errfmt(ps->err, ps->errlen, rc, "out of memory");
	if (rc) {
		char why[64];

		snprintf(why, sizeof(why), "range overlaps the range on line %u", ps->lines[a]);
		return perr(ps->err, ps->errlen, ps->lines[b], why);
	}
	return 0;
}

int profile_parse(const char *buf, size_t len, struct profile *p, char *err, size_t errlen)
{
	struct parser ps = { .p = p, .err = err, .errlen = errlen };
	size_t pos = 0;
	int rc = 0;

	profile_init(p);
	if (err && errlen)
		err[0] = '\0';
	if (len > PROFILE_MAX)
		return perr(err, errlen, 0, "profile too large");
	while (pos < len && rc == 0) {
		char line[LINE_MAX_LEN], *f[4];
		int nf;

		ps.lineno++;
		rc = next_line(&ps, buf, len, &pos, line);
		if (rc < 0)
			break;
		nf = profile_fields(line, f, 3);
		if (nf == 0 || f[0][0] == '#')
			continue;
		if (!ps.magic)
			rc = parse_magic(&ps, f, nf);
		else if (!strcmp(f[0], "range"))
			rc = parse_range(&ps, f, nf);
		else
			rc = parse_key(&ps, f, nf);
	}
	if (rc == 0)
		rc = parse_end(&ps);
	free(ps.lines);
	if (rc < 0)
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
