// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * source.c: the source of an image, each kind through the one interface:
 * a file (size, reads at an offset and in order, a short read at its end,
 * replaced while read), a pipe given as a descriptor and standard input
 * (the loader's "-"), a FIFO by path (never waited on; refused where a
 * file is needed), a directory, a missing file, and a udpcast stream from
 * a stand-in udp-receiver (its exit status is the stream's verdict, a
 * receiver still running is stopped by the close). The stall of a source that stops sending is the
 * guard's (lib/guard.h), tested by tests/harden.bats.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "lib/fdio.h"
#include "source/source.h"

static char dir[] = "/tmp/ramboot-source-XXXXXX";
static char img[128], fifo[128];
static char err[512];

static int open_spec(struct source *s, const char *name, int fd, bool seekable)
{
	const struct source_spec sp = { .name = name, .fd = fd, .seekable = seekable };

	err[0] = '\0';
	return source_open(s, &sp, err, sizeof(err));
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0);
	CHECK_EQ_INT(write_all(fd, text, strlen(text)), 0);
	CHECK_EQ_INT(close_checked(fd), 0);
}

static void a_file(void)
{
	struct source s;
	char buf[32];

	write_file(img, "0123456789");
	CHECK_EQ_INT(open_spec(&s, img, -1, true), 0);
	CHECK_EQ_INT(s.kind, SRC_FILE);
	CHECK(s.seekable);
	CHECK_EQ_INT(s.size, 10);
	CHECK_EQ_INT(source_pread(&s, buf, 3, 4), 3);
	CHECK(!memcmp(buf, "456", 3));
	/* At its end, fewer bytes than asked: the caller sees how many. */
	CHECK_EQ_INT(source_pread(&s, buf, sizeof(buf), 7), 3);
	CHECK(!memcmp(buf, "789", 3));
	CHECK_EQ_INT(source_read(&s, buf, 4), 4);
	CHECK(!memcmp(buf, "0123", 4));
	CHECK_EQ_INT(source_read(&s, buf, sizeof(buf)), 6);
	CHECK_EQ_INT(source_read(&s, buf, sizeof(buf)), 0);
	CHECK_EQ_INT(source_end(&s, err, sizeof(err)), 0);
	CHECK_EQ_INT(source_close(&s), 0);
	CHECK_EQ_INT(s.fd, -1);
	CHECK_EQ_INT(source_close(&s), 0);      /* closed once */
}

static void a_file_replaced(void)
{
	struct source s;
	int fd;

	write_file(img, "0123456789");
	CHECK_EQ_INT(open_spec(&s, img, -1, false), 0);
	fd = open(img, O_WRONLY | O_APPEND);
	CHECK(fd >= 0);
	CHECK_EQ_INT(write_all(fd, "x", 1), 0);
	CHECK_EQ_INT(close_checked(fd), 0);
	CHECK_EQ_INT(source_end(&s, err, sizeof(err)), -ESTALE);
	CHECK(strstr(err, "source changed while being read") != NULL);
	CHECK_EQ_INT(source_verdict(-ESTALE), RUN_CHANGED);
	CHECK_EQ_INT(source_close(&s), 0);
}

static void a_pipe(void)
{
	struct source s;
	char buf[32];
	int p[2];

	CHECK_EQ_INT(pipe(p), 0);
	CHECK_EQ_INT(write_all(p[1], "abc", 3), 0);
	CHECK_EQ_INT(open_spec(&s, "image", p[0], false), 0);
	CHECK_EQ_INT(s.kind, SRC_PIPE);
	CHECK(!s.seekable);
	CHECK_EQ_INT(s.size, 0);
	CHECK_EQ_INT(source_pread(&s, buf, 1, 0), -ESPIPE);
	/* One read: what the pipe holds, fewer bytes than asked. */
	CHECK_EQ_INT(source_read(&s, buf, sizeof(buf)), 3);
	CHECK_EQ_INT(write_all(p[1], "de", 2), 0);
	CHECK_EQ_INT(close_checked(p[1]), 0);
	CHECK_EQ_INT(source_read(&s, buf, sizeof(buf)), 2);
	CHECK_EQ_INT(source_read(&s, buf, sizeof(buf)), 0);
	CHECK_EQ_INT(source_end(&s, err, sizeof(err)), 0);
	CHECK_EQ_INT(source_close(&s), 0);
	/* A duplicate was read: the caller's descriptor is still its own. */
	CHECK(fcntl(p[0], F_GETFD) >= 0);
	CHECK_EQ_INT(close_checked(p[0]), 0);
	/* Where a file is needed, a pipe is refused. */
	CHECK_EQ_INT(pipe(p), 0);
	CHECK_EQ_INT(open_spec(&s, "image", p[0], true), -EINVAL);
	CHECK_EQ_STR(err, "image: not a regular file or a block device");
	CHECK_EQ_INT(source_verdict(-EINVAL), RUN_SOURCE);
	CHECK_EQ_INT(source_close(&s), 0);
	(void)close(p[0]);
	(void)close(p[1]);
}

