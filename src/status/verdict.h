/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef RAMBOOT_VERDICT_H
#define RAMBOOT_VERDICT_H

#include <stdbool.h>
#include <stddef.h>

/* What the client runs from, as `ramboot status` says it first. */
enum verdict {
	V_RAM,       /* from a RAM copy (ram, or a lazy copy that switched) */
	V_NETWORK,   /* from the network image, as asked (off, prefetch) */
	V_COPYING,   /* from the network image while the lazy copy runs, or
		      * while the cache's refresh behind the boot runs */
	V_DISK,      /* from a slot of the local-disk cache (docs/cache.md) */
	V_FALLBACK,  /* from the network image though RAM was asked for */
	V_NONE,      /* no report: ramboot did not run */
};

/* The verdict line for REPORT (the report's text, NULL when there is
 * none) and LAZY (the lazy status file's text, or NULL) into BUF. */
enum verdict status_verdict(const char *report, const char *lazy, char *buf, size_t len);

#endif
