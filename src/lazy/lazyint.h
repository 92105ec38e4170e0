/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ramboot lazy: copy the network image the client runs from into RAM
 * behind the boot's back, verify the copy, and move the image's read-only
 * loop device onto it (LOOP_CHANGE_FD). See lazy.h for the API and
 * docs/lazy.md for the run as an administrator sees it.
 *
 * Inside the copier: the state of one run, shared by its files, one
 * subject each: prepare.c (every check and every open), loopwait.c
 * (--wait-loop), target.c (the tmpfs or zram copy, and undo), copy.c
 * (the copy over bgread/'s reader pool), verify.c, stream.c (--udpcast),
 * switch.c, status.c (the status file and the boot report), run.c (the
 * order of it all) and lazy_cmd.c (the command line). Not for other
 * callers: they use lazy.h.
 *
 * After preparation no path is looked up again: a copier started in the
 * initramfs keeps running when the initramfs switches root, and from
 * then on /proc, /sys, /dev and /run are not where its root can see them.
 * It works through descriptors opened before: the image, the loop device
 * node, /proc/meminfo, the loop's inflight counters, the status
 * directory, the tmpfs (or the zram node and its reset and hot_remove
 * attributes).
 */
#ifndef RAMBOOT_LAZYINT_H
#define RAMBOOT_LAZYINT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "bgread/pool.h"
#include "dev/loopdev.h"
#include "format/manifest.h"
#include "lazy/lazy.h"
#include "lazy/nbdserve.h"
#include "lib/base.h"
#include "lib/guard.h"
#include "lib/outfile.h"
#include "profile/profile.h"
#include "udpcast/udpcast.h"

#define DEFAULT_MIN_FREE (256 * MiB)
#define DEFAULT_STALL 30.0
#define STATUS_EVERY_S 2.0     /* status file and page cache rescan */
#define STREAM_POLL_MS 200     /* --udpcast: the stream's pipe looked at */
#define STREAM_GRACE_S 5.0     /* past udp-receiver's own timeouts */

/* The copy from the image: the reader pool and where it writes. */
struct copy {
	struct lazy *L;
	struct bgread_pool *pool;
	/* Writers to the copy hold it shared; undo takes it exclusive
	 * before it closes the copy, so no write lands after that. */
	pthread_rwlock_t wlock;
	int copy_fd;                         /* under wlock; -1: closed */
	struct bgread_ranges order;          /* the profile's, for the pool */
};

struct lazy {
	const struct lazy_opts *o;
	struct lazy_result *r;
	struct guard *guard;
	uint64_t page;
	/* the source */
	int img_fd;
	struct stat img_st;
	uint64_t size;
	bool mincore_ok;                     /* bgread_mincore_shows() */
	char want_sha[65];
	struct manifest man;
	bool have_man;
	/* the loop device */
	int loop_fd;
	char loop_name[32];
	struct bgread_loop lp;               /* its counters */
	int meminfo_fd;
	/* --wait-loop: where to look for it, opened at the start */
	struct loopdev_watch lw;
	/* the boot profile */
	struct profile prof;
	const char *profile_state;           /* none, used, mismatch, error */
	char profile_path[PATH_MAX];
	/* the status file, written through its directory */
	int status_dirfd, cwd_fd, log_fd, null_fd;
	char status_name[NAME_MAX + 1];
	bool status_warned;
	double last_status;
	const char *state;
	/* the target */
	char tmpfs_path[PATH_MAX];
	int tmpfs_fd, tmpfs_parent_fd;
	char tmpfs_base[NAME_MAX + 1];
	bool tmpfs_mkdir, tmpfs_mounted;
	struct stat tmpfs_st;
	struct outfile of;
	bool have_of, named;
	int zram_id, zram_reset_fd, zram_remove_fd, zram_ro_fd;
	int copy_fd;
	bool direct;
	bool hash_done, hash_ok;
	struct copy *cp;
	bool cp_abandoned;                   /* a read never returned: cp leaked */
	struct udpcast_opts uo;              /* with o->udpcast */
	struct lazy_http *http;              /* an http:// image: its server (http.c) */
};

/* run.c */
/* Record the first failure; returns its exit code (lib/runerr.h). */
#define lazy_fail(L, ...) run_fail(RUN_ERROR((L)->r), __VA_ARGS__)
/* The signal or stall the guard saw, as the run's failure; 0: none. */
#define lazy_guard_outcome(L) \
	run_guard_outcome(RUN_ERROR((L)->r), (L)->guard, (L)->o->image, (L)->o->stall_timeout)
void lazy_close_all(struct lazy *L);

/* status.c */
void lazy_status_write(struct lazy *L);
void lazy_set_state(struct lazy *L, const char *state);
void lazy_report_amend(struct lazy *L, bool switched);

/* prepare.c */
int lazy_prepare(struct lazy *L);
void lazy_open_counters(struct lazy *L, int sysblock_fd);
int lazy_make_copy_state(struct lazy *L);

/* loopwait.c */
int lazy_open_wait_dirs(struct lazy *L);
int lazy_wait_loop(struct lazy *L);

/* target.c */
int lazy_make_tmpfs(struct lazy *L);
int lazy_make_zram(struct lazy *L);
void lazy_undo(struct lazy *L);

/* copy.c */
int lazy_run_copy(struct lazy *L);
uint64_t lazy_copy_yields(struct lazy *L);
void lazy_copy_counters(struct lazy *L);

/* verify.c */
int lazy_verify(struct lazy *L);

/* stream.c */
int lazy_stream_copy(struct lazy *L, bool *used);
int lazy_stream_matches(struct lazy *L, bool *same, char *msg, size_t msglen);
void lazy_stream_forget(struct lazy *L);
void lazy_stream_fallback(struct lazy *L, enum run_err f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* http.c: an http:// image, served to the kernel's NBD client */
int lazy_http_prepare(struct lazy *L);
int lazy_http_copy(struct lazy *L);
int lazy_http_wait_child(struct lazy *L);
void lazy_http_child(struct lazy *L);
void lazy_http_close(struct lazy *L);
/* The server's counters (nbdserve.h); false when there is no server. */
bool lazy_http_stats(struct lazy *L, struct nbds_stats *st);

/* switch.c */
int lazy_switch(struct lazy *L);

#endif