static void standard_input(void)
{
	int saved = dup(STDIN_FILENO), p[2];
	struct source s;
	char buf[8];

	CHECK(saved >= 0);
	CHECK_EQ_INT(pipe(p), 0);
	CHECK_EQ_INT(dup2(p[0], STDIN_FILENO), STDIN_FILENO);
	(void)close(p[0]);
	CHECK_EQ_INT(write_all(p[1], "in", 2), 0);
	(void)close(p[1]);
	CHECK_EQ_INT(open_spec(&s, "-", STDIN_FILENO, false), 0);
	CHECK_EQ_INT(s.kind, SRC_PIPE);
	CHECK(s.fd > STDERR_FILENO);
	CHECK_EQ_INT(source_read(&s, buf, sizeof(buf)), 2);
	CHECK_EQ_INT(source_close(&s), 0);
	/* Standard input itself stays open. */
	CHECK(fcntl(STDIN_FILENO, F_GETFD) >= 0);
	CHECK_EQ_INT(dup2(saved, STDIN_FILENO), STDIN_FILENO);
	(void)close(saved);
}

static void refusals(void)
{
	struct source s;

	/* A FIFO without a writer: opened at once, never waited on. */
	CHECK_EQ_INT(mkfifo(fifo, 0600), 0);
	CHECK_EQ_INT(open_spec(&s, fifo, -1, false), 0);
	CHECK_EQ_INT(s.kind, SRC_PIPE);
	CHECK_EQ_INT(source_close(&s), 0);
	CHECK_EQ_INT(open_spec(&s, fifo, -1, true), -EINVAL);
	CHECK(strstr(err, ": not a regular file or a block device") != NULL);
	CHECK_EQ_INT(source_close(&s), 0);
	CHECK_EQ_INT(open_spec(&s, dir, -1, false), -EISDIR);
	CHECK(strstr(err, ": is a directory") != NULL);
	CHECK_EQ_INT(source_close(&s), 0);
	CHECK_EQ_INT(open_spec(&s, "/nonexistent/image", -1, false), -ENOENT);
	CHECK_EQ_STR(err, "/nonexistent/image: No such file or directory");
	CHECK_EQ_INT(source_verdict(-ENOENT), RUN_SOURCE);
	CHECK_EQ_INT(source_verdict(0), RUN_OK);
	CHECK_EQ_INT(source_close(&s), 0);
}

/* bin/udp-receiver: a shell script that runs body. */
static void receiver(const char *body)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/bin/udp-receiver", dir);
	f = fopen(p, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "#!/bin/sh\n%s\n", body);
	CHECK_EQ_INT(fclose(f), 0);
	CHECK_EQ_INT(chmod(p, 0755), 0);
}

static int open_stream(struct source *s)
{
	static struct udpcast_opts o;
	const struct source_spec sp = { .name = "udpcast", .fd = -1, .udpcast = &o };

	CHECK_EQ_INT(udpcast_parse("start-timeout=7,receive-timeout=3", &o, err, sizeof(err)), 0);
	return source_open(s, &sp, err, sizeof(err));
}

static void a_stream(void)
{
	struct source s;
	char buf[32], path[256];
	ssize_t n, got = 0;

	receiver("echo image");
	CHECK_EQ_INT(open_stream(&s), 0);
	CHECK_EQ_INT(s.kind, SRC_UDPCAST);
	CHECK(!s.seekable);
	CHECK_EQ_INT(s.size, 0);
	while ((n = source_read(&s, buf + got, sizeof(buf) - (size_t)got)) > 0)
		got += n;
	CHECK_EQ_INT(got, 6);
	CHECK(!memcmp(buf, "image\n", 6));
	CHECK_EQ_INT(source_end(&s, err, sizeof(err)), 0);
	CHECK_EQ_INT(source_close(&s), 0);

	/* The whole stream, then a failure: not the whole image. */
	receiver("echo image; exit 3");
	CHECK_EQ_INT(open_stream(&s), 0);
	while (source_read(&s, buf, sizeof(buf)) > 0)
		;
	CHECK_EQ_INT(source_end(&s, err, sizeof(err)), -EIO);
	CHECK(strstr(err, "udp-receiver failed (exit 3)") != NULL);
	CHECK_EQ_INT(source_verdict(-EIO), RUN_SOURCE);
	CHECK_EQ_INT(source_close(&s), 0);

	/* One that never ends is stopped by the close. */
	receiver("exec /bin/sleep 60");
	CHECK_EQ_INT(open_stream(&s), 0);
	CHECK(s.rx.pid > 0);
	CHECK_EQ_INT(source_close(&s), 0);
	CHECK_EQ_INT(s.rx.pid, 0);

	/* None at all. */
	snprintf(path, sizeof(path), "%s/bin/udp-receiver", dir);
	CHECK_EQ_INT(unlink(path), 0);
	CHECK_EQ_INT(open_stream(&s), -ENOENT);
	CHECK(strstr(err, "cannot run udp-receiver") != NULL);
	CHECK_EQ_INT(source_close(&s), 0);
}

int main(void)
{
	char bin[160];
	int failed;

	if (!mkdtemp(dir))
		abort();
	snprintf(img, sizeof(img), "%s/image", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(bin, sizeof(bin), "%s/bin", dir);
	if (mkdir(bin, 0755) < 0) {
		perror(bin);
		return 1;
	}
	/* The stand-in only, for this process: no real udpcast is run. */
	setenv("PATH", bin, 1);

	RUN(a_file);
	RUN(a_file_replaced);
	RUN(a_pipe);
	RUN(standard_input);
	RUN(refusals);
	RUN(a_stream);

	failed = TAP_DONE();
	/* What the cases left: the image, the FIFO, the empty bin/. */
	if (unlink(img) < 0 || unlink(fifo) < 0 || rmdir(bin) < 0 || rmdir(dir) < 0)
		printf("# could not remove %s\n", dir);
	return failed;
}
