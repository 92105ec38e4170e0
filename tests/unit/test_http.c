// SPDX-License-Identifier: GPL-2.0-or-later
/* HTTP as text: URLs, response heads within their bounds, ranged answers. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "format/http.h"

static char err[256];

static int parse(const char *head, struct http_resp *r)
{
	err[0] = '\0';
	return http_parse_head(head, strlen(head), r, err, sizeof(err));
}

static void test_url(void)
{
	struct http_url u;

	CHECK_EQ_INT(http_url_parse("http://192.0.2.1/img/x.img", &u, err, sizeof(err)), 0);
	CHECK_EQ_STR(u.host, "192.0.2.1");
	CHECK_EQ_INT(u.port, 80);
	CHECK_EQ_STR(u.path, "/img/x.img");
	CHECK_EQ_INT(http_url_parse("HTTP://server:8080", &u, err, sizeof(err)), 0);
	CHECK_EQ_STR(u.host, "server");
	CHECK_EQ_INT(u.port, 8080);
	CHECK_EQ_STR(u.path, "/");
	CHECK_EQ_INT(http_url_parse("http://[fd00::1]:81/a?b=c#frag", &u, err, sizeof(err)), 0);
	CHECK_EQ_STR(u.host, "fd00::1");
	CHECK(u.ipv6);
	CHECK_EQ_INT(u.port, 81);
	CHECK_EQ_STR(u.path, "/a?b=c");
	CHECK_EQ_INT(http_url_parse("http://h?q", &u, err, sizeof(err)), 0);
	CHECK_EQ_STR(u.path, "/?q");
	CHECK_EQ_INT(http_url_parse("https://h/x", &u, err, sizeof(err)), -EPROTONOSUPPORT);
	CHECK_EQ_STR(err, "https://h/x: not an http:// URL");
	CHECK_EQ_INT(http_url_parse("/srv/x.img", &u, err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(http_url_parse("http:///x", &u, err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(http_url_parse("http://h:/x", &u, err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(http_url_parse("http://h:0/x", &u, err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(http_url_parse("http://h:65536/x", &u, err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(http_url_parse("http://h:8x/x", &u, err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(http_url_parse("http://[::1/x", &u, err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(http_url_parse("http://u@h/x", &u, err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(http_url_parse("http://h/a b", &u, err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(http_url_parse("http://h/a\r\nX: y", &u, err, sizeof(err)), -EINVAL);
}

static void test_join(void)
{
	char out[64];

	CHECK_EQ_INT(http_url_join("http://a:1/x/y", "/z", out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "http://a:1/z");
	CHECK_EQ_INT(http_url_join("http://a/x", "http://b/c", out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "http://b/c");
	CHECK_EQ_INT(http_url_join("http://a/x", "https://b/c", out, sizeof(out)), -EINVAL);
	CHECK_EQ_INT(http_url_join("http://a/x", "c", out, sizeof(out)), -EINVAL);
	CHECK_EQ_INT(http_url_join("http://a/x", "//b/c", out, sizeof(out)), -EINVAL);
	CHECK_EQ_INT(http_url_join("http://a/x", "/0123456789012345678901234567890123456789"
				   "0123456789012345678901234567890123456789", out, sizeof(out)),
		     -EINVAL);
}

/* A head arrives in pieces: its end is found only once whole. */
static void test_split_head(void)
{
	const char *h = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
	size_t whole = strlen(h) - 5, i;
	struct http_resp r;

	for (i = 0; i < whole; i++)
		CHECK_EQ_INT(http_head_len(h, i), 0);
	CHECK_EQ_INT(http_head_len(h, whole), (long long)whole);
	CHECK_EQ_INT(http_head_len(h, strlen(h)), (long long)whole);
	CHECK_EQ_INT(http_head_len("HTTP/1.0 200 OK\n\nbody", 21), 17);
	CHECK_EQ_INT(http_parse_head(h, whole, &r, err, sizeof(err)), 0);
	CHECK_EQ_INT(r.status, 200);
	CHECK(r.has_length);
	CHECK_EQ_INT(r.length, 5);
	/* cut before its blank line */
	CHECK_EQ_INT(http_parse_head(h, whole - 2, &r, err, sizeof(err)), -EPROTO);
}

