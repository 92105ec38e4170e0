// SPDX-License-Identifier: GPL-2.0-or-later
/* An HTTP/1.1 client for the HTTP kind of source: see http.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "source/dns.h"
#include "source/http.h"

/*
 * A chunked stream is decoded by a thread of its own, into a socket pair
 * whose other end the caller reads. The thread works on a copy of the
 * connection (a caller may drop its own without ending the stream): the
 * copy, the server's socket and the pair's end go with the last of the
 * thread and the connection to let go of them, so that neither closes a
 * descriptor the other still uses.
 */
struct http_pump {
	struct http_conn c;      /* the server's socket, the decoder's state */
	int out;                 /* the thread's end of the pair */
	_Atomic int rc;          /* 1 while it runs; 0 at the body's end, or -errno */
	_Atomic int refs;
};

static void pump_unref(struct http_pump *p)
{
	if (atomic_fetch_sub(&p->refs, 1) != 1)
		return;
	(void)close(p->c.fd);
	(void)close(p->out);
	free(p);
}

/* The connection lets go: the thread, still reading, is woken (its
 * reads of the server end). */
static void pump_release(struct http_conn *c)
{
	(void)shutdown(c->pump->c.fd, SHUT_RDWR);
	pump_unref(c->pump);
	c->pump = NULL;
}

/* The decoded body into the pair, to its end or the first error; the
 * reader's EOF after. */
static void *pump(void *arg)
{
	struct http_pump *p = arg;
	char buf[16384];
	ssize_t n;

	while ((n = http_body_read(&p->c, buf, sizeof(buf))) > 0) {
		ssize_t sent = 0, k;

		/* A signal may cut a send short. */
		while (sent < n && ((k = send(p->out, buf + sent, (size_t)(n - sent),
					      MSG_NOSIGNAL)) > 0 || (k < 0 && errno == EINTR)))
			sent += k > 0 ? k : 0;
		if (sent < n) {
			n = -EPIPE;       /* the reader is gone */
			break;
		}
	}
	atomic_store(&p->rc, (int)n);
	(void)shutdown(p->out, SHUT_WR);
	pump_unref(p);
	return NULL;
}

int http_init(struct http_conn *c, const char *url, int timeout_ms, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->timeout_ms = timeout_ms > 0 ? timeout_ms : HTTP_TIMEOUT_MS;
	if (strlen(url) >= sizeof(c->url))
		return rb_errfmt(err, errlen, -EINVAL, "%.200s...: URL too long", url);
	strcpy(c->url, url);
	return http_url_parse(url, &c->u, err, errlen);
}

int http_timeout_ms(double seconds)
{
	if (!(seconds > 0))
		return 0;
	return seconds >= 86400 ? 86400 * 1000 : (int)(seconds * 1000);
}

int http_close(struct http_conn *c)
{
	int rc = 0;

	if (c->pump)
		pump_release(c);
	if (c->fd >= 0)
		rc = close_checked(c->fd);
	c->fd = -1;
	c->left = 0;
	c->keep = false;
	return rc;
}

/* A numeric address, the first of /etc/hosts's lines that names the
 * host, else DNS (dns.h): the static binary has no NSS (it would dlopen). */
static int resolve(const struct http_url *u, struct sockaddr_storage *sa, socklen_t *len,
		   double deadline)
{
	struct sockaddr_in *v4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)sa;
	char line[512], addr[64];
	int rc = -ENXIO;
	FILE *f;

	memset(sa, 0, sizeof(*sa));
	if (!u->ipv6 && inet_pton(AF_INET, u->host, &v4->sin_addr) == 1)
		goto v4;
	if (u->ipv6) {
		if (inet_pton(AF_INET6, u->host, &v6->sin6_addr) == 1)
			goto v6;
		return -EINVAL;
	}
	f = fopen("/etc/hosts", "re");
	while (f && rc < 0 && fgets(line, sizeof(line), f)) {
		char *save = NULL, *a, *name;

		line[strcspn(line, "#\n")] = '\0';
		a = strtok_r(line, " \t", &save);
		while (a && (name = strtok_r(NULL, " \t", &save)))
			if (!strcasecmp(name, u->host) && strlen(a) < sizeof(addr)) {
				strcpy(addr, a);
				rc = 0;
				break;
			}
	}
	if (f)
		fclose(f);
	if (rc < 0)
		return dns_resolve(u->host, u->port, sa, len, deadline);
	if (inet_pton(AF_INET, addr, &v4->sin_addr) == 1)
		goto v4;
	if (inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1)
		goto v6;
	return -ENXIO;
