// SPDX-License-Identifier: GPL-2.0-or-later
/* The root prefix and the small files below it (path.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/path.h"

static char rb_rootbuf[PATH_MAX];

void rb_root_init(void)
{
	const char *r = getenv("RAMBOOT_ROOT");
	size_t n;

	rb_rootbuf[0] = '\0';
	if (!r || !*r)
		return;
	n = strlen(r);
	while (n > 1 && r[n - 1] == '/')
		n--;
	if (n == 1 && r[0] == '/')
		return;
	if (n >= sizeof(rb_rootbuf))
		n = sizeof(rb_rootbuf) - 1;
	memcpy(rb_rootbuf, r, n);
	rb_rootbuf[n] = '\0';
}

bool rb_root_is_real(void)
{
	return rb_rootbuf[0] == '\0';
}

int rb_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	size_t n = strlen(rb_rootbuf);
	int m;

	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(buf, rb_rootbuf, n);
	va_start(ap, fmt);
	m = vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
	if (m < 0 || (size_t)m >= len - n)
		return -ENAMETOOLONG;
	return 0;
}

static ssize_t read_str(const char *path, char *buf, size_t len, bool regular_only)
{
	struct stat st;
	ssize_t n;
	int fd, rc;

	if (len == 0)
		return -EINVAL;
	/* O_NONBLOCK: a FIFO planted at the name is not waited on, and
	 * then refused: a regular file is read (sysfs and procfs attributes
	 * are), and a character device unless regular_only (the tests'
	 * fixtures put /dev/full where an attribute fails its writes). */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	rc = fstat(fd, &st) < 0 ? -errno : S_ISREG(st.st_mode) ? 0 :
	     S_ISCHR(st.st_mode) && !regular_only ? 0 : S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	if (rc < 0) {
		(void)close(fd);
		return rc;
	}
	n = read_full(fd, buf, len - 1);
	rc = close_checked(fd);
	if (n < 0)
		return n;
	if (rc < 0)
		return rc;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return n;
}

ssize_t read_str_abs(const char *path, char *buf, size_t len)
{
	return read_str(path, buf, len, false);
}

ssize_t read_regular_abs(const char *path, char *buf, size_t len)
{
	return read_str(path, buf, len, true);
}

ssize_t rb_read_regular(const char *path, char *buf, size_t len)
{
	char p[PATH_MAX];
	int rc = rb_path(p, sizeof(p), "%s", path);

	return rc < 0 ? rc : read_regular_abs(p, buf, len);
}

int write_str_abs(const char *path, const char *val)
{
	int fd, rc, rc2;

	/* O_TRUNC is a no-op on sysfs and procfs and makes fixture files
	 * hold the last value written, as an attribute does. */
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = write_all(fd, val, strlen(val));
	rc2 = close_checked(fd);
	return rc < 0 ? rc : rc2;
}

ssize_t rb_read_str(const char *path, char *buf, size_t len)
{
	char p[PATH_MAX];
	int rc = rb_path(p, sizeof(p), "%s", path);

	return rc < 0 ? rc : read_str_abs(p, buf, len);
}

int rb_write_str(const char *path, const char *val)
{
	char p[PATH_MAX];
	int rc = rb_path(p, sizeof(p), "%s", path);

	return rc < 0 ? rc : write_str_abs(p, val);
}

int meminfo_parse(const char *text, const char *field, uint64_t *bytes)
{
	size_t flen = strlen(field);
	const char *line = text;

	while (line && *line) {
		unsigned long long kb;

		if (!strncmp(line, field, flen) && line[flen] == ':') {
			if (sscanf(line + flen + 1, " %llu", &kb) != 1 || kb > UINT64_MAX / 1024)
				return -EINVAL;
			*bytes = (uint64_t)kb * 1024;
			return 0;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -ENOENT;
}

int rb_meminfo(const char *field, uint64_t *bytes)
{
	char buf[8192];
	ssize_t n = rb_read_str("/proc/meminfo", buf, sizeof(buf));

	return n < 0 ? (int)n : meminfo_parse(buf, field, bytes);
}