static void test_headers(void)
{
	struct http_resp r;

	CHECK_EQ_INT(parse("HTTP/1.1 206 Partial Content\r\nserver: nginx\r\n"
			   "content-length:  100\r\nCONTENT-RANGE: bytes 100-199/1000\r\n"
			   "ETag: \"5f-abc\"\r\nLast-Modified: Mon, 07 Dec 2026 06:00:00 GMT\r\n"
			   "Connection: close\r\n\r\n", &r), 0);
	CHECK_EQ_INT(r.status, 206);
	CHECK_EQ_INT(r.length, 100);
	CHECK(r.has_range);
	CHECK_EQ_INT(r.range_first, 100);
	CHECK_EQ_INT(r.range_last, 199);
	CHECK_EQ_INT(r.range_total, 1000);
	CHECK_EQ_STR(r.etag, "\"5f-abc\"");
	CHECK_EQ_STR(r.last_modified, "Mon, 07 Dec 2026 06:00:00 GMT");
	CHECK(r.close);
	CHECK(!r.chunked);
	CHECK_EQ_INT(parse("HTTP/1.1 302 Found\r\nLocation: /b\r\n\r\n", &r), 0);
	CHECK_EQ_STR(r.location, "/b");
	CHECK_EQ_INT(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", &r), 0);
	CHECK(r.chunked);
	CHECK_EQ_INT(parse("HTTP/1.1 206 x\r\nContent-Range: bytes 0-9/*\r\n\r\n", &r), 0);
	CHECK_EQ_INT(r.range_total, 0);
}

static void test_garbage(void)
{
	static const char *const bad[] = {
		"", "garbage\r\n\r\n", "HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n",
		"HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 600 OK\r\n\r\n", "HTTP/1.1 200 OK\r\n",
		"HTTP/1.1 200 OK\r\nno colon\r\n\r\n", "HTTP/1.1 200 OK\r\n: v\r\n\r\n",
		"HTTP/1.1 200 OK\r\nBad Name: v\r\n\r\n", "HTTP/1.1 200 OK\r\nA: b\r\n folded\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: a\001b\r\n\r\n",
	};
	struct http_resp r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse(bad[i], &r);

		if (rc != -EPROTO || !err[0]) {
			printf("#   case %zu: rc %d '%s'\n", i, rc, err);
			tap_case_failed = 1;
		}
	}
	/* the same length twice is one length */
	CHECK_EQ_INT(parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
			   &r), 0);
}

/* A Content-Length beyond 64 bits is refused, the largest one read. */
/* A head is bytes, not a string: nothing is read past its end (the
 * sanitizers of the unit build see a read beyond the allocation). */
static void test_unterminated(void)
{
	static const char h[] = "HTTP/1.1 200 OK\r\nA:b\r\nContent-Length:1\r\n\r\n";
	size_t n = sizeof(h) - 1;
	char *b = malloc(n);
	struct http_resp r;

	if (!b) {
		tap_case_failed = 1;
		return;
	}
	memcpy(b, h, n);
	CHECK_EQ_INT(http_head_len(b, n), (long long)n);
	CHECK_EQ_INT(http_parse_head(b, n, &r, err, sizeof(err)), 0);
	CHECK_EQ_INT(r.length, 1);
	free(b);
}

static void test_huge_length(void)
{
	struct http_resp r;

	CHECK_EQ_INT(parse("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", &r),
		     -EPROTO);
	CHECK_EQ_STR(err, "bad Content-Length");
	CHECK_EQ_INT(parse("HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615999\r\n\r\n",
			   &r), -EPROTO);
	CHECK_EQ_INT(parse("HTTP/1.1 200 OK\r\nContent-Length: 9999999999999999999\r\n\r\n", &r), 0);
	CHECK_EQ_INT(r.length, 9999999999999999999ULL);
	CHECK_EQ_INT(parse("HTTP/1.1 206 x\r\nContent-Range: bytes 0-99999999999999999999/1\r\n\r\n",
			   &r), -EPROTO);
}

/* 10,000 header lines: more than HTTP_HEADERS_MAX, and past the head's
 * bound long before its end. */
static void test_endless_headers(void)
{
	size_t cap = 20 + 10000 * 8 + 3, n;
	char *h = malloc(cap);
	struct http_resp r;
	int i;

	if (!h) {
		tap_case_failed = 1;
		return;
	}
	n = (size_t)sprintf(h, "HTTP/1.1 200 OK\r\n");
	for (i = 0; i < 10000; i++)
		n += (size_t)sprintf(h + n, "X: %03d\r\n", i % 1000);
	n += (size_t)sprintf(h + n, "\r\n");
	CHECK_EQ_INT(http_head_len(h, n), -E2BIG);
	CHECK_EQ_INT(http_head_len(h, HTTP_HEAD_MAX - 1), 0);
	CHECK_EQ_INT(http_parse_head(h, n, &r, err, sizeof(err)), -EPROTO);
	/* within the byte bound, over the line bound */
	CHECK_EQ_INT(http_parse_head(h, 17 + 65 * 8, &r, err, sizeof(err)), -EPROTO);
	CHECK_EQ_STR(err, "more than 64 header lines");
	free(h);
}