v4:
	v4->sin_family = AF_INET;
	v4->sin_port = htons(u->port);
	*len = sizeof(*v4);
	return 0;
v6:
	v6->sin6_family = AF_INET6;
	v6->sin6_port = htons(u->port);
	*len = sizeof(*v6);
	return 0;
}

/* Wait until fd is ready for ev, at most until the monotonic deadline. */
static int wait_fd(int fd, short ev, double deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = ev };
		double left = deadline - now_sec();
		int n;

		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)(left * 1000) + 1);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static int connect_to(struct http_conn *c, double deadline)
{
	struct sockaddr_storage sa;
	socklen_t len = 0, elen = sizeof(int);
	int rc = resolve(&c->u, &sa, &len, deadline), e = 0;

	if (rc < 0)
		return rc;
	c->fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->fd < 0)
		return -errno;
	if (connect(c->fd, (struct sockaddr *)&sa, len) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return -errno;
	rc = wait_fd(c->fd, POLLOUT, deadline);
	if (rc < 0)
		return rc;
	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &elen) < 0)
		return -errno;
	return -e;
}

static int send_all(int fd, const char *buf, size_t len, double deadline)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		int rc;

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			return -errno;
		} else if ((rc = wait_fd(fd, POLLOUT, deadline)) < 0) {
			return rc;
		}
	}
	return 0;
}

/* The head, a byte at a time so that the body stays on the socket for
 * whoever reads it. -ECONNRESET when the connection ends before a byte
 * (a kept connection the server closed), -E2BIG past HTTP_HEAD_MAX. */
static ssize_t read_head(int fd, char *buf, double deadline)
{
	size_t n = 0;
	int rc;

	for (;;) {
		ssize_t r = recv(fd, buf + n, 1, MSG_DONTWAIT);

		if (r == 1) {
			n++;
			if (buf[n - 1] == '\n' && n >= 2 && (buf[n - 2] == '\n' ||
			    (n >= 3 && buf[n - 2] == '\r' && buf[n - 3] == '\n')))
				return (ssize_t)n;
			if (n == HTTP_HEAD_MAX)
				return -E2BIG;
		} else if (r == 0) {
			return n ? -EPROTO : -ECONNRESET;
		} else if (errno != EAGAIN && errno != EINTR) {
			return -errno;
		} else if ((rc = wait_fd(fd, POLLIN, deadline)) < 0) {
			return rc;
		}
	}
}

/* The validators of an answer against the first one's. */
static int same_file(struct http_conn *c, const struct http_resp *r, uint64_t size, char *err,
		     size_t errlen)
{
	if (!c->known) {
		c->known = true;
		c->size = size;
		memcpy(c->etag, r->etag, sizeof(c->etag));
		memcpy(c->last_modified, r->last_modified, sizeof(c->last_modified));
		return 0;
	}
	if ((size && c->size && size != c->size) || (r->etag[0] && c->etag[0] && strcmp(r->etag, c->etag)) ||
	    (r->last_modified[0] && c->last_modified[0] &&
	     strcmp(r->last_modified, c->last_modified)))
		return rb_errfmt(err, errlen, -ESTALE, "%s: changed on the server while being read",
				 c->url);
	if (!c->size)
		c->size = size;
	return 0;
}

/* One request on c's connection (made when there is none). */
static int request(struct http_conn *c, const char *method, const char *range, bool close,
		   struct http_resp *r, char *err, size_t errlen)
{
	double deadline = now_sec() + c->timeout_ms / 1000.0;
	char req[3072], head[HTTP_HEAD_MAX], port[8] = "";
	ssize_t hl;
	int rc, n;

