// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * faultinj.so: the calls that move bytes (after= counts them) and the
 * ones that sync them.
 */
#include "faultinj.h"

ssize_t read(int fd, void *buf, size_t len)
{
	struct call c = FD_CALL(OP_READ, fd, len);
	ssize_t n;

	if (enter(&c) < 0)
		return -1;
	n = REAL(read)(fd, buf, c.len);
	done(&c, n);
	return n;
}

ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen);
ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	struct call c = FD_CALL(OP_READ, fd, len);
	ssize_t n;

	if (len > buflen)       /* the real one reports the overflow */
		return REAL(__read_chk)(fd, buf, len, buflen);
	if (enter(&c) < 0)
		return -1;
	n = REAL(__read_chk)(fd, buf, c.len, buflen);
	done(&c, n);
	return n;
}

ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
	struct call c = FD_CALL(OP_PREAD, fd, len);
	ssize_t n;

	if (enter(&c) < 0)
		return -1;
	n = REAL(pread)(fd, buf, c.len, off);
	done(&c, n);
	return n;
}

ssize_t pread64(int fd, void *buf, size_t len, off64_t off)
{
	struct call c = FD_CALL(OP_PREAD, fd, len);
	ssize_t n;

	if (enter(&c) < 0)
		return -1;
	n = REAL(pread64)(fd, buf, c.len, off);
	done(&c, n);
	return n;
}

ssize_t __pread_chk(int fd, void *buf, size_t len, off_t off, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t len, off_t off, size_t buflen)
{
	struct call c = FD_CALL(OP_PREAD, fd, len);
	ssize_t n;

	if (len > buflen)
		return REAL(__pread_chk)(fd, buf, len, off, buflen);
	if (enter(&c) < 0)
		return -1;
	n = REAL(__pread_chk)(fd, buf, c.len, off, buflen);
	done(&c, n);
	return n;
}

ssize_t __pread64_chk(int fd, void *buf, size_t len, off64_t off, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t len, off64_t off, size_t buflen)
{
	struct call c = FD_CALL(OP_PREAD, fd, len);
	ssize_t n;

	if (len > buflen)
		return REAL(__pread64_chk)(fd, buf, len, off, buflen);
	if (enter(&c) < 0)
		return -1;
	n = REAL(__pread64_chk)(fd, buf, c.len, off, buflen);
	done(&c, n);
	return n;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	struct call c = FD_CALL(OP_WRITE, fd, len);
	ssize_t n;

	if (enter(&c) < 0)
		return -1;
	n = REAL(write)(fd, buf, c.len);
	done(&c, n);
	return n;
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	struct call c = FD_CALL(OP_PWRITE, fd, len);
	ssize_t n;

	if (enter(&c) < 0)
		return -1;
	n = REAL(pwrite)(fd, buf, c.len, off);
	done(&c, n);
	return n;
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off64_t off)
{
	struct call c = FD_CALL(OP_PWRITE, fd, len);
	ssize_t n;

	if (enter(&c) < 0)
		return -1;
	n = REAL(pwrite64)(fd, buf, c.len, off);
	done(&c, n);
	return n;
}

ssize_t copy_file_range(int in, off64_t *in_off, int out, off64_t *out_off, size_t len,
			unsigned int flags)
{
	struct call c = { .op = OP_COPY, .fd = out, .fd2 = in, .len = len };
	ssize_t n;

	if (enter(&c) < 0)
		return -1;
	n = REAL(copy_file_range)(in, in_off, out, out_off, c.len, flags);
	done(&c, n);
	return n;
}

/* ---- sync ---- */

int fsync(int fd)
{
	struct call c = FD_CALL(OP_FSYNC, fd, 0);

	if (enter(&c) < 0)
		return -1;
	return REAL(fsync)(fd);
}

int fdatasync(int fd)
{
	struct call c = FD_CALL(OP_FDATASYNC, fd, 0);

	if (enter(&c) < 0)
		return -1;
	return REAL(fdatasync)(fd);
}

int sync_file_range(int fd, off64_t off, off64_t len, unsigned int flags)
{
	struct call c = FD_CALL(OP_SYNC_RANGE, fd, 0);

	if (enter(&c) < 0)
		return -1;
	return REAL(sync_file_range)(fd, off, len, flags);
}
