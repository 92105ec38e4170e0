// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The NBD server of a lazy boot over HTTP (nbdserve.h): the chunk store
 * over the RAM copy, the transmission phase of the protocol, the filler.
 *
 * The transmission phase (NBD's doc/proto.md; the kernel's side in
 * drivers/block/nbd.c, its structs in include/uapi/linux/nbd.h), every
 * number big-endian:
 *
 *   request (struct nbd_request, 28 bytes)
 *     u32 magic   NBD_REQUEST_MAGIC 0x25609513
 *     u32 type    the command in the low 16 bits, its flags (FUA...)
 *                 in the high 16
 *     u64 handle  the kernel's cookie, echoed in the reply
 *     u64 from    the offset in bytes
 *     u32 len     bytes to read or write; a write's data follows
 *   reply (struct nbd_reply, 16 bytes)
 *     u32 magic   NBD_REPLY_MAGIC 0x67446698
 *     u32 error   0, or an errno value (EIO, EPERM, EINVAL...), which
 *                 the kernel turns into an I/O error of the request
 *     u64 handle
 *                 then, for a read without error, len bytes of data
 *
 * The kernel sends several requests before it reads replies and matches
 * them by handle; answered in order here, one at a time. The device is
 * read-only (NBD_FLAG_READ_ONLY): the kernel sends reads, and a write
 * only if something asks for one through a path that ignores the flag;
 * a write is refused (EPERM) after its data is read. NBD_CMD_DISC (sent
 * when the device is disconnected) ends the connection without a reply.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lazy/nbdserve.h"
#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/sha256.h"

#define REQUEST_MAGIC 0x25609513u
#define REPLY_MAGIC 0x67446698u
#define CMD_READ 0u
#define CMD_WRITE 1u
#define CMD_DISC 2u
#define CMD_FLUSH 3u
#define CMD_TRIM 4u
#define CMD_WRITE_ZEROES 6u
#define RETRY_PAUSE_MS 1000    /* between rounds over all sources */

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

int nbds_init(struct nbds *s, int copy_fd, uint64_t size, uint64_t chunk_size,
	      const uint8_t (*hash)[32], nbds_fetch_fn fetch, void *arg, double timeout)
{
	memset(s, 0, sizeof(*s));
	s->copy_fd = -1;
	if (chunk_size < 4096 || chunk_size > NBDS_CHUNK_MAX || (chunk_size & (chunk_size - 1)) ||
	    size == 0 || (size + chunk_size - 1) / chunk_size > UINT32_MAX)
		return -EINVAL;
	s->size = size;
	s->chunk_size = chunk_size;
	s->nchunks = (uint32_t)((size + chunk_size - 1) / chunk_size);
	s->hash = hash;
	s->fetch = fetch;
	s->arg = arg;
	s->timeout = timeout;
	s->yield_max = NBDS_YIELD_MAX_S;
	s->state = calloc(s->nchunks, 1);
	if (!s->state)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	if (copy_fd >= 0) {
		int rc = nbds_set_copy(s, copy_fd);

		if (rc < 0) {
			nbds_free(s);
			return rc;
		}
	}
	return 0;
}

int nbds_set_copy(struct nbds *s, int copy_fd)
{
	int fd = fcntl(copy_fd, F_DUPFD_CLOEXEC, 3);

	if (fd < 0)
		return -errno;
	if (s->copy_fd >= 0)
		(void)close(s->copy_fd);
	s->copy_fd = fd;
	return 0;
}

void nbds_free(struct nbds *s)
{
	if (s->copy_fd >= 0) {
		(void)close(s->copy_fd);
		s->copy_fd = -1;
	}
	if (!s->state)
		return;
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s->state);
	s->state = NULL;
}

static void note_error(struct nbds *s, const char *msg, bool bad_hash)
{
	pthread_mutex_lock(&s->lock);
	snprintf(s->last_error, sizeof(s->last_error), "%s", msg);
	if (bad_hash)
		s->bad_hash++;
	pthread_mutex_unlock(&s->lock);
}

/* Every source in turn, rounds of them until the timeout: the chunk's
 * bytes, verified, written into the copy. */
