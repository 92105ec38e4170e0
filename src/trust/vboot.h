/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ramboot.verity=1 at boot: the root is mounted through a read-only
 * dm-verity mapping, /dev/mapper/ramboot-verity, whose root hash comes
 * from the image's manifest (read under the boot's verification policy:
 * signed when the initrd holds trusted keys).
 *
 *   data   what is mapped, as a block device: a new read-only loop
 *          device over a file (the network image, the RAM copy in its
 *          tmpfs), or the block device itself (zram, an NBD root);
 *   hash   the hash tree the manifest names (verity-hash=, beside the
 *          network image), copied first into RUNDIR/verity/ so that the
 *          mapping needs nothing from the server once the data is in
 *          RAM, on a read-only loop device of its own.
 *
 * The loop devices are made with LO_FLAGS_AUTOCLEAR and then held by the
 * mapping alone: removing the mapping frees them. The whole setup runs in
 * a child process that the boot gives up on after a deadline (a server
 * that stops answering must not hold the boot); what it made is then
 * removed.
 */
#ifndef RAMBOOT_VBOOT_H
#define RAMBOOT_VBOOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dev/dm.h"
#include "format/verity.h"

#define VBOOT_NAME "ramboot-verity"
#define VBOOT_DIR "verity"           /* below the report's directory */

struct vboot_req {
	const char *image;       /* the network image: the hash tree is beside it */
	const char *data;        /* what is mapped: the image or its RAM copy */
	bool loop;               /* a loop device even over a block device
				  * (the lazy copier switches it) */
	const char *manifest;    /* the manifest with verity-root= */
	bool signed_only;        /* its signature must check (sign.h) */
	const char *keydir;      /* NULL: the initrd's keys */
	const char *want_sha256; /* NULL, or the hash the copy was verified
				  * against: the manifest must still name it */
	const char *want_root;   /* NULL, or the verity-root of the manifest
				  * the copy was verified against: the same */
	const char *rundir;      /* /run/ramboot, prefixed */
	double timeout;          /* s for the whole setup; 0: no limit */
	double deadline;         /* and no later than this (now_sec()'s
				  * clock: the boot's one deadline); 0: none */
};

struct vboot_res {
	char node[4096];         /* /dev/mapper/ramboot-verity (prefixed) */
	char root[65];           /* the root hash */
	char fstype[32];         /* blkid TYPE through the mapping */
	char signed_by[96];      /* "NAME KEYID" with signed_only */
	char data_dev[32];       /* "loop3", "zram1": the mapping's data device */
	char error[512];         /* the reason, on failure */
};

/* Set up the mapping. 0, or -errno with r->error: -ENODATA the manifest
 * has no verity-root, -ENODEV no device-mapper, -ETIMEDOUT the setup did
 * not end in time, -EBADMSG the tree is not the manifest's. Nothing is
 * left behind on failure. */
int vboot_map(const struct vboot_req *q, struct vboot_res *r);

/* Remove the mapping and the hash tree's copy (the loop devices go with
 * the mapping). 0 or -errno with the reason in err (-EBUSY: mounted). */
int vboot_unmap(const char *rundir, char *err, size_t errlen);

/* (verity_cmd.c) Everything a mapping of the block devices data and hash needs, checked
 * before the kernel is asked: the superblock on hash, the sizes, the salt
 * (when have_salt) and root against the tree's top block. Fills t. 0 or
 * -errno with the reason in err (-EBADMSG: the root hash or the salt is
 * not this tree's). */
int verity_target_prepare(const char *data, const char *hash, const uint8_t root[VERITY_DIGEST],
			  const uint8_t *salt, size_t salt_len, bool have_salt,
			  struct dm_verity_target *t, char *err, size_t errlen);

#endif
