/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The lazy copier: the client runs from the network image, mounted
 * through a read-only loop device, while this copies the image into RAM
 * (a file in a tmpfs it mounts, or a zram device), verifies the copy and
 * then moves the loop device onto it with LOOP_CHANGE_FD. Until that
 * switch nothing the client uses changes; on any failure before it the
 * copy is freed and the client stays on the network image.
 *
 * Copy order: first what the page cache already holds of the image (the
 * boot read it: no network read), then the ranges of a boot profile,
 * then the rest in offset order. Reads are paced and yield to the boot's
 * own reads through the loop device: the reader pool of bgread/ does the
 * reading. docs/lazy.md describes the whole run and the status file.
 *
 * With a udpcast session (--udpcast) the copy is taken from the
 * multicast stream instead, which arrives in image order and reads
 * nothing of the image; when that fails, the copy is made from the image
 * as above.
 */
#ifndef RAMBOOT_LAZY_H
#define RAMBOOT_LAZY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/runerr.h"

#define LAZY_TMPFS_DIR "/run/ramboot/ram"     /* below the root prefix */
#define LAZY_STATUS "/run/ramboot/lazy"       /* below the root prefix */
#define LAZY_WAIT_POLL_MS 50                  /* --wait-loop: sysfs looked at this often */
#define LAZY_REPORT_WAIT_S 60                 /* boot_report: the boot's report waited for */

/* ---- the run ---- */

enum lazy_target { LAZY_TARGET_TMPFS, LAZY_TARGET_ZRAM };

/* Settings: filled from the command line (or by the boot), never
 * changed by the run. */
struct lazy_opts {
	const char *image;         /* the network image (file or block device) */
	/* The image's bytes already open (O_RDONLY), or -1: image is opened.
	 * With it, image only names the image (messages, the status file,
	 * IMAGE.profile, the copy's name): a local copy of the same bytes,
	 * the local-disk cache's slot under ramboot=lazy (docs/cache.md);
	 * then source_name says where the bytes come from. */
	int image_fd;
	const char *source_name;   /* NULL: "network" (or "udpcast") */
	const char *loop;          /* its loop device node, NULL: find it */
	enum lazy_target target;
	const char *tmpfs;         /* NULL: LAZY_TMPFS_DIR below the root prefix */
	const char *sha256;        /* 64 hex digits or NULL */
	const char *manifest;      /* manifest file or NULL */
	bool signed_only;          /* the manifest must be signed by a trusted key */
	const char *keydir;        /* with signed_only: NULL, the initrd's keys */
	uint64_t min_free;         /* MemAvailable that must stay (256M) */
	double stall_timeout;      /* seconds without progress; 0: never */
	uint64_t rate;             /* bytes/s from the network, 0: no cap */
	const char *status;        /* NULL: LAZY_STATUS below the root prefix */
	bool background;
	/* Started by `ramboot boot`, which writes its report only after the
	 * copier started: a switch waits for that report (mode_done=lazy,
	 * LAZY_REPORT_WAIT_S at most) before it amends it, so that the boot's
	 * write never replaces a switch that came first. */
	bool boot_report;
	/* Seconds to wait for the loop device backed by the image (0: it
	 * must be there at the start). The image, /sys/block, /dev and the
	 * rest are opened at once; the loop device is looked for through
	 * those descriptors (with background: in the child), so its setup
	 * may come later and hide the image's path. Not with loop. */
	double wait_loop;
	/* The boot profile (profile.h): a file, LAZY_PROFILE_NONE, or NULL
	 * for IMAGE.profile beside the image when that is a regular file.
	 * Used only when it matches the image. */
	const char *profile;
	/* udpcast receiver options (udpcast.h; "" for the defaults): the
	 * copy comes from that multicast stream, the image only when it
	 * fails (LAZY_FB_*). NULL: from the image. */
	const char *udpcast;
	/* An http:// image (URL[,URL...]) without a manifest, or with one
	 * without chunk hashes, is served all the same (ramboot.verify=off);
	 * otherwise it is refused. */
	bool unverified;
};

#define LAZY_PROFILE_NONE "none"

void lazy_opts_init(struct lazy_opts *o);

/* Why a run gave up. The categories are lib/runerr.h's, one list with
 * the loader's (LAZY_SIGNATURE is the loader's LOAD_SIGNATURE); these are
 * the ones the copier meets. Their names (lazy_err_name(): the status
 * file's gave_up) and exit codes (lazy_exit_code()) are runerr.h's. */
#define LAZY_OK        RUN_OK
#define LAZY_USAGE     RUN_USAGE      /* bad settings (exit 2) */
#define LAZY_SOURCE    RUN_SOURCE     /* the image cannot be opened or read */
#define LAZY_LOOP      RUN_LOOP       /* no suitable loop device, or it changed */
#define LAZY_NOLOOP    RUN_NOLOOP     /* --wait-loop: none appeared in time */
#define LAZY_MANIFEST  RUN_MANIFEST   /* the manifest cannot be read */
#define LAZY_DEST      RUN_DEST       /* the RAM copy cannot be made or written */
#define LAZY_NOMEM     RUN_NOMEM      /* MemAvailable would drop below the reserve (exit 3) */
#define LAZY_STALL     RUN_STALL      /* the source stopped delivering */
#define LAZY_SIZE      RUN_SIZE       /* the image size is not the manifest's */
#define LAZY_HASH      RUN_HASH       /* the copy's SHA-256 is not the one asked for */
#define LAZY_CHANGED   RUN_CHANGED    /* the image changed while it was copied */
#define LAZY_SWITCH    RUN_SWITCH     /* LOOP_CHANGE_FD refused */
#define LAZY_SIGNAL    RUN_SIGNAL     /* interrupted by a signal */
#define LAZY_SIGNATURE RUN_SIGNATURE  /* --signed: the manifest is not signed by a trusted key */

