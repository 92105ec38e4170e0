// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The destination of a load: a new file (in a tmpfs mounted for it, or
 * anywhere), or a block device (a zram device the loader sizes, or any
 * other). Nothing is touched before it must be: the file has no name
 * until it is verified (outfile.c), a block device is opened O_EXCL (a
 * mounted one is refused) and wiped on failure only if a byte was
 * written to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "load/loadint.h"
#include "dev/blkdev.h"
#include "dev/zram.h"
#include "lib/base.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "lib/tmpfs.h"

int sink_mount_tmpfs(struct run *u)
{
	const char *dir = u->o->tmpfs;
	uint64_t avail = 0, size;
	char opts[128];
	struct stat st;
	int rc;

	if (lstat(dir, &st) < 0) {
		if (errno != ENOENT || mkdir(dir, 0755) < 0)
			return load_fail(u, LOAD_DEST, "%s: %s", dir, strerror(errno));
		u->snk.tmpfs_mkdir = true;
	} else if (!S_ISDIR(st.st_mode)) {
		return load_fail(u, LOAD_DEST, "%s: not a directory", dir);
	} else {
		/* A directory on another device than its parent is a mount
		 * point: most likely the tmpfs of an earlier load. A second
		 * tmpfs over it would hide the first copy and keep its RAM. */
		char parent[PATH_MAX];
		struct stat pst;

		if (snprintf(parent, sizeof(parent), "%s/..", dir) >= (int)sizeof(parent))
			return load_fail(u, LOAD_DEST, "%s: path too long", dir);
		if (stat(parent, &pst) == 0 && pst.st_dev != st.st_dev && fetch_resumes(u)) {
			u->tmpfs_reused = true;
			u->r->mounted_tmpfs = true;
			return 0;
		}
		if (stat(parent, &pst) == 0 && pst.st_dev != st.st_dev)
			return load_fail(u, LOAD_DEST, "%s: already a mount point (a tmpfs of an "
					 "earlier load?): unmount it first", dir);
	}
	/* Sized to the image plus a margin when the size is known; else
	 * capped at what may be used, and shrunk to fit after the load. */
	if (u->estimate_exact) {
		size = u->estimate + u->estimate / 100 + 4 * MiB;
	} else {
		(void)rb_meminfo("MemAvailable", &avail);
		size = avail > u->o->min_free ? avail - u->o->min_free : 16 * MiB;
	}
	rc = tmpfs_mount(dir, size, opts, sizeof(opts));
	if (rc < 0)
		return load_fail(u, LOAD_DEST, "%s: cannot mount tmpfs: %s", dir, strerror(-rc));
	u->snk.tmpfs_mounted = true;
	u->r->mounted_tmpfs = true;
	rb_debug("mounted tmpfs on %s (%s)", dir, opts);
	return 0;
}

/* A zram device: size it for the image (the kernel sizes it once; reset
 * undoes it). */
static int size_zram(struct run *u, int id, const char *path)
{
	uint64_t disksize, est = u->estimate;
	int rc;

	rc = zram_is_initialised(id);
	if (rc < 0)
		return load_fail(u, LOAD_DEST, "%s: cannot read disksize: %s", path, strerror(-rc));
	if (rc > 0)
		return load_fail(u, LOAD_DEST, "%s: zram device already in use", path);
	if (!est)
		return load_fail(u, LOAD_DEST, "%s: image size unknown: a zram target needs "
				 "--manifest or a seekable source", path);
	disksize = u->estimate_exact ? est : est + est / 10;
	disksize = (disksize + 4095) & ~4095ULL;
	rc = zram_set_disksize(id, disksize);
	if (rc < 0)
		return load_fail(u, rc == -ENOMEM ? LOAD_NOMEM : LOAD_DEST,
				 "%s: cannot set disksize: %s", path, strerror(-rc));
	u->snk.zram_id = id;
	return 0;
}

static int open_block(struct run *u, const char *path, const struct stat *st)
{
	struct sink *k = &u->snk;
	int id = zram_id_from_path(path), rc;

	if (S_ISBLK(u->src.st.st_mode) && u->src.st.st_rdev == st->st_rdev)
		return load_fail(u, LOAD_DEST, "%s: is the source itself", path);
	k->blk = true;
	/* O_EXCL on a block device: refused while it is mounted or held
	 * open exclusively by anyone else. Opened before zram is sized, so
	 * a device in use is never changed. */
	k->fd = open(path, O_RDWR | O_EXCL | O_CLOEXEC);
	if (k->fd < 0)
		return load_fail(u, LOAD_DEST, "%s: %s", path, errno == EBUSY ?
				 "device in use (mounted or held open)" : strerror(errno));
	if (id >= 0 && (rc = size_zram(u, id, path)) != 0)
		return rc;
	rc = blk_size(k->fd, &k->limit);
	if (rc < 0)
		return load_fail(u, LOAD_DEST, "%s: %s", path, strerror(-rc));
	if (u->estimate_exact && u->estimate > k->limit)
		return load_fail(u, LOAD_DEST, "%s: device too small for the image", path);
	return 0;
}