static void test_range(void)
{
	struct http_resp r;

	CHECK_EQ_INT(parse("HTTP/1.1 206 x\r\nContent-Length: 100\r\n"
			   "Content-Range: bytes 100-199/1000\r\n\r\n", &r), 0);
	CHECK_EQ_INT(http_check_range(&r, 100, 199, 1000, err, sizeof(err)), 0);
	CHECK_EQ_INT(http_check_range(&r, 100, 199, 0, err, sizeof(err)), 0);
	CHECK_EQ_INT(http_check_range(&r, 0, 99, 1000, err, sizeof(err)), -EPROTO);
	CHECK_EQ_INT(http_check_range(&r, 100, 200, 1000, err, sizeof(err)), -EPROTO);
	CHECK_EQ_INT(http_check_range(&r, 100, 199, 999, err, sizeof(err)), -EPROTO);
	/* a 416 says the total only: no range */
	CHECK_EQ_INT(parse("HTTP/1.1 416 x\r\nContent-Range: bytes */1000\r\n\r\n", &r), 0);
	CHECK(!r.has_range);
	CHECK_EQ_INT(http_check_range(&r, 0, 99, 1000, err, sizeof(err)), -EPROTO);
	CHECK_EQ_INT(parse("HTTP/1.1 416 x\r\nContent-Range: bytes */x\r\n\r\n", &r), -EPROTO);
	/* 200 to a range: the whole file, never taken for the range */
	CHECK_EQ_INT(parse("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", &r), 0);
	CHECK_EQ_INT(http_check_range(&r, 100, 199, 1000, err, sizeof(err)), -ERANGE);
	CHECK_EQ_STR(err, "the server ignored the range and sent the whole file");
	CHECK_EQ_INT(parse("HTTP/1.1 416 x\r\n\r\n", &r), 0);
	CHECK_EQ_INT(http_check_range(&r, 0, 1, 1000, err, sizeof(err)), -EPROTO);
	/* Content-Range mismatches in the head itself */
	CHECK_EQ_INT(parse("HTTP/1.1 206 x\r\nContent-Length: 99\r\n"
			   "Content-Range: bytes 100-199/1000\r\n\r\n", &r), -EPROTO);
	CHECK_EQ_INT(parse("HTTP/1.1 206 x\r\nContent-Range: bytes 200-199/1000\r\n\r\n", &r),
		     -EPROTO);
	CHECK_EQ_INT(parse("HTTP/1.1 206 x\r\nContent-Range: bytes 100-1000/1000\r\n\r\n", &r),
		     -EPROTO);
	CHECK_EQ_INT(parse("HTTP/1.1 206 x\r\nContent-Range: items 1-2/3\r\n\r\n", &r), -EPROTO);
	CHECK_EQ_INT(parse("HTTP/1.1 206 x\r\nContent-Range: bytes 1-2\r\n\r\n", &r), -EPROTO);
	CHECK_EQ_INT(parse("HTTP/1.1 206 x\r\nContent-Range: bytes 1-2/3\r\n"
			   "Content-Range: bytes 1-2/3\r\n\r\n", &r), -EPROTO);
	/* a 206 without a length */
	CHECK_EQ_INT(parse("HTTP/1.1 206 x\r\nContent-Range: bytes 0-1/3\r\n\r\n", &r), 0);
	CHECK_EQ_INT(http_check_range(&r, 0, 1, 3, err, sizeof(err)), -EPROTO);
}

/* A chunked body fed as a client does: framing bytes one at a time, data
 * in whole runs. The data into out (at most outlen), its length, or the
 * error; *used: the bytes taken (the rest follows the body). */
