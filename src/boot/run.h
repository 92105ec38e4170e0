/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One `ramboot boot`, in one struct every step takes: its settings (read
 * once, then only read), its plan (the image, its manifest, how a copy
 * is verified), the report and who owns it, and the network memory tier
 * set up with the swap. Every step that cannot go on records a fallback
 * in the report (outcome.h) and returns; the boot goes on from the
 * network image.
 */
#ifndef RAMBOOT_BOOT_RUN_H
#define RAMBOOT_BOOT_RUN_H

#include <limits.h>
#include <stdbool.h>

#include "boot/cmdline.h"
#include "lib/report.h"
#include "swap/netmem.h"

#define CONF_PATH "/etc/ramboot.conf"

/* A child of the boot (a load, a read of the image or the manifest) is
 * given up on this long after its stall timeout. */
#define CHILD_GRACE_S 15.0

struct boot_args {
	const char *image;          /* --image: wins over every setting */
	const char *default_image;  /* --default-image: used when none is set */
	const char *cmdline;        /* --cmdline: instead of /proc/cmdline */
	bool json;
	const char *drop;           /* --drop: the hook refused this copy */
	const char *reason;         /* --reason: why */
	bool query;                 /* --query: print mode and image, do nothing */
	bool explain;               /* --explain: the dry run, nothing done */
	bool mounted;               /* --mounted: the caller mounts the root from
				     * the image itself; no mapping can go under it */
};

/* What a copy is checked against (ramboot.verify=, docs/cmdline.md). */
struct vplan {
	enum boot_verify policy;  /* never VERIFY_AUTO once planned */
	const char *manifest;     /* NULL: none */
	const char *sha256;       /* NULL: none (ramboot.sha256=) */
	bool signed_only;
};

/*
 * Who writes the report. The boot writes it as it ends, unless it handed
 * it over (boot_hand_over(), outcome.h): written as it stood, then
 * rewritten or amended by a child that outlives the boot.
 */
enum report_owner {
	REPORT_BOOT,      /* the boot writes it as it ends */
	REPORT_WRITTEN,   /* written; the child it was for did not start */
	REPORT_PREFETCH,  /* the prefetch's child rewrites it when done */
	REPORT_REFRESH,   /* the cache's refresh amends it, and after the switch */
	REPORT_SCRUB,     /* the cache's scrub amends it (cache_scrub=) */
};

/* ramboot.swap.net=: the tier set up with the swap, its process started
 * once the report is written (netmem_start() amends it). */
struct boot_tier {
	bool asked;
	struct netmem_opts opts;   /* opts.server NULL: the spec did not parse */
	struct netmem_tier tier;
	int zram;                  /* the swap's zram device, -1: none */
};

struct boot_run {
	const struct boot_args *a;
	struct boot_settings s;
	char rundir[PATH_MAX];      /* REPORT_DIR under the root prefix */
	const char *logpath;        /* the debug log, NULL: none */
	/* The plan (boot.c, boot_image()). */
	char image[PATH_MAX];       /* the image a mode reads */
	const char *manifest;       /* its manifest (in mbuf), NULL: none */
	char mbuf[PATH_MAX];
	struct vplan vp;            /* how a copy is verified, once planned */
	struct boot_report rep;
	enum report_owner owner;
	struct boot_tier net;
};

/* Does this boot use the cache? */
static inline bool cache_used(const struct boot_settings *s)
{
	return s->mode == BOOT_CACHE || (s->mode == BOOT_LAZY && s->cache[0]);
}

#endif
