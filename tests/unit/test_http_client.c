// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The HTTP client against a server of canned answers on 127.0.0.1: a
 * child that reads each request's head and writes the next answer (or
 * stalls, or closes). Ranged reads, If-Range, a file replaced, a 200 to a
 * range, redirects and their loop, bounded heads, a body cut short.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "lib/path.h"
#include "source/http.h"

#define STALL "<stall>"
#define CLOSE "<close>"

static char url[128], err[512];
static char last_req[4096];     /* the child's requests, to the parent by a pipe */
static int req_pipe[2];
static pid_t child;
static int lfd = -1;

/* Serve answers[] in order on one connection each time the last one is
 * closed; each answer is written once its request's head came. */
static void serve(const char *const *answers, size_t n)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 8) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len) || pipe(req_pipe))
		abort();
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/img", ntohs(sa.sin_port));
	child = fork();
	if (child)
		return;
	close(req_pipe[0]);
	for (size_t i = 0; i < n;) {
		int c = accept(lfd, NULL, NULL);

		while (c >= 0 && i < n) {
			char req[4096];
			size_t got = 0;
			ssize_t r;

			while (got < sizeof(req) - 1 && (r = read(c, req + got, 1)) == 1) {
				got++;
				if (got >= 4 && !memcmp(req + got - 4, "\r\n\r\n", 4))
					break;
			}
			if (got == 0)
				break;
			if (write(req_pipe[1], req, got) < 0)
				_exit(1);
			if (!strcmp(answers[i], STALL)) {
				pause();
			} else if (!strcmp(answers[i], CLOSE)) {
				i++;
				break;
			}
			if (write(c, answers[i], strlen(answers[i])) < 0)
				break;
			i++;
			if (strstr(answers[i - 1], "Connection: close"))
				break;
		}
		if (c >= 0)
			close(c);
	}
	_exit(0);
}

static void done(void)
{
	ssize_t n;

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(lfd);
	close(req_pipe[1]);
	n = read(req_pipe[0], last_req, sizeof(last_req) - 1);
	last_req[n > 0 ? n : 0] = '\0';
	close(req_pipe[0]);
}

#define H200(len) "HTTP/1.1 200 OK\r\nContent-Length: " len "\r\nETag: \"e1\"\r\n" \
	"Last-Modified: Mon, 07 Dec 2026 06:00:00 GMT\r\n\r\n"

/* The answers a[0..n) served, and c made for them with a wait of ms. */
static void connect_to(struct http_conn *c, const char *const *a, int n, int ms)
{
	serve(a, n);
	CHECK_EQ_INT(http_init(c, url, ms, err, sizeof(err)), 0);
}

/* A ranged read, then the next on the same connection with If-Range. */
static void test_ranges(void)
{
	static const char *const a[] = {
		"HTTP/1.1 206 Partial Content\r\nContent-Length: 4\r\n"
		"Content-Range: bytes 0-3/10\r\nETag: \"e1\"\r\n\r\n0123",
		"HTTP/1.1 206 Partial Content\r\nContent-Length: 4\r\n"
		"Content-Range: bytes 6-9/10\r\nETag: \"e1\"\r\n\r\n6789",
	};
	struct http_conn c;
	char buf[16];

	connect_to(&c, a, 2, 5000);
	CHECK_EQ_INT(http_pread(&c, buf, 4, 0, err, sizeof(err)), 4);
	CHECK(!memcmp(buf, "0123", 4));
	CHECK_EQ_INT(c.size, 10);
	CHECK_EQ_INT(http_pread(&c, buf, 8, 6, err, sizeof(err)), 4);
	CHECK(!memcmp(buf, "6789", 4));
	CHECK_EQ_INT(http_pread(&c, buf, 8, 10, err, sizeof(err)), 0);
	http_close(&c);
	done();
	CHECK(strstr(last_req, "Range: bytes=0-3\r\n") != NULL);
	CHECK(strstr(last_req, "Range: bytes=6-9\r\nIf-Range: \"e1\"\r\n") != NULL);
}

/* A file whose size the server does not say (a total of "*"): every
 * offset is asked for. */