static inline const char *lazy_err_name(enum run_err e)
{
	return run_err_name(e);
}

static inline int lazy_exit_code(enum run_err e)
{
	return run_err_exit(e);
}

/* Why the copy was made from the image although a stream was asked for
 * (--udpcast). None of these is a reason to give up: the copy is then
 * made from the image. They are runerr.h's categories too, one list with
 * one table of stable names (lazy_fallback_name(): the status file's
 * source_fallback). */
#define LAZY_FB_NONE       RUN_OK
#define LAZY_FB_UNVERIFIED RUN_UNVERIFIED  /* no hash to verify the stream's copy against */
#define LAZY_FB_RECEIVER   RUN_RECEIVER    /* udp-receiver cannot be run */
#define LAZY_FB_NO_SESSION RUN_NO_SESSION  /* no sender within the start timeout */
#define LAZY_FB_LOST       RUN_LOST        /* the stream broke off (udp-receiver failed) */
#define LAZY_FB_STALL      RUN_STALL       /* no data for the stall timeout */
#define LAZY_FB_SIZE       RUN_SIZE        /* the stream is not as long as the image */
#define LAZY_FB_COMPRESSED RUN_COMPRESSED  /* a compressed stream: the raw image is needed */
#define LAZY_FB_HASH       RUN_HASH        /* the copy's SHA-256 is not the one asked for */
#define LAZY_FB_DIFFERS    RUN_DIFFERS     /* the copy differs from what the boot read */

static inline const char *lazy_fallback_name(enum run_err f)
{
	return run_err_name(f);
}

/* How a stream ended, at its end of file: got bytes (one more than size
 * when it went on past the image), udp-receiver's exit status good or
 * not. LAZY_FB_NONE when it is the whole image and complete. */
enum run_err lazy_stream_end(uint64_t got, uint64_t size, bool receiver_ok);

/* What happened, as far as the run got. Times are seconds since boot
 * (CLOCK_BOOTTIME), 0 when the step was not reached. */
struct lazy_result {
	enum run_err err;
	char error[512];
	int signo;                 /* with LAZY_SIGNAL */
	uint64_t size;             /* the image */
	uint64_t bytes_cached;     /* copied from the page cache */
	uint64_t bytes_network;    /* read from the source */
	uint64_t bytes_stream;     /* --udpcast: written from the stream */
	uint64_t bytes_compared;   /* --udpcast: of the image, compared */
	bool stream;               /* --udpcast was asked for */
	enum run_err fallback;   /* why the copy is from the image */
	char fallback_msg[512];
	double started, verified, switched, ended;
	char sha256[65];           /* of the copy, once hashed */
	char signed_by[96];        /* signed_only: "NAME KEYID" of the key */
	char loop[4096];           /* "/dev/loop0" */
	char copy[4096];           /* the RAM copy: file or zram node */
	char fstype[32];           /* an http:// image: blkid's type on the loop device */
	pid_t child;               /* with background: the copier */
};

/*
 * Run the copier. Everything that can be checked is checked first and
 * everything the copy needs is opened before anything is made (the loop
 * device node, the image, /proc/meminfo, the loop's inflight counters,
 * the status directory, the target): from then on no path is looked up,
 * so the copier keeps working after the initramfs switched root.
 *
 * Returns RB_EXIT_OK (switched), RB_EXIT_FAIL (gave up, the loop device
 * left on the image), RB_EXIT_USAGE, RB_EXIT_NOMEM (lazy_exit_code()).
 * SIGTERM, SIGINT, SIGHUP and SIGQUIT are taken during the run and end
 * it like a failure (LAZY_SIGNAL, r->signo): the caller re-raises the
 * signal (guard_reraise) once it has said what it must.
 * With o->background the process forks once all is open: the parent
 * returns RB_EXIT_OK with r->child set, the child never returns (it
 * exits with the outcome, recorded in the status file).
 */
int lazy_run(const struct lazy_opts *o, struct lazy_result *r);

/* The settings checked as `ramboot lazy` checks its command line: 0, or
 * -EINVAL with why (the option at fault named as on the command line). */
int lazy_check(const struct lazy_opts *o, char *why, size_t len);

/*
 * lazy_check(), then lazy_run(): returns as lazy_run() does, a bad
 * setting as RB_EXIT_USAGE with r->err LAZY_USAGE and r->error why.
 * Says nothing: the command says the outcome in one line (lazy_cmd.c),
 * the boot records it in its report (boot/modes.c).
 */
int lazy_start(const struct lazy_opts *o, struct lazy_result *r);

/*
 * An http:// image (URL[,URL...]): no loop device reads it yet. The
 * copier connects the kernel's NBD client to a server of its own (a
 * socket pair), puts a read-only loop device over /dev/nbdN and returns
 * (with background) once that is there: r->loop is what the boot mounts,
 * r->fstype what blkid finds on it. Reads are answered from the RAM copy
 * or by ranged fetches of the manifest's chunks, verified; the rest is
 * fetched behind them, and the loop device is switched to the complete
 * copy as for a network file (docs/lazy.md, "Over HTTP").
 */
bool lazy_is_http(const char *image);
/* This run serves the image over HTTP: an http:// image, its bytes not
 * given already (image_fd: a local copy of them is read as a file). */
bool lazy_serves_http(const struct lazy_opts *o);

#endif
