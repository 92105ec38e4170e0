// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The target: a file in a tmpfs mounted for it, or a zram device; and
 * undo, which frees either.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "lazy/lazyint.h"
#include "dev/blkdev.h"
#include "dev/zram.h"
#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "lib/report.h"
#include "lib/tmpfs.h"

int lazy_make_tmpfs(struct lazy *L)
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
	size = L->size + L->size / 100 + 4 * MiB;
	rc = tmpfs_mount(dir, size, opts, sizeof(opts));
	if (rc < 0)
		return lazy_fail(L, LAZY_DEST, "%s: cannot mount tmpfs: %s", dir, strerror(-rc));
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

int lazy_make_zram(struct lazy *L)
{
	char p[PATH_MAX];
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
	rc = zram_set_disksize(id, L->size);
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
void lazy_undo(struct lazy *L)
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
