// SPDX-License-Identifier: GPL-2.0-or-later
/* HTTP/1.1 as text: see http.h. RFC 9110 (semantics), RFC 9112 (syntax). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "lib/msg.h"
#include "format/http.h"

#define SCHEME "http://"

int http_url_parse(const char *url, struct http_url *u, char *err, size_t errlen)
{
	const char *p, *host, *end, *path;
	size_t hlen;

	memset(u, 0, sizeof(*u));
	u->port = 80;
	if (strncasecmp(url, SCHEME, strlen(SCHEME)))
		return rb_errfmt(err, errlen, strstr(url, "://") ? -EPROTONOSUPPORT : -EINVAL,
				 "%.200s: not an http:// URL", url);
	host = url + strlen(SCHEME);
	path = host + strcspn(host, "/?#");
	if (*host == '[') {
		end = memchr(host, ']', (size_t)(path - host));
		if (!end)
			return rb_errfmt(err, errlen, -EINVAL, "%.200s: no ']' after the IPv6 address",
					 url);
		host++;
		u->ipv6 = true;
		p = end + 1;
	} else {
		end = memchr(host, ':', (size_t)(path - host));
		if (!end)
			end = path;
		p = end;
	}
	hlen = (size_t)(end - host);
	if (hlen == 0 || hlen >= sizeof(u->host))
		return rb_errfmt(err, errlen, -EINVAL, "%.200s: no host, or a host name too long",
				 url);
	memcpy(u->host, host, hlen);
	if (strcspn(u->host, "@ \t\r\n") != hlen)
		return rb_errfmt(err, errlen, -EINVAL, "%.200s: bad host", url);
	if (p < path) {
		unsigned long port = 0;

		if (*p != ':' || p + 1 == path)
			return rb_errfmt(err, errlen, -EINVAL, "%.200s: bad port", url);
		for (p++; p < path; p++) {
			if (*p < '0' || *p > '9' || (port = port * 10 + (unsigned long)(*p - '0')) > 65535)
				return rb_errfmt(err, errlen, -EINVAL, "%.200s: bad port", url);
		}
		if (port == 0)
			return rb_errfmt(err, errlen, -EINVAL, "%.200s: bad port", url);
		u->port = (uint16_t)port;
	}
	hlen = strcspn(path, "#");
	if (*path != '/')
		u->path[0] = '/';
	if (hlen + 2 > sizeof(u->path))
		return rb_errfmt(err, errlen, -EINVAL, "%.200s: path too long", url);
	memcpy(u->path + (*path != '/'), path, hlen);
	/* A request line is one line of visible characters. */
	for (p = u->path; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return rb_errfmt(err, errlen, -EINVAL, "%.200s: space or control character "
					 "in the path", url);
	return 0;
}

int http_url_join(const char *base, const char *location, char *out, size_t outlen)
{
	size_t n;
	int w;

	if (!strncasecmp(location, SCHEME, strlen(SCHEME))) {
		w = snprintf(out, outlen, "%s", location);
	} else if (location[0] == '/' && location[1] != '/' &&
		   !strncasecmp(base, SCHEME, strlen(SCHEME))) {
		n = strlen(SCHEME) + strcspn(base + strlen(SCHEME), "/?#");
		w = snprintf(out, outlen, "%.*s%s", (int)n, base, location);
	} else {
		return -EINVAL;
	}
	return w < 0 || (size_t)w >= outlen ? -EINVAL : 0;
}

ssize_t http_head_len(const char *buf, size_t len)
{
	size_t i;

	/* Lines end in CRLF; a bare LF is accepted as well (RFC 9112 2.2). */
	for (i = 0; i < len && i < HTTP_HEAD_MAX; i++) {
		if (buf[i] != '\n')
			continue;
		if (i >= 1 && buf[i - 1] == '\n')
			return (ssize_t)i + 1;
		if (i >= 2 && buf[i - 1] == '\r' && buf[i - 2] == '\n')
			return (ssize_t)i + 1;
	}
	return len >= HTTP_HEAD_MAX ? -E2BIG : 0;
}

/* A decimal of at most 19 digits (no sign, no space): 0 or -1. */
static int dec(const char *s, size_t n, uint64_t *v)
{
	size_t i;

	if (n == 0 || n > 19)
		return -1;
	*v = 0;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (uint64_t)(s[i] - '0');
	}
	return 0;
}

/* "bytes FIRST-LAST/TOTAL", TOTAL a number or "*"; a 416's has "*" for
 * FIRST-LAST: no range, the total only (RFC 9110 14.4). */
