/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A fake NBD server for the tests of ramboot's handshake (src/dev/nbd.c):
 * the fixed-newstyle greeting, then NBD_OPT_GO or NBD_OPT_EXPORT_NAME
 * answered as the test chooses, well or badly. Used by test_netmem.c
 * and, through tests/fixtures/swap/fakenbd.c, by tests/swap.bats.
 *
 * fake_serve() takes one client and ends the process: exit 0 when it
 * answered as told or the client went away, 2 when the client's bytes
 * were not a handshake, 4 when it asked for another export than "swap".
 */
#ifndef RAMBOOT_TEST_FAKENBD_H
#define RAMBOOT_TEST_FAKENBD_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum fake_kind {
	FAKE_GO,        /* NBD_OPT_GO: NBD_REP_INFO with size and flags, NBD_REP_ACK */
	FAKE_OLD,       /* NBD_OPT_GO unknown (NBD_REP_ERR_UNSUP): NBD_OPT_EXPORT_NAME */
	FAKE_ERR,       /* NBD_OPT_GO refused: reply type err with text */
	FAKE_ENDLESS,   /* NBD_REP_INFO after NBD_REP_INFO (10,000 of them), then ACK */
	FAKE_HUGE,      /* a reply of 0xffffffff bytes, a byte a second for 5 s; closed */
	FAKE_TRICKLE,   /* the greeting a byte every 300 ms, then as FAKE_GO */
};

struct fake_nbd {
	enum fake_kind kind;
	uint64_t size;           /* the export's */
	uint16_t flags;          /* its transmission flags (NBD_FLAG_*) */
	uint32_t reply_opt;      /* the option the replies name; 0: the one asked */
	uint32_t err;            /* FAKE_ERR: the reply's type */
	const char *text;        /* FAKE_ERR: its message */
};

static void fake_be(unsigned char *b, uint64_t v, int n)
{
	int i;

	for (i = n - 1; i >= 0; i--, v >>= 8)
		b[i] = (unsigned char)v;
}

static uint32_t fake_be32(const unsigned char *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* Write all of it, or end: the client went away. */
static void fake_put(int fd, const void *b, size_t n)
{
	if (n && send(fd, b, n, MSG_NOSIGNAL) != (ssize_t)n)
		_exit(0);
}

/* Read all of it; the client may go away between two messages. */
static void fake_get(int fd, void *b, size_t n)
{
	ssize_t r = n ? recv(fd, b, n, MSG_WAITALL) : 0;

	if (r == 0 && n)
		_exit(0);
	if (r != (ssize_t)n)
		_exit(2);
}

static void fake_reply(int fd, uint32_t opt, uint32_t type, const void *data, uint32_t len)
{
	unsigned char h[20];

	fake_be(h, 0x0003e889045565a9ULL, 8);
	fake_be(h + 8, opt, 4);
	fake_be(h + 12, type, 4);
	fake_be(h + 16, len, 4);
	fake_put(fd, h, 20);
	fake_put(fd, data, len);
}

static void fake_nap(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };

	while (nanosleep(&ts, &ts) < 0)
		;
}

/* A listening socket on 127.0.0.1, its port in *port; -1 on failure. */
static int fake_listen(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 4) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &l) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* One client on fd: the greeting, then the options until the export is
 * given. */
static void fake_serve_fd(int fd, const struct fake_nbd *f)
{
	unsigned char g[18], b[512], info[12];
	int i;

	memcpy(g, "NBDMAGICIHAVEOPT", 16);
	fake_be(g + 16, 3, 2);    /* fixed newstyle, no zeroes */
	for (i = 0; f->kind == FAKE_TRICKLE && i < 18; i++) {
		fake_put(fd, g + i, 1);
		fake_nap(300);
	}
	if (f->kind != FAKE_TRICKLE)
		fake_put(fd, g, 18);
	fake_get(fd, b, 4);
	for (;;) {
		uint32_t opt, len, ropt;

		fake_get(fd, b, 16);
		opt = fake_be32(b + 8);
		len = fake_be32(b + 12);
		if (len > sizeof(b))
			_exit(2);
		fake_get(fd, b, len);
		ropt = f->reply_opt ? f->reply_opt : opt;
		if (opt == 1) {
			/* NBD_OPT_EXPORT_NAME: the name; size and flags back */
			if (len != 4 || memcmp(b, "swap", 4))
				_exit(4);
			fake_be(info, f->size, 8);
			fake_be(info + 8, f->flags, 2);
			fake_put(fd, info, 10);
			break;
		}
		if (opt != 7)
			_exit(2);
		/* NBD_OPT_GO: the name's length, the name, no information requests */
		if (len != 4 + 4 + 2 || memcmp(b + 4, "swap", 4))
			_exit(4);
		if (f->kind == FAKE_OLD) {
			fake_reply(fd, ropt, 0x80000001u, NULL, 0);
			continue;
		}
		if (f->kind == FAKE_ERR) {
			fake_reply(fd, ropt, f->err, f->text, (uint32_t)strlen(f->text));
			break;
		}
		if (f->kind == FAKE_HUGE) {
			unsigned char h[20];

			fake_be(h, 0x0003e889045565a9ULL, 8);
			fake_be(h + 8, ropt, 4);
			fake_be(h + 12, 3, 4);
			fake_be(h + 16, 0xffffffffu, 4);
			fake_put(fd, h, 20);
			for (i = 0; i < 5; i++) {
				fake_put(fd, "x", 1);
				fake_nap(1000);
			}
			_exit(0);      /* then gone: a client still reading sees the end */
		}
		fake_be(info, 0, 2);
		fake_be(info + 2, f->size, 8);
		fake_be(info + 10, f->flags, 2);
		for (i = 0; i < (f->kind == FAKE_ENDLESS ? 10000 : 1); i++)
			fake_reply(fd, ropt, 3, info, 12);
		fake_reply(fd, ropt, 1, NULL, 0);
		break;
	}
	/* The client closes first. */
	(void)recv(fd, b, 1, 0);
	_exit(0);
}

/* The next client of lfd. */
static inline void fake_serve(int lfd, const struct fake_nbd *f)
{
	int fd = accept(lfd, NULL, NULL);

	if (fd < 0)
		_exit(2);
	fake_serve_fd(fd, f);
}

#endif
