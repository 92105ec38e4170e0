// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Block device facts: the size of a device and the file system on it.
 */
#include <blkid/blkid.h>
#include <errno.h>
#include <linux/fs.h>
#include <stdio.h>
#include <sys/ioctl.h>

#include "lib/ramboot.h"

int blk_size(int fd, uint64_t *size)
{
	return ioctl(fd, BLKGETSIZE64, size) < 0 ? -errno : 0;
}

int blkid_fstype_fd(int fd, char *type, size_t len)
{
	blkid_probe pr = blkid_new_probe();
	const char *t = NULL;
	int rc;

	if (len)
		type[0] = '\0';
	if (!pr)
		return -ENOMEM;
	rc = blkid_probe_set_device(pr, fd, 0, 0) < 0 ? -EIO : 0;
	if (rc == 0) {
		blkid_probe_enable_superblocks(pr, 1);
		blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
		if (blkid_do_safeprobe(pr) == 0 && blkid_probe_lookup_value(pr, "TYPE", &t, NULL) == 0)
			snprintf(type, len, "%s", t);
	}
	blkid_free_probe(pr);
	return rc;
}
