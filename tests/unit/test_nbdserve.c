// SPDX-License-Identifier: GPL-2.0-or-later
/* The NBD server of a lazy boot over HTTP (src/lazy/nbdserve.c), without
 * the kernel: the server on one end of a socket pair, this test as the
 * kernel's NBD client on the other, chunks fetched from fake sources
 * that can be down or serve wrong bytes. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "tap.h"
#include "lazy/nbdserve.h"
#include "lib/fdio.h"
#include "lib/sha256.h"

#define CH 65536u
#define SIZE (4 * CH + CH / 2)     /* five chunks, the last one half */
#define NCH 5u

enum src_kind { SRC_GOOD, SRC_DOWN, SRC_CORRUPT };

static uint8_t image[SIZE];
static uint8_t hashes[NCH][32];

struct fake {
	enum src_kind src[3];
	unsigned nsrc;
	unsigned fetches;          /* of good bytes */
	unsigned filler_fetches;   /* of those, the filler's (slot 1) */
	bool gate;                 /* the server's fetches wait for it */
	pthread_cond_t opened;
	pthread_mutex_t lock;
};

static int fake_fetch(void *arg, int slot, unsigned attempt, uint32_t i, uint64_t off, void *buf,
		      size_t len, char *err, size_t errlen)
{
	struct fake *f = arg;

	(void)i;
	pthread_mutex_lock(&f->lock);
	while (slot == 0 && f->gate)
		pthread_cond_wait(&f->opened, &f->lock);
	pthread_mutex_unlock(&f->lock);
	if (attempt >= f->nsrc)
		return -ENODEV;
	if (f->src[attempt] == SRC_DOWN) {
		snprintf(err, errlen, "source %u: connection refused", attempt);
		return -ECONNREFUSED;
	}
	memcpy(buf, image + off, len);
	if (f->src[attempt] == SRC_CORRUPT)
		((uint8_t *)buf)[len / 2] ^= 0x40;
	pthread_mutex_lock(&f->lock);
	f->fetches++;
	f->filler_fetches += slot == 1;
	pthread_mutex_unlock(&f->lock);
	return 0;
}

struct rig {
	struct fake f;
	struct nbds s;
	int copy_fd;
	int sv[2];                 /* [0] the test (the kernel), [1] the server */
	pthread_t th;
	int rc;                    /* nbds_serve's */
};

static void *serve_thread(void *arg)
{
	struct rig *g = arg;

	g->rc = nbds_serve(&g->s, g->sv[1]);
	(void)close(g->sv[1]);
	return NULL;
}

static void rig_up(struct rig *g, enum src_kind a, enum src_kind b, unsigned nsrc, double timeout)
{
	char path[] = "/tmp/test_nbdserve.XXXXXX";
	struct timeval tv = { 10, 0 };

	memset(g, 0, sizeof(*g));
	g->f.src[0] = a;
	g->f.src[1] = b;
	g->f.nsrc = nsrc;
	pthread_mutex_init(&g->f.lock, NULL);
	pthread_cond_init(&g->f.opened, NULL);
	g->copy_fd = mkstemp(path);
	CHECK(g->copy_fd >= 0);
	(void)unlink(path);
	CHECK(ftruncate(g->copy_fd, SIZE) == 0);
	CHECK_EQ_INT(nbds_init(&g->s, g->copy_fd, SIZE, CH, (const uint8_t (*)[32])hashes,
			       fake_fetch, &g->f, timeout), 0);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, g->sv) == 0);
	/* A server that never answers fails the test, not hangs it. */
	(void)setsockopt(g->sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	CHECK(pthread_create(&g->th, NULL, serve_thread, g) == 0);
}

