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

int mount(const char *src, const char *target, const char *type, unsigned long flags,
	  const void *data)
{
	struct call c = PATH_CALL(OP_MOUNT, target);

	if (enter(&c) < 0)
		return -1;
	return REAL(mount)(src, target, type, flags, data);
}

int umount(const char *target)
{
	struct call c = PATH_CALL(OP_UMOUNT, target);

	if (enter(&c) < 0)
		return -1;
	return REAL(umount)(target);
}

int umount2(const char *target, int flags)
{
	struct call c = PATH_CALL(OP_UMOUNT, target);

	if (enter(&c) < 0)
		return -1;
	return REAL(umount2)(target, flags);
}

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

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct call c = FD_CALL(OP_MMAP, fd, 0);

	if (fd >= 0 && enter(&c) < 0)
		return MAP_FAILED;
	return mapped(&c, REAL(mmap)(addr, len, prot, flags, fd, off), fd);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	struct call c = FD_CALL(OP_MMAP, fd, 0);

	if (fd >= 0 && enter(&c) < 0)
		return MAP_FAILED;
	return mapped(&c, REAL(mmap64)(addr, len, prot, flags, fd, off), fd);
}

/* ---- stat ---- */

int stat(const char *path, struct stat *st)
{
	struct call c = PATH_CALL(OP_STAT, path);

	if (enter(&c) < 0)
		return -1;
	return REAL(stat)(path, st);
}

int stat64(const char *path, struct stat64 *st)
{
	struct call c = PATH_CALL(OP_STAT, path);

	if (enter(&c) < 0)
		return -1;
	return REAL(stat64)(path, st);
}

int lstat(const char *path, struct stat *st)
{
	struct call c = PATH_CALL(OP_STAT, path);

	if (enter(&c) < 0)
		return -1;
	return REAL(lstat)(path, st);
}

int lstat64(const char *path, struct stat64 *st)
{
	struct call c = PATH_CALL(OP_STAT, path);

	if (enter(&c) < 0)
		return -1;
	return REAL(lstat64)(path, st);
}
