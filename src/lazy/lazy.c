// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ramboot lazy: copy the network image the client runs from into RAM
 * behind the boot's back, verify the copy, and move the image's read-only
 * loop device onto it (LOOP_CHANGE_FD). See lazy.h for the API and
 * docs/lazy.md for the run as an administrator sees it.
 *
 * The file reads top-down: ranges and the scheduler (pure), yielding,
 * pacing and memory rules (pure), then the run: preparation (every check
 * and every open), the copy threads, verification, the copy from a
 * multicast stream (--udpcast), the switch, undo, the status file, and
 * the command.
 *
 * After preparation no path is looked up again: a copier started in the
 * initramfs keeps running when the initramfs switches root, and from
 * then on /proc, /sys, /dev and /run are not where its root can see them.
 * It works through descriptors opened before: the image, the loop device
 * node, /proc/meminfo, the loop's inflight counters, the status
 * directory, the tmpfs (or the zram node and its reset and hot_remove
 * attributes).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/ioprio.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "lib/sha256.h"

#include "bgread/pool.h"
#include "bgread/yield.h"
#include "lib/fdio.h"

#include "cmd.h"
#include "lib/ramboot.h"
#include "lib/hex.h"
#include "codec/codec.h"
#include "lib/guard.h"
#include "lazy/lazy.h"
#include "dev/loopdev.h"
#include "format/manifest.h"
#include "lib/outfile.h"
#include "profile/profile.h"
#include "lib/report.h"
#include "trust/sign.h"
#include "udpcast/udpcast.h"
#include "dev/zram.h"

#define DEFAULT_MIN_FREE (256 * MiB)
#define DEFAULT_STALL 30.0
#define STATUS_EVERY_S 2.0     /* status file and page cache rescan */
#define STREAM_POLL_MS 200     /* --udpcast: the stream's pipe looked at */
#define STREAM_GRACE_S 5.0     /* past udp-receiver's own timeouts */

/* ---- the run: state ---- */

static const char *const err_names[] = {
	[LAZY_OK] = "",
	[LAZY_USAGE] = "usage",
	[LAZY_SOURCE] = "source",
	[LAZY_LOOP] = "loop",
	[LAZY_NOLOOP] = "no-loop-device",
	[LAZY_MANIFEST] = "manifest",
	[LAZY_DEST] = "dest",
	[LAZY_NOMEM] = "memory",
	[LAZY_STALL] = "stall",
	[LAZY_SIZE] = "size-mismatch",
	[LAZY_HASH] = "hash-mismatch",
	[LAZY_CHANGED] = "source-changed",
	[LAZY_SWITCH] = "switch",
	[LAZY_SIGNAL] = "signal",
};

const char *lazy_err_name(enum lazy_err e)
{
	return (size_t)e < ARRAY_SIZE(err_names) && err_names[e] ? err_names[e] : "unknown";
}

int lazy_exit_code(enum lazy_err e)
{
	switch (e) {
	case LAZY_OK: return RB_EXIT_OK;
	case LAZY_USAGE: return RB_EXIT_USAGE;
	case LAZY_NOMEM: return RB_EXIT_NOMEM;
	default: return RB_EXIT_FAIL;
	}
}

static const char *const fallback_names[] = {
	[LAZY_FB_NONE] = "",
	[LAZY_FB_UNVERIFIED] = "unverified",
	[LAZY_FB_RECEIVER] = "receiver",
	[LAZY_FB_NO_SESSION] = "no-session",
	[LAZY_FB_LOST] = "stream-lost",
	[LAZY_FB_STALL] = "stall",
	[LAZY_FB_SIZE] = "size-mismatch",
	[LAZY_FB_COMPRESSED] = "compressed",
	[LAZY_FB_HASH] = "hash-mismatch",
	[LAZY_FB_DIFFERS] = "image-differs",
};

const char *lazy_fallback_name(enum lazy_fallback f)
{
	return (size_t)f < ARRAY_SIZE(fallback_names) && fallback_names[f] ? fallback_names[f] :
		"unknown";
}

enum lazy_fallback lazy_stream_end(uint64_t got, uint64_t size, bool receiver_ok)
{
	if (got > size)
		return LAZY_FB_SIZE;
	/* udp-receiver fails when no sender came (nothing arrived) or when
	 * the stream went silent; the bytes before are not trusted. */
	if (!receiver_ok)
		return got == 0 ? LAZY_FB_NO_SESSION : LAZY_FB_LOST;
	return got == size ? LAZY_FB_NONE : LAZY_FB_SIZE;
}

void lazy_opts_init(struct lazy_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->target = LAZY_TARGET_TMPFS;
	o->min_free = DEFAULT_MIN_FREE;
	o->stall_timeout = DEFAULT_STALL;
}

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
	int sysblock_fd, dev_fd;
	char *img_real;                      /* the image's canonical path */
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
};