/* Our end closed, the server's result. */
static int rig_down(struct rig *g)
{
	(void)close(g->sv[0]);
	pthread_join(g->th, NULL);
	nbds_free(&g->s);
	(void)close(g->copy_fd);
	pthread_cond_destroy(&g->f.opened);
	pthread_mutex_destroy(&g->f.lock);
	return g->rc;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int k = 0; k < 4; k++)
		p[k] = (uint8_t)(v >> (24 - 8 * k));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void request(int fd, uint32_t magic, uint32_t type, uint64_t handle, uint64_t from,
		    uint32_t len)
{
	uint8_t q[28];

	put32(q, magic);
	put32(q + 4, type);
	put64(q + 8, handle);
	put64(q + 16, from);
	put32(q + 24, len);
	CHECK_EQ_INT(write_all(fd, q, sizeof(q)), 0);
}

/* The reply's error, -1 when none came; the handle must be echoed. */
static int answer(int fd, uint64_t handle)
{
	uint8_t r[16], h[8];

	if (read_full(fd, r, sizeof(r)) != (ssize_t)sizeof(r))
		return -1;
	put64(h, handle);
	CHECK_EQ_INT(get32(r), 0x67446698u);
	CHECK(memcmp(r + 8, h, 8) == 0);
	return (int)get32(r + 4);
}

/* A read: its error, and with 0 the data compared with the image. */
static int nbd_read(int fd, uint64_t handle, uint64_t from, uint32_t len)
{
	int e;

	request(fd, 0x25609513u, 0, handle, from, len);
	e = answer(fd, handle);
	if (e == 0) {
		uint8_t *buf = malloc(len);

		CHECK(buf != NULL);
		CHECK_EQ_INT(read_full(fd, buf, len), (ssize_t)len);
		CHECK(memcmp(buf, image + from, len) == 0);
		free(buf);
	}
	return e;
}

static void reads_fetch_once(void)
{
	struct rig g;
	struct nbds_stats st;

	rig_up(&g, SRC_GOOD, SRC_GOOD, 1, 5);
	/* Across chunks 1 and 2: both fetched, then answered. */
	CHECK_EQ_INT(nbd_read(g.sv[0], 0x1122334455667788ULL, CH + 100, CH), 0);
	CHECK_EQ_INT(g.f.fetches, 2);
	/* Again, and inside chunk 2: from the copy. */
	CHECK_EQ_INT(nbd_read(g.sv[0], 7, CH + 100, CH), 0);
	CHECK_EQ_INT(nbd_read(g.sv[0], 8, 2 * CH, 4096), 0);
	CHECK_EQ_INT(g.f.fetches, 2);
	/* The short last chunk, to the image's end. */
	CHECK_EQ_INT(nbd_read(g.sv[0], 9, SIZE - 4096, 4096), 0);
	CHECK_EQ_INT(g.f.fetches, 3);
	nbds_stats(&g.s, &st);
	CHECK_EQ_INT(st.present, 3);
	CHECK_EQ_INT(st.nchunks, NCH);
	CHECK_EQ_INT(st.reads, 4);
	/* NBD_CMD_DISC ends the connection: no reply, a clean end. */
	request(g.sv[0], 0x25609513u, 2, 10, 0, 0);
	CHECK_EQ_INT(answer(g.sv[0], 10), -1);
	CHECK_EQ_INT(rig_down(&g), 0);
}

static void copy_closed_by_its_owner(void)
{
	struct rig g;
	uint8_t got[CH];

	/* A lazy copy given its name closes the descriptor it wrote
	 * through, while the kernel still reads the device: the server
	 * reads and fills the copy through its own. */
	rig_up(&g, SRC_GOOD, SRC_GOOD, 1, 5);
	CHECK_EQ_INT(nbd_read(g.sv[0], 1, 0, 4096), 0);
	CHECK(close(g.copy_fd) == 0);
	g.copy_fd = -1;
	CHECK_EQ_INT(nbd_read(g.sv[0], 2, 100, 4096), 0);
	CHECK_EQ_INT(nbd_read(g.sv[0], 3, CH, 4096), 0);
	CHECK_EQ_INT(pread_full(g.s.copy_fd, got, CH, CH), CH);
	CHECK(memcmp(got, image + CH, CH) == 0);
	CHECK_EQ_INT(rig_down(&g), 0);
}

