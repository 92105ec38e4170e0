/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The tmpfs that holds a RAM copy of an image (the loader's --tmpfs, the
 * lazy copier's): one mount, one set of flags, the noswap retry.
 *
 * The tmpfs holds the image file only; the image is loop-mounted from it
 * and runs under its own mount's flags, so nothing is ever executed from
 * the tmpfs itself: nosuid, nodev and noexec. noswap (Linux 6.4+): the
 * image stays in RAM and is never swapped out to the zram swap set up
 * next; a kernel that does not know the option refuses it (EINVAL), and
 * the mount is made again without it.
 */
#ifndef RAMBOOT_TMPFS_H
#define RAMBOOT_TMPFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mount.h>

#define TMPFS_FLAGS (MS_NOSUID | MS_NODEV | MS_NOEXEC)

/* Mount a tmpfs of size bytes (rounded up to 4 KiB), mode 0755, on dir;
 * opts (may be NULL) gets the options it was mounted with, for the log.
 * 0 or -errno. */
int tmpfs_mount(const char *dir, uint64_t size, char *opts, size_t optslen);

#endif