static double boottime(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_BOOTTIME, &ts) < 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int lazy_fail(struct lazy *L, enum lazy_err e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Record the first failure; returns its exit code. */
static int lazy_fail(struct lazy *L, enum lazy_err e, const char *fmt, ...)
{
	va_list ap;

	if (L->r->err == LAZY_OK) {
		L->r->err = e;
		va_start(ap, fmt);
		vsnprintf(L->r->error, sizeof(L->r->error), fmt, ap);
		va_end(ap);
	}
	return lazy_exit_code(L->r->err);
}

/* ---- the status file ---- */

static uint64_t copy_yields(struct lazy *L);

static void status_write(struct lazy *L)
{
	const struct lazy_result *r = L->r;
	const struct lazy_opts *o = L->o;
	char buf[16384], t[4][32], num[8][32], err[PATH_MAX + 64];
	const double times[4] = { r->started, r->verified, r->switched, boottime() };
	const char *hash;
	struct outfile of;
	int n, i, rc;

	if (L->status_dirfd < 0)
		return;
	for (i = 0; i < 4; i++) {
		if (times[i] > 0)
			snprintf(t[i], sizeof(t[i]), "%.2f", times[i]);
		else
			t[i][0] = '\0';
	}
	if (!L->want_sha[0])
		hash = "none";
	else if (!L->hash_done)
		hash = "pending";
	else
		hash = L->hash_ok ? "ok" : "mismatch";
	snprintf(num[0], sizeof(num[0]), "%d", (int)getpid());
	snprintf(num[1], sizeof(num[1]), "%" PRIu64, r->size);
	snprintf(num[2], sizeof(num[2]), "%" PRIu64, r->bytes_stream);
	snprintf(num[3], sizeof(num[3]), "%" PRIu64, r->bytes_compared);
	snprintf(num[4], sizeof(num[4]), "%" PRIu64, r->bytes_cached);
	snprintf(num[5], sizeof(num[5]), "%" PRIu64, r->bytes_network);
	snprintf(num[6], sizeof(num[6]), "%" PRIu64, o->rate);
	snprintf(num[7], sizeof(num[7]), "%" PRIu64,
		 copy_yields(L));
	{
		/* Every value through report_kv(): one line each, whatever
		 * an image path or an error message holds. */
		const char *const kv[][2] = {
			{ "state", L->state }, { "pid", num[0] }, { "image", o->image },
			{ "loop", r->loop },
			{ "target", o->target == LAZY_TARGET_ZRAM ? "zram" : "tmpfs" },
			{ "copy", r->copy }, { "size", num[1] }, { "started", t[0] },
			{ "updated", t[3] },
			{ "source", r->stream && r->fallback == LAZY_FB_NONE ? "udpcast" : "network" },
			{ "source_fallback", lazy_fallback_name(r->fallback) },
			{ "source_error", r->fallback_msg }, { "bytes_stream", num[2] },
			{ "bytes_compared", num[3] }, { "bytes_cached", num[4] },
			{ "bytes_network", num[5] }, { "max_bytes_per_second", num[6] }, { "yields", num[7] },
			{ "profile", L->profile_state ? L->profile_state : "none" },
			{ "profile_file", L->profile_path }, { "hash", hash },
			{ "sha256", r->sha256 }, { "signed_by", r->signed_by },
			{ "verified", t[1] }, { "switched", t[2] },
			{ "gave_up", r->err != LAZY_OK ? lazy_err_name(r->err) : "" },
			{ "error", r->error },
		};
		size_t pos = 0, k;

		for (k = 0; k < sizeof(kv) / sizeof(kv[0]); k++)
			if (report_kv(buf, sizeof(buf), &pos, kv[k][0], kv[k][1]) < 0)
				return;
		n = (int)pos;
	}
	/* Through the status directory's descriptor: no path is looked up. */
	rc = outfile_openat(&of, L->status_dirfd, L->status_name, 0644, OUTFILE_REPLACE, NULL,
			    err, sizeof(err));
	if (rc == 0) {
		rc = write_all(of.fd, buf, (size_t)n);
		if (rc == 0)
			rc = outfile_commit(&of);
		else
			outfile_abort(&of);
		if (rc < 0)
			snprintf(err, sizeof(err), "%s", strerror(-rc));
	}
	if (rc < 0 && !L->status_warned) {
		rb_warn("status file %s: %s", L->status_name, err);
		L->status_warned = true;
	}
	L->last_status = now_sec();
}

static void set_state(struct lazy *L, const char *state)
{
	L->state = state;
	status_write(L);
}

/* ---- preparation: every check and every open ---- */

static int open_status(struct lazy *L)
{
	char path[PATH_MAX], dir[PATH_MAX], logname[NAME_MAX + 8];
	const char *slash;
	int rc;

	if (L->o->status)
		rc = snprintf(path, sizeof(path), "%s", L->o->status) >= (int)sizeof(path) ?
			-ENAMETOOLONG : 0;
	else
		rc = rb_path(path, sizeof(path), LAZY_STATUS);
	if (rc < 0)
		return lazy_fail(L, LAZY_USAGE, "--status: path too long");
	slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	slash = slash ? slash + 1 : path;
	if (!*slash || strlen(slash) + 4 > NAME_MAX)
		return lazy_fail(L, LAZY_USAGE, "--status: '%s' is not a file name", path);
	memcpy(L->status_name, slash, strlen(slash) + 1);
	if (dir[0] == '/' && (rc = report_mkdir(dir)) < 0)
		return lazy_fail(L, LAZY_DEST, "%s: cannot create: %s", dir, strerror(-rc));
	L->status_dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (L->status_dirfd < 0)
		return lazy_fail(L, LAZY_DEST, "%s: %s", dir, strerror(errno));
	L->cwd_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (L->cwd_fd < 0)
		L->cwd_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (L->o->background) {
		/* The child's stderr: STATUS.log beside the status file. */
		snprintf(logname, sizeof(logname), "%s.log", L->status_name);
		L->log_fd = openat(L->status_dirfd, logname,
				   O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (L->log_fd < 0)
			return lazy_fail(L, LAZY_DEST, "%s/%s: %s", dir, logname, strerror(errno));
		L->null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (L->null_fd < 0)
			return lazy_fail(L, LAZY_DEST, "/dev/null: %s", strerror(errno));
	}
	return 0;
}

static int open_image(struct lazy *L)
{
	const struct lazy_opts *o = L->o;
	char err[256];
	int rc;

	if (o->sha256 && sha256_hex_parse(o->sha256, L->want_sha) < 0)
		return lazy_fail(L, LAZY_USAGE, "--sha256: need 64 hex digits");
	if (o->manifest && o->signed_only) {
		struct sign_who who;

		if (sign_manifest_load(o->manifest, o->keydir, &L->man, &who, err, sizeof(err)) < 0)
			return lazy_fail(L, LAZY_MANIFEST, "%s: %s", o->manifest, err);
		/* The whole-image hash is what the copy is checked against;
		 * the chunk hashes check a stream as it comes (--udpcast). */
		if (!o->udpcast)
			manifest_free(&L->man);
		snprintf(L->r->signed_by, sizeof(L->r->signed_by), "%s %s", who.name, who.keyid);
	} else if (o->manifest && (o->udpcast ? manifest_load_chunks : manifest_load)
		   (o->manifest, &L->man, err, sizeof(err)) < 0) {
		return lazy_fail(L, LAZY_MANIFEST, "%s: %s", o->manifest, err);
	}
	if (o->manifest) {
		L->have_man = true;
		if (L->want_sha[0] && strcmp(L->want_sha, L->man.sha256))
			return lazy_fail(L, LAZY_USAGE, "--sha256 and --manifest disagree");
		memcpy(L->want_sha, L->man.sha256, sizeof(L->want_sha));
	}
	L->img_fd = open(o->image, O_RDONLY | O_CLOEXEC);
	if (L->img_fd < 0)
		return lazy_fail(L, LAZY_SOURCE, "%s: %s", o->image, strerror(errno));
	if (fstat(L->img_fd, &L->img_st) < 0)
		return lazy_fail(L, LAZY_SOURCE, "%s: %s", o->image, strerror(errno));
	if (S_ISREG(L->img_st.st_mode)) {
		L->size = (uint64_t)L->img_st.st_size;
	} else if (S_ISBLK(L->img_st.st_mode)) {
		if ((rc = blk_size(L->img_fd, &L->size)) < 0)
			return lazy_fail(L, LAZY_SOURCE, "%s: %s", o->image, strerror(-rc));
	} else {
		return lazy_fail(L, LAZY_SOURCE, "%s: not a file or block device", o->image);
	}
	L->r->size = L->size;
	if (L->size == 0)
		return lazy_fail(L, LAZY_SOURCE, "%s: empty", o->image);
	if (L->have_man && L->man.size != L->size)
		return lazy_fail(L, LAZY_SIZE, "%s: image is %" PRIu64 " bytes, the manifest says %"
				 PRIu64, o->image, L->size, L->man.size);
	/* What the page cache holds is copied first and without waiting:
	 * only when the kernel tells this process the truth about it. */
	L->mincore_ok = bgread_mincore_shows(&L->img_st, o->image);
	/* Reads of exactly what is asked: no read-ahead of this descriptor
	 * on top of the copy's own reads (the loop's has its own). */
	(void)posix_fadvise(L->img_fd, 0, 0, POSIX_FADV_RANDOM);
	return 0;
}

/*
 * The boot profile: the ranges a boot read, in the order it first read
 * them, copied right after what the page cache holds. It is applied only
 * to the image it was recorded on (profile_matches: the size and the
 * hashes both sides know; the one given with --sha256 or --manifest
 * counts as the image's); otherwise the status file says why and the
 * copy goes on in offset order. Never a reason to give up.
 */
static void load_profile(struct lazy *L)
{
	const struct lazy_opts *o = L->o;
	struct profile_id id;
	struct stat st;
	char err[256];
	int rc;

	L->profile_state = "none";
	if (o->profile && !strcmp(o->profile, LAZY_PROFILE_NONE))
		return;
	if (o->profile) {
		if (snprintf(L->profile_path, sizeof(L->profile_path), "%s", o->profile) >=
		    (int)sizeof(L->profile_path)) {
			L->profile_path[0] = '\0';
			L->profile_state = "error";
			rb_warn("--profile: path too long; copying in offset order");
			return;
		}
	} else {
		/* IMAGE.profile, when the admin put one there. */
		if (snprintf(L->profile_path, sizeof(L->profile_path), "%s.profile", o->image) >=
		    (int)sizeof(L->profile_path) || stat(L->profile_path, &st) < 0 ||
		    !S_ISREG(st.st_mode)) {
			L->profile_path[0] = '\0';
			return;
		}
	}
	rc = profile_load(L->profile_path, &L->prof, err, sizeof(err));
	if (rc == 0) {
		rc = profile_image_id(L->img_fd, L->size, &id);
		if (rc < 0)
			snprintf(err, sizeof(err), "cannot hash the ends of %s: %s", o->image,
				 strerror(-rc));
	}
	if (rc < 0) {
		L->profile_state = "error";
		rb_warn("profile %s: %s; copying in offset order", L->profile_path, err);
		profile_free(&L->prof);
		return;
	}
	if (L->want_sha[0])
		memcpy(id.sha256, L->want_sha, sizeof(id.sha256));
	if (!profile_matches(&L->prof, &id)) {
		L->profile_state = "mismatch";
		rb_warn("profile %s was not recorded on %s; copying in offset order",
			L->profile_path, o->image);
		profile_free(&L->prof);
		return;
	}
	L->profile_state = "used";
	rb_debug("profile %s: %zu ranges, %" PRIu64 " bytes first", L->profile_path, L->prof.n,
		 profile_bytes(&L->prof));
}

/* The loop device's counters: the copy yields to the boot's reads. */
static void open_counters(struct lazy *L, int sysblock_fd)
{
	int rc = bgread_loop_open(&L->lp, sysblock_fd, L->loop_name);

	if (rc < 0)
		rb_warn("/sys/block/%s/inflight: %s; the copy cannot tell when the boot is "
			"reading", L->loop_name, strerror(-rc));
}

static int open_loop(struct lazy *L)
{
	const struct lazy_opts *o = L->o;
	struct loopdev_info li;
	char node[PATH_MAX], err[512];
	bool ro = false;
	int rc;

	if (o->loop) {
		snprintf(node, sizeof(node), "%s", o->loop);
		L->loop_fd = open(node, O_RDONLY | O_CLOEXEC);
		if (L->loop_fd < 0)
			return lazy_fail(L, LAZY_LOOP, "%s: %s", node, strerror(errno));
		rc = loopdev_name_of_fd(L->loop_fd, L->loop_name, sizeof(L->loop_name));
		if (rc < 0)
			return lazy_fail(L, LAZY_LOOP, "%s: %s", node, rc == -ENOTBLK ?
					 "not a block device" : rc == -EINVAL ? "not a loop device" :
					 strerror(-rc));
	} else {
		rc = loopdev_find(o->image, &L->img_st, L->loop_name, sizeof(L->loop_name), err,
				  sizeof(err));
		if (rc < 0)
			return lazy_fail(L, LAZY_LOOP, "%s", err);
		if (rb_path(node, sizeof(node), "/dev/%s", L->loop_name) < 0)
			return lazy_fail(L, LAZY_LOOP, "/dev/%s: path too long", L->loop_name);
	}
	snprintf(L->r->loop, sizeof(L->r->loop), "%s", node);
	rc = loopdev_read_info(L->loop_name, &li);
	if (rc < 0)
		return lazy_fail(L, LAZY_LOOP, "/sys/block/%s: %s", L->loop_name, strerror(-rc));
	if (!li.backing[0])
		return lazy_fail(L, LAZY_LOOP, "%s: no file is bound to it", node);
	if (!li.ro)
		return lazy_fail(L, LAZY_LOOP, "%s: not read-only; LOOP_CHANGE_FD switches only a "
				 "read-only loop device (losetup -r)", node);
	if (li.sectors != loopdev_sectors(L->size, li.offset, li.sizelimit))
		return lazy_fail(L, LAZY_LOOP, "%s: %" PRIu64 " sectors, but %s gives %" PRIu64,
				 node, li.sectors, o->image,
				 loopdev_sectors(L->size, li.offset, li.sizelimit));
	if (L->loop_fd < 0) {
		L->loop_fd = open(node, O_RDONLY | O_CLOEXEC);
		if (L->loop_fd < 0)
			return lazy_fail(L, LAZY_LOOP, "%s: %s", node, strerror(errno));
	}
	/* The kernel's word on it, not a path: the very file we opened. */
	rc = loopdev_bound_to(L->loop_fd, &L->img_st, &ro);
	if (rc < 0)
		return lazy_fail(L, LAZY_LOOP, "%s: LOOP_GET_STATUS64: %s", node, strerror(-rc));
	if (rc == 0)
		return lazy_fail(L, LAZY_LOOP, "%s: backed by %s, not by %s", node, li.backing,
				 o->image);
	if (!ro)
		return lazy_fail(L, LAZY_LOOP, "%s: not read-only", node);
	open_counters(L, -1);
	return 0;
}

/* ---- --wait-loop: the loop device comes later ---- */

static int guard_outcome(struct lazy *L);

/* What the search needs, opened while the paths are there: the block
 * devices' sysfs directory and /dev (both move with a switch of root, the
 * mounts stay the same, so their descriptors keep working) and the
 * image's canonical path, to compare with the backing_file text the
 * kernel shows.
 *
 * The directory is /sys/devices/virtual/block, where the loop devices
 * are, not /sys/block: its entries are symlinks (../devices/virtual/
 * block/loopN), and the kernel resolves their ".." to the sysfs root and
 * then into whatever is mounted on /sys by then. Once the boot has put
 * something over /sys (or moved another sysfs there), a loop device set
 * up after the copier started was never found. /sys/block stays the
 * fallback, for a root prefix whose sysfs is a plain tree. */
static int open_wait_dirs(struct lazy *L)
{
	char p[PATH_MAX];

	if (L->o->loop)
		return lazy_fail(L, LAZY_USAGE, "--wait-loop looks for the loop device: not with "
				 "--loop");
	if (rb_path(p, sizeof(p), "/sys/devices/virtual/block") < 0)
		return lazy_fail(L, LAZY_LOOP, "/sys/devices/virtual/block: path too long");
	L->sysblock_fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (L->sysblock_fd < 0 && errno == ENOENT) {
		if (rb_path(p, sizeof(p), "/sys/block") < 0)
			return lazy_fail(L, LAZY_LOOP, "/sys/block: path too long");
		L->sysblock_fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (L->sysblock_fd < 0)
		return lazy_fail(L, LAZY_LOOP, "%s: %s", p, strerror(errno));
	if (rb_path(p, sizeof(p), "/dev") < 0)
		return lazy_fail(L, LAZY_LOOP, "/dev: path too long");
	L->dev_fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (L->dev_fd < 0)
		return lazy_fail(L, LAZY_LOOP, "%s: %s", p, strerror(errno));
	L->img_real = realpath(L->o->image, NULL);
	return 0;
}

/* A sysfs attribute below /sys/block, through its descriptor. */
static int sysblock_read(struct lazy *L, const char *name, const char *attr, char *buf,
			 size_t len)
{
	char rel[128];
	ssize_t n;
	int fd, rc;

	snprintf(rel, sizeof(rel), "%s/%s", name, attr);
	fd = openat(L->sysblock_fd, rel, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read_full(fd, buf, len - 1);
	rc = n < 0 ? (int)n : 0;
	(void)close(fd);
	if (rc < 0)
		return rc;
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return 0;
}

static int sysblock_u64(struct lazy *L, const char *name, const char *attr, uint64_t *v)
{
	char buf[32], *end;
	int rc = sysblock_read(L, name, attr, buf, sizeof(buf));

	if (rc < 0)
		return rc;
	errno = 0;
	*v = strtoull(buf, &end, 10);
	return errno || end == buf || *end ? -EINVAL : 0;
}

/* The same, 0 when the attribute is missing (older kernels). */
static int sysblock_opt_u64(struct lazy *L, const char *name, const char *attr, uint64_t *v)
{
	int rc = sysblock_u64(L, name, attr, v);

	if (rc == -ENOENT) {
		*v = 0;
		return 0;
	}
	return rc;
}

/*
 * One look at /sys/block: the loop device whose backing_file names the
 * image and which the kernel says is bound to the very file opened at
 * the start (LOOP_GET_STATUS64). 1 with L->loop_fd and L->loop_name
 * set, 0 when there is none (yet; why in why, when one was seen but is
 * not ready or not fit), or the exit code of a failure.
 */
static int look_for_loop(struct lazy *L, char *why, size_t whylen)
{
	char backing[4096];
	struct dirent *e;
	DIR *d;
	int dfd, found = 0, rc = 0;

	dfd = dup(L->sysblock_fd);
	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			(void)close(dfd);
		return lazy_fail(L, LAZY_LOOP, "/sys/block: %s", strerror(errno));
	}
	rewinddir(d);
	while ((e = readdir(d)) != NULL && rc == 0) {
		uint64_t ro, sectors, offset = 0, sizelimit = 0;
		bool lo_ro = false;
		int fd, b;

		if (!loopdev_name_valid(e->d_name) || strlen(e->d_name) >= sizeof(L->loop_name) ||
		    sysblock_read(L, e->d_name, "loop/backing_file", backing, sizeof(backing)) < 0 ||
		    !loopdev_backing_matches(backing, L->o->image, L->img_real))
			continue;
		/* The node: udev may not have made it yet. */
		fd = openat(L->dev_fd, e->d_name, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			snprintf(why, whylen, "/dev/%s: %s", e->d_name, strerror(errno));
			continue;
		}
		b = loopdev_bound_to(fd, &L->img_st, &lo_ro);
		if (b <= 0) {
			/* The same path, another file (or unbound again). */
			(void)close(fd);
			continue;
		}
		if (found++) {
			(void)close(fd);
			rc = lazy_fail(L, LAZY_LOOP, "several loop devices are backed by %s (%s %s)",
				       L->o->image, L->loop_name, e->d_name);
			break;
		}
		/* Its length was checked above. */
		memcpy(L->loop_name, e->d_name, strlen(e->d_name) + 1);
		L->loop_fd = fd;
		/* Read-only and as large as the image: a loop device set up
		 * in two steps (LOOP_SET_FD, then LOOP_SET_STATUS64) may get
		 * there a moment later. */
		if (sysblock_u64(L, e->d_name, "ro", &ro) < 0 ||
		    sysblock_u64(L, e->d_name, "size", &sectors) < 0 ||
		    sysblock_opt_u64(L, e->d_name, "loop/offset", &offset) < 0 ||
		    sysblock_opt_u64(L, e->d_name, "loop/sizelimit", &sizelimit) < 0) {
			snprintf(why, whylen, "/sys/block/%s: cannot read its attributes", e->d_name);
			found = -1;
		} else if (ro != 1 || !lo_ro) {
			snprintf(why, whylen, "/dev/%s: not read-only; LOOP_CHANGE_FD switches only "
				 "a read-only loop device (losetup -r)", e->d_name);
			found = -1;
		} else if (sectors != loopdev_sectors(L->size, offset, sizelimit)) {
			snprintf(why, whylen, "/dev/%s: %" PRIu64 " sectors, but %s gives %" PRIu64,
				 e->d_name, sectors, L->o->image,
				 loopdev_sectors(L->size, offset, sizelimit));
			found = -1;
		}
	}
	closedir(d);
	if (rc != 0 || found <= 0) {
		close_fd(&L->loop_fd);
		if (rc == 0)
			L->loop_name[0] = '\0';
		return rc;
	}
	return 1;
}

/* Wait up to --wait-loop seconds for the image's loop device; then what
 * open_loop() does, through the descriptors of open_wait_dirs(). */
static int wait_loop(struct lazy *L)
{
	double deadline = now_sec() + L->o->wait_loop;
	char why[512] = "", p[PATH_MAX];
	int rc;

	set_state(L, "waiting-loop");
	for (;;) {
		why[0] = '\0';
		rc = look_for_loop(L, why, sizeof(why));
		if (rc == 1)
			break;
		if (rc != 0 || (rc = guard_outcome(L)) != 0)
			return rc;
		if (now_sec() >= deadline) {
			if (why[0])
				return lazy_fail(L, LAZY_LOOP, "%s", why);
			return lazy_fail(L, LAZY_NOLOOP, "no loop device backed by %s within %g s "
					 "(--wait-loop)", L->o->image, L->o->wait_loop);
		}
		nap_ms(LAZY_WAIT_POLL_MS);
	}
	if (rb_path(p, sizeof(p), "/dev/%s", L->loop_name) < 0)
		snprintf(p, sizeof(p), "/dev/%s", L->loop_name);
	snprintf(L->r->loop, sizeof(L->r->loop), "%s", p);
	open_counters(L, L->sysblock_fd);
	rb_debug("%s is backed by %s", L->r->loop, L->o->image);
	return 0;
}

static int check_memory(struct lazy *L)
{
	char p[PATH_MAX], a[32], b[32], c[32];
	uint64_t avail;
	int rc;

	if (rb_path(p, sizeof(p), "/proc/meminfo") == 0)
		L->meminfo_fd = open(p, O_RDONLY | O_CLOEXEC);
	/* Fail closed: a reserve that cannot be checked is not kept. */
	if (L->meminfo_fd < 0)
		return lazy_fail(L, LAZY_NOMEM, "cannot read /proc/meminfo: %s", strerror(errno));
	rc = bgread_mem_available(L->meminfo_fd, &avail);
	if (rc < 0)
		return lazy_fail(L, LAZY_NOMEM, "cannot read MemAvailable: %s", strerror(-rc));
	if (!bgread_mem_ok(avail, L->size, L->o->min_free))
		return lazy_fail(L, LAZY_NOMEM, "not enough memory: image %s, MemAvailable %s, "
				 "reserve %s", fmt_size(L->size, a, sizeof(a)),
				 fmt_size(avail, b, sizeof(b)), fmt_size(L->o->min_free, c, sizeof(c)));
	return 0;
}

static int make_tmpfs(struct lazy *L)
{
	const char *image_base = strrchr(L->o->image, '/');
	char parent[PATH_MAX], opts[128], path[PATH_MAX], err[PATH_MAX + 64];
	const char *dir = L->tmpfs_path, *slash;
	uint64_t size;
	struct stat st, dst;
	int rc;

	slash = strrchr(dir, '/');
	if (!slash || !slash[1])
		return lazy_fail(L, LAZY_USAGE, "--tmpfs: '%s' is not an absolute directory path", dir);
	snprintf(L->tmpfs_base, sizeof(L->tmpfs_base), "%s", slash + 1);
	if (slash == dir)
		snprintf(parent, sizeof(parent), "/");
	else
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - dir), dir);
	if (lstat(dir, &st) < 0) {
		if (errno != ENOENT)
			return lazy_fail(L, LAZY_DEST, "%s: %s", dir, strerror(errno));
		if ((rc = report_mkdir(parent)) < 0)
			return lazy_fail(L, LAZY_DEST, "%s: %s", parent, strerror(-rc));
		if (mkdir(dir, 0755) < 0)
			return lazy_fail(L, LAZY_DEST, "%s: %s", dir, strerror(errno));
		L->tmpfs_mkdir = true;
	} else if (!S_ISDIR(st.st_mode)) {
		return lazy_fail(L, LAZY_DEST, "%s: not a directory", dir);
	}
	/* Kept to remove the directory we made, when the path is gone. */
	L->tmpfs_parent_fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (L->tmpfs_parent_fd < 0)
		return lazy_fail(L, LAZY_DEST, "%s: %s", parent, strerror(errno));
	/* The image, a margin for the file system's own blocks. */
	size = (L->size + L->size / 100 + 4 * MiB + 4095) & ~4095ULL;
	snprintf(opts, sizeof(opts), "size=%" PRIu64 ",mode=0755%s", size,
		 tmpfs_has_noswap() ? ",noswap" : "");
	rc = mount("ramboot", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts);
	if (rc < 0 && errno == EINVAL && strstr(opts, "noswap")) {
		snprintf(opts, sizeof(opts), "size=%" PRIu64 ",mode=0755", size);
		rc = mount("ramboot", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts);
	}
	if (rc < 0)
		return lazy_fail(L, LAZY_DEST, "%s: cannot mount tmpfs: %s", dir, strerror(errno));
	L->tmpfs_mounted = true;
	L->tmpfs_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (L->tmpfs_fd < 0 || fstat(L->tmpfs_fd, &L->tmpfs_st) < 0)
		return lazy_fail(L, LAZY_DEST, "%s: %s", dir, strerror(errno));
	rb_debug("mounted tmpfs on %s (%s)", dir, opts);

	image_base = image_base ? image_base + 1 : L->o->image;
	if (snprintf(path, sizeof(path), "%s/%s", dir, image_base) >= (int)sizeof(path))
		return lazy_fail(L, LAZY_DEST, "%s: path too long", dir);
	/* No name until it is verified (outfile.h). */
	rc = outfile_open(&L->of, path, 0444, 0, &L->img_st, err, sizeof(err));
	if (rc < 0)
		return lazy_fail(L, LAZY_DEST, "%s", err);
	L->have_of = true;
	if (outfile_dir_stat(&L->of, &dst) < 0 || dst.st_dev != L->tmpfs_st.st_dev)
		return lazy_fail(L, LAZY_DEST, "%s: not on the tmpfs mounted at %s", path, dir);
	L->copy_fd = L->of.fd;
	if (ftruncate(L->copy_fd, (off_t)L->size) < 0)
		return lazy_fail(L, errno == ENOSPC ? LAZY_NOMEM : LAZY_DEST, "%s: %s", path,
				 strerror(errno));
	snprintf(L->r->copy, sizeof(L->r->copy), "%s", path);
	return 0;
}

static int make_zram(struct lazy *L)
{
	char p[PATH_MAX], v[32];
	uint64_t have;
	int rc, id;

	/* zram rounds its size up to whole pages; the loop device's size
	 * must not change. */
	if (L->size % L->page)
		return lazy_fail(L, LAZY_DEST, "%s: %" PRIu64 " bytes, not a multiple of %" PRIu64
				 ": a zram device cannot have its size (use --target=tmpfs)",
				 L->o->image, L->size, L->page);
	rc = zram_hot_add(&id);
	if (rc < 0)
		return lazy_fail(L, LAZY_DEST, "cannot add a zram device: %s", strerror(-rc));
	L->zram_id = id;
	/* Opened now: at undo time the paths may be out of reach. */
	if (rb_path(p, sizeof(p), "/sys/block/zram%d/reset", id) == 0)
		L->zram_reset_fd = open(p, O_WRONLY | O_CLOEXEC);
	if (rb_path(p, sizeof(p), "/sys/class/zram-control/hot_remove") == 0)
		L->zram_remove_fd = open(p, O_WRONLY | O_CLOEXEC);
	if (L->zram_reset_fd < 0 || L->zram_remove_fd < 0)
		return lazy_fail(L, LAZY_DEST, "zram%d: cannot open reset/hot_remove: %s", id,
				 strerror(errno));
	snprintf(v, sizeof(v), "%" PRIu64, L->size);
	rc = zram_set(id, "disksize", v);
	if (rc < 0)
		return lazy_fail(L, rc == -ENOMEM ? LAZY_NOMEM : LAZY_DEST,
				 "zram%d: cannot set disksize: %s", id, strerror(-rc));
	if (rb_path(p, sizeof(p), "/dev/zram%d", id) < 0)
		return lazy_fail(L, LAZY_DEST, "/dev/zram%d: path too long", id);
	snprintf(L->r->copy, sizeof(L->r->copy), "%s", p);
	/* O_DIRECT: the copy goes to zram without a second copy in the
	 * device's page cache. */
	L->copy_fd = open(p, O_RDWR | O_EXCL | O_DIRECT | O_CLOEXEC);
	L->direct = L->copy_fd >= 0;
	if (L->copy_fd < 0 && errno == EINVAL)
		L->copy_fd = open(p, O_RDWR | O_EXCL | O_CLOEXEC);
	if (L->copy_fd < 0)
		return lazy_fail(L, LAZY_DEST, "%s: %s", p, strerror(errno));
	if ((rc = blk_size(L->copy_fd, &have)) < 0)
		return lazy_fail(L, LAZY_DEST, "%s: %s", p, strerror(-rc));
	if (have != L->size)
		return lazy_fail(L, LAZY_DEST, "%s: %" PRIu64 " bytes, not %" PRIu64, p, have, L->size);
	/* What the loop device will read through. */
	L->zram_ro_fd = open(p, O_RDONLY | O_CLOEXEC);
	if (L->zram_ro_fd < 0)
		return lazy_fail(L, LAZY_DEST, "%s: %s", p, strerror(errno));
	rb_debug("zram%d: %" PRIu64 " bytes%s", id, L->size, L->direct ? ", direct I/O" : "");
	return 0;
}

static int make_copy_state(struct lazy *L)
{
	struct copy *c = calloc(1, sizeof(*c));
	size_t i;

	if (!c)
		return lazy_fail(L, LAZY_NOMEM, "out of memory");
	L->cp = c;
	c->L = L;
	pthread_rwlock_init(&c->wlock, NULL);
	c->copy_fd = L->copy_fd;
	/* The profile's ranges, copied after what the page cache holds. */
	if (!strcmp(L->profile_state, "used")) {
		for (i = 0; i < L->prof.n; i++)
			if (bgread_ranges_add(&c->order, L->prof.r[i].off, L->prof.r[i].len) < 0)
				return lazy_fail(L, LAZY_NOMEM, "out of memory");
	}
	profile_free(&L->prof);
	return 0;
}

static int prepare(struct lazy *L)
{
	const struct lazy_opts *o = L->o;
	int rc;

	if ((rc = open_status(L)) != 0)
		return rc;
	if (o->udpcast) {
		char err[200];

		L->r->stream = true;
		if (udpcast_parse(o->udpcast, &L->uo, err, sizeof(err)) < 0)
			return lazy_fail(L, LAZY_USAGE, "--%s", err);
	}
	if ((rc = open_image(L)) != 0)
		return rc;
	load_profile(L);
	rc = o->wait_loop > 0 ? open_wait_dirs(L) : open_loop(L);
	if (rc != 0 || (rc = check_memory(L)) != 0)
		return rc;
	if (o->target == LAZY_TARGET_ZRAM) {
		rc = make_zram(L);
	} else {
		if (o->tmpfs)
			rc = snprintf(L->tmpfs_path, sizeof(L->tmpfs_path), "%s", o->tmpfs) >=
				(int)sizeof(L->tmpfs_path) ? -ENAMETOOLONG : 0;
		else
			rc = rb_path(L->tmpfs_path, sizeof(L->tmpfs_path), LAZY_TMPFS_DIR);
		if (rc == 0) {
			size_t n = strlen(L->tmpfs_path);

			while (n > 1 && L->tmpfs_path[n - 1] == '/')
				L->tmpfs_path[--n] = '\0';
		}
		rc = rc < 0 ? lazy_fail(L, LAZY_USAGE, "--tmpfs: path too long") : make_tmpfs(L);
	}
	if (rc != 0)
		return rc;
	return make_copy_state(L);
}

/* ---- the copy ---- */

/* The pool's put: the piece into the copy (bgread/pool.h). */
static int copy_put(void *arg, const void *buf, uint64_t off, uint64_t len)
{
	struct copy *c = arg;
	int rc;

	pthread_rwlock_rdlock(&c->wlock);
	rc = c->copy_fd < 0 || bgread_pool_stopped(c->pool) ? -ECANCELED :
		pwrite_all(c->copy_fd, buf, len, (off_t)off);
	pthread_rwlock_unlock(&c->wlock);
	return rc;
}

static uint64_t copy_yields(struct lazy *L)
{
	struct bgread_stats st;

	if (!L->cp || !L->cp->pool)
		return 0;
	bgread_pool_stats(L->cp->pool, &st);
	return st.yields;
}

static void copy_counters(struct lazy *L)
{
	struct bgread_stats st;

	if (!L->cp || !L->cp->pool)
		return;
	bgread_pool_stats(L->cp->pool, &st);
	L->r->bytes_cached = st.cached;
	L->r->bytes_network = st.network;
}

/* The pool's tick: the status file and the page cache rescan. */
static void copy_tick(void *arg)
{
	struct lazy *L = ((struct copy *)arg)->L;

	if (now_sec() - L->last_status >= STATUS_EVERY_S) {
		bgread_pool_refresh_resident(L->cp->pool);
		copy_counters(L);
		status_write(L);
	}
}

/* The pool's reason to stop, as the run's. */
static enum lazy_err copy_err(const struct bgread_stats *st)
{
	switch (st->why) {
	case BGREAD_DONE: return LAZY_OK;
	case BGREAD_ENOMEM:
	case BGREAD_EMEMORY: return LAZY_NOMEM;
	case BGREAD_EREAD: return LAZY_SOURCE;
	case BGREAD_ESHORT: return LAZY_CHANGED;
	case BGREAD_EPUT: return st->err == -ENOSPC ? LAZY_NOMEM : LAZY_DEST;
	case BGREAD_ESTALL: return LAZY_STALL;
	case BGREAD_ESIGNAL:
	case BGREAD_ESTOPPED:
	default: return LAZY_SIGNAL;
	}
}

static struct bgread_pool *copy_pool(struct lazy *L)
{
	struct bgread_cfg cfg = { 0 };

	cfg.fd = L->img_fd;
	cfg.size = L->size;
	cfg.page = L->page;
	cfg.rate = L->o->rate;
	cfg.mincore_ok = L->mincore_ok;
	cfg.meminfo_fd = L->meminfo_fd;
	cfg.min_free = L->o->min_free;
	cfg.loop = &L->lp;
	cfg.verb = "copy";
	cfg.list_name[BGREAD_LIST_RESIDENT] = "page cache";
	cfg.list_name[BGREAD_LIST_PROFILE] = "profile";
	cfg.list_name[BGREAD_LIST_SEQ] = "offset order";
	cfg.put = copy_put;
	cfg.tick = copy_tick;
	cfg.arg = L->cp;
	return bgread_pool_new(&cfg);
}

static int guard_outcome(struct lazy *L)
{
	int signo = 0;

	switch (guard_fired(L->guard, &signo)) {
	case GUARD_SIGNAL:
		L->r->err = LAZY_OK;
		L->r->signo = signo;
		return lazy_fail(L, LAZY_SIGNAL, "interrupted by signal %d (%s)", signo,
				 strsignal(signo));
	case GUARD_STALL:
		L->r->err = LAZY_OK;
		return lazy_fail(L, LAZY_STALL, "%s: no data for %.0f s (--stall-timeout); the "
				 "source stalled", L->o->image, L->o->stall_timeout);
	default:
		return 0;
	}
}

static int run_copy(struct lazy *L)
{
	struct copy *c = L->cp;
	struct bgread_stats st;
	enum lazy_err e;
	int rc;

	c->pool = copy_pool(L);
	if (!c->pool || bgread_pool_set_list(c->pool, BGREAD_LIST_PROFILE, &c->order) < 0)
		return lazy_fail(L, LAZY_NOMEM, "out of memory");
	bgread_pool_refresh_resident(c->pool);
	if (bgread_pool_run(c->pool, L->guard) < 0)
		return lazy_fail(L, LAZY_NOMEM, "cannot start a copy thread");
	bgread_pool_stats(c->pool, &st);
	L->cp_abandoned = st.abandoned;
	copy_counters(L);
	if ((rc = guard_outcome(L)) != 0)
		return rc;
	e = copy_err(&st);
	if (e != LAZY_OK)
		return lazy_fail(L, e, "%s: %s", e == LAZY_DEST || e == LAZY_NOMEM ?
				 L->r->copy : L->o->image, st.msg);
	if (!st.all_taken || st.done != L->size)
		return lazy_fail(L, LAZY_DEST, "%s: %" PRIu64 " of %" PRIu64 " bytes copied",
				 L->r->copy, st.done, L->size);
	return 0;
}

/* ---- verification ---- */

/* The image did not change while it was copied (as far as its size and
 * modification time tell). */
static int source_unchanged(struct lazy *L)
{
	struct stat now;
	uint64_t size;

	if (fstat(L->img_fd, &now) < 0)
		return lazy_fail(L, LAZY_SOURCE, "%s: %s", L->o->image, strerror(errno));
	if (S_ISBLK(now.st_mode)) {
		if (blk_size(L->img_fd, &size) < 0 || size != L->size)
			return lazy_fail(L, LAZY_CHANGED, "%s: its size changed", L->o->image);
		return 0;
	}
	if ((uint64_t)now.st_size != L->size || now.st_mtim.tv_sec != L->img_st.st_mtim.tv_sec ||
	    now.st_mtim.tv_nsec != L->img_st.st_mtim.tv_nsec)
		return lazy_fail(L, LAZY_CHANGED, "%s: changed while it was copied", L->o->image);
	return 0;
}

/* SHA-256 of the copy, read back from RAM in offset order. */
static int verify(struct lazy *L)
{
	uint8_t d[32];
	SHA256_CTX sha;
	uint64_t off;
	void *buf;
	int rc;

	if ((rc = source_unchanged(L)) != 0)
		return rc;
	set_state(L, "verifying");
	if (posix_memalign(&buf, 4096, BGREAD_CHUNK) != 0)
		return lazy_fail(L, LAZY_NOMEM, "out of memory");
	SHA256_Init(&sha);
	for (off = 0; off < L->size; off += BGREAD_CHUNK) {
		uint64_t len = L->size - off < BGREAD_CHUNK ? L->size - off : BGREAD_CHUNK;
		ssize_t n = pread_full(L->copy_fd, buf, len, (off_t)off);

		if (n < 0 || (uint64_t)n != len) {
			free(buf);
			return lazy_fail(L, LAZY_DEST, "%s: cannot read back: %s", L->r->copy,
					 n < 0 ? strerror((int)-n) : "short read");
		}
		SHA256_Update(&sha, buf, len);
		if ((rc = guard_outcome(L)) != 0) {
			free(buf);
			return rc;
		}
	}
	free(buf);
	SHA256_Final(d, &sha);
	hex_encode(d, sizeof(d), L->r->sha256);
	if (!L->want_sha[0])
		return 0;
	L->hash_done = true;
	L->hash_ok = !strcmp(L->r->sha256, L->want_sha);
	if (!L->hash_ok)
		return lazy_fail(L, LAZY_HASH, "%s: SHA-256 mismatch: got %s, expected %s",
				 L->o->image, L->r->sha256, L->want_sha);
	L->r->verified = boottime();
	return 0;
}

/* ---- the copy from a multicast stream (--udpcast) ----
 *
 * udp-receiver writes the image to a pipe, in image order; each piece is
 * written at its offset in the copy. The stream reads nothing of the
 * image, so nothing yields to the boot. Whatever goes wrong with the
 * stream (no session, a lost or stalled stream, another or a compressed
 * image, a hash mismatch) is a fallback, not a failure: the copy is then
 * made from the image as without --udpcast, over every byte the stream
 * wrote. A failure of the copy itself (memory, a write error) or a
 * signal gives up as it always does.
 */

static void stream_fallback(struct lazy *L, enum lazy_fallback f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void stream_fallback(struct lazy *L, enum lazy_fallback f, const char *fmt, ...)
{
	struct lazy_result *r = L->r;
	va_list ap;

	r->fallback = f;
	va_start(ap, fmt);
	vsnprintf(r->fallback_msg, sizeof(r->fallback_msg), fmt, ap);
	va_end(ap);
	/* One line in the status file. */
	text_scrub(r->fallback_msg, sizeof(r->fallback_msg), r->fallback_msg, SIZE_MAX, ' ');
	rb_warn("%s; copying from %s", r->fallback_msg, L->o->image);
}

/* The chunk hashes of a version 2 manifest, checked as the stream comes
 * in: another image is told after its first chunk, not at its end. */
struct stream_chunks {
	const struct manifest *m;   /* NULL: none */
	uint64_t pos;               /* bytes of the stream hashed */
	SHA256_CTX sha;             /* of the chunk pos is in */
};

/* Hash len more bytes of the stream; 0, or 1 with the first chunk that
 * is not the manifest's in *bad. Bytes past the image are the size
 * check's. */
static int chunks_feed(struct stream_chunks *k, const uint8_t *p, size_t len, uint32_t *bad)
{
	const uint64_t cs = k->m->chunk_size;

	while (len > 0 && k->pos < k->m->size) {
		uint64_t i = k->pos / cs, end = (i + 1) * cs;
		size_t take = len;
		uint8_t d[32];

		if (end > k->m->size)
			end = k->m->size;
		if (take > end - k->pos)
			take = (size_t)(end - k->pos);
		if (k->pos % cs == 0)
			SHA256_Init(&k->sha);
		SHA256_Update(&k->sha, p, take);
		k->pos += take;
		p += take;
		len -= take;
		if (k->pos < end)
			break;
		SHA256_Final(d, &k->sha);
		if (i >= k->m->nchunks || memcmp(d, k->m->chunk[i], sizeof(d))) {
			*bad = (uint32_t)i;
			return 1;
		}
	}
	return 0;
}

/* Seconds to wait for the next data before the stream counts as lost:
 * udp-receiver's own timeouts end it first, this is the backstop; once
 * data came, --stall-timeout too. */
static double stream_limit(const struct lazy *L, uint64_t got)
{
	double lim;

	if (got == 0)
		return L->uo.start_timeout + STREAM_GRACE_S;
	lim = L->uo.receive_timeout + STREAM_GRACE_S;
	if (L->o->stall_timeout > 0 && L->o->stall_timeout < lim)
		lim = L->o->stall_timeout;
	return lim;
}

/*
 * Read the stream from fd into the copy. Returns 0 or the exit code of a
 * failure; *f is the fallback when the stream is not the whole image
 * (LAZY_FB_NONE at its end of file, the caller asks udp-receiver then),
 * *got the bytes read.
 */
static int stream_receive(struct lazy *L, int fd, uint64_t *got, enum lazy_fallback *f,
			  char *msg, size_t msglen)
{
	const uint64_t size = L->size;
	struct stream_chunks k = { .m = NULL };
	uint64_t off = 0, fill = 0, next_mem = 0;
	double last = now_sec();
	uint32_t bad;
	void *buf;
	int rc = 0;

	*got = 0;
	*f = LAZY_FB_NONE;
	if (L->have_man && L->man.chunk && L->man.nchunks && L->man.chunk_size)
		k.m = &L->man;
	/* Page aligned: zram is written with O_DIRECT. */
	if (posix_memalign(&buf, 4096, BGREAD_CHUNK) != 0)
		return lazy_fail(L, LAZY_NOMEM, "out of memory");
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char extra;
		ssize_t n;
		int pr;

		if ((rc = guard_outcome(L)) != 0)
			break;
		if (now_sec() - L->last_status >= STATUS_EVERY_S) {
			L->r->bytes_stream = off;
			status_write(L);
		}
		pr = poll(&p, 1, STREAM_POLL_MS);
		if (pr < 0 && errno != EINTR) {
			*f = LAZY_FB_LOST;
			snprintf(msg, msglen, "udpcast: poll: %s", strerror(errno));
			break;
		}
		if (pr <= 0) {
			if (now_sec() - last >= stream_limit(L, *got)) {
				*f = *got ? LAZY_FB_STALL : LAZY_FB_NO_SESSION;
				snprintf(msg, msglen, "udpcast: %s for %.0f s", *got ?
					 "the stream stalled" : "no session", now_sec() - last);
				break;
			}
			continue;
		}
		/* At the image's end, one byte more tells a longer stream. */
		if (off + fill < size) {
			uint64_t want = BGREAD_CHUNK - fill;

			if (want > size - off - fill)
				want = size - off - fill;
			n = read(fd, (char *)buf + fill, want);
		} else {
			n = read(fd, &extra, 1);
		}
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			*f = LAZY_FB_LOST;
			snprintf(msg, msglen, "udpcast: read: %s", strerror(errno));
			break;
		}
		if (n == 0)
			break;                      /* end of file: the caller decides */
		*got += (uint64_t)n;
		last = now_sec();
		if (off + fill >= size) {
			*f = LAZY_FB_SIZE;
			snprintf(msg, msglen, "udpcast: the stream is longer than %s (%" PRIu64
				 " bytes)", L->o->image, size);
			break;
		}
		if (k.m && chunks_feed(&k, (uint8_t *)buf + fill, (size_t)n, &bad)) {
			*f = LAZY_FB_HASH;
			snprintf(msg, msglen, "udpcast: chunk %" PRIu32 " of the stream is not the "
				 "manifest's: another image", bad);
			break;
		}
		fill += (uint64_t)n;
		if (fill < BGREAD_CHUNK && off + fill < size)
			continue;
		if (off == 0) {
			/* The first piece: the format from its magic bytes. */
			const struct codec *cd = codec_detect(buf, fill);

			if (cd != &codec_none) {
				*f = LAZY_FB_COMPRESSED;
				snprintf(msg, msglen, "udpcast: the stream is %s-compressed; the copy "
					 "needs the raw image (serve the uncompressed file)", cd->name);
				break;
			}
		}
		if (off >= next_mem) {
			char m[256];

			if (bgread_mem_check(L->meminfo_fd, size - off, L->o->min_free, m,
					     sizeof(m)) < 0) {
				rc = lazy_fail(L, LAZY_NOMEM, "%s", m);
				break;
			}
			next_mem = off + BGREAD_MEM_STEP;
		}
		rc = pwrite_all(L->copy_fd, buf, fill, (off_t)off);
		if (rc < 0) {
			rc = lazy_fail(L, rc == -ENOSPC ? LAZY_NOMEM : LAZY_DEST, "%s: write error "
				       "at %" PRIu64 ": %s", L->r->copy, off, strerror(-rc));
			break;
		}
		off += fill;
		fill = 0;
	}
	free(buf);
	L->r->bytes_stream = off;
	return rc;
}

