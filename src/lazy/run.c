// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The run: the signals, the fork to the background, preparation, the
 * copy (from a stream or the image), verification and the switch in
 * order, and giving up; lazy_start(), the settings checked and the run,
 * for the command and the boot (which say the outcome each their way).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <fcntl.h>

#include "lazy/lazyint.h"
#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/proc.h"
#include "lib/units.h"

void lazy_opts_init(struct lazy_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->target = LAZY_TARGET_TMPFS;
	o->image_fd = -1;
	o->min_free = DEFAULT_MIN_FREE;
	o->stall_timeout = DEFAULT_STALL;
}

void lazy_close_all(struct lazy *L)
{
	int *const fds[] = {
		&L->copy_fd, &L->zram_ro_fd, &L->zram_reset_fd, &L->zram_remove_fd,
		&L->img_fd, &L->loop_fd, &L->meminfo_fd,
		&L->tmpfs_fd, &L->tmpfs_parent_fd, &L->status_dirfd, &L->cwd_fd,
		&L->log_fd, &L->null_fd,
	};

	if (L->have_of) {
		/* Only the parent of a background copier gets here with it:
		 * its descriptor, not the child's file. */
		(void)close(L->of.fd);
		(void)close(L->of.dirfd);
		L->have_of = false;
		L->copy_fd = -1;
	}
	close_fds(fds, ARRAY_SIZE(fds));
	lazy_http_close(L);
	bgread_loop_close(&L->lp);
	loopdev_watch_close(&L->lw);
	profile_free(&L->prof);
	manifest_free(&L->man);
	if (L->cp && !L->cp_abandoned) {
		bgread_pool_free(L->cp->pool);
		bgread_ranges_free(&L->cp->order);
		pthread_rwlock_destroy(&L->cp->wlock);
		free(L->cp);
	}
	L->cp = NULL;
}

/* The child of --background: a session of its own, no terminal, stderr
 * to the log, the root as its directory (it holds no mount busy). */
static int daemonize(struct lazy *L)
{
	if (setsid() < 0)
		return -errno;
	if (dup2(L->null_fd, STDIN_FILENO) < 0 || dup2(L->null_fd, STDOUT_FILENO) < 0 ||
	    dup2(L->log_fd, STDERR_FILENO) < 0)
		return -errno;
	if (chdir("/") < 0)
		return -errno;
	close_fd(&L->cwd_fd);
	L->cwd_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	return 0;
}

/*
 * The stream, when there is one, comes first: it needs no loop device,
 * so with --wait-loop it is received while the boot sets that up. The
 * copy from the image needs the loop device (its reads yield to the
 * boot's), and so does the switch.
 */
static int copy_verify_switch(struct lazy *L)
{
	bool from_stream = false;
	int rc;

	if (L->http)
		return lazy_http_copy(L);
	if (L->o->udpcast && (rc = lazy_stream_copy(L, &from_stream)) != 0)
		return rc;
	if (L->o->wait_loop > 0 && (rc = lazy_wait_loop(L)) != 0)
		return rc;
	if (from_stream) {
		char msg[256];
		bool same;

		if ((rc = lazy_stream_matches(L, &same, msg, sizeof(msg))) != 0)
			return rc;
		if (!same) {
			lazy_stream_forget(L);
			lazy_stream_fallback(L, LAZY_FB_DIFFERS, "%s", msg);
			from_stream = false;
		}
	}
	if (!from_stream) {
		lazy_set_state(L, "copying");
		if ((rc = lazy_run_copy(L)) != 0 || (rc = lazy_verify(L)) != 0)
			return rc;
	}
	if ((rc = lazy_guard_outcome(L)) != 0)
		return rc;
	return lazy_switch(L);
}

/* After a failure: undo, record, close. */
static int give_up(struct lazy *L, int rc)
{
	lazy_undo(L);
	lazy_copy_counters(L);
	L->r->ended = boot_sec();
	L->state = "gave-up";
	lazy_status_write(L);
	lazy_report_amend(L, false);
	return rc;
}

