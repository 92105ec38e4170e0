/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Device-mapper, as much of it as a read-only dm-verity mapping and a
 * dm-crypt mapping (plain mode: no header, the key given in the table) need,
 * straight through the ioctls of /dev/mapper/control (linux/dm-ioctl.h),
 * without libdevmapper:
 *
 *   DM_DEV_CREATE    a new mapped device NAME, with no table yet;
 *   DM_TABLE_LOAD    its table, read-only (DM_READONLY_FLAG: the verity
 *                    target refuses a table that could be written), as
 *                    the inactive table;
 *   DM_DEV_SUSPEND   without DM_SUSPEND_FLAG: resume, which makes the
 *                    inactive table the live one;
 *   DM_DEV_REMOVE    remove the device (EBUSY while it is open: mounted).
 *
 * The table names its devices by major:minor. It holds the block devices
 * themselves, not the files behind them: a loop device under a mapping may
 * change its backing file (LOOP_CHANGE_FD) and the mapping reads the new
 * one from then on, verified against the same tree.
 *
 * Nothing here waits for udev: the node /dev/mapper/NAME is made by
 * dm_verity_create itself (mknod, unless one for the same device is there
 * already) and removed by dm_remove. Every path goes through the root
 * prefix (rb_path).
 */
#ifndef RAMBOOT_DM_H
#define RAMBOOT_DM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format/verity.h"

/* A verity table: "verity 1 DATA HASH 4096 4096 BLOCKS START sha256 ROOT SALT". */
struct dm_verity_target {
	dev_t data;                      /* the data device */
	dev_t hash;                      /* the device with the hash file */
	uint64_t data_blocks;            /* 4096-byte blocks mapped */
	uint64_t hash_start;             /* the tree's first block on hash (VERITY_HASH_START) */
	uint8_t root[VERITY_DIGEST];
	uint8_t salt[VERITY_SALT_MAX];
	size_t salt_len;
};

/* A name for a mapping: 1 to 127 characters from [A-Za-z0-9._+-], not
 * starting with a dot (it becomes a file name in /dev/mapper). */
bool dm_name_valid(const char *name);

/* The target's parameters (what follows "verity" in a dmsetup table) into
 * buf. 0 or -ENOSPC. */
int dm_verity_params(const struct dm_verity_target *t, char *buf, size_t len);

/* /dev/mapper/NAME below the root prefix. 0 or -ENAMETOOLONG. */
int dm_node_path(const char *name, char *buf, size_t len);

/* Create and activate the read-only mapping NAME of t, and its node
 * /dev/mapper/NAME; *dev gets its device number. Nothing is left behind
 * on failure. 0 or -errno with the reason in err: -ENODEV no
 * device-mapper in the kernel, -EEXIST a mapping of that name exists,
 * -EOPNOTSUPP no verity target, -EINVAL the kernel refused the table. */
int dm_verity_create(const char *name, const struct dm_verity_target *t, dev_t *dev,
		     char *err, size_t errlen);

/* The longest key of a crypt mapping: aes-xts with AES-256, 2 x 32 bytes. */
#define DM_CRYPT_KEY_MAX 64

/* Create and activate the read-write mapping NAME, aes-xts-plain64 with
 * key over the first sectors of the block device under, and its node.
 * The table that carried the key is wiped from our memory once loaded
 * (the kernel keeps its own copy for the mapping's life); the caller
 * wipes key. 0 or -errno with the reason in err, as dm_verity_create. */
int dm_crypt_create(const char *name, dev_t under, uint64_t sectors, const uint8_t *key,
		    size_t keylen, dev_t *dev, char *err, size_t errlen);

/* Remove the mapping NAME and the node /dev/mapper/NAME if it is that
 * device's. 0 or -errno with the reason in err: -ENXIO no such mapping,
 * -EBUSY it is open (mounted). */
int dm_remove(const char *name, char *err, size_t errlen);

/* Does the running kernel have the device-mapper target `type`? 1 yes,
 * 0 no, -errno when device-mapper cannot be asked. The kernel loads a
 * target's module on the first table that uses it, so 0 may only mean
 * "not loaded yet". */
int dm_has_target(const char *type);

#endif
