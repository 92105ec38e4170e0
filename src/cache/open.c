// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cache's file system: open (mount) it, and make it (ramboot cache
 * init). See cache.h and docs/cache.md.
 *
 * The cache is mounted with the kernel's new mount API (fsopen, fsmount,
 * Linux 5.2) as a detached mount: it has no mount point and no entry in
 * /proc/self/mounts, nobody else sees it, and the kernel unmounts it when
 * its last descriptor closes, the process killed with SIGKILL included.
 * A regular file holding the file system (tests, a cache in a file) is
 * mounted through a loop device with LO_FLAGS_AUTOCLEAR, which goes with
 * the mount.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/ramboot.h"
#include "lib/outfile.h"
#include "dev/blkdev.h"
#include "dev/loopdev.h"
#include "cache/cache.h"

extern char **environ;

static void cache_reset(struct cache *c, const char *path)
{
	memset(c, 0, sizeof(*c));
	c->root = c->mnt = c->loop = -1;
	snprintf(c->what, sizeof(c->what), "%s", path);
}

void cache_close(struct cache *c)
{
	/* The root first, then the mount: the last reference to a detached
	 * mount unmounts it; then the loop device, which autoclear frees. */
	if (c->root >= 0)
		(void)close(c->root);
	if (c->mnt >= 0)
		(void)close(c->mnt);
	if (c->loop >= 0)
		(void)close(c->loop);
	c->root = c->mnt = c->loop = -1;
}

/* The kernel's own words on a failed fsconfig: "e ext4: ..." lines read
 * from the file system context. */
static void fs_log(int fsfd, char *buf, size_t len)
{
	ssize_t n;

	buf[0] = '\0';
	n = read(fsfd, buf, len - 1);
	if (n > 2) {
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		memmove(buf, buf + 2, strlen(buf + 2) + 1);  /* "e " */
	} else {
		buf[0] = '\0';
	}
}

/* The superblock under mount mnt made read-only or read-write (flag "ro"
 * or "rw"), not only this mount: a later mount of the same file system
 * (ramboot cache status) shares it. */
static int fs_set(int mnt, const char *flag, const char *what, char *err, size_t errlen)
{
	char why[256];
	int fsfd, rc = 0;

	fsfd = fspick(mnt, "", FSPICK_EMPTY_PATH | FSPICK_CLOEXEC);
	if (fsfd < 0)
		return rb_errfmt(err, errlen, -errno, "%s: %s", what, strerror(errno));
	if (fsconfig(fsfd, FSCONFIG_SET_FLAG, flag, NULL, 0) < 0 ||
	    fsconfig(fsfd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) < 0) {
		rc = -errno;
		fs_log(fsfd, why, sizeof(why));
		(void)close(fsfd);
		return rb_errfmt(err, errlen, rc, "%s: cannot make it %s: %s%s%s", what,
				 strcmp(flag, "ro") ? "read-write" : "read-only", strerror(-rc),
				 why[0] ? ": " : "", why);
	}
	(void)close(fsfd);
	return 0;
}

int cache_fs_ro(int mnt, const char *what, char *err, size_t errlen)
{
	return fs_set(mnt, "ro", what, err, errlen);
}

int cache_fs_rw(int mnt, const char *what, char *err, size_t errlen)
{
	struct mount_attr a = { .attr_clr = MOUNT_ATTR_RDONLY };
	int rc = fs_set(mnt, "rw", what, err, errlen);

	if (rc == 0 && mount_setattr(mnt, "", AT_EMPTY_PATH, &a, sizeof(a)) < 0) {
		rc = -errno;
		return rb_errfmt(err, errlen, rc, "%s: cannot make it read-write: %s", what,
				 strerror(-rc));
	}
	return rc;
}

