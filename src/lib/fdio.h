/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * I/O on descriptors: loops over EINTR and short transfers, a close whose
 * failure is reported, a file opened with its fstat; a small procfs or
 * sysfs file read again from its start, a close that forgets the
 * descriptor.
 */
#ifndef RAMBOOT_FDIO_H
#define RAMBOOT_FDIO_H

#include <stddef.h>
#include <sys/types.h>

ssize_t read_full(int fd, void *buf, size_t len);      /* < len only at EOF */
int write_all(int fd, const void *buf, size_t len);    /* 0 or -errno */
int pwrite_full(int fd, const void *buf, size_t len, off_t off); /* 0 or -errno */
ssize_t pread_full(int fd, void *buf, size_t len, off_t off);
int close_checked(int fd);                             /* 0 or -errno */
/* path opened read-only (O_CLOEXEC), its fstat in *st: the descriptor,
 * or -errno and "PATH: reason" in err. */
struct stat;
int open_stat(const char *path, struct stat *st, char *err, size_t errlen);

/* A small procfs or sysfs file from its start, NUL-terminated: the
 * bytes read (at most len - 1), or -errno (-EBADF for fd < 0). */
ssize_t pread_text(int fd, char *buf, size_t len);

/* Close *fd when it is open and set it to -1. */
void close_fd(int *fd);
/* close_fd() of each of the n descriptors at fds, in order. */
void close_fds(int *const fds[], size_t n);

#endif
