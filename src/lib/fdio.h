/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small descriptor helpers shared by the loader, the lazy copier and the
 * background readers (a whole positioned write is pwrite_full() of
 * ramboot.h): a small procfs or sysfs
 * file read again from its start, a close that forgets the descriptor.
 */
#ifndef RAMBOOT_FDIO_H
#define RAMBOOT_FDIO_H

#include <stddef.h>
#include <sys/types.h>

/* A small procfs or sysfs file from its start, NUL-terminated: the
 * bytes read (at most len - 1), or -errno (-EBADF for fd < 0). */
ssize_t pread_text(int fd, char *buf, size_t len);

/* Close *fd when it is open and set it to -1. */
void close_fd(int *fd);
/* close_fd() of each of the n descriptors at fds, in order. */
void close_fds(int *const fds[], size_t n);

#endif