/* The verified result of a stream undone: the copy is made again. */
static void stream_forget(struct lazy *L)
{
	L->r->err = LAZY_OK;
	L->r->error[0] = '\0';
	L->r->verified = 0;
	L->r->sha256[0] = '\0';
	L->hash_done = L->hash_ok = false;
}

/*
 * The copy from the stream, verified. Returns 0 or the exit code of a
 * failure (the run gives up); *used is true when the copy is the
 * stream's and verified, false after a fallback (L->r->fallback).
 */
static int stream_copy(struct lazy *L, bool *used)
{
	char msg[256], err[256];
	enum lazy_fallback f;
	uint64_t got = 0;
	int fd = -1, rc;

	*used = false;
	/* The stream can be any image: without a hash it is not used. */
	if (!L->want_sha[0]) {
		stream_fallback(L, LAZY_FB_UNVERIFIED, "udpcast: nothing to verify the stream "
				"against (--sha256 or --manifest)");
		return 0;
	}
	set_state(L, "receiving");
	udpcast_source_arm(&L->uo);
	if (udpcast_source_open(&fd, err, sizeof(err)) < 0) {
		stream_fallback(L, LAZY_FB_RECEIVER, "%s", err);
		return 0;
	}
	msg[0] = '\0';
	rc = stream_receive(L, fd, &got, &f, msg, sizeof(msg));
	(void)close(fd);
	if (rc == 0 && f == LAZY_FB_NONE) {
		/* End of file: complete only when udp-receiver says so. */
		bool ok = udpcast_source_end(err, sizeof(err)) == 0;

		f = lazy_stream_end(got, L->size, ok);
		if (!ok)
			snprintf(msg, sizeof(msg), "%s", err);
		else if (f != LAZY_FB_NONE)
			snprintf(msg, sizeof(msg), "udpcast: the stream ended after %" PRIu64
				 " bytes, %s has %" PRIu64, got, L->o->image, L->size);
	}
	udpcast_source_close();
	if (rc != 0)
		return rc;
	if (f != LAZY_FB_NONE) {
		stream_fallback(L, f, "%s", msg);
		return 0;
	}
	rc = verify(L);
	if (rc != 0 && L->r->err == LAZY_HASH) {
		snprintf(msg, sizeof(msg), "udpcast: the stream's SHA-256 is %s, not %s",
			 L->r->sha256, L->want_sha);
		stream_forget(L);
		stream_fallback(L, LAZY_FB_HASH, "%s", msg);
		return 0;
	}
	if (rc != 0)
		return rc;
	*used = true;
	return 0;
}

