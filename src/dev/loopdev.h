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
#endif