static void wrong_hash_is_eio(void)
{
	struct rig g;
	struct nbds_stats st;
	uint8_t zero[CH], got[CH];

	/* The only source serves another chunk: an error, never its bytes;
	 * nothing lands in the copy, and the connection stays. */
	rig_up(&g, SRC_CORRUPT, SRC_GOOD, 1, 0);
	CHECK_EQ_INT(nbd_read(g.sv[0], 1, 0, 4096), 5 /* EIO */);
	nbds_stats(&g.s, &st);
	CHECK_EQ_INT(st.present, 0);
	CHECK(st.bad_hash >= 1);
	CHECK(strstr(st.last_error, "SHA-256 mismatch") != NULL);
	memset(zero, 0, sizeof(zero));
	CHECK_EQ_INT(pread_full(g.copy_fd, got, CH, 0), CH);
	CHECK(memcmp(got, zero, CH) == 0);
	/* The next source has the right bytes: answered from it. */
	g.f.nsrc = 2;
	CHECK_EQ_INT(nbd_read(g.sv[0], 2, 0, 4096), 0);
	CHECK_EQ_INT(rig_down(&g), 0);
}

static void sources_down(void)
{
	struct rig g;

	/* Every source down: tried until the timeout, then EIO. */
	rig_up(&g, SRC_DOWN, SRC_DOWN, 2, 1.5);
	CHECK_EQ_INT(nbd_read(g.sv[0], 1, 0, 4096), 5);
	CHECK(strstr(g.s.last_error, "connection refused") != NULL);
	/* A source that comes back serves the next read. */
	g.f.src[1] = SRC_GOOD;
	CHECK_EQ_INT(nbd_read(g.sv[0], 2, 0, 4096), 0);
	CHECK_EQ_INT(rig_down(&g), 0);
}

static void bounds(void)
{
	struct rig g;
	uint8_t data[8192];

	rig_up(&g, SRC_GOOD, SRC_GOOD, 1, 5);
	/* Answered with EINVAL, the connection kept. */
	request(g.sv[0], 0x25609513u, 0, 1, 0, 0);
	CHECK_EQ_INT(answer(g.sv[0], 1), 22);
	request(g.sv[0], 0x25609513u, 0, 2, SIZE, 512);
	CHECK_EQ_INT(answer(g.sv[0], 2), 22);
	request(g.sv[0], 0x25609513u, 0, 3, SIZE - 512, 1024);
	CHECK_EQ_INT(answer(g.sv[0], 3), 22);
	request(g.sv[0], 0x25609513u, 0, 4, UINT64_MAX - 100, 4096);
	CHECK_EQ_INT(answer(g.sv[0], 4), 22);
	/* A write: its data read, refused. Trim too. Flush: nothing to do. */
	request(g.sv[0], 0x25609513u, 1 | 1u << 16, 5, 0, sizeof(data));
	memset(data, 0xee, sizeof(data));
	CHECK_EQ_INT(write_all(g.sv[0], data, sizeof(data)), 0);
	CHECK_EQ_INT(answer(g.sv[0], 5), 1 /* EPERM */);
	request(g.sv[0], 0x25609513u, 4, 6, 0, 4096);
	CHECK_EQ_INT(answer(g.sv[0], 6), 1);
	request(g.sv[0], 0x25609513u, 3, 7, 0, 0);
	CHECK_EQ_INT(answer(g.sv[0], 7), 0);
	/* The copy was not written: a read gives the image. */
	CHECK_EQ_INT(nbd_read(g.sv[0], 8, 0, 8192), 0);
	CHECK_EQ_INT(rig_down(&g), 0);

	/* Out of step: the connection ends (-EPROTO), nothing answered. */
	rig_up(&g, SRC_GOOD, SRC_GOOD, 1, 5);
	request(g.sv[0], 0x25609514u, 0, 1, 0, 4096);
	CHECK_EQ_INT(answer(g.sv[0], 1), -1);
	CHECK_EQ_INT(rig_down(&g), -EPROTO);
	rig_up(&g, SRC_GOOD, SRC_GOOD, 1, 5);
	request(g.sv[0], 0x25609513u, 9, 1, 0, 4096);
	CHECK_EQ_INT(answer(g.sv[0], 1), -1);
	CHECK_EQ_INT(rig_down(&g), -EPROTO);
	rig_up(&g, SRC_GOOD, SRC_GOOD, 1, 5);
	request(g.sv[0], 0x25609513u, 1, 1, 0, NBDS_REQ_MAX + 1);
	CHECK_EQ_INT(answer(g.sv[0], 1), -1);
	CHECK_EQ_INT(rig_down(&g), -EPROTO);
	/* Half a request, then the end. */
	rig_up(&g, SRC_GOOD, SRC_GOOD, 1, 5);
	CHECK_EQ_INT(write_all(g.sv[0], "\x25\x60\x95\x13\0\0", 6), 0);
	CHECK_EQ_INT(rig_down(&g), -EPROTO);
}

