// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Block device facts: the size of a device and the file system on it.
 */
#include <blkid/blkid.h>
#include <errno.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "lib/ramboot.h"
#include "dev/blkdev.h"

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

int blkdev_signature_fd(int fd, struct blkdev_signature *sig)
{
	blkid_probe pr = blkid_new_probe();
	const char *v = NULL;
	int rc;

	memset(sig, 0, sizeof(*sig));
	if (!pr)
		return -ENOMEM;
	rc = blkid_probe_set_device(pr, fd, 0, 0) < 0 ? -EIO : 0;
	if (rc == 0) {
		blkid_probe_enable_superblocks(pr, 1);
		blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL);
		blkid_probe_enable_partitions(pr, 1);
		blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
		switch (blkid_do_safeprobe(pr)) {
		case 0:
			if (blkid_probe_lookup_value(pr, "TYPE", &v, NULL) == 0)
				snprintf(sig->type, sizeof(sig->type), "%s", v);
			if (blkid_probe_lookup_value(pr, "LABEL", &v, NULL) == 0)
				snprintf(sig->label, sizeof(sig->label), "%s", v);
			if (blkid_probe_lookup_value(pr, "PTTYPE", &v, NULL) == 0)
				snprintf(sig->pttype, sizeof(sig->pttype), "%s", v);
			break;
		case -2:
			snprintf(sig->type, sizeof(sig->type), "ambiguous");
			break;
		case 1:
			break;
		default:
			rc = -EIO;
		}
	}
	blkid_free_probe(pr);
	return rc;
}