static int mount_detached(struct cache *c, const char *source, bool rw, bool sbro, char *err,
			  size_t errlen)
{
	char why[256];
	int fsfd, rc = 0;

	fsfd = fsopen(CACHE_FSTYPE, FSOPEN_CLOEXEC);
	if (fsfd < 0) {
		rc = -errno;
		if (rc == -EPERM)
			return rb_errfmt(err, errlen, rc, "%s: mounting the cache needs root (or mount "
					 "it yourself and name its directory)", c->what);
		return rb_errfmt(err, errlen, rc, "%s: no %s in this kernel: %s", c->what,
				 CACHE_FSTYPE, strerror(-rc));
	}
	/* sbro: the superblock read-only, so that the kernel writes nothing
	 * (ext4 updates its mount count and time on a read-write one). */
	if (fsconfig(fsfd, FSCONFIG_SET_STRING, "source", source, 0) < 0 ||
	    (sbro && fsconfig(fsfd, FSCONFIG_SET_FLAG, "ro", NULL, 0) < 0) ||
	    fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		rc = -errno;
		fs_log(fsfd, why, sizeof(why));
		(void)close(fsfd);
		return rb_errfmt(err, errlen, rc, "%s: cannot mount it as %s: %s%s%s", c->what,
				 CACHE_FSTYPE, strerror(-rc), why[0] ? ": " : "", why);
	}
	c->mnt = fsmount(fsfd, FSMOUNT_CLOEXEC,
			 MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC |
			 (rw ? 0 : MOUNT_ATTR_RDONLY));
	if (c->mnt < 0)
		rc = -errno;
	(void)close(fsfd);
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "%s: cannot mount it: %s", c->what, strerror(-rc));
	c->root = openat(c->mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->root < 0)
		return rb_errfmt(err, errlen, -errno, "%s: cannot open its root", c->what);
	return 0;
}

static int check_marker(struct cache *c, char *err, size_t errlen)
{
	char buf[sizeof(CACHE_MARKER_TEXT) + 1];
	struct stat st;
	ssize_t n;
	int fd;

	fd = openat(c->root, CACHE_MARKER, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			(void)close(fd);
		return rb_errfmt(err, errlen, -ENOENT, "%s: not a ramboot cache (no %s marker; "
				 "see ramboot cache init)", c->what, CACHE_MARKER);
	}
	n = read_full(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n != (ssize_t)strlen(CACHE_MARKER_TEXT) || memcmp(buf, CACHE_MARKER_TEXT, (size_t)n))
		return rb_errfmt(err, errlen, -EINVAL, "%s: its %s marker is not \"%.*s\"", c->what,
				 CACHE_MARKER, (int)strlen(CACHE_MARKER_TEXT) - 1, CACHE_MARKER_TEXT);
	return 0;
}

