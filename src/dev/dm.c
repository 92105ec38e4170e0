// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Device-mapper ioctls for a read-only dm-verity mapping (see dm.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/dm-ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/msg.h"
#include "lib/path.h"
#include "dev/dm.h"

/* One ioctl's buffer: struct dm_ioctl, then its data (a target spec and
 * its parameters, or the kernel's list of targets). 8-byte aligned, as
 * the kernel wants the structures in it. */
#define DM_BUF 16384
union dm_buf {
	struct dm_ioctl io;
	uint64_t align[DM_BUF / 8];
};

/* The data starts after struct dm_ioctl, rounded up to 8 bytes. */
#define DM_DATA_START ((sizeof(struct dm_ioctl) + 7) & ~(size_t)7)

bool dm_name_valid(const char *name)
{
	size_t n = strlen(name), i;

	if (n == 0 || n >= DM_NAME_LEN || name[0] == '.')
		return false;
	for (i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '+' || c == '-'))
			return false;
	}
	return true;
}

int dm_verity_params(const struct dm_verity_target *t, char *buf, size_t len)
{
	char root[2 * VERITY_DIGEST + 1], salt[2 * VERITY_SALT_MAX + 1];
	int n;

	verity_hex(t->root, VERITY_DIGEST, root);
	verity_hex(t->salt, t->salt_len, salt);
	/* <version> <data_dev> <hash_dev> <data_block_size> <hash_block_size>
	 * <num_data_blocks> <hash_start_block> <algorithm> <digest> <salt>
	 * (Documentation/admin-guide/device-mapper/verity.rst) */
	n = snprintf(buf, len, "1 %u:%u %u:%u %u %u %" PRIu64 " %" PRIu64 " sha256 %s %s",
		     major(t->data), minor(t->data), major(t->hash), minor(t->hash),
		     VERITY_BLOCK, VERITY_BLOCK, t->data_blocks, t->hash_start, root, salt);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

int dm_node_path(const char *name, char *buf, size_t len)
{
	return rb_path(buf, len, "/dev/mapper/%s", name);
}

static int control_open(char *err, size_t errlen)
{
	char path[PATH_MAX];
	int fd, rc = rb_path(path, sizeof(path), "/dev/mapper/control");

	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "/dev/mapper/control: path too long");
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	rc = -errno;
	/* The node is made by devtmpfs when dm-mod is loaded; a node left
	 * from elsewhere without the driver gives ENODEV or ENXIO. */
	if (rc == -ENOENT || rc == -ENODEV || rc == -ENXIO)
		return rb_errfmt(err, errlen, -ENODEV, "%s: %s: no device-mapper in this kernel "
				 "(modprobe dm-mod)", path, strerror(-rc));
	return rb_errfmt(err, errlen, rc, "%s: %s", path, strerror(-rc));
}

static void dm_init(union dm_buf *b, const char *name, uint32_t flags)
{
	memset(b, 0, sizeof(*b));
	b->io.version[0] = DM_VERSION_MAJOR;
	b->io.version[1] = 0;
	b->io.version[2] = 0;
	b->io.data_size = sizeof(*b);
	b->io.data_start = (uint32_t)DM_DATA_START;
	b->io.flags = flags;
	if (name)
		snprintf(b->io.name, sizeof(b->io.name), "%s", name);
}

/* The start of every request on NAME: a valid name, a buffer (*b, to
 * free) and the control node open. The descriptor, or -errno. */
static int dm_begin(const char *name, union dm_buf **b, char *err, size_t errlen)
{
	int fd;

	if (!dm_name_valid(name))
		return rb_errfmt(err, errlen, -EINVAL, "'%s' is not a mapping name", name);
	*b = malloc(sizeof(**b));
	if (!*b)
		return rb_errfmt(err, errlen, -ENOMEM, "out of memory");
	fd = control_open(err, errlen);
	if (fd < 0) {
		free(*b);
		*b = NULL;
	}
	return fd;
}


/* The ioctl, again on EINTR. 0 or -errno. */
static int dm_ioctl(int fd, unsigned long req, union dm_buf *b)
{
	int rc;

	do
		rc = ioctl(fd, req, &b->io);
	while (rc < 0 && errno == EINTR);
	return rc < 0 ? -errno : 0;
}