/* Random requests with the right magic: each answered or the end, the
 * server always returns; no read is answered with bytes that are not
 * the image's (nbd_read compares). */
static void random_requests(void)
{
	unsigned seed = 34;

	for (int k = 0; k < 300; k++) {
		struct rig g;
		uint32_t type = (uint32_t)rand_r(&seed) % 8;
		uint64_t from = (uint64_t)rand_r(&seed) % (SIZE + CH);
		uint32_t len = (uint32_t)rand_r(&seed) % (2 * CH);
		int rc;

		if (k % 5 == 0)
			from = (uint64_t)rand_r(&seed) << 33 | (uint64_t)rand_r(&seed);
		if (k % 7 == 0)
			len = (uint32_t)rand_r(&seed) << 8;
		if (type == 1)
			type = 4;       /* a write's payload: in bounds() */
		rig_up(&g, SRC_GOOD, SRC_GOOD, 1, 5);
		if (type == 0 && len > 0 && from < SIZE && len <= SIZE - from) {
			CHECK_EQ_INT(nbd_read(g.sv[0], (uint64_t)k, from, len), 0);
		} else {
			request(g.sv[0], 0x25609513u, type, (uint64_t)k, from, len);
			if (type == 2 || type == 5 || type == 7 || len > NBDS_REQ_MAX)
				CHECK_EQ_INT(answer(g.sv[0], (uint64_t)k), -1);
			else
				CHECK(answer(g.sv[0], (uint64_t)k) > 0 || type == 3);
		}
		rc = rig_down(&g);
		CHECK(rc == 0 || rc == -EPROTO);
	}
}

static void filler(void)
{
	struct rig g;
	uint32_t order[] = { 3, 3, 99, 1 };
	uint8_t *copy = malloc(SIZE);

	rig_up(&g, SRC_GOOD, SRC_GOOD, 1, 5);
	CHECK_EQ_INT(nbd_read(g.sv[0], 1, 0, 100), 0);
	CHECK_EQ_INT(nbds_fill(&g.s, order, 4), 0);
	CHECK_EQ_INT(g.s.present, NCH);
	CHECK_EQ_INT(g.f.fetches, NCH);
	CHECK(copy != NULL);
	CHECK_EQ_INT(pread_full(g.copy_fd, copy, SIZE, 0), SIZE);
	CHECK(memcmp(copy, image, SIZE) == 0);
	free(copy);
	CHECK_EQ_INT(rig_down(&g), 0);
}

struct fill_run {
	struct rig *g;
	int rc;
};

