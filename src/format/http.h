/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HTTP/1.1 as text, no I/O: an http:// URL taken apart, a response head
 * parsed within fixed bounds, a ranged answer checked against what was
 * asked. The client (source/http.c) does the talking; fuzz/fuzz_http.c
 * feeds these any bytes.
 */
#ifndef RAMBOOT_FORMAT_HTTP_H
#define RAMBOOT_FORMAT_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HTTP_HEAD_MAX    8192    /* bytes of a response head, its blank line included */
#define HTTP_HEADERS_MAX 64      /* header lines of a response head */

struct http_url {
	char host[256];          /* a name, a dotted IPv4, or an IPv6 without brackets */
	bool ipv6;               /* written [IPv6] */
	uint16_t port;           /* 80 unless given */
	char path[2048];         /* from its '/', the query included; "/" when none */
};

struct http_resp {
	int status;              /* 200, 206, 301, ... */
	bool has_length;
	uint64_t length;         /* Content-Length */
	bool has_range;          /* Content-Range: bytes FIRST-LAST/TOTAL */
	uint64_t range_first, range_last;
	uint64_t range_total;    /* 0: a total of "*" (not known) */
	char etag[128];          /* "" when none */
	char last_modified[64];
	char location[1024];
	bool chunked;            /* Transfer-Encoding: chunked */
	bool coded;              /* another Transfer-Encoding (gzip, ...): not read */
	bool close;              /* Connection: close */
};

/* A chunked body (RFC 9112 7.1) as it comes: "SIZE[;ext]CRLF", SIZE
 * bytes, CRLF, ..., "0CRLF", trailer lines, CRLF. The caller feeds the
 * bytes around the data one at a time to http_chunk_byte() while left
 * is 0 and done is not set, and takes the next left bytes as data (then
 * lowers left by as many). Bounded: a size line of at most
 * HTTP_CHUNK_LINE_MAX bytes, a SIZE of at most 15 hex digits, trailers
 * of at most HTTP_HEAD_MAX bytes and HTTP_HEADERS_MAX lines. */
#define HTTP_CHUNK_LINE_MAX 1024

struct http_chunked {
	uint64_t left;           /* data bytes of the current chunk still to come */
	uint64_t total;          /* data bytes so far, the current chunk's included */
	uint64_t size;           /* the size line's digits so far */
	unsigned state;
	unsigned line;           /* bytes of the current line */
	unsigned trailer_bytes, trailer_lines;
	bool done;               /* the last chunk and the trailers came */
};

/* One byte of the framing into d: 0, or -EPROTO (malformed or past a
 * bound) with the reason in err. */
int http_chunk_byte(struct http_chunked *d, char c, char *err, size_t errlen);

/* Take url apart: "http://HOST[:PORT][/PATH]". 0, or -EINVAL (and
 * -EPROTONOSUPPORT for another scheme) with the reason in err. */
int http_url_parse(const char *url, struct http_url *u, char *err, size_t errlen);

/* The URL a redirect's Location names, from the URL it answered: an
 * absolute http:// URL as it is, an absolute path on the same server.
 * 0, or -EINVAL (another scheme, a relative path, too long). */
int http_url_join(const char *base, const char *location, char *out, size_t outlen);

/* The length of the head at the start of buf (through its blank line),
 * 0 when buf holds no whole head yet, -E2BIG when none fits within
 * HTTP_HEAD_MAX bytes. */
ssize_t http_head_len(const char *buf, size_t len);

/* Parse the head buf[0..len) (http_head_len() bytes) into r. 0, or
 * -EPROTO with the reason in err: not HTTP/1.x, a malformed status or
 * header line, more than HTTP_HEADERS_MAX headers, a Content-Length or
 * Content-Range that does not parse or says two things. */
int http_parse_head(const char *buf, size_t len, struct http_resp *r, char *err, size_t errlen);

/* An answer to "Range: bytes=first-last" of a file of size bytes (0: not
 * known yet): 0 when r is a 206 with exactly that range and length.
 * -ERANGE when the server sent the whole file (200) instead, -EPROTO when
 * the range, the length or the total disagree. The reason in err. */
int http_check_range(const struct http_resp *r, uint64_t first, uint64_t last, uint64_t size,
		     char *err, size_t errlen);

#endif
