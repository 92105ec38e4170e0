/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The block device of a lazy boot over HTTP: an NBD server in user space
 * on one end of a socket pair whose other end the kernel's NBD client
 * holds (nbd_kernel_connect). The device reads a RAM copy of the image
 * (a tmpfs file), filled chunk by chunk (the manifest's chunks): a read
 * that finds its chunks there is answered from the copy; otherwise those
 * whole chunks are fetched (fetch callback), verified against their
 * SHA-256, written into the copy and marked present first. A filler
 * fetches the rest meanwhile, in the order it is given. Once every chunk
 * is present the copy is the whole image and the loop device on top of
 * the NBD device can be switched to it (LOOP_CHANGE_FD).
 *
 * Only the transmission phase is served: the kernel is told the size and
 * flags itself (netlink), it sends no handshake.
 */
#ifndef RAMBOOT_NBDSERVE_H
#define RAMBOOT_NBDSERVE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest request served: the kernel's NBD driver asks for at most
 * max_hw_sectors (65536 sectors, 32 MiB) at once. A longer one is not
 * from the kernel: the connection is ended. */
#define NBDS_REQ_MAX (32u * 1024 * 1024)
/* The largest chunk served lazily: a read may fetch one whole chunk
 * before it is answered (the manifest allows up to 1 GiB). */
#define NBDS_CHUNK_MAX (64u * 1024 * 1024)

/*
 * Fetch chunk i (len bytes at off) into buf from source number attempt
 * (0, 1, ...: the URLs in order). slot is the caller: 0 the server, 1 the
 * filler (each has its own connections). 0 with the bytes (the store
 * verifies them), -ENODEV when there is no source number attempt, or
 * -errno with a message in err.
 */
typedef int (*nbds_fetch_fn)(void *arg, int slot, unsigned attempt, uint32_t i, uint64_t off,
			     void *buf, size_t len, char *err, size_t errlen);

struct nbds {
	/* settings */
	int copy_fd;              /* the RAM copy, read-write: the server's own */
	uint64_t size;
	uint64_t chunk_size;
	uint32_t nchunks;
	const uint8_t (*hash)[32];  /* SHA-256 per chunk; NULL: not verified */
	nbds_fetch_fn fetch;
	void *arg;
	double timeout;           /* seconds a chunk is tried for, over all sources */
	void (*tick)(void *);     /* the filler calls it after each chunk, or NULL */
	void *tick_arg;
	double yield_max;         /* seconds the filler waits for reads, per chunk */
	/* state, under lock */
	pthread_mutex_t lock;
	pthread_cond_t cond;      /* a chunk's fetch ended */
	uint8_t *state;           /* per chunk: NBDS_ABSENT, NBDS_BUSY, NBDS_PRESENT */
	uint32_t present;
	uint32_t fetching;        /* fetches in progress */
	uint64_t failed;          /* fetches that ended in an error */
	uint64_t bad_hash;        /* fetched chunks whose SHA-256 was wrong */
	uint64_t reads, read_errors;
	uint32_t demand;          /* the server's fetches in progress */
	double demand_end;        /* when the last of them ended (now_sec) */
	uint64_t yields;          /* times the filler waited for them */
	char last_error[256];
	bool stop;                /* the filler ends */
};

/* The filler leaves the link to the reads: before each chunk it waits
 * while the server fetches for the kernel, or did so less than
 * NBDS_YIELD_S ago, for at most yield_max seconds (default
 * NBDS_YIELD_MAX_S: a boot that reads all the time still gets its
 * copy). */
#define NBDS_YIELD_S 0.25
#define NBDS_YIELD_MAX_S 2.0

enum { NBDS_ABSENT, NBDS_BUSY, NBDS_PRESENT };

/* 0, -EINVAL (a chunk size not allowed), -ENOMEM, or nbds_set_copy's
 * error; copy_fd < 0: no copy yet. */
int nbds_init(struct nbds *s, int copy_fd, uint64_t size, uint64_t chunk_size,
	      const uint8_t (*hash)[32], nbds_fetch_fn fetch, void *arg, double timeout);
/* The server reads and writes the copy through its own descriptor, a
 * duplicate of copy_fd: the caller may close theirs at any time (a copy
 * given its name does) while the kernel still reads. 0 or -errno. */
int nbds_set_copy(struct nbds *s, int copy_fd);
void nbds_free(struct nbds *s);

/* Chunk i present in the copy: fetched (buf: chunk_size bytes of the
 * caller's) and verified first when it is not. A fetch of the same chunk
 * in progress is waited for (its failure is this one's: -EIO). 0, or
 * -EIO once every source failed for the timeout (the message in
 * s->last_error). */
int nbds_ensure(struct nbds *s, int slot, uint32_t i, void *buf);

/* Serve the kernel on sock until NBD_CMD_DISC or the end of the
 * connection (0), or a request that is not NBD's transmission protocol
 * (-EPROTO: bad magic, an unknown command, a length over NBDS_REQ_MAX),
 * or a failed send or read (-errno). The caller then closes sock. */
int nbds_serve(struct nbds *s, int sock);

/* Fetch every absent chunk, those in order[0..n) first, then the rest
 * in offset order, each after the server's fetches (NBDS_YIELD_S); a
 * chunk that fails is tried again in the next round (a pause between
 * rounds) until s->stop. 0 when all are present,
 * -ECANCELED when stopped, -ENOMEM. */
int nbds_fill(struct nbds *s, const uint32_t *order, uint32_t n);

/* A consistent view of the counters. */
struct nbds_stats {
	uint32_t present, nchunks, fetching;
	uint64_t failed, bad_hash, reads, read_errors;
	char last_error[256];
};
void nbds_stats(struct nbds *s, struct nbds_stats *st);

#endif
