// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The loop device of an image, found after its paths have gone, and the
 * switch of that loop device onto another copy of the same bytes: what
 * the lazy copier does for a RAM copy (lazy/) and the cache's refresh
 * for a local slot (boot/cache.c). See loopdev.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "dev/loopdev.h"

/*
 * What the search needs, opened while the paths are there: the block
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
 * up after the search started was never found. /sys/block stays the
 * fallback, for a root prefix whose sysfs is a plain tree.
 */
int loopdev_watch_open(struct loopdev_watch *w, const char *image, const struct stat *st,
		       uint64_t size, char *err, size_t errlen)
{
	char p[PATH_MAX];

	memset(w, 0, sizeof(*w));
	w->sysblock_fd = w->dev_fd = -1;
	w->image = image;
	w->st = *st;
	w->size = size;
	if (rb_path(p, sizeof(p), "/sys/devices/virtual/block") < 0)
		return rb_errfmt(err, errlen, -ENAMETOOLONG, "/sys/devices/virtual/block: path "
				 "too long");
	w->sysblock_fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->sysblock_fd < 0 && errno == ENOENT) {
		if (rb_path(p, sizeof(p), "/sys/block") < 0)
			return rb_errfmt(err, errlen, -ENAMETOOLONG, "/sys/block: path too long");
		w->sysblock_fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (w->sysblock_fd < 0)
		return rb_errfmt(err, errlen, -errno, "%s: %s", p, strerror(errno));
	if (rb_path(p, sizeof(p), "/dev") < 0)
		return rb_errfmt(err, errlen, -ENAMETOOLONG, "/dev: path too long");
	w->dev_fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w->dev_fd < 0)
		return rb_errfmt(err, errlen, -errno, "%s: %s", p, strerror(errno));
	w->real = realpath(image, NULL);
	return 0;
}

void loopdev_watch_close(struct loopdev_watch *w)
{
	close_fd(&w->sysblock_fd);
	close_fd(&w->dev_fd);
	free(w->real);
	w->real = NULL;
}

/* A sysfs attribute below the block devices' directory. */
static int sysblock_read(const struct loopdev_watch *w, const char *name, const char *attr,
			 char *buf, size_t len)
{
	char rel[128];
	ssize_t n;
	int fd, rc;

	snprintf(rel, sizeof(rel), "%s/%s", name, attr);
	fd = openat(w->sysblock_fd, rel, O_RDONLY | O_CLOEXEC);
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

static int sysblock_u64(const struct loopdev_watch *w, const char *name, const char *attr,
			uint64_t *v)
{
	char buf[32], *end;
	int rc = sysblock_read(w, name, attr, buf, sizeof(buf));

	if (rc < 0)
		return rc;
	errno = 0;
	*v = strtoull(buf, &end, 10);
	return errno || end == buf || *end ? -EINVAL : 0;
}

/* The same, 0 when the attribute is missing (older kernels). */
static int sysblock_opt_u64(const struct loopdev_watch *w, const char *name, const char *attr,
			    uint64_t *v)
{
	int rc = sysblock_u64(w, name, attr, v);

	if (rc == -ENOENT) {
		*v = 0;
		return 0;
	}
	return rc;
}

int loopdev_watch_look(const struct loopdev_watch *w, int *fd, char *name, size_t len,
		       char *why, size_t whylen)
{
	char backing[4096];
	struct dirent *e;
	DIR *d;
	int dfd, found = 0, rc = 0;

	*fd = -1;
	name[0] = '\0';
	dfd = dup(w->sysblock_fd);
	if (dfd < 0 || !(d = fdopendir(dfd))) {
		rc = -errno;
		if (dfd >= 0)
			(void)close(dfd);
		return rb_errfmt(why, whylen, rc, "/sys/block: %s", strerror(-rc));
	}
	rewinddir(d);
	while ((e = readdir(d)) != NULL && rc == 0) {
		uint64_t ro, sectors, offset = 0, sizelimit = 0;
		bool lo_ro = false;
		int lfd, b;

		if (!loopdev_name_valid(e->d_name) || strlen(e->d_name) >= len ||
		    sysblock_read(w, e->d_name, "loop/backing_file", backing, sizeof(backing)) < 0 ||
		    !loopdev_backing_matches(backing, w->image, w->real))
			continue;
		/* The node: udev may not have made it yet. */
		lfd = openat(w->dev_fd, e->d_name, O_RDONLY | O_CLOEXEC);
		if (lfd < 0) {
			snprintf(why, whylen, "/dev/%s: %s", e->d_name, strerror(errno));
			continue;
		}
		b = loopdev_bound_to(lfd, &w->st, &lo_ro);
		if (b <= 0) {
			/* The same path, another file (or unbound again). */
			(void)close(lfd);
			continue;
		}
		if (found++) {
			(void)close(lfd);
			rc = rb_errfmt(why, whylen, -EEXIST, "several loop devices are backed by %s "
				       "(%s %s)", w->image, name, e->d_name);
			break;
		}
		/* Its length was checked above. */
		memcpy(name, e->d_name, strlen(e->d_name) + 1);
		*fd = lfd;
		/* Read-only and as large as the image: a loop device set up
		 * in two steps (LOOP_SET_FD, then LOOP_SET_STATUS64) may get
		 * there a moment later. */
		if (sysblock_u64(w, e->d_name, "ro", &ro) < 0 ||
		    sysblock_u64(w, e->d_name, "size", &sectors) < 0 ||
		    sysblock_opt_u64(w, e->d_name, "loop/offset", &offset) < 0 ||
		    sysblock_opt_u64(w, e->d_name, "loop/sizelimit", &sizelimit) < 0) {
			snprintf(why, whylen, "/sys/block/%s: cannot read its attributes", e->d_name);
			found = -1;
		} else if (ro != 1 || !lo_ro) {
			snprintf(why, whylen, "/dev/%s: not read-only; LOOP_CHANGE_FD switches only "
				 "a read-only loop device (losetup -r)", e->d_name);
			found = -1;
		} else if (sectors != loopdev_sectors(w->size, offset, sizelimit)) {
			snprintf(why, whylen, "/dev/%s: %" PRIu64 " sectors, but %s gives %" PRIu64,
				 e->d_name, sectors, w->image,
				 loopdev_sectors(w->size, offset, sizelimit));
			found = -1;
		}
	}
	closedir(d);
	if (rc != 0 || found <= 0) {
		close_fd(fd);
		if (rc == 0)
			name[0] = '\0';
		return rc;
	}
	return 1;
}

int loopdev_switch(int loopfd, const struct stat *old, int newfd)
{
	bool ro = false;
	int rc;

	/* The mount may have changed since the loop device was found: it
	 * must still be the image's, and read-only. */
	rc = loopdev_bound_to(loopfd, old, &ro);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return -ESTALE;
	if (!ro)
		return -EPERM;
	return loopdev_change_fd(loopfd, newfd);
}
