/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The load pipeline: a reader thread fills input buffers from the source,
 * a codec driver turns them into output chunks (in order), a writer thread
 * writes the chunks to the sink and a hasher thread hashes them behind it.
 *
 *   source --read--> [in queue] --codec--> [out queue] --write--> sink
 *                                                      \--hash--> SHA-256
 */
#ifndef RAMBOOT_PIPE_H
#define RAMBOOT_PIPE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/sha.h>

#define PIPE_BUF_SIZE  (2u * 1024 * 1024)
#define PIPE_NBUF_IN   8
#define PIPE_NBUF_OUT  16
#define PIPE_HASHQ_MAX 16        /* written chunks waiting for the hasher */

struct pipe;

/* Where the pipeline failed: the loader turns it into its result. */
enum pipe_stage {
	PS_NONE,
	PS_START,                /* a thread or buffer could not be had */
	PS_READ,                 /* reading the source */
	PS_DECODE,               /* corrupt or unsupported input */
	PS_WRITE,                /* writing the destination */
	PS_MEMORY,               /* MemAvailable fell below the reserve */
	PS_STALL,                /* the source stopped making progress */
	PS_CANCEL,               /* a signal: the run was cancelled */
};

/* A unit of data moving through the pipeline. Output chunks are "futures":
 * a parallel codec queues them in stream order and fills them later; the
 * writer waits until a chunk is ready. */
struct chunk {
	uint8_t *data;
	size_t len, cap;
	bool eof;                /* input: end of the source */
	bool ready;              /* output: filled (set by chunk_ready) */
	int error;               /* output: the producer failed (-errno) */
	struct chunk *next;      /* queue link */
	struct pool *pool;       /* NULL: malloc'd, freed with free(); the pool
				  * may be a codec driver's own (zstd frames) */
};

struct queue {
	struct chunk *head, *tail;
	size_t n;
};

struct pool {
	struct chunk *free;
	unsigned int nfree;
	struct chunk *all;
	unsigned int nall;
};

struct pipe_stats {
	uint64_t bytes_in;       /* read from the source */
	uint64_t bytes_out;      /* written to the sink */
};

struct pipe {
	/* settings */
	int src_fd, dst_fd;
	bool hash;
	bool dst_is_blk;
	uint64_t max_in;         /* read at most this much (0: to EOF) */
	bool cap_out;            /* refuse output beyond max_out (0 included) */
	uint64_t max_out;
	uint64_t min_free;       /* abort with -ENOMEM when MemAvailable drops below */
	int threads;

	/* state, protected by lock */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct queue inq, outq, hashq;
	struct pool inpool, outpool;
	int error;               /* first error, -errno; stops every stage */
	enum pipe_stage error_where;
	char error_msg[160];     /* codec detail ("frame checksum mismatch") */
	bool out_closed;         /* the codec driver emitted its last chunk */
	bool writer_done, hasher_done;
	struct pipe_stats st;
	uint64_t dropped_cache;  /* block sink: bytes dropped from page cache */

	SHA256_CTX sha;
	pthread_t reader, writer, hasher;
	bool reader_started, writer_started, hasher_started;
	bool reader_abandoned;   /* stuck in the kernel: its buffers are leaked */
};

int pipe_init(struct pipe *p);
/* Frees the buffers; does nothing when the reader was abandoned (a pipe
 * on the heap is then leaked, never freed: see pipe_finish). */
void pipe_destroy(struct pipe *p);
/* Start reader, writer and hasher threads. */
int pipe_start(struct pipe *p);
/* Wait for the writer and hasher to drain; returns the pipe's error. */
int pipe_finish(struct pipe *p);

/* Record the first error; wakes every stage. */
void pipe_fail(struct pipe *p, int err, enum pipe_stage where, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int pipe_error(struct pipe *p);

/* For codec drivers. */
struct chunk *pipe_get_input(struct pipe *p);         /* blocks; NULL on error */
void pipe_put_input(struct pipe *p, struct chunk *c); /* give back after use */
/* Give back *in, used up, and take the next input chunk into *in.
 * Returns 1 with the next chunk, 0 when *in was the last one (*in is
 * then NULL), or the pipe's error (*in NULL). */
int pipe_next_input(struct pipe *p, struct chunk **in);
/* Push an input chunk straight to the output (codec "none"). */
void pipe_pass_through(struct pipe *p, struct chunk *c);
struct chunk *pipe_get_outbuf(struct pipe *p);        /* blocks; NULL on error */
/* Queue an output chunk in stream order; it may be filled later. */
void pipe_emit(struct pipe *p, struct chunk *c);
/* Mark a queued chunk filled (or failed with err). */
void pipe_chunk_done(struct pipe *p, struct chunk *c, int err);

void pipe_stats(struct pipe *p, struct pipe_stats *out);
/* Bytes read from the source so far (the guard's progress counter). */
uint64_t pipe_progress(void *p);
/* Stop the pipeline: a signal or a stalled source (the guard's cancel). */
void pipe_cancel(void *p, int why_stall);
void pipe_digest(struct pipe *p, uint8_t digest[32]);

#endif
