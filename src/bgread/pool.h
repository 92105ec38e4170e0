/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reader pool: BGREAD_THREADS threads that read an image in the
 * order of a scheduler (sched.h), each read waiting its turn behind the
 * boot's reads of the loop device and the rate (yield.h), and hand what
 * they read to the caller (put: the lazy copier writes it to RAM; the
 * prefetch drops it, the page cache keeps it).
 *
 * What the page cache holds is read without waiting and is not counted
 * against the rate: it costs no read of the source. A stalled source or
 * a signal (the guard) cancels the readers: cancellation is enabled only
 * around the read (pread is a cancellation point), so a reader is never
 * cancelled while it holds the lock or in put. Only a reader that has
 * not ended is ever cancelled (its thread ID is valid until it is
 * joined; it marks its end under the lock). One the kernel will not let
 * go of is left behind after BGREAD_GRACE_S, with the pool's memory
 * (bgread_pool_free then leaves it).
 */
#ifndef RAMBOOT_BGREAD_POOL_H
#define RAMBOOT_BGREAD_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "bgread/loopstat.h"
#include "bgread/resident.h"
#include "bgread/sched.h"
#include "lib/guard.h"

#define BGREAD_GRACE_S 2.0     /* after a stop, for reads to return */
#define BGREAD_LOOK_S 1.0      /* no loop device yet: looked for this often */

/* Why the readers stopped: the first reason. */
enum bgread_stop {
	BGREAD_DONE,      /* everything handed out was read (or put said stop) */
	BGREAD_ENOMEM,    /* no buffer for a reader */
	BGREAD_EREAD,     /* a read of the image failed (err) */
	BGREAD_ESHORT,    /* the image ended before its size */
	BGREAD_EMEMORY,   /* MemAvailable would fall below the reserve */
	BGREAD_EPUT,      /* put failed (err) */
	BGREAD_ESTALL,    /* the guard: no progress */
	BGREAD_ESIGNAL,   /* the guard: a signal */
	BGREAD_ESTOPPED,  /* bgread_pool_stop() */
};

/* Settings, copied by bgread_pool_new(); pointers must outlive the pool. */
struct bgread_cfg {
	int fd;                   /* the image, read with pread */
	uint64_t size;
	uint64_t page;            /* a power of two */
	unsigned sched_flags;     /* bgread_sched_init() */
	uint64_t rate;            /* bytes/s from the source, 0: no cap */
	bool mincore_ok;          /* bgread_mincore_shows(): else nothing is resident */
	/* With meminfo_fd >= 0 (/proc/meminfo): every BGREAD_MEM_STEP handed
	 * out, MemAvailable must keep min_free after what is left. */
	int meminfo_fd;
	uint64_t min_free;
	/* The loop device the boot reads through: loop (borrowed, name set;
	 * its counters may be -1), or with find_path the one backed by
	 * find_path/find_st, looked for every BGREAD_LOOK_S (owned). */
	const struct bgread_loop *loop;
	const char *find_path;
	const struct stat *find_st;
	/* No loop device known yet: read nothing before this (monotonic
	 * seconds, 0: no wait). The boot's first reads go first. */
	double wait_until;
	/* The readers read through the very device loop counts (the scrub
	 * of the boot's dm-verity mapping): one reader, whose reads are
	 * over when pread returns (fd without readahead: POSIX_FADV_RANDOM),
	 * and what the counters show then is taken as its own
	 * (bgread_yield_own), not as the boot's. */
	bool reads_counted;
	/* A short read ends that reader quietly (else BGREAD_ESHORT). */
	bool short_ends;
	/* The debug log of each piece: "VERB OFF LEN (LIST-NAME)". */
	const char *verb;
	const char *list_name[BGREAD_NLISTS];
	/* After each whole read of [off, off + len) into buf (page aligned):
	 * 0; -ECANCELED: that reader stops quietly; -errno: the pool stops
	 * (BGREAD_EPUT). Not under the lock, never cancelled. NULL: the
	 * bytes are dropped. */
	int (*put)(void *arg, const void *buf, uint64_t off, uint64_t len);
	/* About twice a second while the readers run, in the caller's
	 * thread (NULL: none). */
	void (*tick)(void *arg);
	void *arg;
};

struct bgread_stats {
	uint64_t done;            /* bytes read and put */
	uint64_t cached;          /* of them, from the page cache */
	uint64_t network;         /* of them, from the source */
	uint64_t yields;          /* waits for the boot */
	bool all_taken;           /* the scheduler handed out every page */
	bool abandoned;           /* a reader never returned */
	enum bgread_stop why;
	int err;                  /* -errno with BGREAD_EREAD, BGREAD_EPUT */
	uint64_t err_off;         /* BGREAD_EREAD: where the read that failed began */
	uint64_t err_len;         /* and its length */
	char msg[256];            /* what went wrong, for a message */
};

struct bgread_pool;

/* A pool and its scheduler (nothing started). NULL: out of memory. */
struct bgread_pool *bgread_pool_new(const struct bgread_cfg *cfg);

/* Replace a list of the scheduler (bgread_sched_set), under the lock. */
int bgread_pool_set_list(struct bgread_pool *p, int list, struct bgread_ranges *r);

/* Scan what the page cache holds of the image (when mincore_ok) into
 * the resident list. Never fails: what cannot be scanned is not there. */
void bgread_pool_refresh_resident(struct bgread_pool *p);

/* Start the readers, point the guard g (may be NULL) at them, and wait
 * until they end or are left behind. 0, or -EAGAIN when no reader could
 * start. Once only. */
int bgread_pool_run(struct bgread_pool *p, struct guard *g);

/* The guard's cancellation: record why (when nothing was) and cancel
 * the readers that have not ended. Returns how many were cancelled. */
int bgread_pool_cancel(struct bgread_pool *p, enum guard_why why);

/* Stop handing out pieces (a reader in put finishes it). */
void bgread_pool_stop(struct bgread_pool *p);
bool bgread_pool_stopped(struct bgread_pool *p);

void bgread_pool_stats(struct bgread_pool *p, struct bgread_stats *st);

/* Free the pool; one with a reader left behind is left to it. */
void bgread_pool_free(struct bgread_pool *p);

#endif
