// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Loop devices: find the one backed by an image, check it, switch its
 * backing file (loopdev.h). sysfs through the root prefix; the ioctls on
 * a device node the caller opened.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/path.h"
#include "dev/loopdev.h"

bool loopdev_name_valid(const char *name)
{
	const char *p;

	if (strncmp(name, "loop", 4) || !name[4])
		return false;
	for (p = name + 4; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

uint64_t loopdev_sectors(uint64_t file_size, uint64_t offset, uint64_t sizelimit)
{
	uint64_t n;

	if (offset >= file_size)
		return 0;
	n = file_size - offset;
	if (sizelimit > 0 && sizelimit < n)
		n = sizelimit;
	return n >> 9;
}

bool loopdev_backing_matches(const char *backing, const char *image, const char *real)
{
	static const char deleted[] = " (deleted)";
	size_t n = strlen(backing), d = sizeof(deleted) - 1;

	if (!*backing)
		return false;
	if (n > d && !strcmp(backing + n - d, deleted))
		return false;
	return !strcmp(backing, image) || (real && !strcmp(backing, real));
}

static int read_u64(const char *path, uint64_t *v)
{
	char buf[32], *end;
	ssize_t n = rb_read_str(path, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	errno = 0;
	*v = strtoull(buf, &end, 10);
	if (errno || end == buf || *end)
		return -EINVAL;
	return 0;
}

int loopdev_read_info(const char *name, struct loopdev_info *i)
{
	char p[128];
	uint64_t ro;
	ssize_t n;
	int rc;

	memset(i, 0, sizeof(*i));
	if (!loopdev_name_valid(name))
		return -EINVAL;
	snprintf(p, sizeof(p), "/sys/block/%s/size", name);
	if ((rc = read_u64(p, &i->sectors)) < 0)
		return rc;
	snprintf(p, sizeof(p), "/sys/block/%s/ro", name);
	if ((rc = read_u64(p, &ro)) < 0)
		return rc;
	i->ro = ro == 1;
	/* loop/ appears only while a file is bound. */
	snprintf(p, sizeof(p), "/sys/block/%s/loop/backing_file", name);
	n = rb_read_str(p, i->backing, sizeof(i->backing));
	if (n < 0) {
		i->backing[0] = '\0';
		return n == -ENOENT ? 0 : (int)n;
	}
	snprintf(p, sizeof(p), "/sys/block/%s/loop/offset", name);
	if ((rc = read_u64(p, &i->offset)) < 0 && rc != -ENOENT)
		return rc;
	snprintf(p, sizeof(p), "/sys/block/%s/loop/sizelimit", name);
	if ((rc = read_u64(p, &i->sizelimit)) < 0 && rc != -ENOENT)
		return rc;
	return 0;
}

/* Same file: the backing path resolves (as this process sees it) to
 * the inode st describes. */
static bool same_file(const char *path, const struct stat *st)
{
	struct stat b;

	if (!st || stat(path, &b) < 0)
		return false;
	if (S_ISBLK(st->st_mode))
		return S_ISBLK(b.st_mode) && b.st_rdev == st->st_rdev;
	return b.st_dev == st->st_dev && b.st_ino == st->st_ino;
}

int loopdev_find(const char *image, const struct stat *st, char *name, size_t len,
		 char *err, size_t errlen)
{
	char dir[PATH_MAX], *real = realpath(image, NULL), found[256] = "";
	struct dirent *e;
	int hits = 0;
	DIR *d;

	if (rb_path(dir, sizeof(dir), "/sys/block") < 0 || !(d = opendir(dir))) {
		free(real);
		snprintf(err, errlen, "cannot read /sys/block");
		return -ENOENT;
	}
	while ((e = readdir(d)) != NULL) {
		struct loopdev_info i;

		if (!loopdev_name_valid(e->d_name) || loopdev_read_info(e->d_name, &i) < 0)
			continue;
		if (!loopdev_backing_matches(i.backing, image, real) &&
		    (!i.backing[0] || !same_file(i.backing, st)))
			continue;
		if (hits++ == 0)
			snprintf(name, len, "%s", e->d_name);
		if (strlen(found) + strlen(e->d_name) + 2 < sizeof(found)) {
			if (found[0])
				strcat(found, " ");
			strcat(found, e->d_name);
		}
	}
	closedir(d);
	free(real);
	if (hits == 0) {
		snprintf(err, errlen, "no loop device is backed by %s", image);
		return -ENOENT;
	}
	if (hits > 1) {
		/* Switching one would leave the others on the network. */
		snprintf(err, errlen, "several loop devices are backed by %s (%s): name one "
			 "with --loop", image, found);
		return -EEXIST;
	}
	return 0;
}

int blkdev_name_of_fd(int fd, char *name, size_t len)
{
	char p[PATH_MAX], link[PATH_MAX];
	const char *base;
	struct stat st;
	ssize_t n;
	int rc;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISBLK(st.st_mode))
		return -ENOTBLK;
	rc = rb_path(p, sizeof(p), "/sys/dev/block/%u:%u", major(st.st_rdev), minor(st.st_rdev));
	if (rc < 0)
		return rc;
	n = readlink(p, link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = '\0';
	base = strrchr(link, '/');
	base = base ? base + 1 : link;
	if ((size_t)snprintf(name, len, "%s", base) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int loopdev_name_of_fd(int fd, char *name, size_t len)
{
	int rc = blkdev_name_of_fd(fd, name, len);

	if (rc == 0 && !loopdev_name_valid(name))
		rc = -EINVAL;
	return rc;
}

int loopdev_bound_to(int fd, const struct stat *st, bool *ro)
{
	struct loop_info64 li;

	memset(&li, 0, sizeof(li));
	if (ioctl(fd, LOOP_GET_STATUS64, &li) < 0)
		return -errno;
	*ro = (li.lo_flags & LO_FLAGS_READ_ONLY) != 0;
	/* lo_device and lo_inode are the backing file's st_dev and st_ino
	 * (the same encoding stat(2) uses); lo_rdevice its st_rdev, for a
	 * block device. */
	if (S_ISBLK(st->st_mode))
		return li.lo_rdevice == (uint64_t)st->st_rdev;
	return li.lo_device == (uint64_t)st->st_dev && li.lo_inode == (uint64_t)st->st_ino;
}

int loopdev_change_fd(int fd, int newfd)
{
	return ioctl(fd, LOOP_CHANGE_FD, newfd) < 0 ? -errno : 0;
}

/* LOOP_CONFIGURE in one step (Linux 5.8), else LOOP_SET_FD and
 * LOOP_SET_STATUS64 for the flags. */
static int loop_bind(int lfd, int bfd, bool ro, bool keep)
{
	struct loop_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.fd = (unsigned)bfd;
	cfg.info.lo_flags = (ro ? LO_FLAGS_READ_ONLY : 0) | (keep ? 0 : LO_FLAGS_AUTOCLEAR);
	if (ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOTTY)
		return -errno;
	if (ioctl(lfd, LOOP_SET_FD, bfd) < 0)
		return -errno;
	if (ioctl(lfd, LOOP_SET_STATUS64, &cfg.info) < 0) {
		int e = errno;

		(void)ioctl(lfd, LOOP_CLR_FD, 0);
		return -e;
	}
	return 0;
}

int loopdev_attach_ro(int bfd, char *name, size_t len, int *loopfd)
{
	return loopdev_attach(bfd, true, name, len, loopfd);
}

static int attach(int bfd, bool ro, bool keep, char *name, size_t len, int *loopfd)
{
	int mode = (ro ? O_RDONLY : O_RDWR) | O_CLOEXEC;
	char ctl[PATH_MAX], dev[PATH_MAX];
	int cfd, lfd, n, rc = -EBUSY, tries;

	rc = rb_path(ctl, sizeof(ctl), "/dev/loop-control");
	if (rc < 0)
		return rc;
	cfd = open(ctl, O_RDWR | O_CLOEXEC);
	if (cfd < 0)
		return -errno;
	/* Another process may take the free device between the two calls:
	 * then ask again. */
	for (tries = 0; tries < 16; tries++) {
		n = ioctl(cfd, LOOP_CTL_GET_FREE);
		if (n < 0) {
			rc = -errno;
			break;
		}
		rc = rb_path(dev, sizeof(dev), "/dev/loop%d", n);
		if (rc < 0)
			break;
		lfd = open(dev, mode);
		if (lfd < 0 && errno == ENOENT) {
			/* No devtmpfs node yet (a fixture /dev): make it. */
			(void)mknod(dev, S_IFBLK | 0600, makedev(7, (unsigned)n));
			lfd = open(dev, mode);
		}
		if (lfd < 0) {
			rc = -errno;
			break;
		}
		rc = loop_bind(lfd, bfd, ro, keep);
		if (rc == 0) {
			if ((size_t)snprintf(name, len, "loop%d", n) >= len) {
				if (keep)
					(void)ioctl(lfd, LOOP_CLR_FD, 0);
				(void)close(lfd);   /* autoclear: detached with it */
				rc = -ENAMETOOLONG;
				break;
			}
			*loopfd = lfd;
			break;
		}
		(void)close(lfd);
		if (rc != -EBUSY)
			break;
	}
	(void)close(cfd);
	return rc;
}

int loopdev_attach(int bfd, bool ro, char *name, size_t len, int *loopfd)
{
	return attach(bfd, ro, false, name, len, loopfd);
}

int loopdev_attach_keep(int bfd, char *name, size_t len)
{
	int lfd = -1, rc = attach(bfd, true, true, name, len, &lfd);

	if (rc == 0)
		(void)close(lfd);
	return rc;
}

int loopdev_detach(const char *name)
{
	char dev[PATH_MAX];
	int fd, rc;

	if (!loopdev_name_valid(name))
		return -EINVAL;
	rc = rb_path(dev, sizeof(dev), "/dev/%s", name);
	if (rc < 0)
		return rc;
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* On a device still open or mounted the kernel sets autoclear
	 * instead: it goes with its last user. */
	rc = ioctl(fd, LOOP_CLR_FD, 0) < 0 ? -errno : 0;
	(void)close(fd);
	return rc;
}
