/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * outcome.c: what `ramboot boot` leaves behind. On a RAM copy or a
 * mapping, one stdout line the hook reads; on a failure, the fallback in
 * the report and one warning; the report itself, written by the boot as
 * it ends or handed over to a child that outlives the boot.
 */
#ifndef RAMBOOT_BOOT_OUTCOME_H
#define RAMBOOT_BOOT_OUTCOME_H

#include <sys/types.h>

#include "boot/run.h"
#include "lib/report.h"

/* Record the fallback (reason, error) in the report and say it once on
 * the console. */
void fallback(struct boot_report *rep, const char *reason, const char *error);
/* The one stdout line, RAMBOOT_IMAGE=PATH, quoted for the shell. */
void print_image(const char *path);

/* fork() for a child that outlives the boot, stdio flushed first (no
 * buffered line is written twice): 0 in the child; in the boot the
 * child's pid, logged as "WHAT of IMAGE in process PID"; -1 with errno
 * when there is no child. */
pid_t boot_fork(const char *what, const char *image);
/* The report written as it stands, then boot_fork(): in the boot, the
 * child's pid and run->owner is owner; -1 with errno when there is no
 * child, and run->owner is REPORT_WRITTEN (who records why writes it
 * again by setting REPORT_BOOT). 0 in the child. */
pid_t boot_hand_over(struct boot_run *run, enum report_owner owner, const char *what,
		     const char *image);
/* In the child of a fork that outlives the boot (the prefetch, the
 * cache's refresh): detached (rb_detach), stderr to the debug log at
 * logpath when there is one; the run directory's descriptor (-1 when it
 * cannot be opened), which stays valid after the switch of root. Exits
 * the child when it cannot detach. */
int boot_child_detach(const char *rundir, const char *logpath);

#endif