	if (c->fd >= 0 && (!c->keep || c->left))
		(void)http_close(c);
	if (c->fd < 0 && (rc = connect_to(c, deadline)) < 0) {
		(void)http_close(c);
		return rb_errfmt(err, errlen, rc, "%s: %s", c->url, dns_strerror(rc));
	}
	if (c->u.port != 80)
		snprintf(port, sizeof(port), ":%u", c->u.port);
	n = snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: %s%s%s%s\r\n"
		     "User-Agent: ramboot\r\nAccept-Encoding: identity\r\n%s%s",
		     method, c->u.path, c->u.ipv6 ? "[" : "", c->u.host, c->u.ipv6 ? "]" : "",
		     port, range ? range : "", close ? "Connection: close\r\n" : "");
	if (range && c->known && (c->etag[0] || c->last_modified[0]))
		n += snprintf(req + n, sizeof(req) - (size_t)n, "If-Range: %s\r\n",
			      c->etag[0] && strncmp(c->etag, "W/", 2) ? c->etag : c->last_modified);
	n += snprintf(req + n, sizeof(req) - (size_t)n, "\r\n");
	if ((size_t)n >= sizeof(req))
		return rb_errfmt(err, errlen, -EINVAL, "%s: request too long", c->url);
	rc = send_all(c->fd, req, (size_t)n, deadline);
	hl = rc < 0 ? rc : read_head(c->fd, head, deadline);
	if (hl < 0) {
		(void)http_close(c);
		if (hl == -E2BIG)
			return rb_errfmt(err, errlen, -EPROTO, "%s: response head longer than %d "
					 "bytes", c->url, HTTP_HEAD_MAX);
		return rb_errfmt(err, errlen, (int)hl, "%s: %s", c->url, hl == -ECONNRESET ?
				 "connection closed before an answer" : hl == -EPROTO ?
				 "connection closed within the response head" : strerror((int)-hl));
	}
	c->head_len = (size_t)hl;
	rc = http_parse_head(head, (size_t)hl, r, req, sizeof(req));
	if (rc < 0) {
		(void)http_close(c);
		return rb_errfmt(err, errlen, rc, "%s: %s", c->url, req);
	}
	c->keep = !close && !r->close && head[7] == '1';
	c->left = 0;
	return 0;
}

static bool retryable(int rc, const struct http_resp *r)
{
	return rc == -ECONNRESET || rc == -ECONNREFUSED || rc == -EPIPE || rc == -ETIMEDOUT ||
	       rc == -EHOSTUNREACH || rc == -ENETUNREACH || (rc == 0 && r->status >= 500);
}

/* request(), retried and redirected; a 2xx with a body of known length. */
static int exchange(struct http_conn *c, const char *method, const char *range, bool close,
		    struct http_resp *r, char *err, size_t errlen)
{
	char next[sizeof(c->url)];
	int redirects = 0, attempt, rc;

	for (;;) {
		for (attempt = 0;; attempt++) {
			rc = request(c, method, range, close, r, err, errlen);
			if (!retryable(rc, r) || attempt == HTTP_RETRIES)
				break;
			(void)http_close(c);
			nap_ms(250L << attempt);
		}
		if (rc < 0)
			return rc;
		if (r->status != 301 && r->status != 302 && r->status != 303 &&
		    r->status != 307 && r->status != 308)
			break;
		(void)http_close(c);
		if (!r->location[0] || http_url_join(c->url, r->location, next, sizeof(next)) < 0)
			return rb_errfmt(err, errlen, -EPROTO, "%s: HTTP %d to an unusable Location "
					 "'%.200s'", c->url, r->status, r->location);
		if (++redirects > HTTP_REDIRECTS || !strcmp(next, c->url))
			return rb_errfmt(err, errlen, -ELOOP, "%s: more than %d redirects, or a "
					 "loop", c->url, HTTP_REDIRECTS);
		strcpy(c->url, next);
		if ((rc = http_url_parse(c->url, &c->u, err, errlen)) < 0)
			return rc;
	}
	if (r->status < 200 || r->status > 299) {
		(void)http_close(c);
		return rb_errfmt(err, errlen, r->status == 404 || r->status == 410 ? -ENOENT :
				 r->status == 403 || r->status == 401 ? -EACCES : -EIO,
				 "%s: HTTP status %d", c->url, r->status);
	}
	if (r->coded) {
		(void)http_close(c);
		return rb_errfmt(err, errlen, -EPROTO, "%s: a transfer coding other than chunked",
				 c->url);
	}
	/* RFC 9112 6.3: chunked wins over a Content-Length; without either,
	 * the body ends where the server closes. A ranged answer is checked
	 * by its reader (http_check_range()). */
	c->body = r->chunked ? HTTP_BODY_CHUNKED : r->has_length ? HTTP_BODY_LENGTH :
		  HTTP_BODY_CLOSE;
	memset(&c->ck, 0, sizeof(c->ck));
	c->body_err[0] = '\0';
	if (c->body != HTTP_BODY_LENGTH)
		c->keep = false;
	c->left = strcmp(method, "HEAD") && c->body == HTTP_BODY_LENGTH ? r->length : 0;
	if (!strcmp(method, "HEAD"))
		c->body = HTTP_BODY_LENGTH;
	return 0;
}

