// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * --wait-loop: the loop device comes later.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lazy/lazyint.h"
#include "dev/loopdev.h"
#include "lib/fdio.h"

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
int lazy_open_wait_dirs(struct lazy *L)
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
 * open_loop() does, through the descriptors of lazy_open_wait_dirs(). */
int lazy_wait_loop(struct lazy *L)
{
	double deadline = now_sec() + L->o->wait_loop;
	char why[512] = "", p[PATH_MAX];
	int rc;

	lazy_set_state(L, "waiting-loop");
	for (;;) {
		why[0] = '\0';
		rc = look_for_loop(L, why, sizeof(why));
		if (rc == 1)
			break;
		if (rc != 0 || (rc = lazy_guard_outcome(L)) != 0)
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
	lazy_open_counters(L, L->sysblock_fd);
	rb_debug("%s is backed by %s", L->r->loop, L->o->image);
	return 0;
}
