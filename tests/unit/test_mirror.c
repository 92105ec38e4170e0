// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The mirror set (source/mirror.h) against servers on 127.0.0.1, one
 * child each, that answer HEAD and ranged GETs of one file, or do what a
 * broken mirror does: other bytes, a 200 to a range, another file (size
 * or ETag). Reads spread over the mirrors; one that fails is left for
 * the read and the next mirror serves it; the bytes count only once they
 * match their hash.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "lib/sha256.h"
#include "source/mirror.h"

#define SIZE 16384
#define CHUNK 4096

enum mode { GOOD, OTHER_BYTES, WHOLE, OTHER_ETAG, OTHER_SIZE };

static uint8_t file[SIZE];
static char err[512];

struct server {
	pid_t pid;
	char url[64];
};

/* Answer each request of each connection as mode says, until killed. */
static void answer(int c, enum mode mode)
{
	char req[4096], head[256];
	uint64_t first = 0, last = SIZE - 1;
	size_t got = 0;
	const char *r;
	int n, gets = 0;

	for (;;) {
		ssize_t k;

		got = 0;
		while (got < sizeof(req) - 1 && (k = read(c, req + got, 1)) == 1) {
			got++;
			if (got >= 4 && !memcmp(req + got - 4, "\r\n\r\n", 4))
				break;
		}
		if (got < 4)
			return;
		req[got] = '\0';
		if (!strncmp(req, "HEAD ", 5)) {
			n = snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n"
				     "ETag: \"e1\"\r\n\r\n", mode == OTHER_SIZE ? SIZE + 1 : SIZE);
			if (write(c, head, (size_t)n) < 0)
				return;
			continue;
		}
		gets++;
		r = strstr(req, "Range: bytes=");
		if (r)
			sscanf(r + 13, "%" SCNu64 "-%" SCNu64, &first, &last);
		if (mode == WHOLE || !r) {
			n = snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n"
				     "ETag: \"e1\"\r\n\r\n", SIZE);
			first = 0;
			last = SIZE - 1;
		} else {
			n = snprintf(head, sizeof(head), "HTTP/1.1 206 Partial\r\nContent-Length: %"
				     PRIu64 "\r\nContent-Range: bytes %" PRIu64 "-%" PRIu64 "/%d\r\n"
				     "ETag: \"%s\"\r\n\r\n", last - first + 1, first, last, SIZE,
				     mode == OTHER_ETAG ? "e2" : "e1");
		}
		if (write(c, head, (size_t)n) < 0)
			return;
		if (mode == OTHER_BYTES) {
			uint8_t x[SIZE];

			memcpy(x, file, SIZE);
			x[first] ^= 1;
			if (write(c, x + first, last - first + 1) < 0)
				return;
		} else if (write(c, file + first, last - first + 1) < 0) {
			return;
		}
	}
}

static void serve(struct server *s, enum mode mode)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int one = 1, lfd;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 8) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len))
		abort();
	snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%u/img", ntohs(sa.sin_port));
	s->pid = fork();
	if (s->pid) {
		close(lfd);
		return;
	}
	for (;;) {
		int c = accept(lfd, NULL, NULL);

		if (c < 0)
			_exit(1);
		answer(c, mode);
		close(c);
	}
}

static void stop(struct server *s)
{
	kill(s->pid, SIGKILL);
	waitpid(s->pid, NULL, 0);
}

/* Open a set of the servers in these modes. */
static int open_set(struct mirror_set *set, struct server *s, const enum mode *modes, unsigned n)
{
	const char *urls[MIRROR_MAX];
	unsigned i;

	for (i = 0; i < n; i++) {
		serve(&s[i], modes[i]);
		urls[i] = s[i].url;
	}
	return mirror_set_open(set, urls, n, 5000, err, sizeof(err));
}

static void stop_all(struct mirror_set *set, struct server *s, unsigned n)
{
	mirror_set_close(set);
	while (n)
		stop(&s[--n]);
}