static int target_listed(const union dm_buf *b, const char *type)
{
	const char *base = (const char *)b, *end = base + b->io.data_size;
	size_t off = b->io.data_start;

	if (b->io.data_size > sizeof(*b) || b->io.flags & DM_BUFFER_FULL_FLAG)
		return -ENOSPC;
	for (;;) {
		const struct dm_target_versions *v = (const void *)(base + off);
		const char *n = (const char *)(v + 1);

		if (base + off + sizeof(*v) > end)
			return 0;
		if (memchr(n, '\0', (size_t)(end - n)) == NULL)
			return 0;
		if (!strcmp(n, type))
			return 1;
		if (v->next == 0)
			return 0;
		off += v->next;
	}
}

int dm_has_target(const char *type)
{
	union dm_buf *b = malloc(sizeof(*b));
	int fd, rc;

	if (!b)
		return -ENOMEM;
	fd = control_open(NULL, 0);
	if (fd < 0) {
		free(b);
		return fd;
	}
	dm_init(b, NULL, 0);
	rc = dm_ioctl(fd, DM_LIST_VERSIONS, b);
	if (rc == 0)
		rc = target_listed(b, type);
	(void)close(fd);   /* a control node: nothing to flush */
	free(b);
	return rc;
}

static int dev_remove(int fd, union dm_buf *b, const char *name)
{
	dm_init(b, name, 0);
	return dm_ioctl(fd, DM_DEV_REMOVE, b);
}

/* mknod /dev/mapper/NAME, or take what is there already when it is the
 * same device. */
