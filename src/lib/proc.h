/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * This process in the machine: detached from the boot's hook, its
 * background priorities (I/O and CPU), the CPUs it may use, its large
 * buffers.
 */
#ifndef RAMBOOT_PROC_H
#define RAMBOOT_PROC_H

#include <stdbool.h>
#include <stddef.h>

/* In a child that outlives the boot's hook: a session of its own,
 * SIGHUP ignored, "/" as its directory (nothing mounted stays busy),
 * /dev/null as stdin and stdout (the hook reads the boot's stdout to
 * its end) and, with quiet, as stderr too. 0, or -errno of chdir. */
int rb_detach(bool quiet);

/* Idle I/O priority for this process (and the threads it starts next);
 * returns the old one for io_prio_restore (-1: unknown). */
int io_prio_idle(void);
void io_prio_restore(int old);
int cpu_nice_bg(void);
void cpu_nice_restore(int old);
/* The CPUs online, from 1 to 64. */
int online_cpus(void);

/* A large buffer, 2 MiB aligned and backed by transparent huge pages
 * where the kernel allows (one fault per 2 MiB instead of 512: faults
 * are costly, in a VM most of all). Freed with free(). */
void *alloc_big(size_t len);

#endif