static void *fill_thread(void *arg)
{
	struct fill_run *r = arg;

	r->rc = nbds_fill(&r->g->s, NULL, 0);
	return NULL;
}

/* Poll (no deadline: the test's own timeout bounds it) until *v, read
 * under lock, is at least want. */
static void await(pthread_mutex_t *lock, const void *v, size_t size, uint64_t want)
{
	for (;;) {
		uint64_t now;

		pthread_mutex_lock(lock);
		now = size == sizeof(uint32_t) ? *(const uint32_t *)v : *(const uint64_t *)v;
		pthread_mutex_unlock(lock);
		if (now >= want)
			return;
		usleep(10000);
	}
}

static void filler_yields_to_reads(void)
{
	struct rig g;
	struct fill_run r;
	pthread_t th;
	uint8_t buf[100];

	/* A read of chunk 2 waits for its fetch (held at the gate): the
	 * filler, started meanwhile, fetches nothing until that fetch is
	 * done. */
	rig_up(&g, SRC_GOOD, SRC_GOOD, 1, 5);
	g.s.yield_max = 3600;
	g.f.gate = true;
	request(g.sv[0], 0x25609513u, 0, 1, 2 * CH, sizeof(buf));
	await(&g.s.lock, &g.s.demand, sizeof(g.s.demand), 1);
	r.g = &g;
	CHECK(pthread_create(&th, NULL, fill_thread, &r) == 0);
	await(&g.s.lock, &g.s.yields, sizeof(g.s.yields), 1);
	pthread_mutex_lock(&g.f.lock);
	CHECK_EQ_INT(g.f.filler_fetches, 0);
	g.f.gate = false;
	pthread_cond_broadcast(&g.f.opened);
	pthread_mutex_unlock(&g.f.lock);
	CHECK_EQ_INT(answer(g.sv[0], 1), 0);
	CHECK_EQ_INT(read_full(g.sv[0], buf, sizeof(buf)), (ssize_t)sizeof(buf));
	CHECK(memcmp(buf, image + 2 * CH, sizeof(buf)) == 0);
	pthread_join(th, NULL);
	CHECK_EQ_INT(r.rc, 0);
	CHECK_EQ_INT(g.s.present, NCH);
	CHECK_EQ_INT(g.f.filler_fetches, NCH - 1);
	CHECK_EQ_INT(rig_down(&g), 0);
}

static void settings(void)
{
	struct nbds s;

	CHECK_EQ_INT(nbds_init(&s, -1, SIZE, 3000, NULL, fake_fetch, NULL, 1), -EINVAL);
	CHECK_EQ_INT(nbds_init(&s, -1, SIZE, 2 * NBDS_CHUNK_MAX, NULL, fake_fetch, NULL, 1), -EINVAL);
	CHECK_EQ_INT(nbds_init(&s, -1, 0, CH, NULL, fake_fetch, NULL, 1), -EINVAL);
	CHECK_EQ_INT(nbds_init(&s, -1, SIZE, CH, NULL, fake_fetch, NULL, 1), 0);
	CHECK_EQ_INT(s.nchunks, NCH);
	CHECK_EQ_INT(nbds_ensure(&s, 0, NCH, NULL), -EINVAL);
	nbds_free(&s);
}

int main(void)
{
	unsigned seed = 7;

	for (size_t k = 0; k < SIZE; k++)
		image[k] = (uint8_t)rand_r(&seed);
	for (unsigned i = 0; i < NCH; i++)
		sha256(image + (size_t)i * CH, i + 1 < NCH ? CH : SIZE - (size_t)i * CH, hashes[i]);
	RUN(settings);
	RUN(reads_fetch_once);
	RUN(copy_closed_by_its_owner);
	RUN(wrong_hash_is_eio);
	RUN(sources_down);
	RUN(bounds);
	RUN(random_requests);
	RUN(filler);
	RUN(filler_yields_to_reads);
	return TAP_DONE();
}
