/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guard of a run: the one place that turns a signal (TERM, INT, HUP,
 * QUIT) or a source that stops making progress into a cancellation that
 * the run then undoes on its normal return path. No work is done in a
 * signal handler: the signals are blocked in every thread and a guard
 * thread takes them with sigtimedwait(), which also gives it the tick
 * on which it watches progress.
 *
 * SIGPIPE and SIGXFSZ stay blocked for the whole run: a write past
 * RLIMIT_FSIZE or to a closed pipe then fails with EFBIG or EPIPE and
 * takes the ordinary error path instead of killing the process with a
 * partial file behind it.
 */
#ifndef RAMBOOT_GUARD_H
#define RAMBOOT_GUARD_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum guard_why { GUARD_NONE, GUARD_SIGNAL, GUARD_STALL };

struct guard {
	pthread_t tid;
	bool started;
	sigset_t oldmask;
	pthread_mutex_t lock;
	bool stop;
	double stall_timeout;               /* seconds, 0: never */
	/* The current target: progress() returns a counter that grows while
	 * the source delivers; cancel() stops the work. Both may be NULL. */
	uint64_t (*progress)(void *arg);
	void (*cancel)(void *arg, enum guard_why why);
	void *arg;
	uint64_t last;                      /* progress at last_change */
	double last_change;
	/* Where the guard publishes, every tick from the first progress on,
	 * the monotonic time (ms) of the last progress (or of the restart
	 * of the stall clock), for a watcher in another process; or NULL. */
	_Atomic long long *beat_ms;
	bool moved;                         /* some progress was seen */
	/* What happened (read after guard_stop, or under lock). */
	enum guard_why why;
	int signo;
};

/* The signals a guard takes as a cancellation: TERM, INT, HUP, QUIT. */
void guard_signals(sigset_t *set);

/* Block the signals in the calling thread (and so in every thread it
 * starts from now on) and start the guard thread. 0 or -errno; on
 * failure nothing is changed. */
int guard_start(struct guard *g, double stall_timeout, _Atomic long long *beat_ms);

/* Point the guard at the work now running (NULL, NULL, NULL: none). The
 * stall clock restarts. When the guard has fired already, cancel is
 * called at once. */
void guard_target(struct guard *g, uint64_t (*progress)(void *), void (*cancel)(void *, enum guard_why),
		  void *arg);

/* Has the guard fired? GUARD_NONE if not. */
enum guard_why guard_fired(struct guard *g, int *signo);

/* Stop the guard thread and restore the signal mask. A signal taken by
 * the guard is not delivered again: the caller re-raises it once its
 * cleanup is done (guard_reraise). */
void guard_stop(struct guard *g);

/* Die of the signal the guard took, with the default action, as a
 * process killed by it would (after cleanup). Returns if there was none. */
void guard_reraise(int signo);

#endif
