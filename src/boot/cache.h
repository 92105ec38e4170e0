/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cache.c: ramboot.cache= in `ramboot boot` (docs/cache.md, "At boot").
 */
#ifndef RAMBOOT_BOOT_CACHE_H
#define RAMBOOT_BOOT_CACHE_H

#include <stdbool.h>

#include "boot/run.h"

/* ramboot=cache, or ramboot=lazy with ramboot.cache=, once planned: a
 * hit boots the slot (ramboot=lazy: copied into RAM behind the boot,
 * verity: scrubbed behind it), a miss the network image with a refresh
 * of the slot behind the boot; a child may own the report after it. */
void do_cache(struct boot_run *run);
/* ramboot.cache.offline=: the server cannot be read (why); true when
 * the cache's slot boots offline or the fallback is recorded, false
 * when offline boots are off (the caller's fallback). */
bool do_cache_offline(struct boot_run *run, const char *why);

#endif