static int fetch_verified(struct nbds *s, int slot, uint32_t i, uint8_t *buf)
{
	uint64_t off = (uint64_t)i * s->chunk_size;
	size_t len = (size_t)(s->size - off < s->chunk_size ? s->size - off : s->chunk_size);
	double deadline = now_sec() + s->timeout;
	char err[256];
	int rc;

	for (;;) {
		for (unsigned a = 0;; a++) {
			uint8_t md[SHA256_DIGEST_LENGTH];

			err[0] = '\0';
			rc = s->fetch(s->arg, slot, a, i, off, buf, len, err, sizeof(err));
			if (rc == -ENODEV)
				break;
			if (rc < 0) {
				note_error(s, err[0] ? err : strerror(-rc), false);
				continue;
			}
			if (s->hash) {
				sha256(buf, len, md);
				if (memcmp(md, s->hash[i], sizeof(md))) {
					snprintf(err, sizeof(err), "chunk %" PRIu32 " from source %u: "
						 "SHA-256 mismatch", i, a);
					note_error(s, err, true);
					continue;
				}
			}
			if ((rc = pwrite_full(s->copy_fd, buf, len, (off_t)off)) < 0) {
				note_error(s, strerror(-rc), false);
				return rc;
			}
			return 0;
		}
		if (now_sec() >= deadline)
			return -EIO;
		nap_ms(RETRY_PAUSE_MS);
	}
}

int nbds_ensure(struct nbds *s, int slot, uint32_t i, void *buf)
{
	bool waited = false;
	int rc;

	if (i >= s->nchunks)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	while (s->state[i] == NBDS_BUSY) {
		waited = true;
		pthread_cond_wait(&s->cond, &s->lock);
	}
	/* A fetch waited for that failed tried every source for the
	 * timeout already: not a second time for this read. */
	if (s->state[i] == NBDS_PRESENT || waited) {
		rc = s->state[i] == NBDS_PRESENT ? 0 : -EIO;
		pthread_mutex_unlock(&s->lock);
		return rc;
	}
	s->state[i] = NBDS_BUSY;
	s->fetching++;
	s->demand += slot == 0;
	pthread_mutex_unlock(&s->lock);

	rc = fetch_verified(s, slot, i, buf);

	pthread_mutex_lock(&s->lock);
	s->fetching--;
	if (slot == 0) {
		s->demand--;
		s->demand_end = now_sec();
	}
	if (rc == 0) {
		s->state[i] = NBDS_PRESENT;
		s->present++;
	} else {
		s->state[i] = NBDS_ABSENT;
		s->failed++;
	}
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return rc < 0 ? -EIO : 0;
}

/* The whole of buf to the socket; never SIGPIPE: a kernel that went
 * away is an error here, not the end of the process. */
