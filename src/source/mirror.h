/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A set of mirrors of one file on web servers (http.h), and ranged reads
 * of it from whichever answers: the loader's parallel copy, and any
 * reader that fetches chunks by range. Every mirror must serve the same
 * file: the first that answers sets its size, a mirror of another size is
 * not used. Each mirror keeps the validators (ETag, Last-Modified) of
 * its own first answer and sends them in If-Range, so a file replaced on
 * one server is caught there (-ESTALE), never spliced in.
 *
 * A read goes to the least busy mirror (round robin among equals); one
 * that fails (no connection, a reset, a timeout, a short body, a 200 to
 * the range, a changed file, bytes that do not match the hash given) is
 * left for that read and the next mirror tried; the bytes count only
 * once they match. A mirror that serves another file or ignores ranges,
 * or fails MIRROR_FAILS reads in a row, is dropped for the rest of the set's
 * life. Connections are kept (MIRROR_IDLE per mirror) and each read
 * takes one of its own: any number of threads may read at once.
 */
#ifndef RAMBOOT_SOURCE_MIRROR_H
#define RAMBOOT_SOURCE_MIRROR_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "source/http.h"

#define MIRROR_MAX   9           /* URLs in a set */
#define MIRROR_IDLE  8           /* kept connections per mirror */
#define MIRROR_FAILS 3           /* failed reads in a row that drop a mirror */

/* What a mirror did, for a report. */
struct mirror_stat {
	uint64_t bytes;          /* served and matched */
	uint32_t chunks;         /* reads served and matched */
	uint32_t failures;       /* reads that failed or did not match */
	bool dropped;            /* not used any more */
};

struct mirror {
	struct http_conn proto;  /* its URL and the validators of its first answer */
	struct http_conn *idle[MIRROR_IDLE];
	unsigned n_idle;
	unsigned busy;           /* reads under way */
	unsigned fails;          /* failed reads in a row */
	struct mirror_stat st;
};

struct mirror_set {
	pthread_mutex_t lock;
	unsigned n;
	uint64_t size;           /* the file's, the same on every mirror */
	unsigned next;           /* round robin among the least busy */
	int last_rc;             /* the last failure, for a read that finds */
	char last_err[512];      /* no mirror left to try */
	struct mirror m[MIRROR_MAX];
};

/* Open a set of the n URLs (at most MIRROR_MAX): each is asked for the
 * file's head (HEAD) once. A mirror that does not answer, or serves a
 * file of another size than the first that answered, is dropped (said on
 * stderr); none answering is an error. timeout_ms bounds each wait for a
 * server (0: HTTP_TIMEOUT_MS). 0, or -errno with the reason in err. */
int mirror_set_open(struct mirror_set *set, const char *const *urls, unsigned n,
		    int timeout_ms, char *err, size_t errlen);

/* len bytes at off (fewer only at the end of the file) from any mirror,
 * trying each mirror not yet dropped at most once; with sha256, the bytes
 * must have that SHA-256 (a mirror whose bytes do not is failed for this
 * read). *served_by (when not NULL) is the index in the set of the mirror
 * that served them. The count, or -errno with the reason in err (the
 * last mirror's failure) when none served them. Thread-safe. */
ssize_t mirror_fetch(struct mirror_set *set, void *buf, size_t len, uint64_t off,
		     const uint8_t sha256[32], int *served_by, char *err, size_t errlen);

/* A run of adjacent chunks in one read: as mirror_fetch(), each piece
 * checked against its own SHA-256 (the last one: the bytes left). */
struct mirror_piece {
	size_t len;
	const uint8_t *sha256;
};
ssize_t mirror_fetch_run(struct mirror_set *set, void *buf, size_t len, uint64_t off,
			 const struct mirror_piece *p, unsigned np, int *served_by, char *err,
			 size_t errlen);

/* The URL of mirror i, and what it did so far. */
const char *mirror_url(const struct mirror_set *set, unsigned i);
void mirror_stats(struct mirror_set *set, unsigned i, struct mirror_stat *st);

/* Mirrors not dropped: 0 when no read can succeed any more. */
unsigned mirror_live(struct mirror_set *set);

/* None left: the mirrors dropped for failing in a row are tried again
 * (a server restarted comes back); one that served another file or
 * ignored a range stays dropped. The mirrors live after. */
unsigned mirror_revive(struct mirror_set *set);

/* Start the bytes and reads served from zero (after a probe that is not
 * to count); failures and drops stay. */
void mirror_stats_clear(struct mirror_set *set);

/* Close every connection; the set may be opened again. */
void mirror_set_close(struct mirror_set *set);

#endif
