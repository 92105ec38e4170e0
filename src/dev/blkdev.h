/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What libblkid finds on a device or an image file: for a command that
 * must not overwrite a file system or a partition table nobody told it
 * to (`ramboot cache init`). blk_size() and blkid_fstype_fd() are
 * declared in lib/ramboot.h.
 */
#ifndef RAMBOOT_BLKDEV_H
#define RAMBOOT_BLKDEV_H

struct blkdev_signature {
	char type[32];                    /* a file system or RAID: "ext4", ... */
	char label[64];                   /* its label */
	char pttype[32];                  /* a partition table: "gpt", "dos" */
};

/* Probe fd (superblocks and partition tables): 0 with each field "" when
 * nothing of that kind is there, or -errno. An ambiguous probe (two
 * signatures) reports type "ambiguous". */
int blkdev_signature_fd(int fd, struct blkdev_signature *sig);

#endif
