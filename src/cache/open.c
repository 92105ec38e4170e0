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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/base.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/outfile.h"
#include "lib/path.h"
#include "lib/sysutil.h"
#include "dev/blkdev.h"
#include "dev/loopdev.h"
#include "cache/cache.h"

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

/* How a mount is made: sbro, the superblock read-only (ext4 updates its
 * mount count and time on a read-write one); norecovery, and the journal
 * is not replayed either (ext4 replays it even under a read-only
 * superblock): nothing at all is written, for a device not yet proven a
 * cache. */
enum { MNT_RW = 1, MNT_SBRO = 2, MNT_NORECOVERY = 4 };

static int mount_detached(struct cache *c, const char *source, int how, char *err, size_t errlen)
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
	if (fsconfig(fsfd, FSCONFIG_SET_STRING, "source", source, 0) < 0 ||
	    ((how & MNT_SBRO) && fsconfig(fsfd, FSCONFIG_SET_FLAG, "ro", NULL, 0) < 0) ||
	    ((how & MNT_NORECOVERY) &&
	     fsconfig(fsfd, FSCONFIG_SET_FLAG, "norecovery", NULL, 0) < 0) ||
	    fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		rc = -errno;
		fs_log(fsfd, why, sizeof(why));
		(void)close(fsfd);
		return rb_errfmt(err, errlen, rc, "%s: cannot mount it as %s: %s%s%s", c->what,
				 CACHE_FSTYPE, strerror(-rc), why[0] ? ": " : "", why);
	}
	c->mnt = fsmount(fsfd, FSMOUNT_CLOEXEC,
			 MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC |
			 ((how & MNT_RW) ? 0 : MOUNT_ATTR_RDONLY));
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

/* The ext4 superblock at 1024 of fd says that its journal has to be
 * replayed (s_feature_incompat at 0x60, EXT3_FEATURE_INCOMPAT_RECOVER). */
static bool needs_recovery(int fd)
{
	uint8_t b[4];

	return pread_full(fd, b, sizeof(b), 1024 + 0x60) == (ssize_t)sizeof(b) && (b[0] & 0x04);
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

/* The mount of what fd (a regular file, a block device) holds, as how
 * says: through a loop device for a file (read-only unless MNT_RW), the
 * device itself through fd's /proc link for a block device, so that the
 * file system mounted is on the very inode fd was opened on. The probe of
 * a block device (MNT_NORECOVERY) goes through a read-only loop device
 * too: ext4 cleans up a crash's orphan inodes even on a read-only mount,
 * unless the block device under it is read-only (ext4_orphan_cleanup:
 * bdev_read_only), and only then is nothing at all written. */
static int mount_fd(struct cache *c, int fd, const struct stat *st, int how, char *err,
		    size_t errlen)
{
	char lname[32], src[PATH_MAX];
	int rfd, rc;

	if (S_ISBLK(st->st_mode) && !(how & MNT_NORECOVERY)) {
		snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
		return mount_detached(c, src, how, err, errlen);
	}
	rfd = fd;
	if (how & MNT_RW) {
		snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
		rfd = open(src, O_RDWR | O_CLOEXEC);
		if (rfd < 0)
			return rb_errfmt(err, errlen, -errno, "%s: %s", c->what, strerror(errno));
	}
	rc = loopdev_attach(rfd, !(how & MNT_RW), lname, sizeof(lname), &c->loop);
	if (rfd != fd)
		(void)close(rfd);         /* the loop device holds it now */
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "%s: no loop device for it: %s", c->what,
				 strerror(-rc));
	rc = rb_path(src, sizeof(src), "/dev/%s", lname);
	return rc < 0 ? rc : mount_detached(c, src, how, err, errlen);
}

/* path opened (without waiting on a FIFO, never a terminal), or pfd
 * duplicated when it is one, and its stat into *st: the descriptor, or
 * -errno with err. */
static int open_nowait(const char *path, int pfd, struct stat *st, char *err, size_t errlen)
{
	int fd, rc;

	fd = pfd >= 0 ? fcntl(pfd, F_DUPFD_CLOEXEC, 3) :
	     open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, st) < 0) {
		rc = -errno;
		if (fd >= 0)
			(void)close(fd);
		return rb_errfmt(err, errlen, rc, "%s: %s", path, strerror(-rc));
	}
	return fd;
}

