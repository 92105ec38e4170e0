/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Loop devices as the lazy copier needs them: which one is backed by a
 * given image (sysfs, through the root prefix), whether it is read-only
 * and as large as the image, who it is bound to now (LOOP_GET_STATUS64),
 * and LOOP_CHANGE_FD.
 *
 * The kernel (drivers/block/loop.c, loop_change_fd) accepts a new backing
 * file only when the loop device is read-only (LO_FLAGS_READ_ONLY, set by
 * `losetup -r` or by a read-only open of the file) and when the new file
 * (a regular file or a block device) gives the same number of 512-byte
 * sectors once the device's offset and size limit are applied. The
 * offset and size limit stay; the old file is released.
 */
#ifndef RAMBOOT_LOOPDEV_H
#define RAMBOOT_LOOPDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* What sysfs tells of /sys/block/<name>. */
struct loopdev_info {
	char backing[4096];      /* loop/backing_file, "" when unbound */
	bool ro;                 /* ro == 1 */
	uint64_t sectors;        /* size, in 512-byte sectors */
	uint64_t offset;         /* loop/offset (0 when missing) */
	uint64_t sizelimit;      /* loop/sizelimit (0 when missing) */
};

/* "loop7" -> true; "loop", "loopx", "zram0" -> false. */
bool loopdev_name_valid(const char *name);

/* Sectors a loop device over a file of file_size bytes has, as the
 * kernel counts them (get_size() in loop.c): the offset taken off, capped
 * at sizelimit when that is set, in whole 512-byte sectors. */
uint64_t loopdev_sectors(uint64_t file_size, uint64_t offset, uint64_t sizelimit);

/* Does the backing_file text name image? Equal to the path as given or
 * to its canonical form (real may be NULL). A file the kernel shows as
 * " (deleted)" is never the image. */
bool loopdev_backing_matches(const char *backing, const char *image, const char *real);

/* Read /sys/block/<name>/{ro,size,loop/backing_file,loop/offset,
 * loop/sizelimit}. 0, or -errno (-ENOENT: no such device). */
int loopdev_read_info(const char *name, struct loopdev_info *i);

/* Find the loop device whose backing file is image (st: its stat, to
 * match a backing path written differently): its name in name. -ENOENT
 * when none is, -EEXIST when several are (err says which). */
int loopdev_find(const char *image, const struct stat *st, char *name, size_t len,
		 char *err, size_t errlen);

/* The sysfs name ("loop3") of the block device open at fd, through
 * /sys/dev/block/MAJ:MIN. -ENOTBLK when fd is not a block device,
 * -EINVAL when it is not a loop device. */
int loopdev_name_of_fd(int fd, char *name, size_t len);
/* The same for any block device ("zram1", "nbd0"). -ENOTBLK when fd is
 * not a block device. */
int blkdev_name_of_fd(int fd, char *name, size_t len);

/* LOOP_GET_STATUS64: 1 when the loop device at fd is bound to the file
 * (or block device) st, 0 when bound to another one, -errno (-ENXIO:
 * unbound). *ro gets LO_FLAGS_READ_ONLY. */
int loopdev_bound_to(int fd, const struct stat *st, bool *ro);

/* LOOP_CHANGE_FD: back the loop device at fd by newfd from now on.
 * 0 or -errno (-EINVAL: not read-only, or the sizes differ). */
int loopdev_change_fd(int fd, int newfd);

/* A new read-only loop device over the file (or block device) open at
 * bfd, with LO_FLAGS_AUTOCLEAR: it goes away when its last user (the
 * returned *loopfd, a mapping or a mount on it) closes it. Its name
 * ("loop4") in name. 0 or -errno. */
int loopdev_attach_ro(int bfd, char *name, size_t len, int *loopfd);
/* The same, read-write when ro is false (bfd open for writing): a file
 * system image in a regular file, mounted through it. */
int loopdev_attach(int bfd, bool ro, char *name, size_t len, int *loopfd);
/* A read-only loop device over bfd that stays (no autoclear) after this
 * process: for a device the boot hands to its hook, which mounts it
 * later. Detached by loopdev_detach() when nobody takes it. */
int loopdev_attach_keep(int bfd, char *name, size_t len);
/* LOOP_CLR_FD on /dev/NAME ("loop4"). 0 or -errno. */
int loopdev_detach(const char *name);
/* ---- the switch (loopwatch.c): the lazy copier's, and the cache's ---- */

/* The loop device of an image, looked for through descriptors opened at
 * the start, so that it is found after a switch of root has moved /sys,
 * /dev and the image's own path (the boot's hook sets it up later). */
struct loopdev_watch {
	int sysblock_fd;         /* /sys/devices/virtual/block, else /sys/block */
	int dev_fd;              /* /dev (O_PATH) */
	const char *image;       /* as given: the backing_file text to match */
	char *real;              /* its canonical path, or NULL */
	struct stat st;          /* the image, as opened at the start */
	uint64_t size;           /* its size in bytes */
};

/* Open what the looks need (through the root prefix). image is kept by
 * pointer. 0 or -errno with err; loopdev_watch_close() in both cases. */
int loopdev_watch_open(struct loopdev_watch *w, const char *image, const struct stat *st,
		       uint64_t size, char *err, size_t errlen);
void loopdev_watch_close(struct loopdev_watch *w);
/* One look: 1 with the loop device backed by the image (the very file
 * st names, by LOOP_GET_STATUS64), read-only and of the image's size:
 * its name in name and *fd open O_RDONLY. 0 when there is none (yet;
 * why says what was seen when one was found but is not fit, else it is
 * left alone), -EEXIST when several are (why says which), or -errno. */
int loopdev_watch_look(const struct loopdev_watch *w, int *fd, char *name, size_t len,
		       char *why, size_t whylen);

/* The switch: the loop device at loopfd, still bound to old and still
 * read-only (checked just before), is backed by newfd from now on
 * (LOOP_CHANGE_FD; newfd may be closed after). 0, -ESTALE (bound to
 * another file now), -EPERM (no longer read-only), or -errno (-ENXIO:
 * unbound; -EINVAL: the kernel refused, the sizes differ). */
int loopdev_switch(int loopfd, const struct stat *old, int newfd);
#endif
