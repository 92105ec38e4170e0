/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * drop.c: `ramboot boot --drop=PATH`, for the hooks.
 */
#ifndef RAMBOOT_BOOT_DROP_H
#define RAMBOOT_BOOT_DROP_H

/* Always RB_EXIT_OK (a hook must go on booting). */
int boot_drop(const char *path, const char *reason);

#endif
