/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zram devices through the root prefix: hot-add, attributes, reset,
 * hot-remove. Used by the loader (zram block target) and by swap.
 */
#ifndef RAMBOOT_ZRAM_H
#define RAMBOOT_ZRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Load the zram module if /sys/class/zram-control is missing (modprobe,
 * real root only). 0 or -errno. */
int zram_ensure_module(void);
/* Hot-add a new device; its number in *id. 0 or -errno. */
int zram_hot_add(int *id);
/* Remove a device added with zram_hot_add (resets it first). */
int zram_hot_remove(int id);
/* Write "1" to reset: the kernel refuses (EBUSY) while the node is open. */
int zram_reset(int id);
/* Read / write /sys/block/zram<id>/<attr>. */
int zram_get(int id, const char *attr, char *buf, size_t len);
int zram_set(int id, const char *attr, const char *val);
/* disksize in bytes (0: not initialised). */
int zram_disksize(int id, uint64_t *bytes);
/* Size a free device: disksize in bytes (the kernel rounds it up to
 * whole pages, and takes it once: reset undoes it). 0 or -errno
 * (-ENOMEM: no memory for it). */
int zram_set_disksize(int id, uint64_t bytes);
/* 1 when the device has a disksize (initialised), 0 when free, -errno. */
int zram_is_initialised(int id);
/* "/dev/zram3" -> 3; -EINVAL when the path is not a zram node. */
int zram_id_from_path(const char *dev);

/* comp_algorithm reads "lzo [lzo-rle] lz4": the names the kernel offers,
 * the current one in brackets. Pure helpers over that text: */
bool zram_algo_offered(const char *avail, const char *name);
const char *zram_algo_current(const char *avail, char *out, size_t len);

/* Write a sysfs/procfs attribute below the root prefix. Against a fixture
 * root, every write (and hot_add read) is also appended to the file named
 * by $RAMBOOT_WRITE_LOG as "path=value", so tests can check the order. */
int rb_sysfs_write(const char *path, const char *val);
void rb_sysfs_log(const char *path, const char *val, int rc);

#endif