/*
 * A device that may not be a cache is mounted read-only and norecovery
 * (nothing written: not the mount count, not the journal's replay) until
 * its marker is read; only then the mount it is used through (read-write,
 * or read-only with its journal replayed). A probe refused because the
 * file system is mounted read-write elsewhere (EBUSY: the kernel shares a
 * superblock, it cannot be read-only for one mount) is not needed: that
 * mount is shared as it is, and writes nothing of its own.
 */
static int cache_mount(struct cache *c, const char *path, int pfd, bool rw, bool marker,
		       bool sbro, char *err, size_t errlen)
{
	struct stat st;
	int fd, rc;

	cache_reset(c, path);
	fd = open_nowait(path, pfd, &st, err, errlen);
	if (fd < 0)
		return fd;
	if (S_ISDIR(st.st_mode)) {
		snprintf(c->how, sizeof(c->how), "directory");
		c->root = fd;
		rc = marker ? check_marker(c, err, errlen) : 0;
		if (rc < 0)
			cache_close(c);
		return rc;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		(void)close(fd);
		return rb_errfmt(err, errlen, -EINVAL, "%s: not a block device, a regular file or "
				 "a directory", path);
	}
	snprintf(c->how, sizeof(c->how), S_ISREG(st.st_mode) ? "file" : "block device");
	rc = -EBUSY;
	if (marker) {
		rc = mount_fd(c, fd, &st, MNT_SBRO | MNT_NORECOVERY, err, errlen);
		if (rc == 0)
			rc = check_marker(c, err, errlen);
		/* Ours: the mount it is used through instead (always for a
		 * block device, probed through a loop device of its own). */
		if (rc == 0 && (rw || !sbro || needs_recovery(fd) || S_ISBLK(st.st_mode))) {
			cache_close(c);
			rc = -EAGAIN;
		}
		if (rc < 0 && rc != -EAGAIN && rc != -EBUSY)
			goto out;
	}
	if (rc < 0)
		rc = mount_fd(c, fd, &st, (rw ? MNT_RW : 0) | (sbro ? MNT_SBRO : 0), err, errlen);
	if (rc == 0 && c->root < 0)
		rc = -EIO;
	if (rc == 0 && marker)
		rc = check_marker(c, err, errlen);
out:
	(void)close(fd);
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
		rc = cache_mount(c, path, -1, false, true, true, err, errlen);
		if (rc != -EBUSY)
			return rc;
	}
	rc = cache_mount(c, path, -1, rw, true, false, err, errlen);
	if (rc == -EBUSY && rw)
		return rb_errfmt(err, errlen, rc, "%s: mounted read-only elsewhere (the running "
				 "system reads a slot of it: booted from it, or switched to it after "
				 "a refresh); written from the next boot on", path);
	return rc;
}

int cache_open_ro(struct cache *c, const char *path, char *err, size_t errlen)
{
	return cache_mount(c, path, -1, false, true, true, err, errlen);
}

