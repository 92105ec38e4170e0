/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The load pipeline: a reader thread fills input buffers from the source,
 * a codec driver turns them into output chunks (in order), a writer thread
 * writes the chunks to the sink and a hasher thread hashes them behind it.
 *
 *   source --read--> [in queue] --codec--> [out queue] --write--> sink
 *                                                      \--hash--> SHA-256
 *                                                      \--chunk workers
 *
 * With chunk hashing (a version 2 manifest), the output is cut into
 * chunks of a fixed size and chunk i is hashed on worker i % workers as
 * soon as its bytes are written: every core hashes, none in one stream.
 * A chunk that fails its hash, or whose bytes stand in for a read that
 * failed with a transient error, is read again from the source by the
 * reader thread (seekable raw sources only), hashed and written over.
 */
#ifndef RAMBOOT_PIPE_H
#define RAMBOOT_PIPE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "lib/sha256.h"

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
	PS_VERIFY,               /* a chunk failed its hash (after retries) */
};

/* A unit of data moving through the pipeline. Output chunks are "futures":
 * a parallel codec queues them in stream order and fills them later; the
 * writer waits until a chunk is ready. */
struct chunk {
	uint8_t *data;
	size_t len, cap;
	bool eof;                /* input: end of the source */
	bool bad;                /* zeros standing in for a read that failed:
				  * its chunks are read again */
	unsigned int refs;       /* hashers still to see it (under lock) */
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

/* A piece of an output chunk that falls in one hash chunk, for a worker
 * (or, with c NULL, a request to read a chunk again). */
struct seg {
	struct chunk *c;         /* NULL: no bytes (the end of a last chunk) */
	size_t off, len;         /* in c */
	uint32_t idx;            /* the hash chunk */
	bool first, last;        /* it starts / completes the hash chunk */
	struct seg *next;
};

struct segq {
	struct seg *head, *tail;
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
	uint32_t chunks;         /* hash chunks verified (or recorded) */
	uint32_t chunks_retried; /* of them, read again from the source */
	uint64_t bytes_retried;  /* read again */
};

#define PIPE_WORKERS_MAX 16

/* Chunk hashing settings (all zero: off). */
struct pipe_chunks {
	uint64_t size;               /* bytes per chunk, a power of two */
	const uint8_t (*want)[32];   /* verify chunk i against want[i], or */
	uint8_t (*got)[32];          /* record its hash in got[i] */
	uint32_t count;              /* entries of want (the image's chunks) or
				      * of got (room: more chunks fail) */
	uint64_t total;              /* with want: the exact output size */
	int retries;                 /* reads again of a failed chunk from the
				      * source (seekable, raw), 0: none */
	int workers;                 /* hashing threads, 1..PIPE_WORKERS_MAX */
};

struct pipe_worker {
	struct pipe *p;
	struct segq q;
	pthread_t t;
	bool started;
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
	struct pipe_chunks ck;

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
	unsigned int hash_held;  /* output chunks the hashers still hold */
	struct segq retryq;      /* chunks to read again (reader) */
	bool retry_busy;         /* the reader is reading one again */
	bool verify_done;        /* every chunk is hashed: the reader may go */
	struct pipe_stats st;
	uint64_t dropped_cache;  /* block sink: bytes dropped from page cache */

	SHA256_CTX sha;
	pthread_t reader, writer, hasher;
	bool reader_started, writer_started, hasher_started;
	bool reader_abandoned;   /* stuck in the kernel: its buffers are leaked */
	struct pipe_worker wk[PIPE_WORKERS_MAX];
	uint8_t *retry_buf;      /* ck.size bytes, for the reader's re-reads */
};

int pipe_init(struct pipe *p);
/* Frees the buffers; does nothing when the reader was abandoned (a pipe
 * on the heap is then leaked, never freed: see pipe_finish). */
void pipe_destroy(struct pipe *p);
/* Start reader, writer, hasher and chunk hashing threads. */
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
