/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * verity.c: ramboot.verity=1 in `ramboot boot`, the root through a
 * dm-verity mapping of the plan's image (trust/vboot.c maps it).
 */
#ifndef RAMBOOT_BOOT_VERITY_H
#define RAMBOOT_BOOT_VERITY_H

#include <stdbool.h>

#include "boot/run.h"

struct load_result;

/* Map data (the network image, its RAM copy, the cache's slot) with the
 * root hash of run's manifest, read under run's plan; loop: through a
 * loop device even over a block device; copy: the load that made data,
 * NULL for none. false after a fallback. */
bool do_verity(struct boot_run *run, const char *data, bool loop,
	       const struct load_result *copy);
/* Before a RAM copy is made: does run's manifest name a hash tree at
 * all? false after a fallback. */
bool verity_in_manifest(struct boot_run *run);

#endif
