// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cache at boot (cache.h, docs/cache.md "At boot"): the look that
 * decides between the local slot and the network image, and the refresh
 * behind the boot. `ramboot boot` (boot/cache.c) calls both, in children
 * of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/hex.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "dev/blkdev.h"
#include "dev/loopdev.h"
#include "cache/cache.h"
#include "cache/cacheint.h"

/* Only an ext4 file system is mounted: anything else is someone's data,
 * and not even its superblock is read by a file system driver. The
 * device opened once, in *fd: what is mounted is what was checked. */
static int check_device(const char *dev, int *fd, char *err, size_t errlen)
{
	struct blkdev_signature sig;
	struct stat st;
	int rc;

	*fd = open(dev, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (*fd < 0 || fstat(*fd, &st) < 0) {
		rc = -errno;
		close_fd(fd);
		return rb_errfmt(err, errlen, rc, "%s: %s", dev, strerror(-rc));
	}
	if (S_ISDIR(st.st_mode))
		return 0;                 /* a cache mounted by the admin */
	rc = blkdev_signature_fd(*fd, &sig);
	if (rc < 0) {
		close_fd(fd);
		return rb_errfmt(err, errlen, rc, "%s: cannot probe it: %s", dev, strerror(-rc));
	}
	if (strcmp(sig.type, CACHE_FSTYPE)) {
		close_fd(fd);
		return rb_errfmt(err, errlen, -EMEDIUMTYPE, "%s: not a ramboot cache (%s%s); not "
				 "touched", dev, sig.type[0] || sig.pttype[0] ? "holds " : "no file system",
				 sig.type[0] ? sig.type : sig.pttype);
	}
	return 0;
}

/* The active slot's file in dir, read-only in *fd: a regular file of the
 * size the state says (-EINVAL when it is not). Its name in name. 0, or
 * -errno with err and *fd -1. */
static int open_slot(int dir, const struct cstate *st, char *name, size_t namelen, int *fd,
		     char *err, size_t errlen)
{
	struct stat sb;
	int rc;

	cache_slot_name(st->active, NULL, name, namelen);
	*fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (*fd < 0 || fstat(*fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    (uint64_t)sb.st_size != st->slot[st->active].size) {
		rc = *fd < 0 ? -errno : -EINVAL;
		close_fd(fd);
		return rb_errfmt(err, errlen, rc, "slot %s: %s", name, rc == -EINVAL ?
				 "not the size the state says" : strerror(-rc));
	}
	return 0;
}

/* The active slot over a kept read-only loop device, and its file system. */
static int attach_slot(int dir, const struct cstate *st, struct cache_look_res *r)
{
	char name[16], dev[PATH_MAX];
	int fd, rc;

	rc = open_slot(dir, st, name, sizeof(name), &fd, r->error, sizeof(r->error));
	if (rc < 0) {
		r->slot_failed = rc == -EINVAL;
		return rc;
	}
	rc = loopdev_attach_keep(fd, r->loop, sizeof(r->loop));
	(void)close(fd);                  /* the loop device holds it */
	if (rc < 0)
		return rb_errfmt(r->error, sizeof(r->error), rc, "slot %s: no loop device: %s", name,
				 strerror(-rc));
	rc = rb_path(dev, sizeof(dev), "/dev/%s", r->loop);
	fd = rc < 0 ? -1 : open(dev, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)blkid_fstype_fd(fd, r->fstype, sizeof(r->fstype));
		(void)close(fd);
	}
	if (!r->fstype[0]) {
		(void)loopdev_detach(r->loop);
		r->loop[0] = '\0';
		r->slot_failed = fd >= 0;         /* read, and no file system */
		return rb_errfmt(r->error, sizeof(r->error), -EINVAL, "slot %s: no file system that "
				 "blkid knows", name);
	}
	return 0;
}

void cache_look(const struct cache_look_req *q, struct cache_look_res *r)
{
	char why[384];
	struct cache c;
	struct cstate st;
	int dir = -1, dfd = -1, rc;

	memset(r, 0, sizeof(*r));
	r->slot = -1;
	r->look = CACHE_UNUSABLE;
	if (q->sha256)
		snprintf(r->want_sha256, sizeof(r->want_sha256), "%s", q->sha256);
	r->want_size = q->size;
	c.root = c.mnt = c.loop = -1;
	rc = blkdev_find(q->spec, r->device, sizeof(r->device), r->error, sizeof(r->error));
	if (rc == 0)
		rc = check_device(r->device, &dfd, r->error, sizeof(r->error));
	if (rc == 0)
		rc = cache_open_ro_fd(&c, r->device, dfd, r->error, sizeof(r->error));
	close_fd(&dfd);
	if (rc == 0) {
		rc = cache_image_dir(&c, q->name, false, &dir, r->error, sizeof(r->error));
		if (rc == -ENOENT)
			r->look = CACHE_MISS;     /* never refreshed */
	}
	if (rc == 0) {
		rc = cache_state_read(dir, &st, NULL, why, sizeof(why));
		if (rc == -ENOENT)
			r->look = CACHE_MISS;
		else if (rc < 0)
			rb_errfmt(r->error, sizeof(r->error), rc, "%s: state of %s: %s", r->device,
				  q->name, why);
	}
	if (rc == 0 && st.active >= 0) {
		r->slot = st.active;
		r->generation = st.generation;
		r->age = (int64_t)time(NULL) - st.refreshed;
		r->slot_bad = st.slot[st.active].bad;
		hex_encode(st.slot[st.active].sha256, 32, r->sha256);
	}
	if (rc == 0 && !q->sha256) {
		/* Offline: the active slot as it is, when young enough. */
		if (st.active < 0)
			rc = rb_errfmt(r->error, sizeof(r->error), -ENOENT, "%s: no slot of %s to "
				       "boot offline", r->device, q->name);
		else if (r->slot_bad)
			rc = rb_errfmt(r->error, sizeof(r->error), -EINVAL, "%s: slot %c of %s is "
				       "marked bad", r->device, cstate_slot_name(st.active), q->name);
		else if (r->age < 0)
			rc = rb_errfmt(r->error, sizeof(r->error), -EINVAL, "%s: slot %c of %s was "
				       "refreshed %" PRId64 " s in this clock's future: its age "
				       "cannot be told", r->device, cstate_slot_name(st.active),
				       q->name, -r->age);
		else if (r->age > q->offline_age)
			rc = rb_errfmt(r->error, sizeof(r->error), -ESTALE, "%s: slot %c of %s was "
				       "refreshed %" PRId64 " s ago, more than ramboot.cache.offline= "
				       "allows (%" PRId64 " s)", r->device, cstate_slot_name(st.active),
				       q->name, r->age, q->offline_age);
		else if ((rc = attach_slot(dir, &st, r)) == 0)
			r->look = CACHE_HIT;
	} else if (rc == 0 && (st.active < 0 || strcmp(r->sha256, q->sha256) ||
			       (q->size && q->size != st.slot[st.active].size) || r->slot_bad)) {
		r->look = CACHE_MISS;
		if (r->slot_bad)
			snprintf(why, sizeof(why), "slot %c is marked bad",
				 cstate_slot_name(st.active));
	} else if (rc == 0) {
		rc = attach_slot(dir, &st, r);
		if (rc == 0)
			r->look = CACHE_HIT;
	}
	if (dir >= 0)
		(void)close(dir);
	cache_close(&c);
	if (r->look == CACHE_MISS && r->slot_bad)
		snprintf(r->error, sizeof(r->error), "%s", why);
	else if (r->look != CACHE_UNUSABLE)
		r->error[0] = '\0';
}

#define OPEN_TRIES 50                 /* 100 ms apart */

/* The cache opened after another mount of it: the boot's look's
 * read-only mount (the kernel lets a detached mount go after its last
 * descriptor), the loop device of a slot just given up, or a refresh's
 * read-write mount may still be going, and the kernel refuses the other
 * kind of mount of the same file system until then. rw: read-write, else
 * read-only down to the superblock (cache_open_ro). 0 or -errno. */
static int open_after(struct cache *c, const char *device, bool rw, char *err, size_t errlen)
{
	int rc = -EBUSY, i;

	for (i = 0; i < OPEN_TRIES && rc == -EBUSY; i++) {
		if (i)
			nap_ms(100);
		rc = rw ? cache_open(c, device, true, err, errlen) :
			  cache_open_ro(c, device, err, errlen);
	}
	return rc;
}

/* The cache on device opened after another mount of it (open_after()),
 * the directory of image name in *dir and its state in *st. rw: to write
 * the state, read-write and the directory locked as a refresh locks it
 * (-EBUSY while one runs). 0, or -errno with err; *dir and c are closed
 * by the caller either way. */
static int open_image(struct cache *c, const char *device, bool rw, const char *name, int *dir,
		      struct cstate *st, char *err, size_t errlen)
{
	int rc;

	*dir = -1;
	c->root = c->mnt = c->loop = -1;
	rc = open_after(c, device, rw, err, errlen);
	return rc < 0 ? rc : cache_image_state(c, name, rw, dir, st, err, errlen);
}

int cache_image_state(struct cache *c, const char *name, bool lock, int *dir,
		      struct cstate *st, char *err, size_t errlen)
{
	char why[384];
	int rc;

	*dir = -1;
	rc = cache_image_dir(c, name, false, dir, err, errlen);
	if (rc == 0 && lock && flock(*dir, LOCK_EX | LOCK_NB) < 0)
		rc = rb_errfmt(err, errlen, errno == EWOULDBLOCK ? -EBUSY : -errno, "%s: a refresh "
			       "of this image is running", name);
	if (rc == 0) {
		rc = cache_state_read(*dir, st, NULL, why, sizeof(why));
		if (rc < 0)
			rb_errfmt(err, errlen, rc, "state of %s: %s", name, why);
	}
	return rc;
}

int cache_boot_refresh(const char *device, const struct cache_refresh_opts *o,
		       struct cache_refresh_result *r, char *err, size_t errlen)
{
	struct cache c;
	int rc;

	rc = open_after(&c, device, true, err, errlen);
	if (rc < 0)
		return rc;
	rc = cache_refresh(&c, o, r, err, errlen);
	/* The mount outlives c for the switch, which makes it read-only. */
	if (o->mnt_fd)
		*o->mnt_fd = rc == 0 && o->slot_fd && *o->slot_fd >= 0 && c.mnt >= 0 ?
			     fcntl(c.mnt, F_DUPFD_CLOEXEC, 3) : -1;
	cache_close(&c);
	return rc;
}

int cache_slot_open(const char *device, const char *name, const char *sha256, int *fd,
		    uint64_t *size, char *err, size_t errlen)
{
	char slot[16], hex[65];
	struct cstate st;
	struct cache c;
	int dir, rc;

	*fd = -1;
	rc = open_image(&c, device, false, name, &dir, &st, err, errlen);
	if (rc == 0 && st.active < 0)
		rc = rb_errfmt(err, errlen, -ENOENT, "%s: no active slot", name);
	if (rc == 0) {
		hex_encode(st.slot[st.active].sha256, 32, hex);
		if (sha256 && strcmp(hex, sha256))
			rc = rb_errfmt(err, errlen, -ESTALE, "%s: the active slot holds another image "
				       "now", name);
	}
	if (rc == 0) {
		rc = open_slot(dir, &st, slot, sizeof(slot), fd, err, errlen);
		if (rc == 0)
			*size = st.slot[st.active].size;
	}
	if (dir >= 0)
		(void)close(dir);
	/* The open slot holds the mount from here on. */
	cache_close(&c);
	return rc;
}

int cache_mark_bad(const char *device, const char *name, int slot, const char *sha256,
		   char *err, size_t errlen)
{
	struct cache c;
	int rc;

	rc = open_after(&c, device, true, err, errlen);
	if (rc < 0)
		return rc;
	rc = cache_mark_bad_in(&c, name, slot, sha256, err, errlen);
	cache_close(&c);
	return rc;
}
