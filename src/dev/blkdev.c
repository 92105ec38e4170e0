// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Block device facts: the size of a device and the file system on it.
 */
#include <blkid/blkid.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <errno.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lib/base.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/path.h"
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

int blkdev_signature_close(int fd, const char *path, struct blkdev_signature *sig, char *err,
			   size_t errlen)
{
	int rc;

	if (fd < 0)
		return rb_errfmt(err, errlen, -errno, "%s: %s", path, strerror(errno));
	rc = blkdev_signature_fd(fd, sig);
	(void)close(fd);
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "%s: cannot probe it: %s", path, strerror(-rc));
	return 0;
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
		blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL |
						  BLKID_SUBLKS_UUID);
		blkid_probe_enable_partitions(pr, 1);
		blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
		switch (blkid_do_safeprobe(pr)) {
		case 0:
			if (blkid_probe_lookup_value(pr, "TYPE", &v, NULL) == 0)
				snprintf(sig->type, sizeof(sig->type), "%s", v);
			if (blkid_probe_lookup_value(pr, "LABEL", &v, NULL) == 0)
				snprintf(sig->label, sizeof(sig->label), "%s", v);
			if (blkid_probe_lookup_value(pr, "UUID", &v, NULL) == 0)
				snprintf(sig->uuid, sizeof(sig->uuid), "%s", v);
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

/* The ext2/3/4 superblock: 1024 bytes in, its magic, UUID and label. */
#define EXT_SB_OFF 1024
#define EXT_MAGIC_OFF 0x38
#define EXT_UUID_OFF 0x68
#define EXT_LABEL_OFF 0x78
#define EXT_LABEL_LEN 16
#define EXT_HEAD 4096

/* Can the device at path carry tag=val (LABEL or UUID)? The cache is an
 * ext4 file system: 1 when the first 4 KiB of the device hold an ext2/3/4
 * superblock with that label (UUID, in any case), 0 when they hold none or
 * another one's, -errno when they cannot be read so (the caller probes).
 * Read with O_DIRECT: those 4 KiB and no more, no readahead. libblkid's
 * probe, which finds every file system and partition table, reads about
 * 1 MB of a device (its start, its end, and the page cache's readahead
 * around them): over the network for a network block device, such as an
 * NBD export of the server's image. */
static int ext_may_carry(const char *path, const char *tag, const char *val)
{
	unsigned char *b = NULL, *sb;
	char uuid[40];
	ssize_t n;
	int fd, rc;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_DIRECT);
	if (fd < 0)
		return -errno;
	if (posix_memalign((void **)&b, EXT_HEAD, EXT_HEAD) != 0) {
		(void)close(fd);
		return -ENOMEM;
	}
	n = pread_full(fd, b, EXT_HEAD, 0);
	rc = n < 0 ? (int)n : 0;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	sb = b + EXT_SB_OFF;
	if (rc == 0 && n == EXT_HEAD && sb[EXT_MAGIC_OFF] == 0x53 && sb[EXT_MAGIC_OFF + 1] == 0xef) {
		if (!strcmp(tag, "UUID")) {
			const unsigned char *u = sb + EXT_UUID_OFF;

			snprintf(uuid, sizeof(uuid), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
				 "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5], u[6],
				 u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
			rc = !strcasecmp(uuid, val);
		} else {
			rc = strlen(val) <= EXT_LABEL_LEN &&
			     !strncmp((const char *)sb + EXT_LABEL_OFF, val, EXT_LABEL_LEN);
		}
	}
	free(b);
	return rc;
}

/* Does /sys/class/block/NAME carry tag=val? PARTLABEL from the
 * partition's uevent (PARTNAME=, the GPT entry's name), LABEL and UUID
 * by probing the device, read-only: only a device whose first 4 KiB hold
 * an ext file system with that label or UUID is probed whole, to be sure
 * of it (one signature, not two). */
static bool carries(const char *name, const char *tag, const char *val)
{
	struct blkdev_signature sig;
	char p[PATH_MAX], buf[2048], *l;
	int fd, rc;

	snprintf(p, sizeof(p), "/sys/class/block/%s/size", name);
	if (rb_read_str(p, buf, sizeof(buf)) < 0 || atoll(buf) == 0)
		return false;             /* an empty loop device, a drive without medium */
	if (!strcmp(tag, "PARTLABEL")) {
		snprintf(p, sizeof(p), "/sys/class/block/%s/uevent", name);
		if (rb_read_str(p, buf, sizeof(buf)) < 0)
			return false;
		for (l = strtok(buf, "\n"); l; l = strtok(NULL, "\n"))
			if (!strncmp(l, "PARTNAME=", 9) && !strcmp(l + 9, val))
				return true;
		return false;
	}
	if (rb_path(p, sizeof(p), "/dev/%s", name) < 0 || ext_may_carry(p, tag, val) == 0)
		return false;
	fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	rc = blkdev_signature_fd(fd, &sig);
	(void)close(fd);
	return rc == 0 && !strcmp(!strcmp(tag, "UUID") ? sig.uuid : sig.label, val);
}

int blkdev_find(const char *spec, char *path, size_t len, char *err, size_t errlen)
{
	static const char *const tags[] = { "LABEL", "UUID", "PARTLABEL" };
	const char *eq = strchr(spec, '='), *tag = NULL;
	char dir[PATH_MAX], found[NAME_MAX + 1] = "";
	struct dirent *e;
	size_t i;
	DIR *d;
	int rc = 0;

	if (spec[0] == '/')
		return rb_path(path, len, "%s", spec) < 0 ?
		       rb_errfmt(err, errlen, -ENAMETOOLONG, "%s: path too long", spec) : 0;
	for (i = 0; eq && i < ARRAY_SIZE(tags); i++)
		if (strlen(tags[i]) == (size_t)(eq - spec) && !strncmp(spec, tags[i], (size_t)(eq - spec)))
			tag = tags[i];
	if (!tag || !eq[1])
		return rb_errfmt(err, errlen, -EINVAL, "%s: not LABEL=, UUID=, PARTLABEL= or /dev/...",
				 spec);
	if (rb_path(dir, sizeof(dir), "/sys/class/block") < 0 || !(d = opendir(dir)))
		return rb_errfmt(err, errlen, -errno, "/sys/class/block: %s", strerror(errno));
	while ((e = readdir(d)) && rc == 0) {
		if (e->d_name[0] == '.' || !carries(e->d_name, tag, eq + 1))
			continue;
		if (found[0])
			rc = rb_errfmt(err, errlen, -EEXIST, "%s: both %s and %s carry it; neither is "
				       "used", spec, found, e->d_name);
		else
			snprintf(found, sizeof(found), "%s", e->d_name);
	}
	(void)closedir(d);
	if (rc == 0 && !found[0])
		rc = rb_errfmt(err, errlen, -ENOENT, "%s: no block device carries it", spec);
	if (rc == 0 && rb_path(path, len, "/dev/%s", found) < 0)
		rc = -ENAMETOOLONG;
	return rc;
}
