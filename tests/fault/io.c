// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * faultinj.so: the calls that move bytes (after= counts them) and the
 * ones that sync them.
 */
#include "faultinj.h"

#define IO(fn, op, params, args) WRAP(ssize_t, fn, FD_CALL(op, fd, len), params, args)

IO(read, OP_READ, (int fd, void *buf, size_t len), (fd, buf, c.len))
IO(pread, OP_PREAD, (int fd, void *buf, size_t len, off_t off), (fd, buf, c.len, off))
IO(pread64, OP_PREAD, (int fd, void *buf, size_t len, off64_t off), (fd, buf, c.len, off))

IO(write, OP_WRITE, (int fd, const void *buf, size_t len), (fd, buf, c.len))
IO(pwrite, OP_PWRITE, (int fd, const void *buf, size_t len, off_t off), (fd, buf, c.len, off))
IO(pwrite64, OP_PWRITE, (int fd, const void *buf, size_t len, off64_t off),
   (fd, buf, c.len, off))

/* copy_file_range: the rules see the output fd (and the input as fd2). */
WRAP(ssize_t, copy_file_range, ((struct call){ .op = OP_COPY, .fd = out, .fd2 = in, .len = len }),
     (int in, off64_t *in_off, int out, off64_t *out_off, size_t len, unsigned int flags),
     (in, in_off, out, out_off, c.len, flags))

/* The _FORTIFY_SOURCE entry points: a length past the buffer goes to the
 * real one, which reports the overflow. */
#define CHK(fn, op, params, args, all)					\
	ssize_t fn params;						\
	ssize_t fn params						\
	{								\
		struct call c = FD_CALL(op, fd, len);			\
									\
		if (len > buflen)					\
			return REAL(fn) all;				\
		if (enter(&c) < 0)					\
			return -1;					\
		return done(&c, REAL(fn) args);				\
	}

CHK(__read_chk, OP_READ, (int fd, void *buf, size_t len, size_t buflen),
    (fd, buf, c.len, buflen), (fd, buf, len, buflen))
CHK(__pread_chk, OP_PREAD, (int fd, void *buf, size_t len, off_t off, size_t buflen),
    (fd, buf, c.len, off, buflen), (fd, buf, len, off, buflen))
CHK(__pread64_chk, OP_PREAD, (int fd, void *buf, size_t len, off64_t off, size_t buflen),
    (fd, buf, c.len, off, buflen), (fd, buf, len, off, buflen))

/* ---- sync ---- */

WRAP(int, fsync, FD_CALL(OP_FSYNC, fd, 0), (int fd), (fd))
WRAP(int, fdatasync, FD_CALL(OP_FDATASYNC, fd, 0), (int fd), (fd))
WRAP(int, sync_file_range, FD_CALL(OP_SYNC_RANGE, fd, 0),
     (int fd, off64_t off, off64_t len, unsigned int flags), (fd, off, len, flags))