/*
 * The stream's copy is the image the hash names; the loop device reads
 * the image on the server. Before the switch, what the boot has read of
 * it (the pages the page cache holds: no network read) and its first
 * page must be the copy's bytes, or the file systems mounted from the
 * loop device would go on over another image. 0 with *same, or the exit
 * code of a failure.
 */
static int stream_matches_image(struct lazy *L, bool *same, char *msg, size_t msglen)
{
	struct bgread_ranges res = { 0 };
	void *a = NULL, *b = NULL;
	size_t i;
	int rc = 0;

	*same = true;
	/* A scan that fails part way leaves less to compare, no error. */
	if (L->mincore_ok)
		(void)bgread_scan_resident(L->img_fd, L->size, L->page, &res);
	if (((res.n == 0 || res.v[0].off > 0) &&
	     bgread_ranges_add(&res, 0, L->page < L->size ? L->page : L->size) < 0) ||
	    posix_memalign(&a, 4096, BGREAD_CHUNK) != 0 || posix_memalign(&b, 4096, BGREAD_CHUNK) != 0) {
		rc = lazy_fail(L, LAZY_NOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < res.n && *same; i++) {
		uint64_t off = res.v[i].off, end = off + res.v[i].len;

		while (off < end && *same) {
			uint64_t len = end - off < BGREAD_CHUNK ? end - off : BGREAD_CHUNK;
			ssize_t n = pread_full(L->img_fd, a, len, (off_t)off);
			ssize_t m = n == (ssize_t)len ? pread_full(L->copy_fd, b, len, (off_t)off) : 0;

			if (n < 0 || (uint64_t)n != len) {
				rc = lazy_fail(L, LAZY_SOURCE, "%s: read error at %" PRIu64 ": %s",
					       L->o->image, off, n < 0 ? strerror((int)-n) : "short read");
				goto out;
			}
			if (m < 0 || (uint64_t)m != len) {
				rc = lazy_fail(L, LAZY_DEST, "%s: cannot read back: %s", L->r->copy,
					       m < 0 ? strerror((int)-m) : "short read");
				goto out;
			}
			L->r->bytes_compared += len;
			if (memcmp(a, b, len)) {
				*same = false;
				snprintf(msg, msglen, "udpcast: the stream's copy differs from %s near "
					 "offset %" PRIu64 " (read by the boot)", L->o->image, off);
			}
			off += len;
		}
	}
out:
	free(a);
	free(b);
	bgread_ranges_free(&res);
	return rc;
}

/* ---- the switch ---- */

static int do_switch(struct lazy *L)
{
	int new_fd = -1, rc;
	bool ro = false;

	/* The copy is complete and verified: it may have its name now. */
	if (L->have_of) {
		rc = outfile_commit(&L->of);
		L->have_of = false;
		L->copy_fd = -1;
		L->cp->copy_fd = -1;
		if (rc < 0)
			return lazy_fail(L, LAZY_DEST, "%s: %s", L->r->copy, strerror(-rc));
		L->named = true;         /* of.name keeps the name, for undo */
		new_fd = openat(L->tmpfs_fd, L->of.name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (new_fd < 0)
			return lazy_fail(L, LAZY_DEST, "%s: %s", L->r->copy, strerror(errno));
	} else {
		if (fsync(L->copy_fd) < 0)
			return lazy_fail(L, LAZY_DEST, "%s: %s", L->r->copy, strerror(errno));
		close_fd(&L->copy_fd);
		L->cp->copy_fd = -1;
		new_fd = L->zram_ro_fd;
		L->zram_ro_fd = -1;
	}
	/* The mount may have changed since the start: the loop device must
	 * still be the image's, and read-only. */
	rc = loopdev_bound_to(L->loop_fd, &L->img_st, &ro);
	if (rc <= 0 || !ro) {
		(void)close(new_fd);
		if (rc < 0)
			return lazy_fail(L, LAZY_LOOP, "%s: %s", L->r->loop, strerror(-rc));
		return lazy_fail(L, LAZY_LOOP, "%s: %s since the copy started", L->r->loop,
				 rc == 0 ? "no longer backed by the image" : "no longer read-only");
	}
	rc = loopdev_change_fd(L->loop_fd, new_fd);
	(void)close(new_fd);
	if (rc < 0)
		return lazy_fail(L, LAZY_SWITCH, "%s: LOOP_CHANGE_FD: %s", L->r->loop, strerror(-rc));
	L->r->switched = boottime();
	/* Nobody reads the network image here any more: drop its pages. */
	(void)posix_fadvise(L->img_fd, 0, 0, POSIX_FADV_DONTNEED);
	close_fd(&L->img_fd);
	return 0;
}

/* ---- undo ---- */

/* A sysfs attribute through a descriptor opened in advance. The kernel
 * refuses zram reset and hot_remove (EBUSY) while the node is open;
 * udev's probe after our close can hold it a moment. */
static int attr_write(int fd, const char *val)
{
	int tries;

	for (tries = 0; ; tries++) {
		if (pwrite(fd, val, strlen(val), 0) >= 0)
			return 0;
		if (errno != EBUSY || tries >= 20)
			return -errno;
		nap_ms(50);
	}
}

static void unmount_tmpfs(struct lazy *L)
{
	struct stat now;

	/* By its path while that still leads to our mount; from inside it
	 * once the root has changed and the path leads elsewhere. */
	if (stat(L->tmpfs_path, &now) == 0 && now.st_dev == L->tmpfs_st.st_dev &&
	    now.st_ino == L->tmpfs_st.st_ino) {
		close_fd(&L->tmpfs_fd);
		if (umount2(L->tmpfs_path, 0) == 0 || umount2(L->tmpfs_path, MNT_DETACH) == 0)
			return;
		rb_warn("%s: cannot unmount: %s", L->tmpfs_path, strerror(errno));
		return;
	}
	if (L->tmpfs_fd < 0 || fchdir(L->tmpfs_fd) < 0) {
		rb_warn("%s: cannot unmount: no way to reach it", L->tmpfs_path);
		return;
	}
	if (umount2(".", MNT_DETACH) < 0)
		rb_warn("%s: cannot unmount: %s", L->tmpfs_path, strerror(errno));
	if (L->cwd_fd >= 0 && fchdir(L->cwd_fd) < 0)
		rb_debug("fchdir back: %s", strerror(errno));
	close_fd(&L->tmpfs_fd);
}

/* Free the copy and what was made for it; the loop device was never
 * touched. */
static void undo(struct lazy *L)
{
	struct copy *c = L->cp;

	if (c) {
		if (c->pool)
			bgread_pool_stop(c->pool);
		/* Wait for a write in progress; later ones see stop. */
		pthread_rwlock_wrlock(&c->wlock);
		c->copy_fd = -1;
		pthread_rwlock_unlock(&c->wlock);
	}
	if (L->have_of) {
		outfile_abort(&L->of);
		L->have_of = false;
		L->copy_fd = -1;
	}
	if (L->named) {
		if (unlinkat(L->tmpfs_fd, L->of.name, 0) < 0)
			rb_warn("%s: cannot remove: %s", L->r->copy, strerror(errno));
		L->named = false;
	}
	close_fd(&L->copy_fd);
	close_fd(&L->zram_ro_fd);
	if (L->zram_id >= 0) {
		if (L->zram_reset_fd >= 0 && attr_write(L->zram_reset_fd, "1") < 0)
			rb_warn("zram%d: reset failed: %s", L->zram_id, strerror(errno));
		if (L->zram_remove_fd >= 0) {
			char v[16];

			snprintf(v, sizeof(v), "%d", L->zram_id);
			if (attr_write(L->zram_remove_fd, v) < 0)
				rb_warn("zram%d: hot_remove failed: %s", L->zram_id, strerror(errno));
		}
		L->zram_id = -1;
	}
	if (L->tmpfs_mounted) {
		unmount_tmpfs(L);
		L->tmpfs_mounted = false;
	}
	if (L->tmpfs_mkdir && L->tmpfs_parent_fd >= 0) {
		(void)unlinkat(L->tmpfs_parent_fd, L->tmpfs_base, AT_REMOVEDIR);
		L->tmpfs_mkdir = false;
	}
}

static void close_all(struct lazy *L)
{
	if (L->have_of) {
		/* Only the parent of a background copier gets here with it:
		 * its descriptor, not the child's file. */
		(void)close(L->of.fd);
		(void)close(L->of.dirfd);
		L->have_of = false;
		L->copy_fd = -1;
	}
	close_fd(&L->copy_fd);
	close_fd(&L->zram_ro_fd);
	close_fd(&L->zram_reset_fd);
	close_fd(&L->zram_remove_fd);
	close_fd(&L->img_fd);
	close_fd(&L->loop_fd);
	bgread_loop_close(&L->lp);
	close_fd(&L->sysblock_fd);
	close_fd(&L->dev_fd);
	free(L->img_real);
	L->img_real = NULL;
	profile_free(&L->prof);
	manifest_free(&L->man);
	close_fd(&L->meminfo_fd);
	close_fd(&L->tmpfs_fd);
	close_fd(&L->tmpfs_parent_fd);
	close_fd(&L->status_dirfd);
	close_fd(&L->cwd_fd);
	close_fd(&L->log_fd);
	close_fd(&L->null_fd);
	if (L->cp && !L->cp_abandoned) {
		bgread_pool_free(L->cp->pool);
		bgread_ranges_free(&L->cp->order);
		pthread_rwlock_destroy(&L->cp->wlock);
		free(L->cp);
	}
	L->cp = NULL;
}

/* ---- the run ---- */

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

	if (L->o->udpcast && (rc = stream_copy(L, &from_stream)) != 0)
		return rc;
	if (L->o->wait_loop > 0 && (rc = wait_loop(L)) != 0)
		return rc;
	if (from_stream) {
		char msg[256];
		bool same;

		if ((rc = stream_matches_image(L, &same, msg, sizeof(msg))) != 0)
			return rc;
		if (!same) {
			stream_forget(L);
			stream_fallback(L, LAZY_FB_DIFFERS, "%s", msg);
			from_stream = false;
		}
	}
	if (!from_stream) {
		set_state(L, "copying");
		if ((rc = run_copy(L)) != 0 || (rc = verify(L)) != 0)
			return rc;
	}
	if ((rc = guard_outcome(L)) != 0)
		return rc;
	return do_switch(L);
}

/*
 * The outcome in the boot report too (/run/ramboot/report, beside the
 * status file), for whoever reads only that: the timeline as lazy_* keys;
 * a copy that gave up is a fallback there (mode_done=off), one that
 * switched is the RAM path. Only a report that exists is amended (a
 * `ramboot lazy` run by hand has none), through the status directory's
 * descriptor.
 */
static void report_amend(struct lazy *L, bool switched)
{
	const struct lazy_result *r = L->r;
	char *text, v[64], fb[600];
	struct outfile of;
	ssize_t n;
	int fd, ok = 0;

	if (L->status_dirfd < 0)
		return;
	fd = openat(L->status_dirfd, "report", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return;
	text = calloc(1, 65536);
	n = text ? read_full(fd, text, 65536 - 2048) : -ENOMEM;
	(void)close(fd);
	if (n < 0) {
		free(text);
		return;
	}
	text[n] = '\0';
	snprintf(v, sizeof(v), "%.2f", r->started);
	ok |= report_text_set(text, 65536, "lazy_started", v);
	snprintf(v, sizeof(v), "%" PRIu64, r->bytes_cached);
	ok |= report_text_set(text, 65536, "lazy_bytes_cached", v);
	snprintf(v, sizeof(v), "%" PRIu64, r->bytes_network);
	ok |= report_text_set(text, 65536, "lazy_bytes_network", v);
	ok |= report_text_set(text, 65536, "lazy_source", r->stream && r->fallback == LAZY_FB_NONE ?
			      "udpcast" : "network");
	ok |= report_text_set(text, 65536, "lazy_source_fallback", lazy_fallback_name(r->fallback));
	if (r->verified > 0)
		snprintf(v, sizeof(v), "%.2f", r->verified);
	else
		v[0] = '\0';
	ok |= report_text_set(text, 65536, "lazy_verified", v);
	if (switched) {
		snprintf(v, sizeof(v), "%.2f", r->switched);
		ok |= report_text_set(text, 65536, "lazy_switched", v);
		ok |= report_text_set(text, 65536, "ram_path", r->copy);
	} else {
		snprintf(fb, sizeof(fb), "lazy copy gave up: %s", lazy_err_name(r->err));
		ok |= report_text_set(text, 65536, "lazy_gave_up", lazy_err_name(r->err));
		ok |= report_text_set(text, 65536, "mode_done", "off");
		ok |= report_text_set(text, 65536, "fallback", fb);
		{
			char e[sizeof(r->error)];

			text_scrub(e, sizeof(e), r->error, SIZE_MAX, ' ');
			ok |= report_text_set(text, 65536, "error", e);
		}
	}
	if (ok == 0 && outfile_openat(&of, L->status_dirfd, "report", 0644, OUTFILE_REPLACE,
				      NULL, NULL, 0) == 0) {
		size_t len = strlen(text);

		if (len && text[len - 1] != '\n')
			text[len++] = '\n';
		if (write_all(of.fd, text, len) == 0)
			(void)outfile_commit(&of);
		else
			outfile_abort(&of);
	}
	free(text);
}

/* After a failure: undo, record, close. */
static int give_up(struct lazy *L, int rc)
{
	undo(L);
	copy_counters(L);
	L->r->ended = boottime();
	L->state = "gave-up";
	status_write(L);
	report_amend(L, false);
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
	L.sysblock_fd = L.dev_fd = -1;
	L.profile_state = "none";
	profile_init(&L.prof);
	L.status_dirfd = L.cwd_fd = L.log_fd = L.null_fd = -1;
	L.tmpfs_fd = L.tmpfs_parent_fd = -1;
	L.zram_id = L.zram_reset_fd = L.zram_remove_fd = L.zram_ro_fd = -1;
	L.copy_fd = -1;
	L.of.fd = L.of.dirfd = -1;
	r->started = boottime();

	/* The guard's signals stay blocked from here to the end, also in
	 * the moment between the parent's guard and the child's (a
	 * signal then waits for the child's guard, or is the parent's). */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGQUIT);
	pthread_sigmask(SIG_BLOCK, &sigs, &saved);
	/* From here on a signal is a cancellation, undone below. */
	if (guard_start(&guard, o->stall_timeout, NULL) == 0)
		L.guard = &guard;
	rc = prepare(&L);
	if (rc == 0)
		rc = guard_outcome(&L);
	if (rc == 0)
		set_state(&L, o->udpcast && L.want_sha[0] ? "receiving" :
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
			/* The child owns the copy now. */
			r->child = pid;
			close_all(&L);
			pthread_sigmask(SIG_SETMASK, &saved, NULL);
			return RB_EXIT_OK;
		} else {
			child = true;
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
			copy_counters(&L);
			r->ended = boottime();
			L.state = "switched";
			status_write(&L);
			report_amend(&L, true);
		}
		io_prio_restore(ioprio);
		cpu_nice_restore(nice_old);
	}
	/* The guard may be calling copy_cancel() still: stopped before the
	 * copy state is freed. */
	if (L.guard)
		guard_stop(&guard);
	close_all(&L);
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

/* ---- the command ---- */

static void usage(FILE *out)
{
	fputs("Usage: ramboot lazy --image=FILE [OPTIONS]\n"
	      "\n"
	      "Copy FILE, the image a read-only loop device is backed by, into RAM while\n"
	      "the system runs from it, verify the copy, and switch the loop device to it\n"
	      "(LOOP_CHANGE_FD). What the page cache holds of FILE is copied first; then\n"
	      "the rest, yielding to other reads of the loop device. On any failure the\n"
	      "copy is freed and the loop device stays on FILE.\n"
	      "\n"
	      "Options:\n"
	      "      --image=FILE        the image (a file or a block device)\n"
	      "      --loop=DEV          its loop device (default: the one backed by FILE)\n"
	      "      --target=T          tmpfs (default) or zram\n"
	      "      --tmpfs=DIR         mount the tmpfs here (default " LAZY_TMPFS_DIR ")\n"
	      "      --sha256=HEX        SHA-256 the copy must have\n"
	      "      --manifest=FILE     size and SHA-256 the copy must have\n"
	      "      --signed            the manifest must be signed by a trusted key\n"
	      "      --keys=DIR          with --signed: the trusted public keys (*.pub)\n"
	      "      --min-free=SIZE     memory that must stay available (default 256M)\n"
	      "      --stall-timeout=S   give up when a read of FILE takes S seconds\n"
	      "                          (default 30, 0: never)\n"
	      "      --rate=RATE         read at most RATE from FILE (12MiB/s, 100Mbit)\n"
	      "                          (page cache hits not counted; default: no cap)\n"
	      "      --status=FILE       the status file (default " LAZY_STATUS ")\n"
	      "      --background        return once all is open and checked; the copy\n"
	      "                          goes on in a child (log: the status file + .log)\n"
	      "      --wait-loop=S       the loop device may come later: open the image and\n"
	      "                          all else now, then wait up to S seconds for the\n"
	      "                          loop device backed by it (not with --loop)\n"
	      "      --profile=FILE      boot profile: its ranges are copied first when it\n"
	      "                          was recorded on FILE's image (default: FILE.profile\n"
	      "                          beside the image when there; 'none': no profile)\n"
	      "      --udpcast[=OPTS]    take the copy from a udpcast session of the raw\n"
	      "                          image (ramboot serve); OPTS: portbase=P,\n"
	      "                          interface=IF,start-timeout=S,receive-timeout=S.\n"
	      "                          Used only with --sha256 or --manifest; when the\n"
	      "                          stream fails, FILE is copied as without it\n"
	      "  -v, --verbose           more messages\n"
	      "  -h, --help              this help\n"
	      "\n"
	      "Exit codes: 0 switched (with --background: started), 1 gave up (the loop\n"
	      "device stays on FILE), 2 usage, 3 not enough memory.\n", out);
}

enum { OPT_IMAGE = 256, OPT_LOOP, OPT_TARGET, OPT_TMPFS, OPT_SHA, OPT_MANIFEST, OPT_MINFREE,
       OPT_STALL, OPT_RATE, OPT_STATUS, OPT_BACKGROUND, OPT_WAIT_LOOP, OPT_PROFILE,
       OPT_SIGNED, OPT_KEYS, OPT_UDPCAST };

static const struct option longopts[] = {
	{ "image", required_argument, NULL, OPT_IMAGE },
	{ "loop", required_argument, NULL, OPT_LOOP },
	{ "target", required_argument, NULL, OPT_TARGET },
	{ "tmpfs", required_argument, NULL, OPT_TMPFS },
	{ "sha256", required_argument, NULL, OPT_SHA },
	{ "manifest", required_argument, NULL, OPT_MANIFEST },
	{ "signed", no_argument, NULL, OPT_SIGNED },
	{ "keys", required_argument, NULL, OPT_KEYS },
	{ "min-free", required_argument, NULL, OPT_MINFREE },
	{ "stall-timeout", required_argument, NULL, OPT_STALL },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "status", required_argument, NULL, OPT_STATUS },
	{ "background", no_argument, NULL, OPT_BACKGROUND },
	{ "wait-loop", required_argument, NULL, OPT_WAIT_LOOP },
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ "udpcast", optional_argument, NULL, OPT_UDPCAST },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};


