/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The error record of a run that copies an image (the loader's, the lazy
 * copier's): why it failed, one list of categories, each with one exit
 * code and one name; the first failure recorded, with its one-line
 * message; and the guard's signal or stall, which wins over what it
 * caused.
 *
 * load.h and lazy.h name the categories each run can meet (LOAD_HASH
 * and LAZY_HASH are RUN_HASH): a bad signature is RUN_SIGNATURE in both,
 * and both exit the same for it.
 */
#ifndef RAMBOOT_RUNERR_H
#define RAMBOOT_RUNERR_H

#include <stdarg.h>
#include <stddef.h>

#include "lib/guard.h"

enum run_err {
	RUN_OK,
	RUN_USAGE,       /* bad options or settings (exit 2) */
	RUN_SOURCE,      /* the source cannot be opened or read */
	RUN_MANIFEST,    /* the manifest cannot be read or is malformed */
	RUN_FORMAT,      /* corrupt input, or a format that cannot be decoded */
	RUN_DEST,        /* the RAM copy cannot be made or written */
	RUN_NOMEM,       /* not enough memory: MemAvailable below the reserve (exit 3) */
	RUN_SIZE,        /* the image size differs from the manifest */
	RUN_HASH,        /* the SHA-256 differs */
	RUN_FSTYPE,      /* not the file system expected, or a truncated one */
	RUN_CHANGED,     /* the source changed while it was read */
	RUN_STALL,       /* the source stopped making progress */
	RUN_SIGNAL,      /* interrupted by a signal */
	RUN_SIGNATURE,   /* the manifest is not signed by a trusted key */
	RUN_LOOP,        /* no suitable loop device, or it changed */
	RUN_NOLOOP,      /* none appeared in time */
	RUN_SWITCH,      /* LOOP_CHANGE_FD refused */
	/* Why a copy was taken from the image although a stream was asked
	 * for (the lazy copier's --udpcast): reasons to fall back, never to
	 * give up; RUN_STALL, RUN_SIZE and RUN_HASH are such reasons too. */
	RUN_UNVERIFIED,  /* no hash to verify the stream's copy against */
	RUN_RECEIVER,    /* udp-receiver cannot be run */
	RUN_NO_SESSION,  /* no sender within the start timeout */
	RUN_LOST,        /* the stream broke off (udp-receiver failed) */
	RUN_COMPRESSED,  /* a compressed stream: the raw image is needed */
	RUN_DIFFERS,     /* the copy differs from what the boot read */
};

/* The stable name of a category (the lazy status file's gave_up:
 * "signature", "hash-mismatch", ...; its source_fallback: "no-session",
 * "stall", ...); "" for RUN_OK, "unknown" for a value that is none. */
const char *run_err_name(enum run_err e);

/* RB_EXIT_* for a category: OK 0, USAGE 2, NOMEM 3, any other 1. */
int run_err_exit(enum run_err e);

/* Where a run's result keeps its failure. */
struct run_error {
	enum run_err *err;       /* RUN_OK: none yet */
	int *signo;              /* with RUN_SIGNAL */
	char *msg;
	size_t msglen;
};

/* The record of a result that has the fields err, signo and error[]. */
#define RUN_ERROR(r) ((struct run_error){ &(r)->err, &(r)->signo, (r)->error, \
					  sizeof((r)->error) })

/* Record a failure, unless one is recorded already: the first one is
 * the cause, what follows its consequence. Returns the exit code of the
 * failure recorded. */
int run_fail(struct run_error re, enum run_err e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int run_vfail(struct run_error re, enum run_err e, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* The signal or stall the guard g (NULL: none) saw, as the failure of
 * the run: it replaces what was recorded (a read error, a short image:
 * what the cancellation caused). source and stall_timeout name the
 * stall. Returns its exit code, or 0 when the guard has not fired. */
int run_guard_outcome(struct run_error re, struct guard *g, const char *source,
		      double stall_timeout);

#endif
