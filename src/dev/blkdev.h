/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Block devices: the size of one, the file system on a device or an
 * image file, what libblkid finds there for a command that must not
 * overwrite a file system or a partition table nobody told it to
 * (`ramboot cache init`), and a device named by label or UUID.
 */
#ifndef RAMBOOT_BLKDEV_H
#define RAMBOOT_BLKDEV_H

#include <stddef.h>
#include <stdint.h>

/* Size of a block device (BLKGETSIZE64). 0 or -errno. */
int blk_size(int fd, uint64_t *size);
/* The file system blkid finds on fd ("squashfs", ...; "" when none).
 * 0 or -errno. */
int blkid_fstype_fd(int fd, char *type, size_t len);

struct blkdev_signature {
	char type[32];                    /* a file system or RAID: "ext4", ... */
	char label[64];                   /* its label */
	char uuid[40];                    /* its UUID */
	char pttype[32];                  /* a partition table: "gpt", "dos" */
};

/* Probe fd (superblocks and partition tables): 0 with each field "" when
 * nothing of that kind is there, or -errno. An ambiguous probe (two
 * signatures) reports type "ambiguous". */
int blkdev_signature_fd(int fd, struct blkdev_signature *sig);

/* blkdev_signature_fd() of fd, the descriptor of path, which it closes;
 * fd < 0: the open of path that failed (errno tells why). 0, or -errno
 * with err ("PATH: cannot probe it: ..."). */
int blkdev_signature_close(int fd, const char *path, struct blkdev_signature *sig, char *err,
			   size_t errlen);

/* The block device SPEC names: "LABEL=x", "UUID=x" (a file system's),
 * "PARTLABEL=x" (a GPT partition's name), found among /sys/class/block
 * (through the root prefix) by reading, never writing; or "/dev/..." as
 * given. Its /dev path (prefixed) in path. 0, or -errno with err:
 * -ENOENT none carries it, -EEXIST two do (neither is used). */
int blkdev_find(const char *spec, char *path, size_t len, char *err, size_t errlen);

#endif