int sink_open(struct run *u)
{
	const struct load_opts *o = u->o;
	struct sink *k = &u->snk;
	char *path = u->r->dest_path;
	size_t plen = sizeof(u->r->dest_path);
	char err[PATH_MAX + 64];
	struct stat st;
	int rc;

	if ((o->tmpfs && o->dest[0] != '/' ?
	     snprintf(path, plen, "%s/%s", o->tmpfs, o->dest) :
	     snprintf(path, plen, "%s", o->dest)) >= (int)plen)
		return load_fail(u, LOAD_USAGE, "DEST: path too long");

	/* A block device, also behind a symbolic link (/dev/disk/by-id). */
	if (stat(path, &st) == 0 && S_ISBLK(st.st_mode)) {
		if (o->tmpfs)
			return load_fail(u, LOAD_USAGE, "%s: a block device is not inside --tmpfs",
					 path);
		return open_block(u, path, &st);
	}
	/* O_RDWR: the verification reads the superblock back. */
	rc = outfile_open(&k->of, path, 0644, o->force ? OUTFILE_REPLACE : 0,
			  S_ISREG(u->src.st.st_mode) ? &u->src.st : NULL, err, sizeof(err));
	if (rc < 0)
		return load_fail(u, LOAD_DEST, "%s", err);
	k->have_of = true;
	k->fd = k->of.fd;
	if (k->tmpfs_mounted) {
		struct stat mst, dst;

		/* Containment is a file system fact, not a string prefix:
		 * the file's directory must be on the tmpfs just mounted. */
		if (stat(o->tmpfs, &mst) < 0 || outfile_dir_stat(&k->of, &dst) < 0 ||
		    mst.st_dev != dst.st_dev)
			return load_fail(u, LOAD_USAGE, "%s: not inside the --tmpfs directory %s",
					 path, o->tmpfs);
	}
	return 0;
}

int sink_commit(struct run *u)
{
	struct sink *k = &u->snk;
	int rc;

	if (k->blk) {
		if (fsync(k->fd) < 0)
			return load_fail(u, LOAD_DEST, "%s: %s", u->r->dest_path, strerror(errno));
		rc = close_checked(k->fd);
		k->fd = -1;
	} else {
		rc = outfile_commit(&k->of);
		k->fd = -1;
		k->have_of = false;
	}
	if (rc < 0)
		return load_fail(u, LOAD_DEST, "%s: %s", u->r->dest_path, strerror(-rc));
	/* Shrink a tmpfs sized from an estimate to what the image uses. */
	if (k->tmpfs_mounted && !u->estimate_exact) {
		char opts[64];
		uint64_t size = ((u->r->bytes_out + 4 * MiB) + 4095) & ~4095ULL;

		snprintf(opts, sizeof(opts), "size=%" PRIu64, size);
		(void)mount(NULL, u->o->tmpfs, NULL, MS_REMOUNT | TMPFS_FLAGS, opts);
	}
	return 0;
}

void sink_undo(struct run *u)
{
	struct sink *k = &u->snk;

	if (k->blk && k->fd >= 0) {
		/* Not ours to reset, and written to: wipe the start so that
		 * no half image is ever mounted from it. A device nothing
		 * was written to is left exactly as it was. */
		if (k->zram_id < 0 && u->r->bytes_out > 0) {
			/* Not const: .bss, not 64 KiB of zeros in the binary. */
			static uint8_t zero[65536];

			int rc = pwrite_full(k->fd, zero, sizeof(zero), 0);

			if (rc < 0)
				rb_warn("%s: cannot wipe: %s", u->r->dest_path, strerror(-rc));
			(void)fdatasync(k->fd);
		}
		(void)close(k->fd);
	}
	k->fd = -1;
	if (k->have_of) {
		outfile_abort(&k->of);
		k->have_of = false;
	}
	/* The kernel refuses reset while the node is open: closed above. */
	if (k->zram_id >= 0 && zram_reset(k->zram_id) < 0)
		rb_warn("zram%d: reset failed", k->zram_id);
	k->zram_id = -1;
	if (k->tmpfs_mounted) {
		if (umount2(u->o->tmpfs, 0) < 0)
			(void)umount2(u->o->tmpfs, MNT_DETACH);
		k->tmpfs_mounted = false;
		u->r->mounted_tmpfs = false;
	}
	if (k->tmpfs_mkdir) {
		(void)rmdir(u->o->tmpfs);
		k->tmpfs_mkdir = false;
	}
}