static long dechunk(const char *in, size_t len, char *out, size_t outlen, size_t *used)
{
	struct http_chunked d;
	size_t i = 0, o = 0;
	int rc;

	memset(&d, 0, sizeof(d));
	err[0] = '\0';
	while (i < len && !d.done) {
		if (d.left) {
			size_t n = len - i < d.left ? len - i : (size_t)d.left;

			if (o + n > outlen)
				return -E2BIG;
			memcpy(out + o, in + i, n);
			o += n;
			i += n;
			d.left -= n;
			continue;
		}
		rc = http_chunk_byte(&d, in[i++], err, sizeof(err));
		*used = i;
		if (rc < 0)
			return rc;
	}
	*used = i;
	if (!d.done)
		return -EAGAIN;
	if (d.total != o)
		return -EFAULT;
	out[o] = '\0';
	return (long)o;
}

#define DECHUNK(s, want) do { \
	size_t used_; \
	CHECK_EQ_INT(dechunk(s, sizeof(s) - 1, out, sizeof(out) - 1, &used_), (long)strlen(want)); \
	CHECK_EQ_STR(out, want); \
} while (0)

static void test_chunked(void)
{
	static char big[HTTP_HEAD_MAX * 2];
	char out[256];
	size_t used, n;

	DECHUNK("5\r\nhello\r\n0\r\n\r\n", "hello");
	/* extensions, upper-case hex, bare LF, trailers */
	DECHUNK("3;name=v\r\nabc\r\nA \t;x\r\n0123456789\r\n0\r\nX-Sum: 1\r\nY: 2\r\n\r\n",
		"abc0123456789");
	DECHUNK("2\nhi\n0\n\n", "hi");
	DECHUNK("0\r\n\r\n", "");
	/* what follows the body is not taken */
	CHECK_EQ_INT(dechunk("1\r\nx\r\n0\r\n\r\nHTTP/1.1", 20, out, sizeof(out), &used), 1);
	CHECK_EQ_INT(used, 11);
	/* not a size, a size of 16 digits (past 2^60), no line end after the data */
	CHECK_EQ_INT(dechunk("\r\n", 2, out, sizeof(out), &used), -EPROTO);
	CHECK_EQ_STR(err, "chunked body: malformed chunk framing");
	CHECK_EQ_INT(dechunk("g\r\n", 3, out, sizeof(out), &used), -EPROTO);
	CHECK_EQ_INT(dechunk("5x\r\n", 4, out, sizeof(out), &used), -EPROTO);
	CHECK_EQ_INT(dechunk("1000000000000000\r\n", 18, out, sizeof(out), &used), -EPROTO);
	CHECK_EQ_INT(dechunk("fffffffffffffff\r\n", 17, out, sizeof(out), &used), -EAGAIN);
	CHECK_EQ_INT(dechunk("2\r\nhiX\r\n0\r\n\r\n", 14, out, sizeof(out), &used), -EPROTO);
	CHECK_EQ_INT(dechunk("2\r\nhi\r\n0\r\nX\001\r\n\r\n", 16, out, sizeof(out), &used), -EPROTO);
	CHECK_EQ_STR(err, "chunked body: control character in a trailer");
	/* an endless extension, endless trailers, too many trailer lines */
	memset(big, 'x', sizeof(big));
	memcpy(big, "1;", 2);
	CHECK_EQ_INT(dechunk(big, sizeof(big), out, sizeof(out), &used), -EPROTO);
	CHECK_EQ_STR(err, "chunked body: chunk size line longer than 1024 bytes");
	CHECK_EQ_INT(used, HTTP_CHUNK_LINE_MAX + 1);
	memcpy(big, "0\r\n", 3);
	CHECK_EQ_INT(dechunk(big, sizeof(big), out, sizeof(out), &used), -EPROTO);
	CHECK_EQ_STR(err, "chunked body: trailers longer than 8192 bytes");
	for (n = 3; n + 3 < sizeof(big); n += 3)
		memcpy(big + n, "A\r\n", 3);
	CHECK_EQ_INT(dechunk(big, sizeof(big), out, sizeof(out), &used), -EPROTO);
	CHECK_EQ_STR(err, "chunked body: more than 64 trailer lines");
	/* cut short anywhere: more is wanted, never a wrong end */
	for (n = 0; n < 15; n++)
		CHECK_EQ_INT(dechunk("5\r\nhello\r\n0\r\n\r\n", n, out, sizeof(out), &used), -EAGAIN);
}

int main(void)
{
	RUN(test_url);
	RUN(test_join);
	RUN(test_split_head);
	RUN(test_headers);
	RUN(test_garbage);
	RUN(test_unterminated);
	RUN(test_huge_length);
	RUN(test_endless_headers);
	RUN(test_range);
	RUN(test_chunked);
	return TAP_DONE();
}