static void test_size_unknown(void)
{
	static const char *const a[] = {
		"HTTP/1.1 206 x\r\nContent-Length: 2\r\nContent-Range: bytes 0-1/*\r\n\r\n01",
		"HTTP/1.1 206 x\r\nContent-Length: 2\r\nContent-Range: bytes 2-3/*\r\n\r\n23",
	};
	struct http_conn c;
	char buf[4];

	connect_to(&c, a, 2, 5000);
	CHECK_EQ_INT(http_pread(&c, buf, 2, 0, err, sizeof(err)), 2);
	CHECK_EQ_INT(http_pread(&c, buf, 2, 2, err, sizeof(err)), 2);
	CHECK(!memcmp(buf, "23", 2));
	http_close(&c);
	done();
}

/* A 200 to a range is never taken for the range; with another ETag it
 * is the file replaced. */
static void test_whole_for_range(void)
{
	static const char *const a[] = {
		"HTTP/1.1 206 x\r\nContent-Length: 2\r\nContent-Range: bytes 0-1/10\r\n"
		"ETag: \"e1\"\r\n\r\n01",
		H200("10") "0123456789",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nETag: \"e2\"\r\n\r\nabcdefghij",
	};
	struct http_conn c;
	char buf[16];

	connect_to(&c, a, 3, 5000);
	CHECK_EQ_INT(http_pread(&c, buf, 2, 0, err, sizeof(err)), 2);
	CHECK_EQ_INT(http_pread(&c, buf, 2, 2, err, sizeof(err)), -ERANGE);
	CHECK(strstr(err, "ignored the range") != NULL);
	CHECK_EQ_INT(http_pread(&c, buf, 2, 2, err, sizeof(err)), -ESTALE);
	CHECK(strstr(err, "changed on the server while being read") != NULL);
	http_close(&c);
	done();
}

/* A 206 of another range, or of a file of another size. */
static void test_range_mismatch(void)
{
	static const char *const a[] = {
		"HTTP/1.1 206 x\r\nContent-Length: 2\r\nContent-Range: bytes 2-3/10\r\n\r\n23",
		"HTTP/1.1 206 x\r\nContent-Length: 2\r\nContent-Range: bytes 0-1/10\r\n\r\n01",
		"HTTP/1.1 206 x\r\nContent-Length: 2\r\nContent-Range: bytes 2-3/11\r\n\r\n23",
	};
	struct http_conn c;
	char buf[16];

	connect_to(&c, a, 3, 5000);
	CHECK_EQ_INT(http_pread(&c, buf, 2, 0, err, sizeof(err)), -EPROTO);
	CHECK(c.fd < 0);
	CHECK_EQ_INT(http_pread(&c, buf, 2, 0, err, sizeof(err)), 2);
	CHECK_EQ_INT(http_pread(&c, buf, 2, 2, err, sizeof(err)), -ESTALE);
	http_close(&c);
	done();
}

/* Serve the answers a[0..n), read len bytes at 0 with a wait of ms:
 * the result must be want, and err must say says (NULL: anything). */
static void pread_says(const char *const *a, int n, int ms, size_t len, int want,
		       const char *says)
{
	struct http_conn c;
	char buf[16];

	connect_to(&c, a, n, ms);
	CHECK_EQ_INT(http_pread(&c, buf, len, 0, err, sizeof(err)), want);
	if (says)
		CHECK(strstr(err, says) != NULL);
	http_close(&c);
	done();
}

static void test_redirects(void)
{
	static char loc[200], loop[8][256];
	const char *a[8];
	struct http_conn c;
	char buf[4];
	int i;

	snprintf(loc, sizeof(loc), "HTTP/1.1 302 Found\r\nLocation: /other\r\n"
		 "Content-Length: 0\r\n\r\n");
	a[0] = loc;
	a[1] = "HTTP/1.1 206 x\r\nContent-Length: 1\r\nContent-Range: bytes 0-0/1\r\n\r\nZ";
	connect_to(&c, a, 2, 5000);
	CHECK_EQ_INT(http_pread(&c, buf, 1, 0, err, sizeof(err)), 1);
	CHECK_EQ_INT(buf[0], 'Z');
	CHECK(strstr(c.url, "/other") != NULL);
	http_close(&c);
	done();
	CHECK(strstr(last_req, "GET /other HTTP/1.1\r\n") != NULL);

	/* each to the next: more than HTTP_REDIRECTS is refused */
	for (i = 0; i < 8; i++) {
		snprintf(loop[i], sizeof(loop[i]), "HTTP/1.1 301 x\r\nLocation: /r%d\r\n\r\n", i);
		a[i] = loop[i];
	}
	pread_says(a, 8, 5000, 1, -ELOOP, "more than 5 redirects");
	/* to itself */
	a[0] = "HTTP/1.1 307 x\r\nLocation: /img\r\n\r\n";
	pread_says(a, 1, 5000, 1, -ELOOP, NULL);
}