static int content_range(const char *v, size_t n, struct http_resp *r)
{
	const char *dash, *slash, *e = v + n;

	if (n < 6 || strncasecmp(v, "bytes ", 6))
		return -1;
	v += 6;
	if (e - v > 2 && !memcmp(v, "*/", 2))
		return dec(v + 2, (size_t)(e - v - 2), &r->range_total);
	dash = memchr(v, '-', (size_t)(e - v));
	slash = memchr(v, '/', (size_t)(e - v));
	if (!dash || !slash || slash < dash || dec(v, (size_t)(dash - v), &r->range_first) ||
	    dec(dash + 1, (size_t)(slash - dash - 1), &r->range_last) ||
	    r->range_last < r->range_first)
		return -1;
	if (e - slash == 2 && slash[1] == '*')
		r->range_total = 0;
	else if (dec(slash + 1, (size_t)(e - slash - 1), &r->range_total) ||
		 r->range_last >= r->range_total)
		return -1;
	r->has_range = true;
	return 0;
}

static void text(char *dst, size_t cap, const char *v, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, v, n);
	dst[n] = '\0';
}

/* One "Name: value" line (without its line end) into r. */
static int header(const char *line, size_t n, struct http_resp *r, char *err, size_t errlen)
{
	const char *colon = memchr(line, ':', n), *v, *e = line + n;
	size_t name;
	uint64_t len;

	if (!colon || colon == line)
		return rb_errfmt(err, errlen, -EPROTO, "malformed header line");
	name = (size_t)(colon - line);
	if (memchr(line, ' ', name) || memchr(line, '\t', name))
		return rb_errfmt(err, errlen, -EPROTO, "space in a header name");
	for (v = colon + 1; v < e && (*v == ' ' || *v == '\t'); v++)
		;
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	for (const char *c = v; c < e; c++)
		if ((unsigned char)*c < ' ' && *c != '\t')
			return rb_errfmt(err, errlen, -EPROTO, "control character in a header");
#define IS(s) (name == sizeof(s) - 1 && !strncasecmp(line, s, name))
	if (IS("Content-Length")) {
		if (dec(v, (size_t)(e - v), &len) || (r->has_length && len != r->length))
			return rb_errfmt(err, errlen, -EPROTO, "bad Content-Length");
		r->has_length = true;
		r->length = len;
	} else if (IS("Content-Range")) {
		if (r->has_range || content_range(v, (size_t)(e - v), r))
			return rb_errfmt(err, errlen, -EPROTO, "bad Content-Range");
	} else if (IS("Transfer-Encoding")) {
		/* chunked is the last coding when there is one (RFC 9112
		 * 6.1); ours ask for no other. */
		if ((size_t)(e - v) == 7 && !strncasecmp(v, "chunked", 7))
			r->chunked = true;
		else if ((size_t)(e - v) != 8 || strncasecmp(v, "identity", 8))
			r->coded = true;
	} else if (IS("Connection")) {
		if ((size_t)(e - v) == 5 && !strncasecmp(v, "close", 5))
			r->close = true;
	} else if (IS("ETag")) {
		if ((size_t)(e - v) >= sizeof(r->etag))
			return rb_errfmt(err, errlen, -EPROTO, "ETag too long");
		text(r->etag, sizeof(r->etag), v, (size_t)(e - v));
	} else if (IS("Last-Modified")) {
		text(r->last_modified, sizeof(r->last_modified), v, (size_t)(e - v));
	} else if (IS("Location")) {
		if ((size_t)(e - v) >= sizeof(r->location))
			return rb_errfmt(err, errlen, -EPROTO, "Location too long");
		text(r->location, sizeof(r->location), v, (size_t)(e - v));
	}
#undef IS
	return 0;
}

int http_parse_head(const char *buf, size_t len, struct http_resp *r, char *err, size_t errlen)
{
	const char *p = buf, *e = buf + len, *nl;
	unsigned headers = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	if (len > HTTP_HEAD_MAX)
		return rb_errfmt(err, errlen, -EPROTO, "response head longer than %d bytes",
				 HTTP_HEAD_MAX);
	/* "HTTP/1.1 206 Partial Content" */
	if (len < 12 || memcmp(buf, "HTTP/1.", 7) || (buf[7] != '0' && buf[7] != '1') ||
	    buf[8] != ' ' || buf[9] < '1' || buf[9] > '5' || buf[10] < '0' || buf[10] > '9' ||
	    buf[11] < '0' || buf[11] > '9' || (len > 12 && buf[12] != ' ' && buf[12] != '\r' &&
					       buf[12] != '\n'))
		return rb_errfmt(err, errlen, -EPROTO, "not an HTTP/1.x status line");
	r->status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	nl = memchr(p, '\n', len);
	if (!nl)
		return rb_errfmt(err, errlen, -EPROTO, "no end of the status line");
	for (p = nl + 1; p < e; p = nl + 1) {
		size_t n;

		nl = memchr(p, '\n', (size_t)(e - p));
		if (!nl)
			return rb_errfmt(err, errlen, -EPROTO, "header line without an end");
		n = (size_t)(nl - p);
		if (n && p[n - 1] == '\r')
			n--;
		if (n == 0)
			break;                  /* the blank line */
		if (p[0] == ' ' || p[0] == '\t')
			return rb_errfmt(err, errlen, -EPROTO, "folded header line");
		if (++headers > HTTP_HEADERS_MAX)
			return rb_errfmt(err, errlen, -EPROTO, "more than %d header lines",
					 HTTP_HEADERS_MAX);
		rc = header(p, n, r, err, errlen);
		if (rc < 0)
			return rc;
	}
	if (p >= e)
		return rb_errfmt(err, errlen, -EPROTO, "no blank line after the headers");
	if (r->has_range && r->has_length && r->length != r->range_last - r->range_first + 1)
		return rb_errfmt(err, errlen, -EPROTO, "Content-Length disagrees with Content-Range");
	return 0;
}

