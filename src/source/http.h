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

struct http_pump;

/* How the end of a body is known (RFC 9112 6.3). */
enum http_body { HTTP_BODY_LENGTH, HTTP_BODY_CHUNKED, HTTP_BODY_CLOSE };

struct http_conn {
	char url[2048];          /* the file's, after redirects */
	struct http_url u;
	int fd;                  /* -1: not connected */
	enum http_body body;     /* of the current answer */
	uint64_t left;           /* HTTP_BODY_LENGTH: bytes not read yet */
	struct http_chunked ck;  /* HTTP_BODY_CHUNKED: where in the framing */
	char body_err[128];      /* why a body was refused ("" if not) */
	struct http_pump *pump;  /* a chunked stream: the thread that decodes it */
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

/* GET the whole file (the body is left on c->fd for http_body_read(): of
 * Content-Length bytes, chunked, or up to the server's close when it
 * says neither; with close, the server closes after it) or, with head,
 * only its head. The first answer sets size (0: not known) and
 * validators; a later one whose size or validators differ is -ESTALE. 0,
 * or -errno with the reason: -ENOENT for a 404, -EPROTO for what is not
 * HTTP or a body in another transfer coding, -ELOOP for too many
 * redirects, -ETIMEDOUT. */
int http_get(struct http_conn *c, bool head, bool close, char *err, size_t errlen);

/* The next body bytes, at most len: 0 at its end, -EIO when the server
 * ends it early, -EPROTO for a malformed chunked body (c->body_err says
 * why), -ETIMEDOUT. */
ssize_t http_body_read(struct http_conn *c, void *buf, size_t len);

/* len bytes at off by a ranged GET (fewer at the end of the file): the
 * count, or -errno with the reason; -ESTALE when the file changed since
 * the first answer, -ERANGE when the server answers a range with the
 * whole file. */
ssize_t http_pread(struct http_conn *c, void *buf, size_t len, uint64_t off, char *err,
		   size_t errlen);

/* GET the whole file as a stream: *fd is its socket, blocking, its
 * reads failing with EAGAIN after c->timeout_ms without a byte, the body
 * next on it (c->size bytes, or up to the server's close), the server
 * closing it after; for a chunked body, one end of a socket pair that a
 * thread fills with the decoded body (and closes at its end or at an
 * error, which http_stream_end() tells). 0 or -errno. */
int http_stream_open(struct http_conn *c, int *fd, char *err, size_t errlen);

/* The stream *fd was read to its end: 0 when exactly c->size body bytes
 * came, or the chunked body to its last chunk (-EIO, -EPROTO otherwise),
 * and the file is still the one it was (a HEAD: -ESTALE when replaced).
 * A body up to the server's close has no end to check: the manifest's
 * chunks and size check what came. */
int http_stream_end(struct http_conn *c, int fd, char *err, size_t errlen);

/* The whole of url, at most max bytes, into a malloc'd buffer. */
int http_fetch(const char *url, int timeout_ms, size_t max, char **text, size_t *len, char *err,
	       size_t errlen);

/* Close c's connection: 0, or what close() said. */
int http_close(struct http_conn *c);

#endif