int cmd_lazy(int argc, char **argv)
{
	struct lazy_opts o;
	struct lazy_result r;
	char a[32], b[32], c[32];
	bool tmpfs_given = false;
	int opt, rc;

	lazy_opts_init(&o);
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_IMAGE: o.image = optarg; break;
		case OPT_LOOP: o.loop = optarg; break;
		case OPT_TARGET:
			if (!strcmp(optarg, "tmpfs"))
				o.target = LAZY_TARGET_TMPFS;
			else if (!strcmp(optarg, "zram"))
				o.target = LAZY_TARGET_ZRAM;
			else
				return rb_usage("lazy", "--target: '%s' is not tmpfs or zram", optarg);
			break;
		case OPT_TMPFS: o.tmpfs = optarg; tmpfs_given = true; break;
		case OPT_SHA: o.sha256 = optarg; break;
		case OPT_MANIFEST: o.manifest = optarg; break;
		case OPT_SIGNED: o.signed_only = true; break;
		case OPT_KEYS: o.keydir = optarg; break;
		case OPT_MINFREE:
			if (size_arg("lazy", "min-free", optarg, UNIT_BYTES, &o.min_free) < 0)
				return RB_EXIT_USAGE;
			break;
		case OPT_STALL:
			if (parse_seconds(optarg, &o.stall_timeout) < 0)
				return rb_usage("lazy", "--stall-timeout: '%s' is not a number of seconds "
						   "(0: never)", optarg);
			break;
		case OPT_RATE:
			if (rate_arg("lazy", "rate", optarg, UNIT_BYTES, &o.rate) < 0)
				return RB_EXIT_USAGE;
			break;
		case OPT_STATUS: o.status = optarg; break;
		case OPT_BACKGROUND: o.background = true; break;
		case OPT_WAIT_LOOP:
			if (parse_seconds(optarg, &o.wait_loop) < 0)
				return rb_usage("lazy", "--wait-loop: '%s' is not a number of seconds",
						   optarg);
			break;
		case OPT_PROFILE:
			if (!*optarg)
				return rb_usage("lazy", "--profile: a file or 'none'");
			o.profile = optarg;
			break;
		case OPT_UDPCAST: {
			struct udpcast_opts uo;
			char err[200];

			if (udpcast_parse(optarg, &uo, err, sizeof(err)) < 0)
				return rb_usage("lazy", "--%s", err);
			o.udpcast = optarg ? optarg : "";
			break;
		}
		case 'v': rb_verbose = 1; break;
		case 'h': usage(stdout); return RB_EXIT_OK;
		default:
			return rb_usage("lazy", "unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return rb_usage("lazy", "unexpected argument '%s'", argv[optind]);
	if (!o.image || !*o.image)
		return rb_usage("lazy", "--image is required");
	if (o.sha256 && strlen(o.sha256) != 64)
		return rb_usage("lazy", "--sha256: '%s' is not 64 hex digits", o.sha256);
	if (o.wait_loop > 0 && o.loop)
		return rb_usage("lazy", "--wait-loop looks for the loop device: not with --loop");
	if (o.signed_only && !o.manifest)
		return rb_usage("lazy", "--signed needs --manifest");
	if (o.keydir && !o.signed_only)
		return rb_usage("lazy", "--keys goes with --signed");
	if (tmpfs_given && o.target != LAZY_TARGET_TMPFS)
		return rb_usage("lazy", "--tmpfs goes with --target=tmpfs");
	if (o.tmpfs && o.tmpfs[0] != '/')
		return rb_usage("lazy", "--tmpfs: '%s' is not an absolute path", o.tmpfs);

	rc = lazy_run(&o, &r);
	if (rc != RB_EXIT_OK) {
		if (r.loop[0] && r.err != LAZY_USAGE)
			rb_err("%s; %s stays on %s", r.error, r.loop, o.image);
		else
			rb_err("%s", r.error);
		/* Cleaned up: now die of the signal, as the caller expects. */
		if (r.err == LAZY_SIGNAL)
			guard_reraise(r.signo);
		return rc;
	}
	if (o.background) {
		rb_info("copying %s to RAM in the background (pid %d)", o.image, (int)r.child);
		return RB_EXIT_OK;
	}
	if (r.stream && r.fallback == LAZY_FB_NONE)
		rb_info("%s now reads %s: %s from the udpcast stream%s in %.2f s", r.loop, r.copy,
			fmt_size(r.bytes_stream, a, sizeof(a)), r.verified > 0 ? ", sha256 ok," : "",
			r.ended - r.started);
	else
		rb_info("%s now reads %s: %s, %s from the page cache, %s from the source%s in "
			"%.2f s", r.loop, r.copy, fmt_size(r.size, a, sizeof(a)),
			fmt_size(r.bytes_cached, b, sizeof(b)), fmt_size(r.bytes_network, c, sizeof(c)),
			r.verified > 0 ? ", sha256 ok," : "", r.ended - r.started);
	return RB_EXIT_OK;
}