int http_check_range(const struct http_resp *r, uint64_t first, uint64_t last, uint64_t size,
		     char *err, size_t errlen)
{
	if (r->status == 200)
		return rb_errfmt(err, errlen, -ERANGE, "the server ignored the range and sent "
				 "the whole file");
	if (r->status != 206)
		return rb_errfmt(err, errlen, -EPROTO, "HTTP status %d to a range", r->status);
	if (!r->has_range || r->range_first != first || r->range_last != last)
		return rb_errfmt(err, errlen, -EPROTO, "Content-Range is not the range asked for "
				 "(bytes %llu-%llu)", (unsigned long long)first,
				 (unsigned long long)last);
	if (!r->has_length || r->chunked || r->coded)
		return rb_errfmt(err, errlen, -EPROTO, "a range without a Content-Length");
	if (size && r->range_total && r->range_total != size)
		return rb_errfmt(err, errlen, -EPROTO, "Content-Range says the file has %llu "
				 "bytes, not %llu", (unsigned long long)r->range_total,
				 (unsigned long long)size);
	return 0;
}

enum { CK_SIZE, CK_EXT, CK_SIZE_LF, CK_DATA_CR, CK_DATA_LF, CK_TRAILER, CK_TRAILER_LF };

int http_chunk_byte(struct http_chunked *d, char c, char *err, size_t errlen)
{
	int x = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
		c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

	if (d->done || d->left)
		return rb_errfmt(err, errlen, -EPROTO, "chunked body: framing byte out of place");
	if (++d->line > HTTP_CHUNK_LINE_MAX && d->state < CK_DATA_CR)
		return rb_errfmt(err, errlen, -EPROTO, "chunked body: chunk size line longer than "
				 "%d bytes", HTTP_CHUNK_LINE_MAX);
	switch (d->state) {
	case CK_SIZE:
		if (x >= 0 && d->line <= 15) {
			d->size = d->size * 16 + (uint64_t)x;
			return 0;
		}
		if (x >= 0 || d->line == 1)
			break;
		if (c == ';' || c == ' ' || c == '\t') {
			d->state = CK_EXT;
			return 0;
		}
		/* the size line ends */
		/* fall through */
	case CK_EXT:
		if (c == '\r') {
			d->state = CK_SIZE_LF;
			return 0;
		}
		if (c != '\n') {
			if (d->state == CK_EXT && ((unsigned char)c >= ' ' || c == '\t'))
				return 0;
			break;
		}
		/* fall through */
	case CK_SIZE_LF:
		if (c != '\n')
			break;
		if (d->size > UINT64_MAX - d->total)
			return rb_errfmt(err, errlen, -EPROTO, "chunked body: too long");
		d->line = 0;
		d->total += d->size;
		d->left = d->size;
		d->size = 0;
		d->state = d->left ? CK_DATA_CR : CK_TRAILER;
		return 0;
	case CK_DATA_CR:
		if (c == '\r') {
			d->state = CK_DATA_LF;
			return 0;
		}
		/* fall through */
	case CK_DATA_LF:
		if (c != '\n')
			break;
		d->line = 0;
		d->state = CK_SIZE;
		return 0;
	case CK_TRAILER:
		if (++d->trailer_bytes > HTTP_HEAD_MAX)
			return rb_errfmt(err, errlen, -EPROTO, "chunked body: trailers longer than %d "
					 "bytes", HTTP_HEAD_MAX);
		if (c == '\r' && d->line == 1) {
			d->state = CK_TRAILER_LF;
			return 0;
		}
		if (c != '\n')
			return (unsigned char)c >= ' ' || c == '\t' || c == '\r' ? 0 :
			       rb_errfmt(err, errlen, -EPROTO, "chunked body: control character in "
					 "a trailer");
		if (d->line == 1) {
			d->done = true;
			return 0;
		}
		if (++d->trailer_lines > HTTP_HEADERS_MAX)
			return rb_errfmt(err, errlen, -EPROTO, "chunked body: more than %d trailer "
					 "lines", HTTP_HEADERS_MAX);
		d->line = 0;
		return 0;
	case CK_TRAILER_LF:
		if (c != '\n')
			break;
		d->done = true;
		return 0;
	}
	return rb_errfmt(err, errlen, -EPROTO, "chunked body: malformed chunk framing");
}
