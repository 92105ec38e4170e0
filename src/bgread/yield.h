/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading in the boot's idle time: the yield, pace and memory rules of
 * every background reader (the prefetch, the lazy copier). Pure
 * functions of what the caller saw; no I/O.
 *
 * Each look at the loop device the boot reads the image through gives
 * its reads in flight and the reads it completed so far (loopstat.h). A
 * read of ours to the network waits
 *  - while the boot has reads in flight (the back-off below), and
 *  - if it is a guess (offset order), until the boot has read nothing for
 *    BGREAD_QUIET_MS: guesses go in the boot's idle time only, so a boot
 *    that reads nothing the guess brings loses (almost) nothing to it.
 * Reads a boot profile predicts go as soon as no read of the boot waits:
 * the boot needs those bytes next anyway.
 * A read's size follows the link: about BGREAD_READ_MS at the rate our
 * own reads got so far (BGREAD_READ_MIN .. BGREAD_CHUNK), so a boot read
 * that comes meanwhile waits about that long behind each read of ours.
 */
#ifndef RAMBOOT_BGREAD_YIELD_H
#define RAMBOOT_BGREAD_YIELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BGREAD_CHUNK (1024 * 1024)            /* bytes per read, at most */
#define BGREAD_THREADS 2                      /* reads in flight, at most */
#define BGREAD_MEM_STEP (64ULL * 1024 * 1024) /* MemAvailable checked this often */
#define BGREAD_BACKOFF_MIN_MS 5
#define BGREAD_BACKOFF_MAX_MS 200
#define BGREAD_QUIET_MS 100
#define BGREAD_READ_MS 50
#define BGREAD_READ_MIN (64 * 1024)
#define BGREAD_READ_FIRST (128 * 1024)        /* before the rate is known */

/* Back-off while the boot's reads are in flight: busy gives the next
 * sleep (BGREAD_BACKOFF_MIN_MS, doubling up to BGREAD_BACKOFF_MAX_MS);
 * not busy resets it and gives 0. */
struct bgread_backoff {
	long ms;
};
long bgread_backoff_step(struct bgread_backoff *b, bool busy);

enum bgread_wait { BGREAD_GO, BGREAD_BOOT_WAITS, BGREAD_BOOT_READ };

struct bgread_yield {
	struct bgread_backoff bo;
	double quiet_until;       /* guesses wait until then (monotonic s) */
	uint64_t last_done;       /* the boot's reads completed, last look */
	bool seen;
	double rate;              /* bytes/s our network reads got; 0: not yet */
	enum bgread_wait why;     /* the last step's */
};

/* Milliseconds to wait before the read (0: go). done: the boot's reads
 * completed (NULL: not known), inflight: its reads in flight. */
long bgread_yield_step(struct bgread_yield *y, double now, const uint64_t *done,
		       uint64_t inflight, bool predicted);
/* A reader that reads through the device whose counters it looks at
 * (the scrub of the boot's dm-verity mapping): done, the reads that
 * device completed as counted once a read of ours was over, are ours,
 * not the boot's (the next look counts only what comes after). */
void bgread_yield_own(struct bgread_yield *y, uint64_t done);
/* A read of ours that went to the network took secs for bytes. */
void bgread_yield_took(struct bgread_yield *y, uint64_t bytes, double secs);
/* The size of the next read: a multiple of page (a power of two). */
uint64_t bgread_yield_size(const struct bgread_yield *y, uint64_t page);

/* Milliseconds to wait so that bytes read in elapsed seconds stay at or
 * under rate bytes per second (0: no cap); at most 1000 per call. */
long bgread_pace_ms(uint64_t bytes, uint64_t rate, double elapsed);

/* The memory rule: after the remaining bytes are read into RAM,
 * MemAvailable still holds min_free. */
bool bgread_mem_ok(uint64_t avail, uint64_t remaining, uint64_t min_free);

/* The memory rule against /proc/meminfo, opened by the caller (fd, read
 * again from its start): 0, or -ENOMEM with why in msg ("memory ran
 * short: ..." or "cannot read MemAvailable: ..."). */
int bgread_mem_check(int meminfo_fd, uint64_t remaining, uint64_t min_free, char *msg,
		     size_t msglen);

/* MemAvailable through that descriptor. 0 or -errno. */
int bgread_mem_available(int meminfo_fd, uint64_t *avail);

#endif