int http_get(struct http_conn *c, bool head, bool close, char *err, size_t errlen)
{
	struct http_resp r;
	int rc = exchange(c, head ? "HEAD" : "GET", NULL, close, &r, err, errlen);

	if (rc == 0 && r.status != 200)
		rc = rb_errfmt(err, errlen, -EPROTO, "%s: HTTP status %d to a plain GET", c->url,
			       r.status);
	if (rc == 0)
		rc = same_file(c, &r, r.has_length && !r.chunked ? r.length : 0, err, errlen);
	if (rc < 0)
		(void)http_close(c);
	return rc;
}

/* At most len bytes of the socket: the count, 0 at the server's close. */
static ssize_t recv_some(int fd, void *buf, size_t len, double deadline)
{
	for (;;) {
		ssize_t n = recv(fd, buf, len, MSG_DONTWAIT);
		int rc;

		if (n >= 0)
			return n;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		if ((rc = wait_fd(fd, POLLIN, deadline)) < 0)
			return rc;
	}
}

ssize_t http_body_read(struct http_conn *c, void *buf, size_t len)
{
	double deadline = now_sec() + c->timeout_ms / 1000.0;
	ssize_t n;
	char b;

	/* The framing before the next data, a byte at a time: what follows
	 * the body stays on the socket. */
	while (c->body == HTTP_BODY_CHUNKED && !c->ck.left && !c->ck.done) {
		n = recv_some(c->fd, &b, 1, deadline);
		if (n <= 0)
			return n < 0 ? n : -EIO;
		if (http_chunk_byte(&c->ck, b, c->body_err, sizeof(c->body_err)) < 0)
			return -EPROTO;
	}
	if (c->body == HTTP_BODY_CHUNKED && len > c->ck.left)
		len = (size_t)c->ck.left;
	if (c->body == HTTP_BODY_LENGTH && len > c->left)
		len = (size_t)c->left;
	if (len == 0)
		return 0;
	n = recv_some(c->fd, buf, len, deadline);
	if (n == 0)
		return c->body == HTTP_BODY_CLOSE ? 0 : -EIO;   /* the server ended it early */
	if (n > 0 && c->body == HTTP_BODY_CHUNKED)
		c->ck.left -= (uint64_t)n;
	else if (n > 0)
		c->left -= (uint64_t)n;
	return n;
}

ssize_t http_pread(struct http_conn *c, void *buf, size_t len, uint64_t off, char *err,
		   size_t errlen)
{
	char range[64], msg[160];
	struct http_resp r;
	uint64_t last;
	size_t got = 0;
	int rc;

	/* A size of 0 is one not known (a Content-Range of "*"). */
	if (c->known && c->size && off >= c->size)
		return 0;
	if (len == 0)
		return 0;
	if (c->known && c->size && len > c->size - off)
		len = (size_t)(c->size - off);
	last = off + len - 1;
	snprintf(range, sizeof(range), "Range: bytes=%" PRIu64 "-%" PRIu64 "\r\n", off, last);
	rc = exchange(c, "GET", range, false, &r, err, errlen);
	if (rc == 0)
		rc = same_file(c, &r, r.status == 206 ? r.range_total : r.length, err, errlen);
	if (rc == 0 && (rc = http_check_range(&r, off, last, c->size, msg, sizeof(msg))) < 0)
		rb_errfmt(err, errlen, rc, "%s: %s", c->url, msg);
	if (rc < 0) {
		(void)http_close(c);
		return rc;
	}
	while (got < len) {
		ssize_t n = http_body_read(c, (char *)buf + got, len - got);

		if (n <= 0) {
			(void)http_close(c);
			return rb_errfmt(err, errlen, n < 0 ? (int)n : -EIO, "%s: body of bytes "
					 "%" PRIu64 "-%" PRIu64 " cut short: %s", c->url, off, last,
					 strerror(n < 0 ? (int)-n : EIO));
		}
		got += (size_t)n;
	}
	return (ssize_t)got;
}

