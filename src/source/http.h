/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An HTTP/1.1 client, plain HTTP only, for the HTTP kind of source.h:
 * one persistent connection, GET of a whole file as a stream or of a
 * range (Range, If-Range with the validator of the first answer, so that
 * a file replaced on the server is -ESTALE and never spliced), HEAD,
 * at most HTTP_REDIRECTS redirects, HTTP_RETRIES retries of a failed
 * connection or a 5xx, and every wait for the server bounded by the
 * caller's timeout. Host names come from /etc/hosts, else DNS (dns.h):
 * no resolver library in the static binary. The text is format/http.h's.
 */
#ifndef RAMBOOT_SOURCE_HTTP_H
#define RAMBOOT_SOURCE_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format/http.h"

#define HTTP_REDIRECTS 5
#define HTTP_RETRIES   3
#define HTTP_TIMEOUT_MS 30000    /* when the caller gives 0 */

struct http_conn {
	char url[2048];          /* the file's, after redirects */
	struct http_url u;
	int fd;                  /* -1: not connected */
	uint64_t left;           /* bytes of the current body not read yet */
	size_t head_len;         /* of the last answer */
	bool keep;               /* the connection may serve the next request */
	int timeout_ms;          /* connect, a whole head, each wait for body bytes */
	bool known;              /* the first answer was had: size, validators */
	uint64_t size;
	char etag[128];
	char last_modified[64];
	uint64_t stream_head;    /* bytes of the stream's head on its socket */
};

/* A caller's timeout in seconds as http_init() takes it: 0 (the default)
 * for none or less, at most a day. */
int http_timeout_ms(double seconds);

/* Set c up for url (nothing is sent yet). 0, or -errno with the reason. */
int http_init(struct http_conn *c, const char *url, int timeout_ms, char *err, size_t errlen);

/* GET the whole file (the body is left on c->fd, c->left bytes of it;
 * with close, the server closes after it) or, with head, only its head.
 * The first answer sets size and validators; a later one whose
 * validators differ is -ESTALE. 0, or -errno with the reason: -ENOENT for
 * a 404, -EPROTO for what is not HTTP or a chunked body, -ELOOP for too
 * many redirects, -ETIMEDOUT. */
int http_get(struct http_conn *c, bool head, bool close, char *err, size_t errlen);

/* The next body bytes, at most len: 0 at its end, -EIO when the server
 * ends it early, -ETIMEDOUT. */
ssize_t http_body_read(struct http_conn *c, void *buf, size_t len);

/* len bytes at off by a ranged GET (fewer at the end of the file): the
 * count, or -errno with the reason; -ESTALE when the file changed since
 * the first answer, -ERANGE when the server answers a range with the
 * whole file. */
ssize_t http_pread(struct http_conn *c, void *buf, size_t len, uint64_t off, char *err,
		   size_t errlen);

/* GET the whole file as a stream: *fd is its socket, blocking, its
 * reads failing with EAGAIN after c->timeout_ms without a byte, the body
 * next on it (c->size bytes), the server closing it after. 0 or -errno. */
int http_stream_open(struct http_conn *c, int *fd, char *err, size_t errlen);

/* The stream *fd was read to its end: 0 when exactly c->size body bytes
 * came (-EIO otherwise) and the file is still the one it was (a HEAD:
 * -ESTALE when replaced). */
int http_stream_end(struct http_conn *c, int fd, char *err, size_t errlen);

/* The whole of url, at most max bytes, into a malloc'd buffer. */
int http_fetch(const char *url, int timeout_ms, size_t max, char **text, size_t *len, char *err,
	       size_t errlen);

/* Close c's connection: 0, or what close() said. */
int http_close(struct http_conn *c);

#endif
