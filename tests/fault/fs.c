// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * faultinj.so: the calls on paths and mappings: ioctl, mount, umount,
 * mmap (and its cut), stat.
 */
#include "faultinj.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/mount.h>

/* ---- ioctl, mount ---- */

int ioctl(int fd, unsigned long req, ...)
{
	struct call c = FD_CALL(OP_IOCTL, fd, 0);
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (enter(&c) < 0)
		return -1;
	return REAL(ioctl)(fd, req, arg);
}

/* mount: the rules see the target */
WRAP(int, mount, PATH_CALL(OP_MOUNT, path),
     (const char *src, const char *path, const char *type, unsigned long flags, const void *data),
     (src, path, type, flags, data))
WRAP(int, umount, PATH_CALL(OP_UMOUNT, path), (const char *path), (path))
WRAP(int, umount2, PATH_CALL(OP_UMOUNT, path), (const char *path, int flags), (path, flags))

/* ---- mmap ---- */

/* cut: the file under fd to half its size, through a descriptor of its
 * own opened for writing (fd itself may be read-only). */
static void cut_file(int fd)
{
	char proc[64];
	off_t size;
	int w;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	w = REAL(open)(proc, O_WRONLY | O_CLOEXEC);
	if (w < 0) {
		say("faultinj: cut: cannot open the file for writing\n");
		return;
	}
	size = lseek(w, 0, SEEK_END);
	if (size < 0 || ftruncate(w, size / 2) < 0)
		say("faultinj: cut: cannot truncate the file\n");
	(void)REAL(close)(w);
}

/* After the real mmap: the cut, when a rule asked for it. */
static void *mapped(const struct call *c, void *p, int fd)
{
	if (p != MAP_FAILED && c->cut)
		cut_file(fd);
	return p;
}

/* A file's mapping (fd >= 0) runs the rules; MAP_FAILED fails it. */
#define MMAP(fn, off_t_)						\
	void *fn(void *addr, size_t len, int prot, int flags, int fd, off_t_ off) \
	{								\
		struct call c = FD_CALL(OP_MMAP, fd, 0);		\
									\
		if (fd >= 0 && enter(&c) < 0)				\
			return MAP_FAILED;				\
		return mapped(&c, REAL(fn)(addr, len, prot, flags, fd, off), fd); \
	}

MMAP(mmap, off_t)
MMAP(mmap64, off64_t)

/* ---- stat ---- */

WRAP(int, stat, PATH_CALL(OP_STAT, path), (const char *path, struct stat *st), (path, st))
WRAP(int, stat64, PATH_CALL(OP_STAT, path), (const char *path, struct stat64 *st), (path, st))
WRAP(int, lstat, PATH_CALL(OP_STAT, path), (const char *path, struct stat *st), (path, st))
WRAP(int, lstat64, PATH_CALL(OP_STAT, path), (const char *path, struct stat64 *st), (path, st))