int http_stream_open(struct http_conn *c, int *fd, char *err, size_t errlen)
{
	struct timeval tv = { .tv_sec = c->timeout_ms / 1000, .tv_usec = c->timeout_ms % 1000 * 1000 };
	int rc = http_get(c, false, true, err, errlen), sv[2];

	if (rc < 0)
		return rc;
	if (c->body == HTTP_BODY_CHUNKED) {
		struct http_pump *p = malloc(sizeof(*p));
		pthread_attr_t at;

		rc = !p ? -ENOMEM : socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 ?
		     -errno : 0;
		if (rc == 0) {
			p->c = *c;
			p->out = sv[1];
			atomic_init(&p->rc, 1);
			atomic_init(&p->refs, 2);
			c->fd = -1;
			c->pump = p;
			if ((rc = -pthread_attr_init(&at)) == 0) {
				(void)pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
				rc = -pthread_create(&(pthread_t){ 0 }, &at, pump, p);
				(void)pthread_attr_destroy(&at);
			}
			if (rc < 0) {
				atomic_store(&p->refs, 1);
				(void)close(sv[0]);
			}
		} else {
			free(p);
		}
		if (rc < 0) {
			(void)http_close(c);
			return rb_errfmt(err, errlen, rc, "%s: %s", c->url, strerror(-rc));
		}
		*fd = sv[0];
		return 0;
	}
	if (fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) & ~O_NONBLOCK) < 0 ||
	    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		rc = -errno;
		(void)http_close(c);
		return rb_errfmt(err, errlen, rc, "%s: %s", c->url, strerror(-rc));
	}
	c->stream_head = c->head_len;
	*fd = c->fd;
	c->fd = -1;
	c->left = 0;
	return 0;
}

#define TCP_STATE_CLOSE_WAIT 8   /* include/net/tcp_states.h */

int http_stream_end(struct http_conn *c, int fd, char *err, size_t errlen)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	uint64_t body;

	if (c->pump) {
		/* Its EOF came after the thread's last word. */
		int rc = atomic_load(&c->pump->rc);

		if (rc > 0)
			rc = -EIO;
		if (rc < 0)
			rb_errfmt(err, errlen, rc, "%s: %s", c->url, c->pump->c.body_err[0] ?
				  c->pump->c.body_err : rc == -EIO ? "chunked body cut short" :
				  strerror(-rc));
		pump_release(c);
		return rc < 0 ? rc : http_get(c, true, false, err, errlen);
	}
	/* What TCP took in (RFC 4898's ThruOctetsReceived, Linux 4.1): the
	 * head and the body, read to their end, and the server's FIN as one
	 * more when it closed in order (the connection is in CLOSE_WAIT). */
	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 &&
	    len >= offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(ti.tcpi_bytes_received)) {
		body = ti.tcpi_bytes_received - c->stream_head -
		       (ti.tcpi_state == TCP_STATE_CLOSE_WAIT);
		if (c->body == HTTP_BODY_LENGTH && body != c->size)
			return rb_errfmt(err, errlen, -EIO, "%s: the server sent %" PRIu64 " of %"
					 PRIu64 " bytes", c->url, body, c->size);
	}
	return http_get(c, true, false, err, errlen);
}

int http_fetch(const char *url, int timeout_ms, size_t max, char **text, size_t *len, char *err,
	       size_t errlen)
{
	struct http_conn c;
	size_t got = 0, cap;
	char *buf, *more;
	int rc = http_init(&c, url, timeout_ms, err, errlen);

	*text = NULL;
	*len = 0;
	if (rc < 0 || (rc = http_get(&c, false, true, err, errlen)) < 0)
		return rc;
	if (c.size > max) {
		(void)http_close(&c);
		return rb_errfmt(err, errlen, -EFBIG, "%s: larger than %zu bytes", c.url, max);
	}
	/* Of a length not said: grown as it comes, up to max. */
	cap = c.body == HTTP_BODY_LENGTH ? (size_t)c.size : max < 65536 ? max : 65536;
	buf = malloc(cap + 1);
	for (rc = buf ? 0 : -ENOMEM; rc == 0;) {
		ssize_t n;

		if (got == cap && cap < max && c.body != HTTP_BODY_LENGTH) {
			cap = cap < max / 2 ? cap * 2 : max;
			if (!(more = realloc(buf, cap + 1))) {
				rc = -ENOMEM;
				break;
			}
			buf = more;
		}
		/* One byte past cap (buf has room for it): is there more? */
		n = http_body_read(&c, buf + got, got < cap ? cap - got : 1);
		if (n == 0)
			break;
		if (n < 0)
			rc = (int)n;
		else if (got + (size_t)n > cap)
			rc = -EFBIG;
		else
			got += (size_t)n;
	}
	if (rc < 0) {
		free(buf);
		(void)http_close(&c);
		if (rc == -EFBIG)
			return rb_errfmt(err, errlen, rc, "%s: larger than %zu bytes", c.url, max);
		return rb_errfmt(err, errlen, rc, "%s: %s", c.url, rc == -EIO ? "body cut short" :
				 c.body_err[0] ? c.body_err : strerror(-rc));
	}
	buf[got] = '\0';
	*text = buf;
	*len = got;
	return http_close(&c);
}