/* Fetch every chunk, checked; 0 when all came right. */
static int fetch_all(struct mirror_set *set, int *by)
{
	uint8_t buf[CHUNK], md[32];
	unsigned i;

	for (i = 0; i < SIZE / CHUNK; i++) {
		sha256(file + i * CHUNK, CHUNK, md);
		if (mirror_fetch(set, buf, CHUNK, i * CHUNK, md, &by[i], err, sizeof(err)) != CHUNK ||
		    memcmp(buf, file + i * CHUNK, CHUNK))
			return -1;
	}
	return 0;
}

/* Two good mirrors: the reads go to each in turn, every byte counted. */
static void test_spread(void)
{
	static const enum mode m[] = { GOOD, GOOD };
	struct mirror_stat a, b;
	struct mirror_set set;
	struct server s[2];
	int by[SIZE / CHUNK];

	CHECK_EQ_INT(open_set(&set, s, m, 2), 0);
	CHECK_EQ_INT(set.size, SIZE);
	CHECK_EQ_INT(fetch_all(&set, by), 0);
	mirror_stats(&set, 0, &a);
	mirror_stats(&set, 1, &b);
	CHECK_EQ_INT(a.chunks, 2);
	CHECK_EQ_INT(b.chunks, 2);
	CHECK_EQ_INT(a.bytes + b.bytes, SIZE);
	CHECK(by[0] != by[1]);
	CHECK_EQ_STR(mirror_url(&set, 1), s[1].url);
	stop_all(&set, s, 2);
}

/* Bytes that do not match their hash: the chunk comes from the other
 * mirror; after MIRROR_FAILS such reads that mirror is dropped. */
static void test_bad_bytes(void)
{
	static const enum mode m[] = { OTHER_BYTES, GOOD };
	struct mirror_stat a, b;
	struct mirror_set set;
	struct server s[2];
	int by[SIZE / CHUNK];
	unsigned i;

	CHECK_EQ_INT(open_set(&set, s, m, 2), 0);
	CHECK_EQ_INT(fetch_all(&set, by), 0);
	for (i = 0; i < SIZE / CHUNK; i++)
		CHECK_EQ_INT(by[i], 1);
	mirror_stats(&set, 0, &a);
	mirror_stats(&set, 1, &b);
	CHECK_EQ_INT(a.chunks, 0);
	CHECK_EQ_INT(a.failures, MIRROR_FAILS);
	CHECK(a.dropped);
	CHECK_EQ_INT(b.bytes, SIZE);
	CHECK_EQ_INT(mirror_live(&set), 1);
	stop_all(&set, s, 2);
}

/* A 200 to a range, or another ETag (the file replaced there): that
 * mirror is dropped at once, never taken for the range. */
static void test_dropped(void)
{
	static const enum mode m[] = { WHOLE, OTHER_ETAG, GOOD };
	struct mirror_stat st;
	struct mirror_set set;
	struct server s[3];
	int by[SIZE / CHUNK];

	CHECK_EQ_INT(open_set(&set, s, m, 3), 0);
	CHECK_EQ_INT(fetch_all(&set, by), 0);
	mirror_stats(&set, 0, &st);
	CHECK(st.dropped);
	CHECK_EQ_INT(st.failures, 1);
	mirror_stats(&set, 1, &st);
	CHECK(st.dropped);
	CHECK_EQ_INT(st.failures, 1);
	mirror_stats(&set, 2, &st);
	CHECK_EQ_INT(st.chunks, SIZE / CHUNK);
	CHECK_EQ_INT(mirror_live(&set), 1);
	stop_all(&set, s, 3);
}

/* A mirror of another size is not used; none that serves the bytes: the
 * read fails with the last mirror's reason. */