static int send_all(int sock, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = send(sock, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int reply(int sock, const uint8_t *handle, uint32_t error)
{
	uint8_t r[16];

	put32(r, REPLY_MAGIC);
	put32(r + 4, error);
	memcpy(r + 8, handle, 8);
	return send_all(sock, r, sizeof(r));
}

/* A read: its chunks present first, then the reply and the data from
 * the copy, in pieces through buf (one chunk's room). */
static int serve_read(struct nbds *s, int sock, const uint8_t *handle, uint64_t from,
		      uint32_t len, uint8_t *buf)
{
	uint64_t end = from + len;
	int rc;

	pthread_mutex_lock(&s->lock);
	s->reads++;
	pthread_mutex_unlock(&s->lock);
	for (uint64_t c = from / s->chunk_size; c * s->chunk_size < end; c++) {
		if (nbds_ensure(s, 0, (uint32_t)c, buf) < 0) {
			pthread_mutex_lock(&s->lock);
			s->read_errors++;
			pthread_mutex_unlock(&s->lock);
			return reply(sock, handle, EIO);
		}
	}
	if ((rc = reply(sock, handle, 0)) < 0)
		return rc;
	while (from < end) {
		size_t n = (size_t)(end - from < s->chunk_size ? end - from : s->chunk_size);
		ssize_t got = pread_full(s->copy_fd, buf, n, (off_t)from);

		/* The header is sent: a copy that cannot be read (it is in
		 * RAM) can only end the connection. */
		if (got != (ssize_t)n)
			return got < 0 ? (int)got : -EIO;
		if ((rc = send_all(sock, buf, n)) < 0)
			return rc;
		from += n;
	}
	return 0;
}

/* A write's data, read and dropped: the device is read-only. */
static int drain(int sock, uint32_t len, uint8_t *buf, size_t room)
{
	while (len > 0) {
		ssize_t n = read_full(sock, buf, len < room ? len : room);

		if (n < 0)
			return (int)n;
		if (n == 0)
			return -ECONNRESET;
		len -= (uint32_t)n;
	}
	return 0;
}

int nbds_serve(struct nbds *s, int sock)
{
	uint8_t *buf = malloc(s->chunk_size);
	uint8_t q[28];
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read_full(sock, q, sizeof(q));
		uint32_t cmd, len;
		uint64_t from;

		if (n == 0)
			break;                 /* the kernel closed its end */
		if (n != (ssize_t)sizeof(q)) {
			rc = n < 0 ? (int)n : -EPROTO;
			break;
		}
		cmd = get32(q + 4) & 0xffff;
		from = get64(q + 16);
		len = get32(q + 24);
		if (get32(q) != REQUEST_MAGIC || len > NBDS_REQ_MAX) {
			rc = -EPROTO;
			break;
		}
		if (cmd == CMD_DISC)
			break;
		switch (cmd) {
		case CMD_READ:
			if (len == 0 || from >= s->size || len > s->size - from)
				rc = reply(sock, q + 8, EINVAL);
			else
				rc = serve_read(s, sock, q + 8, from, len, buf);
			break;
		case CMD_WRITE:
			rc = drain(sock, len, buf, s->chunk_size);
			if (rc == 0)
				rc = reply(sock, q + 8, EPERM);
			break;
		case CMD_FLUSH:
			rc = reply(sock, q + 8, 0);   /* nothing was written */
			break;
		case CMD_TRIM:
		case CMD_WRITE_ZEROES:
			rc = reply(sock, q + 8, EPERM);
			break;
		default:
			/* Whether data follows is not known: out of step. */
			rc = -EPROTO;
			break;
		}
		if (rc < 0)
			break;
	}
	free(buf);
	return rc;
}

static bool stopped(struct nbds *s)
{
	bool stop;

	pthread_mutex_lock(&s->lock);
	stop = s->stop;
	pthread_mutex_unlock(&s->lock);
	return stop;
}

/* Chunk i is absent and the server fetched lately: wait (bounded). */
static void yield_to_reads(struct nbds *s, uint32_t i)
{
	double until = now_sec() + s->yield_max;
	bool counted = false;

	for (;;) {
		bool wait;

		pthread_mutex_lock(&s->lock);
		wait = !s->stop && s->state[i] == NBDS_ABSENT &&
		       (s->demand > 0 || now_sec() - s->demand_end < NBDS_YIELD_S);
		if (wait && !counted) {
			s->yields++;
			counted = true;
		}
		pthread_mutex_unlock(&s->lock);
		if (!wait || now_sec() >= until)
			return;
		nap_ms(20);
	}
}

int nbds_fill(struct nbds *s, const uint32_t *order, uint32_t n)
{
	uint8_t *buf = malloc(s->chunk_size);
	uint32_t left;
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		/* One round: the order given, then every chunk. */
		for (uint64_t k = 0; k < (uint64_t)n + s->nchunks && !stopped(s); k++) {
			uint32_t i = k < n ? order[k] : (uint32_t)(k - n);

			if (i < s->nchunks) {
				yield_to_reads(s, i);
				(void)nbds_ensure(s, 1, i, buf);
			}
			if (s->tick)
				s->tick(s->tick_arg);
		}
		pthread_mutex_lock(&s->lock);
		left = s->nchunks - s->present;
		pthread_mutex_unlock(&s->lock);
		if (left == 0)
			break;
		if (stopped(s)) {
			rc = -ECANCELED;
			break;
		}
		nap_ms(RETRY_PAUSE_MS);
	}
	free(buf);
	return rc;
}

void nbds_stats(struct nbds *s, struct nbds_stats *st)
{
	pthread_mutex_lock(&s->lock);
	st->present = s->present;
	st->nchunks = s->nchunks;
	st->fetching = s->fetching;
	st->failed = s->failed;
	st->bad_hash = s->bad_hash;
	st->reads = s->reads;
	st->read_errors = s->read_errors;
	memcpy(st->last_error, s->last_error, sizeof(st->last_error));
	pthread_mutex_unlock(&s->lock);
}
