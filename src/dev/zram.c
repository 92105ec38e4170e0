// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zram devices through the root prefix. See the kernel's
 * Documentation/admin-guide/blockdev/zram.rst for the attributes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "lib/sysutil.h"
#include "dev/zram.h"

int zram_ensure_module(void)
{
	static const char *const args[] = { "-q", "zram", "num_devices=0", NULL };
	char p[PATH_MAX];
	struct stat st;
	int rc;

	rc = rb_path(p, sizeof(p), "/sys/class/zram-control");
	if (rc < 0)
		return rc;
	if (stat(p, &st) == 0)
		return 0;
	if (!rb_root_is_real())
		return -ENODEV;
	/* num_devices=0: we hot-add what we need and leave no idle devices.
	 * Whatever modprobe says, zram-control is what counts (a zram built
	 * into the kernel but not yet registered is not expected). */
	rc = run_modprobe(args);
	if (stat(p, &st) == 0)
		return 0;
	return rc == 0 || rc == -ENOENT ? -ENODEV : rc;
}

void rb_sysfs_log(const char *path, const char *val, int rc)
{
	const char *log = getenv("RAMBOOT_WRITE_LOG");
	char line[512];
	int fd, n;

	if (rb_root_is_real() || !log || !*log)
		return;
	if (rc < 0)
		n = snprintf(line, sizeof(line), "%s=%s: %s\n", path, val, strerror(-rc));
	else
		n = snprintf(line, sizeof(line), "%s=%s\n", path, val);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	(void)write_all(fd, line, (size_t)n);
	(void)close_checked(fd);
}

int rb_sysfs_write(const char *path, const char *val)
{
	char p[PATH_MAX];
	int rc;

	/* A store to a sysfs or sysctl attribute replaces its value; a
	 * fixture's regular file must be emptied first to behave the same. */
	if (!rb_root_is_real() && rb_path(p, sizeof(p), "%s", path) == 0 &&
	    truncate(p, 0) < 0 && errno != EINVAL)
		rb_debug("%s: truncate: %s", p, strerror(errno));
	rc = rb_write_str(path, val);

	rb_sysfs_log(path, val, rc);
	return rc;
}

int zram_get(int id, const char *attr, char *buf, size_t len)
{
	char p[128];
	ssize_t n;

	snprintf(p, sizeof(p), "/sys/block/zram%d/%s", id, attr);
	n = rb_read_str(p, buf, len);
	return n < 0 ? (int)n : 0;
}

int zram_set(int id, const char *attr, const char *val)
{
	char p[128];

	snprintf(p, sizeof(p), "/sys/block/zram%d/%s", id, attr);
	return rb_sysfs_write(p, val);
}

int zram_hot_add(int *id)
{
	char buf[32];
	ssize_t n;
	long v;
	char *end;
	int rc = zram_ensure_module();

	if (rc < 0)
		return rc;
	/* Reading hot_add allocates a new device and returns its number. */
	n = rb_read_str("/sys/class/zram-control/hot_add", buf, sizeof(buf));
	rb_sysfs_log("/sys/class/zram-control/hot_add", n < 0 ? "" : buf,
		     n < 0 ? (int)n : 0);
	if (n < 0)
		return (int)n;
	v = strtol(buf, &end, 10);
	if (end == buf || v < 0 || v > INT_MAX)
		return -EIO;
	*id = (int)v;
	return 0;
}

/* The kernel refuses reset and hot_remove (EBUSY) while anyone holds the
 * node open; udev's probe after swapoff or close can hold it for a few
 * milliseconds. Retry for about a second. */
static int write_retry_busy(const char *path, const char *val)
{
	int rc, tries;

	for (tries = 0; ; tries++) {
		rc = rb_sysfs_write(path, val);
		if (rc != -EBUSY || tries >= 20)
			return rc;
		nap_ms(50);
	}
}

int zram_reset(int id)
{
	char p[128];

	snprintf(p, sizeof(p), "/sys/block/zram%d/reset", id);
	return write_retry_busy(p, "1");
}

int zram_hot_remove(int id)
{
	char buf[16];

	(void)zram_reset(id);
	snprintf(buf, sizeof(buf), "%d", id);
	return write_retry_busy("/sys/class/zram-control/hot_remove", buf);
}

int zram_disksize(int id, uint64_t *bytes)
{
	char buf[32];
	int rc = zram_get(id, "disksize", buf, sizeof(buf));

	if (rc < 0)
		return rc;
	*bytes = strtoull(buf, NULL, 10);
	return 0;
}

int zram_set_disksize(int id, uint64_t bytes)
{
	char v[32];

	snprintf(v, sizeof(v), "%" PRIu64, bytes);
	return zram_set(id, "disksize", v);
}

int zram_is_initialised(int id)
{
	uint64_t sz;
	int rc = zram_disksize(id, &sz);

	return rc < 0 ? rc : sz > 0;
}

int zram_id_from_path(const char *dev)
{
	const char *b = strrchr(dev, '/');
	char *end;
	long v;

	b = b ? b + 1 : dev;
	if (strncmp(b, "zram", 4) || !b[4])
		return -EINVAL;
	v = strtol(b + 4, &end, 10);
	if (*end || v < 0 || v > INT_MAX)
		return -EINVAL;
	return (int)v;
}

bool zram_algo_offered(const char *avail, const char *name)
{
	size_t tl = strlen(name);
	const char *p = avail;

	if (!tl)
		return false;
	while ((p = strstr(p, name)) != NULL) {
		bool start = p == avail || p[-1] == ' ' || p[-1] == '[';
		bool stop = p[tl] == '\0' || p[tl] == ' ' || p[tl] == ']' || p[tl] == '\n';

		if (start && stop)
			return true;
		p += tl;
	}
	return false;
}

const char *zram_algo_current(const char *avail, char *out, size_t len)
{
	const char *a = strchr(avail, '['), *b;

	if (!a || !(b = strchr(a, ']')))
		return NULL;
	snprintf(out, len, "%.*s", (int)(b - a - 1), a + 1);
	return out;
}
