/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * explain.c: the dry runs of `ramboot boot`, --query and --explain.
 */
#ifndef RAMBOOT_BOOT_EXPLAIN_H
#define RAMBOOT_BOOT_EXPLAIN_H

#include "boot/cmdline.h"
#include "boot/run.h"

/* 0 or -EIO (stdout failed). */
int boot_query(const struct boot_settings *s, const struct boot_args *a);
int boot_explain(const struct boot_settings *s, const struct boot_args *a);

#endif
