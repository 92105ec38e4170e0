/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The counters of the loop device the boot reads the image through:
 * /sys/block/loopN/inflight (reads and writes in flight) and
 * /sys/block/loopN/stat (reads completed, its first field). Opened once
 * and read again from their start (pread), so a reader keeps them after
 * the initramfs switched root.
 */
#ifndef RAMBOOT_BGREAD_LOOPSTAT_H
#define RAMBOOT_BGREAD_LOOPSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* /sys/block/loopN/inflight: "reads writes". 0 with the reads, -EINVAL. */
int bgread_parse_inflight(const char *s, uint64_t *reads);

/* /sys/block/loopN/stat: the reads completed (first field). 0 or -EINVAL. */
int bgread_parse_stat(const char *s, uint64_t *reads_done);

struct bgread_loop {
	char name[64];          /* "loop0"; "" while none is known */
	int inflight_fd;        /* -1: none (then nothing tells the boot's reads) */
	int stat_fd;            /* -1: reads completed not known */
};

/* No loop device (name "", descriptors -1). */
void bgread_loop_init(struct bgread_loop *lp);

/* Open the counters of the loop device name: below /sys/block through
 * the root prefix (dirfd < 0), or below the sysfs block directory dirfd.
 * The name is kept whatever happens. 0, or -errno when inflight cannot
 * be opened (stat is optional). */
int bgread_loop_open(struct bgread_loop *lp, int dirfd, const char *name);

/* One look for the loop device backed by the file at path whose stat is
 * st (its backing_file, through the root prefix), and its counters.
 * 0; -ENOENT when there is none yet; -errno. err says why. */
int bgread_loop_find(struct bgread_loop *lp, const char *path, const struct stat *st, char *err,
		     size_t errlen);

/* The boot's reads in flight (0 when not known) and, when known, the
 * reads it completed: true with *done. */
bool bgread_loop_read(const struct bgread_loop *lp, uint64_t *inflight, uint64_t *done);

void bgread_loop_close(struct bgread_loop *lp);

#endif