int lazy_run(const struct lazy_opts *o, struct lazy_result *r)
{
	struct guard guard;
	struct lazy L;
	sigset_t sigs, saved;
	bool child = false;
	long ps = sysconf(_SC_PAGESIZE);
	int rc, ioprio, nice_old;

	memset(r, 0, sizeof(*r));
	memset(&L, 0, sizeof(L));
	L.o = o;
	L.r = r;
	L.state = "preparing";
	L.page = ps >= 4096 && !(ps & (ps - 1)) ? (uint64_t)ps : 4096;
	L.img_fd = L.loop_fd = L.meminfo_fd = -1;
	bgread_loop_init(&L.lp);
	L.lw.sysblock_fd = L.lw.dev_fd = -1;
	L.profile_state = "none";
	profile_init(&L.prof);
	L.status_dirfd = L.cwd_fd = L.log_fd = L.null_fd = -1;
	L.tmpfs_fd = L.tmpfs_parent_fd = -1;
	L.zram_id = L.zram_reset_fd = L.zram_remove_fd = L.zram_ro_fd = -1;
	L.copy_fd = -1;
	L.of.fd = L.of.dirfd = -1;
	r->started = boot_sec();

	/* The guard's signals stay blocked from here to the end, also in
	 * the moment between the parent's guard and the child's (a
	 * signal then waits for the child's guard, or is the parent's). */
	guard_signals(&sigs);
	pthread_sigmask(SIG_BLOCK, &sigs, &saved);
	/* From here on a signal is a cancellation, undone below. */
	if (guard_start(&guard, o->stall_timeout, NULL) == 0)
		L.guard = &guard;
	rc = lazy_prepare(&L);
	if (rc == 0)
		rc = lazy_guard_outcome(&L);
	if (rc == 0)
		lazy_set_state(&L, o->udpcast && L.want_sha[0] ? "receiving" :
			  o->wait_loop > 0 ? "waiting-loop" : "copying");
	if (rc == 0 && o->background) {
		pid_t pid;

		if (L.guard)
			guard_stop(&guard);
		L.guard = NULL;
		pid = fork();
		if (pid < 0) {
			rc = give_up(&L, lazy_fail(&L, LAZY_DEST, "cannot fork: %s", strerror(errno)));
		} else if (pid > 0) {
			/* The child owns the copy now; over HTTP it sets up the
			 * loop device the boot mounts, and says which. */
			r->child = pid;
			rc = L.http ? lazy_http_wait_child(&L) : 0;
			lazy_close_all(&L);
			pthread_sigmask(SIG_SETMASK, &saved, NULL);
			return rc;
		} else {
			child = true;
			if (L.http)
				lazy_http_child(&L);
			if ((rc = daemonize(&L)) < 0)
				rb_warn("cannot detach: %s", strerror(-rc));
			rc = 0;
			if (guard_start(&guard, o->stall_timeout, NULL) == 0)
				L.guard = &guard;
		}
	} else if (rc != 0) {
		give_up(&L, rc);
	}
	if (rc == 0) {
		ioprio = io_prio_idle();
		nice_old = cpu_nice_bg();
		rc = copy_verify_switch(&L);
		if (rc != 0) {
			give_up(&L, rc);
		} else {
			lazy_copy_counters(&L);
			r->ended = boot_sec();
			L.state = "switched";
			lazy_status_write(&L);
			lazy_report_amend(&L, true);
		}
		io_prio_restore(ioprio);
		cpu_nice_restore(nice_old);
	}
	/* The guard may be calling copy_cancel() still: stopped before the
	 * copy state is freed. */
	if (L.guard)
		guard_stop(&guard);
	lazy_close_all(&L);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	if (child) {
		if (rc != 0)
			rb_err("gave up, %s stays on %s: %s", r->loop, o->image, r->error);
		else
			rb_info("%s now reads %s", r->loop, r->copy);
		/* Cleaned up: die of the signal, as one killed by it would. */
		if (r->err == LAZY_SIGNAL)
			guard_reraise(r->signo);
		_exit(rc);
	}
	return rc;
}

int lazy_check(const struct lazy_opts *o, char *why, size_t len)
{
	if (!o->image || !*o->image)
		return rb_errfmt(why, len, -EINVAL, "--image is required");
	if (o->sha256 && strlen(o->sha256) != 64)
		return rb_errfmt(why, len, -EINVAL, "--sha256: '%s' is not 64 hex digits", o->sha256);
	if (o->wait_loop > 0 && o->loop)
		return rb_errfmt(why, len, -EINVAL, "--wait-loop looks for the loop device: not "
				 "with --loop");
	if (o->signed_only && !o->manifest)
		return rb_errfmt(why, len, -EINVAL, "--signed needs --manifest");
	if (o->keydir && !o->signed_only)
		return rb_errfmt(why, len, -EINVAL, "--keys goes with --signed");
	if (o->tmpfs && o->target != LAZY_TARGET_TMPFS)
		return rb_errfmt(why, len, -EINVAL, "--tmpfs goes with --target=tmpfs");
	if (o->tmpfs && o->tmpfs[0] != '/')
		return rb_errfmt(why, len, -EINVAL, "--tmpfs: '%s' is not an absolute path", o->tmpfs);
	if (lazy_serves_http(o) && (o->loop || o->wait_loop > 0 || o->udpcast ||
				    o->target != LAZY_TARGET_TMPFS))
		return rb_errfmt(why, len, -EINVAL, "an http:// image is served by the copier "
				 "into a tmpfs: not with --loop, --wait-loop, --udpcast or "
				 "--target=zram");
	if (o->udpcast) {
		struct udpcast_opts uo;
		char err[200];

		if (udpcast_parse(o->udpcast, &uo, err, sizeof(err)) < 0)
			return rb_errfmt(why, len, -EINVAL, "--%s", err);
	}
	return 0;
}

int lazy_start(const struct lazy_opts *o, struct lazy_result *r)
{
	memset(r, 0, sizeof(*r));
	if (lazy_check(o, r->error, sizeof(r->error)) < 0) {
		r->err = LAZY_USAGE;
		return lazy_exit_code(LAZY_USAGE);
	}
	return lazy_run(o, r);
}
