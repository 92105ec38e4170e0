/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * modes.c: the modes of `ramboot boot` that read the plan's image:
 * ramboot=ram, ramboot=prefetch and ramboot=lazy.
 */
#ifndef RAMBOOT_BOOT_MODES_H
#define RAMBOOT_BOOT_MODES_H

#include <stddef.h>

#include "boot/run.h"

/* Free a RAM copy made by this boot (the tmpfs under rundir, or a zram
 * device). */
void drop_copy(const char *rundir, const char *path);
/* ramboot=ram: the copy, verified as planned; stdout's one line on
 * success, a fallback else. */
void do_ram(struct boot_run *run);
/* ramboot=prefetch: the report handed over to the background reader
 * (REPORT_PREFETCH), or a fallback. */
void do_prefetch(struct boot_run *run);
/*
 * ramboot=lazy: the copier started, verified as planned. From the
 * network image, waiting for its loop device (image_fd -1, loop NULL);
 * or from a local copy of its bytes open at image_fd (the cache's slot
 * on a hit) whose loop device loop is there already. 0: started, the
 * report says so (target=, mode_done=lazy). -errno with why: the report
 * is as it was, the caller records the failure; -ENOMEM: not enough
 * memory for the copy.
 */
int do_lazy(struct boot_run *run, int image_fd, const char *loop, char *why, size_t len);
/* do_lazy() from the network image; the fallback when it does not start. */
void lazy_from_network(struct boot_run *run);

#endif