static int cache_mount(struct cache *c, const char *path, bool rw, bool marker, bool sbro,
		       char *err, size_t errlen)
{
	char lname[32], src[PATH_MAX];
	struct stat st;
	int fd, rc = 0;

	cache_reset(c, path);
	if (stat(path, &st) < 0)
		return rb_errfmt(err, errlen, -errno, "%s: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		snprintf(c->how, sizeof(c->how), "directory");
		c->root = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (c->root < 0)
			return rb_errfmt(err, errlen, -errno, "%s: %s", path, strerror(errno));
	} else if (S_ISREG(st.st_mode)) {
		snprintf(c->how, sizeof(c->how), "file");
		fd = open(path, (rw ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			return rb_errfmt(err, errlen, -errno, "%s: %s", path, strerror(errno));
		rc = loopdev_attach(fd, !rw, lname, sizeof(lname), &c->loop);
		(void)close(fd);          /* the loop device holds it now */
		if (rc < 0)
			return rb_errfmt(err, errlen, rc, "%s: no loop device for it: %s", path,
					 strerror(-rc));
		rc = rb_path(src, sizeof(src), "/dev/%s", lname);
		if (rc == 0)
			rc = mount_detached(c, src, rw, sbro, err, errlen);
	} else if (S_ISBLK(st.st_mode)) {
		snprintf(c->how, sizeof(c->how), "block device");
		rc = mount_detached(c, path, rw, sbro, err, errlen);
	} else {
		return rb_errfmt(err, errlen, -EINVAL, "%s: not a block device, a regular file or "
				 "a directory", path);
	}
	if (rc == 0 && c->root < 0)
		rc = -EIO;
	if (rc == 0 && marker)
		rc = check_marker(c, err, errlen);
	if (rc < 0)
		cache_close(c);
	return rc;
}

int cache_open(struct cache *c, const char *path, bool rw, char *err, size_t errlen)
{
	int rc;

	/* A read-only look writes nothing: the superblock read-only too,
	 * which is also the only way in while a slot is the running root
	 * (its loop device holds a read-only mount); beside a read-write
	 * mount (a refresh running), a read-write superblock. */
	if (!rw) {
		rc = cache_mount(c, path, false, true, true, err, errlen);
		if (rc != -EBUSY)
			return rc;
	}
	rc = cache_mount(c, path, rw, true, false, err, errlen);
	if (rc == -EBUSY && rw)
		return rb_errfmt(err, errlen, rc, "%s: mounted read-only elsewhere (the running "
				 "system reads a slot of it: booted from it, or switched to it after "
				 "a refresh); written from the next boot on", path);
	return rc;
}

int cache_open_ro(struct cache *c, const char *path, char *err, size_t errlen)
{
	return cache_mount(c, path, false, true, true, err, errlen);
}

/* ---- ramboot cache init ---- */

/* The sysfs name ("sda2", "dm-0") of block device number dev. */
static int sysfs_name(dev_t dev, char *name, size_t len)
{
	char p[PATH_MAX], real[PATH_MAX];
	const char *b;

	if (rb_path(p, sizeof(p), "/sys/dev/block/%u:%u", major(dev), minor(dev)) < 0 ||
	    !realpath(p, real))
		return -ENOENT;
	b = strrchr(real, '/');
	b = b ? b + 1 : real;
	if (strlen(b) >= len)
		return -ENAMETOOLONG;
	memcpy(name, b, strlen(b) + 1);
	return 0;
}

/* Add name and, below it, what it is made of (its slaves: the
 * partitions under a device-mapper or RAID root) and the disk a
 * partition is on, to set (names of the block devices that carry the
 * running root). */
static void root_devices(const char *name, char set[][NAME_MAX + 1], int *n, int cap, int depth)
{
	char p[PATH_MAX], real[PATH_MAX], *slash;
	struct dirent *e;
	DIR *d;
	int i;

	for (i = 0; i < *n; i++)
		if (!strcmp(set[i], name))
			return;
	if (*n >= cap || depth > 8)
		return;
	snprintf(set[(*n)++], NAME_MAX + 1, "%s", name);
	/* /sys/class/block/sda2 -> .../block/sda/sda2: a partition's parent
	 * directory is its disk. */
	if (rb_path(p, sizeof(p), "/sys/class/block/%s/partition", name) == 0 &&
	    access(p, F_OK) == 0 && rb_path(p, sizeof(p), "/sys/class/block/%s", name) == 0 &&
	    realpath(p, real) && (slash = strrchr(real, '/'))) {
		*slash = '\0';
		slash = strrchr(real, '/');
		if (slash)
			root_devices(slash + 1, set, n, cap, depth + 1);
	}
	if (rb_path(p, sizeof(p), "/sys/class/block/%s/slaves", name) < 0 || !(d = opendir(p)))
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			root_devices(e->d_name, set, n, cap, depth + 1);
	(void)closedir(d);
}

/* A device that carries the running root (the root's own, the disk it
 * is a partition of, what a mapping over it is made of) is refused. */
static int check_not_root(const char *path, dev_t rdev, char *err, size_t errlen)
{
	char set[32][NAME_MAX + 1], name[NAME_MAX + 1], root[NAME_MAX + 1];
	struct stat rs;
	int n = 0, i;

	if (stat("/", &rs) < 0 || sysfs_name(rs.st_dev, root, sizeof(root)) < 0)
		return 0;        /* a root on no block device (NFS, tmpfs) */
	if (sysfs_name(rdev, name, sizeof(name)) < 0)
		return 0;
	root_devices(root, set, &n, (int)ARRAY_SIZE(set), 0);
	for (i = 0; i < n; i++)
		if (!strcmp(set[i], name))
			return rb_errfmt(err, errlen, -EBUSY, "%s: carries the running root file "
					 "system (%s); not a cache", path, root);
	return 0;
}

static bool label_valid(const char *l)
{
	size_t n = strlen(l);

	if (n == 0 || n > 16)           /* ext4 labels hold 16 bytes */
		return false;
	return strspn(l, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

static int run_mkfs(const char *path, const char *label, char *err, size_t errlen)
{
	/* -F: a regular file, or a device that held another file system
	 * (checked above), without a question; once only, so that mke2fs
	 * still refuses a mounted device. -m 0: no blocks reserved for root,
	 * nobody logs in on it. The journal stays: a rename is committed
	 * whole after a power cut. */
	char *const argv[] = { "mkfs.ext4", "-q", "-F", "-m", "0", "-L", (char *)label,
			       (char *)path, NULL };
	pid_t pid;
	int rc, status;

	rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
	if (rc)
		return rb_errfmt(err, errlen, -rc, "cannot run mkfs.ext4 (e2fsprogs): %s",
				 strerror(rc));
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return rb_errfmt(err, errlen, -errno, "mkfs.ext4: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return rb_errfmt(err, errlen, -EIO, "%s: mkfs.ext4 failed", path);
	return 0;
}

/* The marker and images/ in the root of c, synced. */
static int write_layout(struct cache *c, char *err, size_t errlen)
{
	struct outfile of;
	int rc;

	if (mkdirat(c->root, CACHE_IMAGES, 0755) < 0 && errno != EEXIST)
		return rb_errfmt(err, errlen, -errno, "%s: cannot make %s/: %s", c->what,
				 CACHE_IMAGES, strerror(errno));
	rc = outfile_openat(&of, c->root, CACHE_MARKER, 0644, OUTFILE_REPLACE | OUTFILE_SYNC, NULL,
			    err, errlen);
	if (rc < 0)
		return rc;
	rc = write_all(of.fd, CACHE_MARKER_TEXT, strlen(CACHE_MARKER_TEXT));
	if (rc == 0)
		rc = outfile_commit(&of);
	else
		outfile_abort(&of);
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "%s: cannot write its marker: %s", c->what,
				 strerror(-rc));
	return fsync(c->root) < 0 ? rb_errfmt(err, errlen, -errno, "%s: fsync: %s", c->what,
					       strerror(errno)) : 0;
}

/* A directory: empty (lost+found aside), or a cache already. */
static int init_dir(const char *path, bool force, char *err, size_t errlen)
{
	struct cache c;
	struct dirent *e;
	bool empty = true, marked;
	DIR *d;
	int rc;

	cache_reset(&c, path);
	d = opendir(path);
	if (!d)
		return rb_errfmt(err, errlen, -errno, "%s: %s", path, strerror(errno));
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    strcmp(e->d_name, "lost+found") && strcmp(e->d_name, CACHE_MARKER) &&
		    strcmp(e->d_name, CACHE_IMAGES))
			empty = false;
	(void)closedir(d);
	c.root = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c.root < 0)
		return rb_errfmt(err, errlen, -errno, "%s: %s", path, strerror(errno));
	marked = faccessat(c.root, CACHE_MARKER, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
	if (!empty && !marked && !force)
		rc = rb_errfmt(err, errlen, -EEXIST, "%s: a directory that holds other files; "
			       "not made a cache (--force to use it anyway)", path);
	else
		rc = write_layout(&c, err, errlen);
	cache_close(&c);
	return rc;
}

int cache_init(const char *path, const struct cache_init_opts *o, char *err, size_t errlen)
{
	const char *label = o->label ? o->label : CACHE_LABEL_DEFAULT;
	struct blkdev_signature sig;
	char loop[32];
	struct stat st;
	struct cache c;
	int fd, rc;

	if (!label_valid(label))
		return rb_errfmt(err, errlen, -EINVAL, "label '%s': 1 to 16 of A-Z a-z 0-9 . _ -",
				 label);
	if (stat(path, &st) < 0)
		return rb_errfmt(err, errlen, -errno, "%s: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return init_dir(path, o->force, err, errlen);
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode))
		return rb_errfmt(err, errlen, -EINVAL, "%s: not a block device, a regular file or "
				 "a directory; not touched", path);
	if (S_ISBLK(st.st_mode)) {
		rc = check_not_root(path, st.st_rdev, err, errlen);
		if (rc < 0)
			return rc;
		/* O_EXCL on a block device: EBUSY while it is mounted, swap,
		 * or held by a mapping or an array, the kernel's own claim. */
		fd = open(path, O_RDONLY | O_EXCL | O_CLOEXEC);
		if (fd < 0 && errno == EBUSY)
			return rb_errfmt(err, errlen, -EBUSY, "%s: in use (mounted, swap, or part of "
					 "a mapping or an array); not touched", path);
	} else {
		/* A file system image: in use when a loop device is over it. */
		rc = loopdev_find(path, &st, loop, sizeof(loop), NULL, 0);
		if (rc == 0 || rc == -EEXIST)
			return rb_errfmt(err, errlen, -EBUSY, "%s: in use (a loop device is over it%s%s); "
					 "not touched", path, rc == 0 ? ": " : "", rc == 0 ? loop : "");
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	}
	rc = blkdev_signature_close(fd, path, &sig, err, errlen);
	if (rc < 0)
		return rc;
	/* What ramboot made: ext4 with the cache's label. Anything else that
	 * blkid recognises is someone's data. */
	if (!o->force && (sig.pttype[0] || (sig.type[0] && (strcmp(sig.type, CACHE_FSTYPE) ||
							      strcmp(sig.label, label)))))
		return rb_errfmt(err, errlen, -EEXIST, "%s: holds %s%s%s%s; not a cache ramboot made "
				 "(--force to format it)", path,
				 sig.pttype[0] ? "a partition table " : "a file system ",
				 sig.pttype[0] ? sig.pttype : sig.type, sig.label[0] ? " labelled " : "",
				 sig.label);
	rc = run_mkfs(path, label, err, errlen);
	if (rc < 0)
		return rc;
	rc = cache_mount(&c, path, true, false, false, err, errlen);
	if (rc < 0)
		return rc;
	rc = write_layout(&c, err, errlen);
	cache_close(&c);
	return rc;
}
