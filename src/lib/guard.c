// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The guard thread: signals and stalls become a cancellation (guard.h).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "lib/guard.h"

#define TICK_NS (200L * 1000 * 1000)

/* Wakes the guard thread when the run is over, so that it stops at once
 * rather than at its next tick; never a cancellation. */
#define GUARD_WAKE SIGUSR2

void guard_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGQUIT);
}

static void fill_sets(sigset_t *taken, sigset_t *all)
{
	guard_signals(taken);
	sigaddset(taken, GUARD_WAKE);
	*all = *taken;
	sigaddset(all, SIGPIPE);
	sigaddset(all, SIGXFSZ);
}

static void fire(struct guard *g, enum guard_why why, int signo)
{
	void (*cancel)(void *, enum guard_why);
	void *arg;

	pthread_mutex_lock(&g->lock);
	if (g->why == GUARD_NONE) {
		g->why = why;
		g->signo = signo;
	}
	cancel = g->cancel;
	arg = g->arg;
	pthread_mutex_unlock(&g->lock);
	if (cancel)
		cancel(arg, why);
}

static void *guard_main(void *arg)
{
	struct guard *g = arg;
	const struct timespec tick = { 0, TICK_NS };
	sigset_t taken, all;

	fill_sets(&taken, &all);
	for (;;) {
		int sig = sigtimedwait(&taken, NULL, &tick);
		bool stop, stalled = false;

		pthread_mutex_lock(&g->lock);
		stop = g->stop;
		if (!stop && sig < 0 && g->progress && g->stall_timeout > 0 && g->why == GUARD_NONE) {
			uint64_t now = g->progress(g->arg);
			double t = now_sec();

			if (now != g->last) {
				g->last = now;
				g->last_change = t;
				g->moved = true;
			} else if (t - g->last_change >= g->stall_timeout) {
				stalled = true;
			}
		}
		/* A beat is progress: none before the first byte moved (the
		 * child's first beat is what child_run's first_by waits for). */
		if (g->beat_ms && g->moved)
			atomic_store(g->beat_ms, (long long)(g->last_change * 1000));
		pthread_mutex_unlock(&g->lock);
		if (stop)
			return NULL;
		if (sig > 0 && sig != GUARD_WAKE)
			fire(g, GUARD_SIGNAL, sig);
		else if (stalled)
			fire(g, GUARD_STALL, 0);
	}
}

int guard_start(struct guard *g, double stall_timeout, _Atomic long long *beat_ms)
{
	sigset_t taken, all;
	int rc;

	memset(g, 0, sizeof(*g));
	g->stall_timeout = stall_timeout;
	g->beat_ms = beat_ms;
	g->last_change = now_sec();
	pthread_mutex_init(&g->lock, NULL);
	fill_sets(&taken, &all);
	rc = pthread_sigmask(SIG_BLOCK, &all, &g->oldmask);
	if (rc) {
		pthread_mutex_destroy(&g->lock);
		return -rc;
	}
	rc = pthread_create(&g->tid, NULL, guard_main, g);
	if (rc) {
		pthread_sigmask(SIG_SETMASK, &g->oldmask, NULL);
		pthread_mutex_destroy(&g->lock);
		return -rc;
	}
	g->started = true;
	return 0;
}

void guard_target(struct guard *g, uint64_t (*progress)(void *), void (*cancel)(void *, enum guard_why),
		  void *arg)
{
	enum guard_why why;

	if (!g || !g->started)
		return;
	pthread_mutex_lock(&g->lock);
	g->progress = progress;
	g->cancel = cancel;
	g->arg = arg;
	g->last = progress ? progress(arg) : 0;
	g->last_change = now_sec();
	why = g->why;
	pthread_mutex_unlock(&g->lock);
	if (why != GUARD_NONE && cancel)
		cancel(arg, why);
}

enum guard_why guard_fired(struct guard *g, int *signo)
{
	enum guard_why why;

	if (!g || !g->started)
		return GUARD_NONE;
	pthread_mutex_lock(&g->lock);
	why = g->why;
	if (signo)
		*signo = g->signo;
	pthread_mutex_unlock(&g->lock);
	return why;
}

void guard_stop(struct guard *g)
{
	if (!g->started)
		return;
	pthread_mutex_lock(&g->lock);
	g->stop = true;
	g->progress = NULL;
	g->cancel = NULL;
	pthread_mutex_unlock(&g->lock);
	pthread_kill(g->tid, GUARD_WAKE);
	pthread_join(g->tid, NULL);
	/* A write past RLIMIT_FSIZE or into a closed pipe left SIGXFSZ or
	 * SIGPIPE pending: it was an error of the run, already handled;
	 * do not let it kill the process when the mask is restored. */
	{
		const struct timespec zero = { 0, 0 };
		sigset_t drain;

		sigemptyset(&drain);
		sigaddset(&drain, SIGPIPE);
		sigaddset(&drain, SIGXFSZ);
		sigaddset(&drain, GUARD_WAKE);
		while (sigtimedwait(&drain, NULL, &zero) > 0)
			;
	}
	pthread_sigmask(SIG_SETMASK, &g->oldmask, NULL);
	pthread_mutex_destroy(&g->lock);
	g->started = false;
}

void guard_reraise(int signo)
{
	sigset_t s;

	if (signo <= 0)
		return;
	signal(signo, SIG_DFL);
	sigemptyset(&s);
	sigaddset(&s, signo);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	raise(signo);
}
