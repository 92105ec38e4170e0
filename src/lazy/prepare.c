// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Preparation: every check and every open, before anything is made.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lazy/lazyint.h"
#include "bgread/yield.h"
#include "dev/blkdev.h"
#include "dev/loopdev.h"
#include "lib/fdio.h"
#include "lib/memroom.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "lib/report.h"
#include "source/source.h"
#include "trust/policy.h"

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

/* --sha256 and --manifest, under the verification policy (--signed);
 * the chunk hashes check a stream as it comes (--udpcast). */
static int read_policy(struct lazy *L)
{
	const struct lazy_opts *o = L->o;
	const struct trust_policy p = {
		.sha256 = o->sha256, .manifest = o->manifest, .signed_only = o->signed_only,
		.keydir = o->keydir, .chunks = o->udpcast != NULL,
	};
	const struct trust_want w = {
		.sha256 = L->want_sha, .man = &L->man, .have_man = &L->have_man,
		.signed_by = L->r->signed_by, .signed_by_len = sizeof(L->r->signed_by),
	};
	char err[512];
	enum run_err e = trust_policy_read(&p, &w, err, sizeof(err));

	return e != RUN_OK ? lazy_fail(L, e, "%s", err) : 0;
}

static int open_image(struct lazy *L)
{
	const struct lazy_opts *o = L->o;
	const struct source_spec sp = { .name = o->image, .fd = o->image_fd, .seekable = true };
	struct source img;
	char err[512];
	int rc;

	if ((rc = read_policy(L)) != 0)
		return rc;
	/* The copier reads at any offset and switches the loop device from
	 * this very file: its descriptor is kept, closed with the others. */
	rc = source_open(&img, &sp, err, sizeof(err));
	if (rc < 0) {
		(void)source_close(&img);
		return lazy_fail(L, LAZY_SOURCE, "%s", err);
	}
	L->img_fd = img.fd;
	L->img_st = img.st;
	L->size = img.size;
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
void lazy_open_counters(struct lazy *L, int sysblock_fd)
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
	lazy_open_counters(L, -1);
	return 0;
}

static int check_memory(struct lazy *L)
{
	char p[PATH_MAX], msg[200];
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
	if (!mem_room(avail, L->size, 0, L->o->min_free, msg, sizeof(msg)))
		return lazy_fail(L, LAZY_NOMEM, "%s", msg);
	return 0;
}

int lazy_make_copy_state(struct lazy *L)
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

int lazy_prepare(struct lazy *L)
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
	if (lazy_serves_http(o)) {
		/* The loop device comes after the fork (http.c). */
		rc = lazy_http_prepare(L);
	} else if ((rc = open_image(L)) == 0) {
		load_profile(L);
		rc = o->wait_loop > 0 ? lazy_open_wait_dirs(L) : open_loop(L);
	}
	if (rc != 0 || (rc = check_memory(L)) != 0)
		return rc;
	if (o->target == LAZY_TARGET_ZRAM) {
		rc = lazy_make_zram(L);
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
		rc = rc < 0 ? lazy_fail(L, LAZY_USAGE, "--tmpfs: path too long") : lazy_make_tmpfs(L);
	}
	if (rc != 0)
		return rc;
	return lazy_make_copy_state(L);
}