static int node_make(const char *name, dev_t dev, char *err, size_t errlen)
{
	char path[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	int rc;

	if (dm_node_path(name, path, sizeof(path)) < 0 ||
	    rb_path(dir, sizeof(dir), "/dev/mapper") < 0)
		return rb_errfmt(err, errlen, -ENAMETOOLONG, "/dev/mapper/%s: path too long", name);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return rb_errfmt(err, errlen, -errno, "%s: %s", dir, strerror(errno));
	if (mknod(path, S_IFBLK | 0600, dev) == 0)
		return 0;
	rc = -errno;
	/* udev, where it runs, may have been first: with a node, or a
	 * symbolic link to /dev/dm-N. Either is fine if it is this device. */
	if (rc == -EEXIST && stat(path, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == dev)
		return 0;
	return rb_errfmt(err, errlen, rc, "%s: %s", path, rc == -EEXIST ?
			 "exists and is not this device" : strerror(-rc));
}

static void node_remove(const char *name, dev_t dev)
{
	char path[PATH_MAX];
	struct stat st;

	/* Only the node of this very device: a file of that name that is
	 * anything else (a link udev made is udev's to remove) is not ours
	 * to delete. */
	if (dm_node_path(name, path, sizeof(path)) == 0 && lstat(path, &st) == 0 &&
	    S_ISBLK(st.st_mode) && st.st_rdev == dev)
		(void)unlink(path);
}

/* Create the mapping NAME with one target of type over sectors, with
 * params (what follows the type in a dmsetup table), and its node. The
 * buffer that carried the table is wiped: a crypt table holds its key. */
static int dm_create(const char *name, uint32_t flags, const char *type, uint64_t sectors,
		     const char *params, dev_t *dev, char *err, size_t errlen)
{
	union dm_buf *b;
	struct dm_target_spec *spec;
	size_t plen, room;
	bool created = false;
	int fd, rc;

	fd = dm_begin(name, &b, err, errlen);
	if (fd < 0)
		return fd;

	dm_init(b, name, flags);
	rc = dm_ioctl(fd, DM_DEV_CREATE, b);
	if (rc < 0) {
		rb_errfmt(err, errlen, rc, "create %s: %s", name,
			  rc == -EBUSY ? "a mapping of that name exists" : strerror(-rc));
		if (rc == -EBUSY)
			rc = -EEXIST;
		goto out;
	}
	created = true;

	dm_init(b, name, flags);
	b->io.target_count = 1;
	spec = (void *)((char *)b + DM_DATA_START);   /* 8-byte aligned: DM_DATA_START */
	spec->sector_start = 0;
	spec->length = sectors;
	snprintf(spec->target_type, sizeof(spec->target_type), "%s", type);
	room = sizeof(*b) - DM_DATA_START - sizeof(*spec);
	plen = strlen(params) + 1;
	if (plen > room) {
		rc = rb_errfmt(err, errlen, -ENOSPC, "table of %s: too long", name);
		goto out;
	}
	memcpy(spec + 1, params, plen);
	spec->next = (uint32_t)((sizeof(*spec) + plen + 7) & ~(size_t)7);
	b->io.data_size = (uint32_t)(DM_DATA_START + spec->next);
	rc = dm_ioctl(fd, DM_TABLE_LOAD, b);
	explicit_bzero(b, sizeof(*b));
	if (rc < 0) {
		/* The kernel says why in its log only; an unknown target
		 * is the one reason worth telling apart. */
		if (rc == -EINVAL && dm_has_target(type) == 0) {
			rb_errfmt(err, errlen, -EOPNOTSUPP, "table of %s: the kernel has no %s "
				  "target (modprobe dm-%s)", name, type, type);
			rc = -EOPNOTSUPP;
		} else {
			rb_errfmt(err, errlen, rc, "table of %s: %s (the kernel log says why)", name,
				  strerror(-rc));
		}
		goto out;
	}

	dm_init(b, name, 0);
	rc = dm_ioctl(fd, DM_DEV_SUSPEND, b);
	if (rc < 0) {
		rb_errfmt(err, errlen, rc, "resume %s: %s", name, strerror(-rc));
		goto out;
	}
	*dev = (dev_t)b->io.dev;
	rc = node_make(name, *dev, err, errlen);
out:
	if (rc < 0 && created) {
		int rc2 = dev_remove(fd, b, name);

		if (rc2 < 0)
			rb_warn("remove %s after a failure: %s", name, strerror(-rc2));
	}
	(void)close(fd);
	explicit_bzero(b, sizeof(*b));
	free(b);
	return rc;
}

int dm_verity_create(const char *name, const struct dm_verity_target *t, dev_t *dev,
		     char *err, size_t errlen)
{
	char params[1024];

	if (dm_verity_params(t, params, sizeof(params)) < 0)
		return rb_errfmt(err, errlen, -ENOSPC, "table of %s: too long", name);
	/* One read-only target over the whole data: sectors 0 .. data_blocks * 8. */
	return dm_create(name, DM_READONLY_FLAG, "verity", t->data_blocks * (VERITY_BLOCK / 512),
			 params, dev, err, errlen);
}

int dm_crypt_create(const char *name, dev_t under, uint64_t sectors, const uint8_t *key,
		    size_t keylen, dev_t *dev, char *err, size_t errlen)
{
	static const char hexd[] = "0123456789abcdef";
	char params[64 + 2 * DM_CRYPT_KEY_MAX];
	size_t i, o;
	int rc;

	if (keylen == 0 || keylen > DM_CRYPT_KEY_MAX)
		return rb_errfmt(err, errlen, -EINVAL, "crypt key of %zu bytes", keylen);
	/* <cipher> <key> <iv_offset> <device> <offset>
	 * (Documentation/admin-guide/device-mapper/dm-crypt.rst) */
	o = (size_t)snprintf(params, sizeof(params), "aes-xts-plain64 ");
	for (i = 0; i < keylen; i++) {
		params[o++] = hexd[key[i] >> 4];
		params[o++] = hexd[key[i] & 15];
	}
	snprintf(params + o, sizeof(params) - o, " 0 %u:%u 0", major(under), minor(under));
	rc = dm_create(name, 0, "crypt", sectors, params, dev, err, errlen);
	explicit_bzero(params, sizeof(params));
	return rc;
}

int dm_remove(const char *name, char *err, size_t errlen)
{
	union dm_buf *b;
	dev_t dev;
	int fd, rc, open_count;

	fd = dm_begin(name, &b, err, errlen);
	if (fd < 0)
		return fd;
	dm_init(b, name, 0);
	rc = dm_ioctl(fd, DM_DEV_STATUS, b);
	if (rc < 0) {
		rb_errfmt(err, errlen, rc, "%s: %s", name, rc == -ENXIO ? "no such mapping" :
			  strerror(-rc));
		goto out;
	}
	dev = (dev_t)b->io.dev;
	open_count = b->io.open_count;
	rc = dev_remove(fd, b, name);
	if (rc == -EBUSY) {
		rb_errfmt(err, errlen, rc, "%s: in use (open %d times: mounted?)", name, open_count);
		goto out;
	}
	if (rc < 0) {
		rb_errfmt(err, errlen, rc, "remove %s: %s", name, strerror(-rc));
		goto out;
	}
	node_remove(name, dev);
out:
	(void)close(fd);
	free(b);
	return rc;
}
