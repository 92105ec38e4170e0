// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: what a web server sends is the input of
 * http_head_len(), http_parse_head() and http_check_range(), and the
 * Location it names that of http_url_parse() and http_url_join(), and
 * as a chunked body that of http_chunk_byte(). A refusal says why; what is
 * accepted keeps the bounds of http.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* data as a chunked body, fed as the client does: framing bytes one at a
 * time, each chunk's data skipped whole. */
static void dechunk(const uint8_t *data, size_t size)
{
	struct http_chunked d;
	uint64_t seen = 0;
	size_t i = 0;
	char err[256];

	memset(&d, 0, sizeof(d));
	while (i < size && !d.done) {
		if (d.left) {
			size_t n = size - i < d.left ? size - i : (size_t)d.left;

			i += n;
			seen += n;
			d.left -= n;
			continue;
		}
		err[0] = '\0';
		if (http_chunk_byte(&d, (char)data[i++], err, sizeof(err)) < 0) {
			if (!err[0])
				abort();
			return;
		}
		if (d.trailer_bytes > HTTP_HEAD_MAX || d.trailer_lines > HTTP_HEADERS_MAX)
			abort();
	}
	if (d.done && (d.left || seen != d.total))
		abort();
	if (!d.done && seen + d.left != d.total)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	char err[256], *s, joined[2048];
	struct http_resp r;
	struct http_url u;
	ssize_t head;
	int rc;

	if (size > 3 * HTTP_HEAD_MAX)
		return 0;
	dechunk(data, size);
	head = http_head_len(buf, size);
	if (head < -E2BIG || head > HTTP_HEAD_MAX || head > (ssize_t)size ||
	    (head == -E2BIG && size < HTTP_HEAD_MAX))
		abort();
	err[0] = '\0';
	rc = http_parse_head(buf, head > 0 ? (size_t)head : size, &r, err, sizeof(err));
	if (rc && (rc != -EPROTO || !err[0]))
		abort();
	if (!rc) {
		if (r.status < 100 || r.status > 599 || strnlen(r.etag, sizeof(r.etag)) ==
		    sizeof(r.etag) || strnlen(r.location, sizeof(r.location)) == sizeof(r.location))
			abort();
		if (r.has_range && (r.range_last < r.range_first ||
				    (r.range_total && r.range_last >= r.range_total)))
			abort();
		rc = http_check_range(&r, r.range_first, r.range_last, r.range_total, err,
				      sizeof(err));
		if (rc && rc != -ERANGE && rc != -EPROTO)
			abort();
		if (!rc && (r.status != 206 || !r.has_length ||
			    r.length != r.range_last - r.range_first + 1))
			abort();
	}
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	rc = http_url_parse(s, &u, err, sizeof(err));
	if (rc && rc != -EINVAL && rc != -EPROTONOSUPPORT)
		abort();
	if (!rc && (!u.host[0] || u.path[0] != '/' || !u.port || strpbrk(u.path, " \r\n")))
		abort();
	rc = http_url_join("http://h:1/a", s, joined, sizeof(joined));
	if (!rc && strncasecmp(joined, "http://", 7))
		abort();
	free(s);
	return 0;
}
