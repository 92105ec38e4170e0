// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zram devices through the root prefix. See the kernel's
 * Documentation/admin-guide/blockdev/zram.rst for the attributes.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ramboot.h"
#include "zram.h"

int zram_ensure_module(void)
{
	char p[PATH_MAX];
	struct stat st;
	pid_t pid;
	int status, rc;

	rc = rb_path(p, sizeof(p), "/sys/class/zram-control");
	if (rc < 0)
		return rc;
	if (stat(p, &st) == 0)
		return 0;
	if (!rb_root_is_real())
		return -ENODEV;
	/* num_devices=0: we hot-add what we need and leave no idle devices. */
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execlp("modprobe", "modprobe", "-q", "zram", "num_devices=0", (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (stat(p, &st) == 0)
		return 0;
	return -ENODEV;
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
	return rb_write_str(p, val);
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
	if (n < 0)
		return (int)n;
	v = strtol(buf, &end, 10);
	if (end == buf || v < 0 || v > INT_MAX)
		return -EIO;
	*id = (int)v;
	return 0;
}

int zram_reset(int id)
{
	return zram_set(id, "reset", "1");
}

int zram_hot_remove(int id)
{
	char buf[16];
	int rc;

	(void)zram_reset(id);
	snprintf(buf, sizeof(buf), "%d", id);
	rc = rb_write_str("/sys/class/zram-control/hot_remove", buf);
	return rc;
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

const char *zram_pick_algorithm(int id, const char *list, char *out, size_t len)
{
	char avail[512], want[256], *tok, *save = NULL;

	if (zram_get(id, "comp_algorithm", avail, sizeof(avail)) < 0)
		return NULL;
	snprintf(want, sizeof(want), "%s", list);
	for (tok = strtok_r(want, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *p = avail;
		size_t tl = strlen(tok);

		/* The file reads "lzo [lzo-rle] lz4": names, current in []. */
		while ((p = strstr(p, tok)) != NULL) {
			bool start = p == avail || p[-1] == ' ' || p[-1] == '[';
			bool stop = p[tl] == '\0' || p[tl] == ' ' || p[tl] == ']';

			if (start && stop) {
				snprintf(out, len, "%s", tok);
				return out;
			}
			p += tl;
		}
	}
	return NULL;
}
