/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The root prefix: every path below /proc, /sys and /dev is resolved
 * through the prefix set from $RAMBOOT_ROOT (empty: the real system), so
 * tests run against fixture trees. Small files read and written below
 * it (sysfs attributes, procfs files), and /proc/meminfo.
 */
#ifndef RAMBOOT_PATH_H
#define RAMBOOT_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

void rb_root_init(void);
bool rb_root_is_real(void);
/* 0 or -ENAMETOOLONG. */
int rb_path(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Read a small file below the root prefix into buf (NUL-terminated,
 * trailing newline stripped). Returns length or -errno. */
ssize_t rb_read_str(const char *path, char *buf, size_t len);
/* Write a string to a file below the root prefix (sysfs attribute). */
int rb_write_str(const char *path, const char *val);
/* Same, taking a path that is already resolved (no prefix added). A
 * regular file or a character device is read, never waited on: -EISDIR
 * for a directory, -EINVAL for anything else (a FIFO). */
ssize_t read_str_abs(const char *path, char *buf, size_t len);
/* The same for a file that ramboot itself writes (the report, the
 * status file): only a regular file is read. The second with the root
 * prefix. */
ssize_t read_regular_abs(const char *path, char *buf, size_t len);
ssize_t rb_read_regular(const char *path, char *buf, size_t len);
int write_str_abs(const char *path, const char *val);

/* /proc/meminfo field in bytes ("MemAvailable", "MemTotal"). */
int rb_meminfo(const char *field, uint64_t *bytes);
/* The same from a meminfo text (read through a descriptor kept open).
 * 0, -ENOENT or -EINVAL. */
int meminfo_parse(const char *text, const char *field, uint64_t *bytes);

#endif
