/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `ramboot status`: what the client runs from, the boot report, the
 * lazy copy and the zram devices. Also `ramboot swap --status`.
 *
 * status/ reads what lib/ writes (the boot report, the lazy status
 * file, through lib/keys.h) and what dev/ knows (the zram devices);
 * nothing of the boot: it sits below swap/, which shows it too.
 */
#ifndef RAMBOOT_STATUS_H
#define RAMBOOT_STATUS_H

#include <stdbool.h>

struct status_opts {
	bool json;   /* one JSON object */
	bool check;  /* the verdict line only; RB_EXIT_FAIL unless from RAM */
};

/* Print the status on stdout (warnings on stderr). Returns RB_EXIT_OK,
 * RB_EXIT_FAIL (stdout failed; with check: not running from RAM) or
 * RB_EXIT_USAGE (json and check together). */
int status_show(const struct status_opts *o);

#endif