/* A head that never ends, a body cut short, a server that stalls after
 * its head, one that closes before answering (retried), a 404. */
static void test_broken(void)
{
	static char endless[HTTP_HEAD_MAX + 64];
	const char *a[6];
	struct http_conn c;
	size_t n;

	n = (size_t)snprintf(endless, sizeof(endless), "HTTP/1.1 200 OK\r\n");
	while (n + 8 < sizeof(endless) - 1)
		n += (size_t)snprintf(endless + n, sizeof(endless) - n, "X: 123\r\n");
	a[0] = endless;
	pread_says(a, 1, 5000, 4, -EPROTO, "response head longer than 8192 bytes");

	a[0] = "HTTP/1.1 206 x\r\nContent-Length: 4\r\nContent-Range: bytes 0-3/10\r\n"
	       "Connection: close\r\n\r\n01";
	pread_says(a, 1, 5000, 4, -EIO, "cut short");

	a[0] = "HTTP/1.1 206 x\r\nContent-Length: 4\r\nContent-Range: bytes 0-3/10\r\n\r\n";
	a[1] = STALL;
	pread_says(a, 2, 300, 4, -ETIMEDOUT, NULL);

	a[0] = CLOSE;
	a[1] = "HTTP/1.1 206 x\r\nContent-Length: 1\r\nContent-Range: bytes 0-0/1\r\n\r\nZ";
	pread_says(a, 2, 5000, 1, 1, NULL);

	a[0] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
	pread_says(a, 1, 5000, 1, -ENOENT, "HTTP status 404");

	a[0] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n";
	connect_to(&c, a, 1, 5000);
	CHECK_EQ_INT(http_get(&c, false, true, err, sizeof(err)), -EPROTO);
	CHECK(strstr(err, "a transfer coding other than chunked") != NULL);
	http_close(&c);
	done();

	/* a chunked answer to a range: its length is not known */
	a[0] = "HTTP/1.1 206 x\r\nTransfer-Encoding: chunked\r\nContent-Range: bytes 0-1/10\r\n"
	       "\r\n2\r\nab\r\n0\r\n\r\n";
	pread_says(a, 1, 5000, 2, -EPROTO, "a range without a Content-Length");
}

/* http_fetch() of a[0]: want, and the text or err's words says. */
static void fetch_says(const char *a0, size_t max, int want, const char *says)
{
	const char *a[1] = { a0 };
	char *text = NULL;
	size_t len;

	serve(a, 1);
	err[0] = '\0';
	CHECK_EQ_INT(http_fetch(url, 5000, max, &text, &len, err, sizeof(err)), want);
	if (want == 0) {
		CHECK_EQ_STR(text, says);
		CHECK_EQ_INT(len, strlen(says));
	} else {
		CHECK(strstr(err, says) != NULL);
	}
	free(text);
	done();
}

/* Bodies without a Content-Length: chunked (RFC 9112 7.1), or up to the
 * server's close (an HTTP/1.0 server's, or a dynamic one's). */
