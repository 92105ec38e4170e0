/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scrub.c: ramboot.verity=1 on a hit with ramboot=cache: the slot's
 * mapping read whole behind the boot, the slot marked bad when a block
 * fails (cache/scrub.h).
 */
#ifndef RAMBOOT_BOOT_SCRUB_H
#define RAMBOOT_BOOT_SCRUB_H

#include "boot/run.h"

struct cache_look_res;
struct cache_scrub_result;

/* The report handed over (REPORT_SCRUB) to a detached child at idle
 * priority that reads the mapping of slot lr of image name and amends
 * the report (cache_scrub=). */
void start_scrub(struct boot_run *run, const struct cache_look_res *lr, const char *name,
		 const char *mapping);
/* The scrub's outcome for slot of image name into the report in the
 * directory dfd, and one line on the console and the kernel log when a
 * block failed or the scrub did (a debug line when all is well). 0 or
 * -errno. */
int scrub_report(int dfd, const char *name, int slot, const struct cache_scrub_result *r);

#endif