static void test_none_left(void)
{
	static const enum mode m[] = { GOOD, OTHER_SIZE, OTHER_BYTES };
	struct mirror_stat st;
	struct mirror_set set;
	struct server s[3];
	uint8_t buf[CHUNK], md[32];

	CHECK_EQ_INT(open_set(&set, s, m, 3), 0);
	mirror_stats(&set, 1, &st);
	CHECK(st.dropped);
	stop(&s[0]);            /* gone: no connection */
	memset(md, 0, sizeof(md));
	sha256(file, CHUNK, md);
	CHECK_EQ_INT(mirror_fetch(&set, buf, CHUNK, 0, md, NULL, err, sizeof(err)), -EBADMSG);
	CHECK(strstr(err, "do not match their hash") != NULL);
	/* unchecked: the bytes as a mirror sent them */
	CHECK_EQ_INT(mirror_fetch(&set, buf, CHUNK, 0, NULL, NULL, err, sizeof(err)), CHUNK);
	mirror_set_close(&set);
	stop(&s[1]);
	stop(&s[2]);
}

/* A run of chunks, each checked by its own hash: the one piece that
 * does not match fails the mirror for the run; the other serves it. */
static void test_run(void)
{
	static const enum mode m[] = { OTHER_BYTES, GOOD };
	struct mirror_piece p[SIZE / CHUNK];
	uint8_t md[SIZE / CHUNK][32], buf[SIZE];
	struct mirror_stat a;
	struct mirror_set set;
	struct server s[2];
	unsigned i;
	int by = -1;

	for (i = 0; i < SIZE / CHUNK; i++) {
		sha256(file + i * CHUNK, CHUNK, md[i]);
		p[i].len = CHUNK;
		p[i].sha256 = md[i];
	}
	CHECK_EQ_INT(open_set(&set, s, m, 2), 0);
	CHECK_EQ_INT(mirror_fetch_run(&set, buf, SIZE, 0, p, SIZE / CHUNK, &by, err, sizeof(err)),
		     SIZE);
	CHECK_EQ_INT(by, 1);
	CHECK(!memcmp(buf, file, SIZE));
	mirror_stats(&set, 0, &a);
	CHECK_EQ_INT(a.failures, 1);
	CHECK_EQ_INT(a.chunks, 0);
	stop_all(&set, s, 2);
}

/* Every mirror dropped: those dropped for failing in a row are tried
 * again (a server back), one that served another file is not. */
static void test_revive(void)
{
	static const enum mode m[] = { GOOD, OTHER_ETAG };
	struct mirror_stat st;
	struct mirror_set set;
	struct server s[2];
	uint8_t buf[CHUNK];
	unsigned i;

	CHECK_EQ_INT(open_set(&set, s, m, 2), 0);
	CHECK_EQ_INT(mirror_revive(&set), 2);
	stop(&s[0]);
	for (i = 0; i < MIRROR_FAILS + 1; i++)
		CHECK(mirror_fetch(&set, buf, CHUNK, 0, NULL, NULL, err, sizeof(err)) < 0);
	CHECK_EQ_INT(mirror_live(&set), 0);
	mirror_stats(&set, 0, &st);
	CHECK_EQ_INT(st.failures, MIRROR_FAILS);
	CHECK_EQ_INT(mirror_revive(&set), 1);
	mirror_stats(&set, 1, &st);
	CHECK(st.dropped);
	CHECK(mirror_fetch(&set, buf, CHUNK, 0, NULL, NULL, err, sizeof(err)) < 0);
	mirror_stats(&set, 0, &st);
	CHECK_EQ_INT(st.failures, MIRROR_FAILS + 1);
	mirror_set_close(&set);
	stop(&s[1]);
}

/* Nobody answers: no set. */
static void test_open_fails(void)
{
	static const char *const urls[] = { "http://127.0.0.1:1/img" };
	struct mirror_set set;

	CHECK(mirror_set_open(&set, urls, 1, 2000, err, sizeof(err)) < 0);
	CHECK(strstr(err, "http://127.0.0.1:1/img") != NULL);
	CHECK_EQ_INT(mirror_set_open(&set, urls, 0, 2000, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	unsigned i;

	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < SIZE; i++)
		file[i] = (uint8_t)(i * 7 + i / 251);
	RUN(test_spread);
	RUN(test_bad_bytes);
	RUN(test_dropped);
	RUN(test_none_left);
	RUN(test_open_fails);
	RUN(test_run);
	RUN(test_revive);
	return TAP_DONE();
}