int cache_open_ro_fd(struct cache *c, const char *path, int fd, char *err, size_t errlen)
{
	return cache_mount(c, path, fd, false, true, true, err, errlen);
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

/* mkfs.ext4 on the file or device fd was opened on, through its /proc
 * link: the very inode that was checked, whatever its path names now. */
static int run_mkfs(int fd, const char *path, const char *label, char *err, size_t errlen)
{
	/* -F: a regular file, or a device that held another file system
	 * (checked above), without a question; once only, so that mke2fs
	 * still refuses a mounted device. -m 0: no blocks reserved for root,
	 * nobody logs in on it. The journal stays: a rename is committed
	 * whole after a power cut. */
	char dev[64];
	char *const argv[] = { "mkfs.ext4", "-q", "-F", "-m", "0", "-L", (char *)label, dev, NULL };
	int rc, status, cfd;

	/* A descriptor the child inherits (this one is close-on-exec). */
	cfd = fcntl(fd, F_DUPFD, 3);
	if (cfd < 0)
		return rb_errfmt(err, errlen, -errno, "%s: %s", path, strerror(errno));
	snprintf(dev, sizeof(dev), "/proc/self/fd/%d", cfd);
	rc = spawn_wait(argv, &status);
	(void)close(cfd);
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "cannot run mkfs.ext4 (e2fsprogs): %s",
				 strerror(-rc));
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

/* Every check of cache_init() on fd, the descriptor of path, and the
 * format of that very file or device. */
static int init_fd(int fd, const char *path, const struct stat *st, const char *label,
		   bool force, char *err, size_t errlen)
{
	struct blkdev_signature sig;
	char loop[32], proc[64];
	struct cache c;
	int xfd, rc;

	if (S_ISBLK(st->st_mode)) {
		rc = check_not_root(path, st->st_rdev, err, errlen);
		if (rc < 0)
			return rc;
		/* O_EXCL on a block device: EBUSY while it is mounted, swap,
		 * or held by a mapping or an array, the kernel's own claim
		 * (let go at once: mke2fs claims it again). */
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		xfd = open(proc, O_RDONLY | O_EXCL | O_CLOEXEC);
		if (xfd < 0 && errno == EBUSY)
			return rb_errfmt(err, errlen, -EBUSY, "%s: in use (mounted, swap, or part of "
					 "a mapping or an array); not touched", path);
		if (xfd >= 0)
			(void)close(xfd);
	} else {
		/* A file system image: in use when a loop device is over it. */
		rc = loopdev_find(path, st, loop, sizeof(loop), NULL, 0);
		if (rc == 0 || rc == -EEXIST)
			return rb_errfmt(err, errlen, -EBUSY, "%s: in use (a loop device is over it%s%s); "
					 "not touched", path, rc == 0 ? ": " : "", rc == 0 ? loop : "");
	}
	rc = blkdev_signature_fd(fd, &sig);
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "%s: cannot probe it: %s", path, strerror(-rc));
	/* What ramboot made: ext4 with the cache's label. Anything else that
	 * blkid recognises is someone's data. */
	if (!force && (sig.pttype[0] || (sig.type[0] && (strcmp(sig.type, CACHE_FSTYPE) ||
							    strcmp(sig.label, label)))))
		return rb_errfmt(err, errlen, -EEXIST, "%s: holds %s%s%s%s; not a cache ramboot made "
				 "(--force to format it)", path,
				 sig.pttype[0] ? "a partition table " : "a file system ",
				 sig.pttype[0] ? sig.pttype : sig.type, sig.label[0] ? " labelled " : "",
				 sig.label);
	rc = run_mkfs(fd, path, label, err, errlen);
	if (rc < 0)
		return rc;
	rc = cache_mount(&c, path, fd, true, false, false, err, errlen);
	if (rc < 0)
		return rc;
	rc = write_layout(&c, err, errlen);
	cache_close(&c);
	return rc;
}

int cache_init(const char *path, const struct cache_init_opts *o, char *err, size_t errlen)
{
	const char *label = o->label ? o->label : CACHE_LABEL_DEFAULT;
	struct stat st, ls;
	int fd, rc;

	if (!label_valid(label))
		return rb_errfmt(err, errlen, -EINVAL, "label '%s': 1 to 16 of A-Z a-z 0-9 . _ -",
				 label);
	/* Opened once, without waiting on a FIFO: what is checked and
	 * formatted is what this descriptor is, whatever the path names
	 * later. A file is never taken through a symbolic link (a device
	 * is: /dev/disk/by-id/...). */
	fd = open_nowait(path, -1, &st, err, errlen);
	if (fd < 0)
		return fd;
	if (S_ISDIR(st.st_mode)) {
		(void)close(fd);
		return init_dir(path, o->force, err, errlen);
	}
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode))
		rc = rb_errfmt(err, errlen, -EINVAL, "%s: not a block device, a regular file or "
			       "a directory; not touched", path);
	else if (S_ISREG(st.st_mode) && (lstat(path, &ls) < 0 || S_ISLNK(ls.st_mode)))
		rc = rb_errfmt(err, errlen, -ELOOP, "%s: a symbolic link to a file; not touched",
			       path);
	else
		rc = init_fd(fd, path, &st, label, o->force, err, errlen);
	(void)close(fd);
	return rc;
}