static void test_bodies(void)
{
	static char big[70000];
	size_t n;

	fetch_says("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
		   "6;x=y\r\n world\r\n0\r\nX-T: 1\r\n\r\n", 100, 0, "hello world");
	/* chunked wins over a Content-Length */
	fetch_says("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
		   "5\r\nhello\r\n0\r\n\r\n", 100, 0, "hello");
	fetch_says("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
		   "5\r\nhel", 100, -EIO, "body cut short");
	fetch_says("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 100, -EPROTO,
		   "chunked body: malformed chunk framing");
	fetch_says("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
		   "5\r\nhello\r\n0\r\n\r\n", 8, -EFBIG, "larger than 8 bytes");
	fetch_says("HTTP/1.0 200 OK\r\nConnection: close\r\n\r\nhello", 100, 0, "hello");
	fetch_says("HTTP/1.0 200 OK\r\nConnection: close\r\n\r\nhello", 5, 0, "hello");
	fetch_says("HTTP/1.0 200 OK\r\nConnection: close\r\n\r\nhello", 4, -EFBIG,
		   "larger than 4 bytes");
	/* grown past its first buffer */
	n = (size_t)snprintf(big, sizeof(big), "HTTP/1.0 200 OK\r\nConnection: close\r\n\r\n");
	memset(big + n, 'a', sizeof(big) - n - 1);
	fetch_says(big, sizeof(big), 0, big + n);
}

/* A chunked stream: decoded into a socket pair, its end checked. */
static void test_chunked_stream(void)
{
	static const char *const a[] = {
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nETag: \"e1\"\r\n\r\n"
		"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nETag: \"e1\"\r\n\r\n",
	};
	static const char *const cut[] = {
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
		"5\r\nhello\r\n6\r\n wo",
	};
	struct http_conn c, kept;
	char buf[64];
	size_t got = 0;
	ssize_t r;
	int fd = -1;

	connect_to(&c, a, 2, 5000);
	CHECK_EQ_INT(http_stream_open(&c, &fd, err, sizeof(err)), 0);
	while ((r = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)r;
	buf[got] = '\0';
	CHECK_EQ_STR(buf, "hello world");
	CHECK_EQ_INT(http_stream_end(&c, fd, err, sizeof(err)), 0);
	close(fd);
	http_close(&c);
	done();

	connect_to(&c, cut, 1, 5000);
	CHECK_EQ_INT(http_stream_open(&c, &fd, err, sizeof(err)), 0);
	got = 0;
	while ((r = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)r;
	CHECK_EQ_INT(got, 8);
	CHECK_EQ_INT(http_stream_end(&c, fd, err, sizeof(err)), -EIO);
	CHECK(strstr(err, "chunked body cut short") != NULL);
	close(fd);
	http_close(&c);
	done();

	/* the reader gone before the end: the thread ends, nothing waits */
	connect_to(&c, cut, 1, 5000);
	CHECK_EQ_INT(http_stream_open(&c, &fd, err, sizeof(err)), 0);
	close(fd);
	http_close(&c);
	done();

	/* the caller's connection scribbled over while the stream is read:
	 * the thread works on its own copy */
	connect_to(&c, a, 1, 5000);
	CHECK_EQ_INT(http_stream_open(&c, &fd, err, sizeof(err)), 0);
	kept = c;
	memset(&c, 0x55, sizeof(c));
	got = 0;
	while ((r = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)r;
	CHECK_EQ_INT(got, 11);
	close(fd);
	http_close(&kept);
	done();
}

/* A whole file, and the fetch of a small one. */
static void test_fetch(void)
{
	static const char *const a[] = { H200("5") "hello" };
	char *text;
	size_t len;

	serve(a, 1);
	CHECK_EQ_INT(http_fetch(url, 5000, 100, &text, &len, err, sizeof(err)), 0);
	CHECK_EQ_INT(len, 5);
	CHECK_EQ_STR(text, "hello");
	free(text);
	done();
	serve(a, 1);
	CHECK_EQ_INT(http_fetch(url, 5000, 4, &text, &len, err, sizeof(err)), -EFBIG);
	done();
	setenv("RAMBOOT_ROOT", "/nonexistent", 1);     /* no resolv.conf: no DNS */
	rb_root_init();
	CHECK_EQ_INT(http_fetch("http://no-such-host.invalid/x", 5000, 4, &text, &len, err,
				sizeof(err)), -EDESTADDRREQ);
	CHECK(strstr(err, "host not in /etc/hosts, and no DNS server known") != NULL);
	unsetenv("RAMBOOT_ROOT");
	rb_root_init();
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	RUN(test_ranges);
	RUN(test_size_unknown);
	RUN(test_whole_for_range);
	RUN(test_range_mismatch);
	RUN(test_redirects);
	RUN(test_broken);
	RUN(test_fetch);
	RUN(test_bodies);
	RUN(test_chunked_stream);
	return TAP_DONE();
}
