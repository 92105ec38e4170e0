/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside `ramboot boot`: what its files (boot.c the sequence, settings.c,
 * modes.c, verity.c, drop.c, explain.c) share. Every step that cannot go
 * on records a fallback in the report and returns; the boot goes on
 * from the network image.
 */
#ifndef RAMBOOT_BOOTINT_H
#define RAMBOOT_BOOTINT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "boot/cmdline.h"
#include "lib/report.h"

struct load_opts;
struct load_result;

#define CONF_PATH "/etc/ramboot.conf"

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

/* A child of the boot (a load, a read of the image or the manifest) is
 * given up on this long after its stall timeout. */
#define CHILD_GRACE_S 15.0

/* settings.c */
void load_settings(struct boot_settings *s, const struct boot_args *a);
/* The root file system mount of the initramfs ($rootmnt). */
const char *root_mount(void);
/* The image to copy into out: 0, -ENOENT (none named) or -errno. */
int resolve_image(const struct boot_settings *s, const struct boot_args *a, char *out,
		  size_t len);
/* The manifest to use (in buf), or NULL for none. */
const char *pick_manifest(const struct boot_settings *s, const char *image, char *buf,
			  size_t len);
/* The file the manifest's "image" key names beside the image (publish
 * --content-addressed), into image: true when it is there and image now
 * names it; false: image unchanged (none named, or not there: a warning). */
bool follow_image(const struct boot_settings *s, const char *manifest, char *image,
		  size_t len);
/* false after a fallback: the settings cannot tell how to verify a copy. */
bool settings_usable(const struct boot_settings *s, struct boot_report *rep);
/* The verification of this boot into *p; false after a fallback. */
bool verify_plan(const struct boot_settings *s, const char *manifest, struct vplan *p,
		 struct boot_report *rep);
/* The boot's one deadline (settings.c): started when the boot starts,
 * pushed on by a copy's progress (at: when its data last came, on
 * now_sec()'s clock); boot_deadline() is it on that clock, 0 for none.
 * read_limit(): what is left of it for a step that waits on the network,
 * in seconds (0: no bound). */
void boot_deadline_start(const struct boot_settings *s);
void boot_deadline_progress(const struct boot_settings *s, double at);
double boot_deadline(void);
double read_limit(const struct boot_settings *s);

/* boot.c */
/* Record the fallback (reason, error) in the report and say it once on
 * the console. */
void fallback(struct boot_report *rep, const char *reason, const char *error);
/* The one stdout line, RAMBOOT_IMAGE=PATH, quoted for the shell. */
void print_image(const char *path);

/* modes.c */
void fill_opts(struct load_opts *o, const struct boot_settings *s, const char *image,
	       const struct vplan *vp);
/* Free a RAM copy made by this boot (the tmpfs under rundir, or a zram
 * device). */
void drop_copy(const char *rundir, const char *path);
/* ramboot=ram: the copy, verified as vp says; stdout's one line on success. */
void do_ram(const struct boot_settings *s, const char *image, const char *manifest,
	    const struct vplan *vp, const char *rundir, struct boot_report *rep);
/* ramboot=prefetch: 0 when the background reader started (it writes the
 * report when done), -1 after a fallback. */
int do_prefetch(const struct boot_settings *s, const char *image, const char *rundir,
		const char *logpath, bool json, struct boot_report *rep);

/* boot.c: ramboot=lazy's copier started (boot.c). From the network
 * image, waiting for its loop device (image_fd -1, loop NULL); or from a
 * local copy of its bytes open at image_fd (the cache's slot on a hit)
 * whose loop device loop is there already. */
void do_lazy(const struct boot_settings *s, const char *image, const struct vplan *vp,
	     int image_fd, const char *loop, const char *rundir, struct boot_report *rep);

/* cache.c: after a refresh behind the boot, how long the switch waits
 * for the loop device the boot's root runs on (the hook sets it up), and
 * for one that is there but not fit (read-write, another size). */
#define CACHE_SWITCH_WAIT 120.0
#define CACHE_SWITCH_UNFIT 2.0

/* cache.c: ramboot.cache= with ramboot=cache or lazy. false when the
 * refresh child took the report over (the boot must not write it). */
bool do_cache(const struct boot_settings *s, const char *image, const char *manifest,
	      const struct vplan *vp, const char *rundir, const char *logpath, bool json,
	      struct boot_report *rep);
/* cache.c: ramboot.cache.offline=: the server cannot be read (why);
 * true when the cache's slot boots offline or the fallback is recorded,
 * false when offline boots are off (the caller's fallback). */
bool do_cache_offline(const struct boot_settings *s, const char *image, const char *why,
		      const char *rundir, struct boot_report *rep);
/* Does this boot use the cache? */
static inline bool cache_used(const struct boot_settings *s)
{
	return s->mode == BOOT_CACHE || (s->mode == BOOT_LAZY && s->cache[0]);
}

/* scrub.c: ramboot.verity=1 on a hit with ramboot=cache: the report
 * written, then a detached child (idle priority) reads the slot's
 * mapping whole behind the boot and marks the slot bad when a block
 * fails; it amends the report (cache_scrub=). The boot must not write
 * the report after this. */
struct cache_look_res;
struct cache_scrub_result;
void start_scrub(const struct cache_look_res *lr, const char *name, const char *mapping,
		 const char *rundir, const char *logpath, bool json, struct boot_report *rep);
/* scrub.c: the scrub's outcome for slot of image name into the report
 * in the directory dfd, and one line on the console and the kernel log
 * when a block failed or the scrub did (a debug line when all is well).
 * 0 or -errno. */
int scrub_report(int dfd, const char *name, int slot, const struct cache_scrub_result *r);

/* verity.c */
bool do_verity(const struct boot_settings *s, const char *image, const char *data, bool loop,
	       const char *manifest, const struct vplan *vp, const struct load_result *copy,
	       const char *rundir, struct boot_report *rep);
bool verity_in_manifest(const struct boot_settings *s, const char *manifest,
			struct boot_report *rep);

/* drop.c: --drop; always RB_EXIT_OK (a hook must go on booting). */
int boot_drop(const char *path, const char *reason);

/* explain.c: --query and --explain; 0 or -EIO (stdout failed). */
int boot_query(const struct boot_settings *s, const struct boot_args *a);
int boot_explain(const struct boot_settings *s, const struct boot_args *a);

/* fork() for a child that outlives the boot, stdio flushed first (no
 * buffered line is written twice): 0 in the child; in the boot the
 * child's pid, logged as "WHAT of IMAGE in process PID"; -1 with errno
 * when there is no child. */
pid_t boot_fork(const char *what, const char *image);

/* In the child of a fork that outlives the boot (the prefetch, the
 * cache's refresh): detached (rb_detach), stderr to the debug log at
 * logpath when there is one; the run directory's descriptor (-1 when it
 * cannot be opened), which stays valid after the switch of root. Exits
 * the child when it cannot detach. */
int boot_child_detach(const char *rundir, const char *logpath);

#endif
