// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * faultinj.so: the calls that make and drop fds, and which path= rules
 * each fd falls under (calls on a fd match a path= rule through it).
 */
#include "faultinj.h"

#include <errno.h>
#include <stdarg.h>

/* Per fd: the path= rules whose glob matched the path it was opened from. */
static _Atomic uint32_t fdmask[FD_TRACK];

/* ---- fd tracking ---- */

void fd_set_mask(int fd, uint32_t m)
{
	if (fd >= 0 && fd < FD_TRACK)
		atomic_store_explicit(&fdmask[fd], m, memory_order_relaxed);
}

uint32_t fd_rules(int fd)
{
	if (fd < 0 || fd >= FD_TRACK)
		return 0;
	return atomic_load_explicit(&fdmask[fd], memory_order_relaxed);
}

/* A new fd from PATH (or an error, passed on): remember which path= rules
 * it falls under. Keeps errno. */
static int opened(int fd, const char *path)
{
	uint32_t m = 0;
	unsigned i;

	if (fd < 0 || fd >= FD_TRACK)
		return fd;
	for (i = 0; i < nrules; i++)
		if ((path_rules & (1u << i)) && path && path_match(rules[i].path, path))
			m |= 1u << i;
	fd_set_mask(fd, m);
	return fd;
}

/* openat: a relative path inside a directory fd also falls under the
 * rules that directory did (O_TMPFILE opens "." in it: its writes are
 * those of a file in that directory). */
static int opened_at(int fd, int dir, const char *path)
{
	int e = errno;

	opened(fd, path);
	if (fd >= 0 && path && path[0] != '/' && dir != AT_FDCWD)
		fd_set_mask(fd, fd_rules(fd) | fd_rules(dir));
	errno = e;
	return fd;
}

/* ---- open and close ---- */

static bool needs_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

#define MODE_ARG(flags, mode)						\
	do {								\
		if (needs_mode(flags)) {				\
			va_list ap;					\
			va_start(ap, flags);				\
			(mode) = va_arg(ap, mode_t);			\
			va_end(ap);					\
		}							\
	} while (0)

/* open and openat with the mode they were given; DIR: the directory fd
 * the path is relative to (AT_FDCWD for open). */
#define OPEN(fn, dir_, params, args)					\
	int fn params							\
	{								\
		struct call c = PATH_CALL(OP_OPEN, path);		\
		mode_t mode = 0;					\
									\
		MODE_ARG(flags, mode);					\
		if (enter(&c) < 0)					\
			return -1;					\
		return opened_at(REAL(fn) args, dir_, path);		\
	}

OPEN(open, AT_FDCWD, (const char *path, int flags, ...), (path, flags, mode))
OPEN(open64, AT_FDCWD, (const char *path, int flags, ...), (path, flags, mode))
OPEN(openat, dir, (int dir, const char *path, int flags, ...), (dir, path, flags, mode))
OPEN(openat64, dir, (int dir, const char *path, int flags, ...), (dir, path, flags, mode))

/* The _2 variants take no mode: the real one aborts when one is needed. */
#define OPEN_2(fn, dir_, params, args)					\
	int fn params;							\
	int fn params							\
	{								\
		struct call c = PATH_CALL(OP_OPEN, path);		\
									\
		if (!needs_mode(flags) && enter(&c) < 0)		\
			return -1;					\
		return opened_at(REAL(fn) args, dir_, path);		\
	}

OPEN_2(__open_2, AT_FDCWD, (const char *path, int flags), (path, flags))
OPEN_2(__open64_2, AT_FDCWD, (const char *path, int flags), (path, flags))
OPEN_2(__openat_2, dir, (int dir, const char *path, int flags), (dir, path, flags))
OPEN_2(__openat64_2, dir, (int dir, const char *path, int flags), (dir, path, flags))

/* Linux releases the fd even when close fails: so does an injected error. */
int close(int fd)
{
	struct call c = FD_CALL(OP_CLOSE, fd, 0);
	int rc = enter(&c), e = errno;

	fd_set_mask(fd, 0);
	if (rc < 0) {
		(void)REAL(close)(fd);
		errno = e;
		return -1;
	}
	return REAL(close)(fd);
}

int dup(int fd)
{
	int nfd = REAL(dup)(fd);

	if (nfd >= 0)
		fd_set_mask(nfd, fd_rules(fd));
	return nfd;
}

int dup2(int fd, int nfd)
{
	int rc = REAL(dup2)(fd, nfd);

	if (rc >= 0 && fd != nfd)
		fd_set_mask(nfd, fd_rules(fd));
	return rc;
}

int dup3(int fd, int nfd, int flags)
{
	int rc = REAL(dup3)(fd, nfd, flags);

	if (rc >= 0)
		fd_set_mask(nfd, fd_rules(fd));
	return rc;
}
