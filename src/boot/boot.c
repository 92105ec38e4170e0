// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `ramboot boot`: the initramfs entry point, run by the LTSP hook and the
 * initramfs-tools boot script after the network root is mounted.
 *
 * It acts on the kernel command line (ramboot=off|prefetch|ram, ...),
 * the RAMBOOT_* environment and /etc/ramboot.conf, and must never make
 * the client unbootable: every runtime outcome exits 0. On a RAM copy
 * it prints exactly one line, RAMBOOT_IMAGE=<path>, on stdout; anything
 * else (a failure included) leaves stdout empty and the boot goes on
 * from the network image. What happened is in /run/ramboot/report.
 *
 * The path of a boot, downwards: cmd_boot (at the end of this file)
 * reads the settings into one struct boot_run (run.h), sets up the swap
 * and its memory tier, then boot_image() finds and probes the image
 * (or takes ramboot.url=, boot_url()), makes the plan, maps it first with ramboot.verity=1, and runs one mode:
 * modes.c (ram, prefetch, lazy) or cache.c (a hit's slot, or a miss and
 * the refresh behind the boot). Each records through outcome.c. The
 * report is written as cmd_boot ends, unless a child that outlives
 * the boot was handed it (run.h, report_owner).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "lib/base.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/opts.h"
#include "lib/path.h"
#include "lib/proc.h"
#include "lib/report.h"
#include "lib/sysutil.h"
#include "boot/cache.h"
#include "boot/drop.h"
#include "boot/explain.h"
#include "boot/modes.h"
#include "boot/outcome.h"
#include "boot/run.h"
#include "boot/settings.h"
#include "boot/verity.h"
#include "profile/profile.h"
#include "swap/swap.h"

/* The debug log: stderr copied to /run/ramboot/boot.log by a child. */
struct debug_log {
	pid_t pid;
	int saved_err;
	char path[PATH_MAX];
};

enum { OPT_IMAGE = 256, OPT_DEFAULT_IMAGE, OPT_CMDLINE, OPT_JSON, OPT_DROP, OPT_REASON,
       OPT_QUERY, OPT_EXPLAIN, OPT_MOUNTED };

static const struct rb_optset optset = {
	.head = "Usage: ramboot boot [--image=PATH] [--default-image=PATH] [--cmdline=STRING]\n"
		"                    [--json] [--mounted]\n"
		"       ramboot boot [--image=PATH] [--default-image=PATH] [--cmdline=STRING]\n"
		"                    --query | --explain\n"
		"       ramboot boot --drop=PATH [--reason=TEXT]\n"
		"\n"
		"Initramfs entry point: act on ramboot= on the kernel command line\n"
		"(off | prefetch | ram | lazy), the RAMBOOT_* environment and " CONF_PATH ".\n"
		"\n",
	.opts = RB_OPTS(
		{ "image", OPT_IMAGE, "=PATH",
		  "the image to copy (default: ramboot.image=, else\n"
		  "the first field of ltsp.image= under the root mount)" },
		{ "default-image", OPT_DEFAULT_IMAGE, "=PATH",
		  "the image when no setting names one" },
		{ "cmdline", OPT_CMDLINE, "=STRING",
		  "parse STRING instead of /proc/cmdline" },
		{ "json", OPT_JSON, NULL,
		  "also write " REPORT_DIR "/report.json" },
		{ "drop", OPT_DROP, "=PATH",
		  "(for the hooks) the RAM copy PATH was not used: free\n"
		  "it and record the fallback in the report" },
		{ "reason", OPT_REASON, "=TEXT",
		  "with --drop: why, for the report" },
		{ "explain", OPT_EXPLAIN, NULL,
		  "the dry run: every setting with its source, the\n"
		  "image, manifest, keys, verification and memory\n"
		  "verdict; nothing is copied, mounted or written" },
		{ "query", OPT_QUERY, NULL,
		  "(for the hooks) print mode=MODE and image=PATH (the\n"
		  "image the settings name, empty for none) and stop" },
		{ "mounted", OPT_MOUNTED, NULL,
		  "(for the hooks) the caller mounts the root from the\n"
		  "image itself: ramboot.verity=1 cannot be met (a\n"
		  "fallback)" },
		{ "help", 'h', NULL,
		  "show this help" }),
	.tail = "\n"
		"On a RAM copy, and with ramboot.verity=1 (the dm-verity mapping to mount),\n"
		"stdout is one line: RAMBOOT_IMAGE=<path>. Exit status 0 in\n"
		"every runtime outcome (failures fall back to the network image and are\n"
		"recorded in " REPORT_DIR "/report); 2 for a bad command line.\n",
	.indent = 2, .col = 24,
};

/* ---- debug log ---- */

static void debug_log_start(struct debug_log *d, const char *dir)
{
	int pfd[2], fd, nul;
	char buf[4096];
	ssize_t n;

	d->pid = -1;
	d->saved_err = -1;
	if (snprintf(d->path, sizeof(d->path), "%s/boot.log", dir) >= (int)sizeof(d->path))
		return;
	fd = open(d->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		rb_warn("%s: %s", d->path, strerror(errno));
		return;
	}
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		close(fd);
		return;
	}
	d->pid = fork();
	if (d->pid < 0) {
		close(fd);
		close(pfd[0]);
		close(pfd[1]);
		return;
	}
	if (d->pid == 0) {
		/* The copier must not hold stdout: the hook reads it to EOF. */
		nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (nul >= 0)
			dup2(nul, STDOUT_FILENO);
		close(pfd[1]);
		while ((n = read(pfd[0], buf, sizeof(buf))) != 0) {
			if (n < 0) {
				if (errno == EINTR)
					continue;
				break;
			}
			(void)write_all(STDERR_FILENO, buf, (size_t)n);
			(void)write_all(fd, buf, (size_t)n);
		}
		_exit(0);
	}
	close(pfd[0]);
	close(fd);
	d->saved_err = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (d->saved_err < 0 || dup2(pfd[1], STDERR_FILENO) < 0) {
		close(pfd[1]);
		if (d->saved_err >= 0)
			close(d->saved_err);
		d->saved_err = -1;
		/* the child sees EOF and exits */
		waitpid(d->pid, NULL, 0);
		d->pid = -1;
		return;
	}
	close(pfd[1]);
}

static void debug_log_stop(struct debug_log *d)
{
	if (d->pid <= 0)
		return;
	dup2(d->saved_err, STDERR_FILENO);
	close(d->saved_err);
	while (waitpid(d->pid, NULL, 0) < 0 && errno == EINTR)
		;
	d->pid = -1;
}

/* ---- the work ---- */

/* ramboot.swap=zram: the swap first, with the network memory tier
 * under it when ramboot.swap.net= asks (its process starts once the
 * report is written: run->net). */
static void do_swap(struct boot_run *run)
{
	const struct boot_settings *s = &run->s;
	struct boot_report *rep = &run->rep;
	struct boot_tier *net = &run->net;
	struct swap_opts o;
	struct swap_result r;
	char msg[300];
	int rc;

	if (s->swap != SWAP_ZRAM)
		return;
	swap_opts_init(&o);
	netmem_opts_init(&net->opts);
	if (s->swap_net[0]) {
		net->asked = true;
		memset(&net->tier, 0, sizeof(net->tier));
		if (netmem_spec_parse(s->swap_net, &net->opts, msg, sizeof(msg)) < 0) {
			rb_warn("ramboot.swap.net=%s: %s; zram alone", s->swap_net, msg);
			net->opts.server = NULL;
			snprintf(net->tier.server, sizeof(net->tier.server), "%.64s", s->swap_net);
			snprintf(net->tier.state, sizeof(net->tier.state), "%.150s", msg);
		} else {
			/* Its handshake is one of the boot's waits on the
			 * network: never past the boot's deadline. */
			net->opts.deadline = boot_deadline();
			o.net = &net->opts;
		}
	}
	if (s->swap_size[0]) {
		o.size = s->swap_size;
		o.size_name = "ramboot.swap.size";
	}
	if (s->swap_algorithm[0])
		o.algorithm = s->swap_algorithm;
	if (s->swap_priority_set)
		o.priority = s->swap_priority;
	memset(&r, 0, sizeof(r));
	rc = swap_setup(&o, &r);
	if (rc != RB_EXIT_OK) {
		snprintf(msg, sizeof(msg), "swap: %s", r.error[0] ? r.error : "setup failed");
		rb_warn("%s", msg);
		if (o.net) {
			net->tier = r.net;
			snprintf(net->tier.state, sizeof(net->tier.state), "no zram swap");
		}
		report_add_error(rep, msg);
		return;
	}
	if (o.net) {
		net->tier = r.net;
		net->zram = r.zram_id;
	}
	snprintf(rep->swap_device, sizeof(rep->swap_device), "%s", r.device);
	rep->swap_size = r.size;
	snprintf(rep->swap_algorithm, sizeof(rep->swap_algorithm), "%s", r.algorithm);
	rep->swap_priority = r.priority;
	rb_debug("swap on %s, %llu bytes, %s, priority %d", r.device,
		 (unsigned long long)r.size, r.algorithm, r.priority);
}

/* After the report (the tier's keys are amended into it): the memory
 * tier's process, when one was asked for. */
static void start_tier(struct boot_run *run)
{
	struct boot_tier *net = &run->net;

	if (!net->asked || (!net->opts.server && !net->tier.state[0]))
		return;
	if (!net->opts.server)
		net->opts.server = net->tier.server;
	(void)netmem_start(&net->opts, &net->tier, net->zram, run->rundir);
}

/*
 * ramboot.profile=record: note which ranges of the network image this
 * boot reads, in the background, until a stop point (docs/profiles.md).
 * Only a boot that reads nothing but what it needs tells that: with
 * ramboot=off. The recorder is `ramboot profile record` in a child that left
 * the boot's session and descriptors; it keeps open what it needs.
 */
static void start_recorder(struct boot_run *run)
{
	const struct boot_settings *s = &run->s;
	struct boot_report *rep = &run->rep;
	char image[PATH_MAX], mbuf[PATH_MAX];
	struct profile_record_opts o;
	const char *manifest;
	struct stat st;
	pid_t pid;

	if (s->mode != BOOT_OFF) {
		char msg[64];

		/* A RAM copy, a prefetch or a lazy copy reads the whole image:
		 * the page cache would say nothing about what the boot read. */
		snprintf(msg, sizeof(msg), "profile: not recorded with ramboot=%s",
			 boot_mode_name(s->mode));
		rb_warn("ramboot.profile=record needs ramboot=off (the boot's own reads only)");
		report_add_error(rep, msg);
		return;
	}
	if (resolve_image(s, run->a, image, sizeof(image)) < 0 || stat(image, &st) < 0) {
		rb_warn("ramboot.profile=record: no image to record");
		report_add_error(rep, "profile: no image");
		return;
	}
	manifest = pick_manifest(s, image, mbuf, sizeof(mbuf));
	profile_record_opts_init(&o);
	o.image = image;
	o.until = 600;
	if (manifest && stat(manifest, &st) == 0 && S_ISREG(st.st_mode))
		o.manifest = manifest;
	pid = boot_fork("recording a boot profile", image);
	if (pid < 0) {
		rb_warn("ramboot.profile=record: %s", strerror(errno));
		return;
	}
	if (pid > 0)
		return;
	if (rb_detach(false) < 0)
		_exit(1);
	rb_set_cmd("profile");
	_exit(profile_record_run(&o) < 0 ? RB_EXIT_FAIL : RB_EXIT_OK);
}

/* The command line into *a: -1 to go on, else the exit code (--help, a
 * usage error). */
static int parse_args(int argc, char **argv, struct boot_args *a)
{
	struct rb_getopt g = { .set = &optset };
	int c;

	while ((c = rb_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case OPT_IMAGE: a->image = optarg; break;
		case OPT_DEFAULT_IMAGE: a->default_image = optarg; break;
		case OPT_CMDLINE: a->cmdline = optarg; break;
		case OPT_JSON: a->json = true; break;
		case OPT_DROP: a->drop = optarg; break;
		case OPT_REASON: a->reason = optarg; break;
		case OPT_QUERY: a->query = true; break;
		case OPT_EXPLAIN: a->explain = true; break;
		case OPT_MOUNTED: a->mounted = true; break;
		case 'h': rb_opts_usage(stdout, &optset); return RB_EXIT_OK;
		default: return rb_opts_fail(&optset, "bad option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return rb_opts_fail(&optset, "unexpected argument '%s'", argv[optind]);
	if ((a->image && !*a->image) || (a->default_image && !*a->default_image)) {
		rb_err("empty image path");
		return RB_EXIT_USAGE;
	}
	if (a->reason && !a->drop) {
		rb_err("--reason goes with --drop");
		return RB_EXIT_USAGE;
	}
	if ((a->query || a->explain) && (a->drop || a->json || (a->query && a->explain))) {
		rb_err("--%s goes alone (with --image, --default-image, --cmdline)",
		       a->query ? "query" : "explain");
		return RB_EXIT_USAGE;
	}
	return -1;
}

/*
 * ramboot.verity=1, before any mode: fails closed, no copy, no prefetch,
 * no lazy copy without the mapping asked for. Over the network image
 * now, except for a RAM copy: over the copy once it is verified (a lazy
 * copy needs a loop device to switch, even over a block device). false
 * after a fallback.
 */
static bool verity_first(struct boot_run *run)
{
	const struct boot_settings *s = &run->s;
	struct boot_report *rep = &run->rep;

	if (run->a->mounted) {
		snprintf(rep->verity, sizeof(rep->verity), "failed");
		fallback(rep, "verity unavailable", "ramboot.verity=1, but the boot "
			 "script mounts the root from the image itself");
		return false;
	}
	if (!settings_usable(s, rep) || !verify_plan(s, run->manifest, &run->vp, rep))
		return false;
	if (!run->manifest) {
		snprintf(rep->verity, sizeof(rep->verity), "failed");
		fallback(rep, "verity unavailable", "ramboot.verity=1 and no manifest "
			 "(ramboot manifest --verity)");
		return false;
	}
	/* A RAM copy, or the cache (its slot or the image): mapped later. */
	if (s->mode == BOOT_RAM || cache_used(s))
		return verity_in_manifest(run);
	if (!do_verity(run, run->image, s->mode == BOOT_LAZY, NULL))
		return false;
	print_image(rep->verity_device);
	return true;
}

/* The image and its manifest looked at in a child the boot can give up
 * on: a hard NFS mount whose server is gone holds even a stat for ever. */
struct child_probe {
	struct child_beat cb;
	const struct boot_settings *s;
	const char *image;
	int rc;                   /* stat's: 0 or -errno */
	bool manifest;            /* one is named or there (pick_manifest) */
	char path[PATH_MAX];
};

static void probe_child(void *arg)
{
	struct child_probe *c = arg;
	struct stat st;

	c->rc = stat(c->image, &st) < 0 ? -errno : 0;
	if (c->rc == 0)
		c->manifest = pick_manifest(c->s, c->image, c->path, sizeof(c->path)) != NULL;
}

/* 0 with *manifest (in buf, or NULL for none), or -errno: the image is
 * not there, or -ETIMEDOUT: no answer within what is left of the boot's
 * deadline (the child is left to the kernel). */
static int probe_image(const struct boot_settings *s, const char *image, char *buf, size_t len,
		       const char **manifest)
{
	struct child_probe *c = calloc(1, sizeof(*c));
	int rc, status;

	*manifest = NULL;
	if (!c)
		return -ENOMEM;
	c->s = s;
	c->image = image;
	c->rc = -EIO;
	rc = child_call(probe_child, c, sizeof(*c), read_limit(s), &status);
	if (rc == CHILD_DONE && c->rc == 0 && c->manifest && strlen(c->path) < len) {
		snprintf(buf, len, "%s", c->path);
		*manifest = buf;
	}
	rc = rc == CHILD_KILLED ? -ETIMEDOUT : rc != CHILD_DONE ? (rc < 0 ? rc : -EIO) : c->rc;
	free(c);
	return rc;
}

/* The plan checked (settings, verification), the mode: the cache, a
 * lazy copy or a RAM copy. */
static void run_mode(struct boot_run *run)
{
	const struct boot_settings *s = &run->s;

	if (!settings_usable(s, &run->rep) || !verify_plan(s, run->manifest, &run->vp, &run->rep))
		return;
	if (cache_used(s))
		do_cache(run);
	else if (s->mode == BOOT_LAZY)
		lazy_from_network(run);
	else
		do_ram(run);
}

/*
 * ramboot.url=: the image over HTTP, its first URL (the others are its
 * mirrors, fill_opts() in modes.c). Nothing is probed here: the loader
 * fetches the manifest and the image in a child bounded by the boot's
 * deadline, and refuses an image it cannot check chunk by chunk. A RAM
 * copy, the lazy copier and the cache read it; a prefetch and a
 * dm-verity mapping are of the network image's file, which the URL
 * is not.
 */
static void boot_url(struct boot_run *run)
{
	const struct boot_settings *s = &run->s;
	struct boot_report *rep = &run->rep;

	snprintf(run->image, sizeof(run->image), "%s", settings_url(s, 0));
	snprintf(rep->source, sizeof(rep->source), "%s", run->image);
	run->manifest = url_manifest(s, run->mbuf, sizeof(run->mbuf));
	if (s->verity || s->verity_bad) {
		snprintf(rep->verity, sizeof(rep->verity), "failed");
		fallback(rep, "verity unavailable", "ramboot.verity=1 does not map an image "
			 "over HTTP (ramboot.url=)");
		return;
	}
	if (s->mode == BOOT_PREFETCH) {
		fallback(rep, "prefetch failed", "ramboot=prefetch reads the network image's "
			 "file, not ramboot.url=");
		return;
	}
	run_mode(run);
}

/*
 * The image's part of the boot (a mode, or ramboot.verity=1): find the
 * image and its manifest (the plan), then the mapping and the mode.
 */
static void boot_image(struct boot_run *run)
{
	const struct boot_settings *s = &run->s;
	struct boot_report *rep = &run->rep;
	char msg[PATH_MAX + 128];
	int rc;

	if (s->nurl) {
		boot_url(run);
		return;
	}
	rc = resolve_image(s, run->a, run->image, sizeof(run->image));
	if (rc < 0) {
		fallback(rep, "no image", rc == -ENOENT ? "neither ramboot.image= nor ltsp.image= "
			 "is set" : strerror(-rc));
		return;
	}
	snprintf(rep->source, sizeof(rep->source), "%s", run->image);
	rc = probe_image(s, run->image, run->mbuf, sizeof(run->mbuf), &run->manifest);
	if (rc < 0) {
		if (rc == -ETIMEDOUT)
			snprintf(msg, sizeof(msg), "%s: no answer by the boot's deadline "
				 "(ramboot.timeout= + 15 s); left to the kernel", run->image);
		else
			snprintf(msg, sizeof(msg), "%s: %s", run->image, strerror(-rc));
		/* The server cannot be read: the cache's slot, if allowed. */
		if (cache_used(s) && do_cache_offline(run, msg))
			return;
		fallback(rep, "image not found", msg);
		return;
	}
	if (run->manifest)
		rb_debug("manifest %s", run->manifest);
	/* A copy or a mapping reads the bytes the manifest describes under
	 * the name publish --content-addressed gave them, which no rebuild
	 * changes. Not a prefetch (for the file the boot script mounts), nor
	 * the cache (the image's own name is its key there). */
	if (run->manifest && !cache_used(s) && (s->mode == BOOT_RAM || s->mode == BOOT_LAZY ||
					       (s->mode == BOOT_OFF && s->verity)) &&
	    follow_image(s, run->manifest, run->image, sizeof(run->image)))
		snprintf(rep->source, sizeof(rep->source), "%s", run->image);
	if ((s->verity || s->verity_bad) && !verity_first(run))
		return;
	if (s->mode == BOOT_OFF)
		return;
	if (s->mode == BOOT_PREFETCH) {
		do_prefetch(run);
		return;
	}
	if (s->mode == BOOT_CACHE && !s->cache[0]) {
		snprintf(rep->cache, sizeof(rep->cache), "fallback");
		fallback(rep, "cache unusable", "ramboot=cache and no ramboot.cache= names the "
			 "cache's device");
		return;
	}
	run_mode(run);
}

int cmd_boot(int argc, char **argv)
{
	struct boot_args a = { 0 };
	struct boot_run *run;
	struct boot_settings *s;
	struct debug_log dlog = { .pid = -1, .saved_err = -1 };
	int rc, qrc = RB_EXIT_OK;

	rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	/* Before the settings are read: their warnings are for the log too.
	 * The dry runs write nothing, not even there. */
	if (!a.query && !a.explain)
		rb_kmsg_open();
	if (a.drop)
		return boot_drop(a.drop, a.reason && *a.reason ? a.reason : "the hook refused the copy");

	run = calloc(1, sizeof(*run));
	if (!run) {
		rb_warn("out of memory; nothing done");
		return qrc;
	}
	run->a = &a;
	run->owner = REPORT_BOOT;
	run->net.zram = -1;
	s = &run->s;
	report_init(&run->rep);
	if (rb_path(run->rundir, sizeof(run->rundir), REPORT_DIR) < 0) {
		rb_warn("root prefix too long; nothing done");
		goto out;
	}
	load_settings(s, &a);
	boot_deadline_start(s);
	if (a.query || a.explain) {
		rc = a.query ? boot_query(s, &a) : boot_explain(s, &a);
		qrc = rc < 0 ? RB_EXIT_FAIL : RB_EXIT_OK;
		goto out;
	}
	rc = report_mkdir(run->rundir);
	if (rc < 0)
		rb_warn("%s: %s", run->rundir, strerror(-rc));
	if (s->debug) {
		rb_verbose = 1;
		if (rc == 0)
			debug_log_start(&dlog, run->rundir);
		run->logpath = dlog.path;
		rb_debug("mode %s, target %s, swap %s", boot_mode_name(s->mode),
			 boot_target_name(s->target), s->swap == SWAP_ZRAM ? "zram" : "off");
	}
	snprintf(run->rep.mode_asked, sizeof(run->rep.mode_asked), "%s", boot_mode_name(s->mode));

	/* Swap first: the prefetch child writes the report after us. */
	do_swap(run);
	if (s->profile_record)
		start_recorder(run);
	if (s->mode != BOOT_OFF || s->verity || s->verity_bad)
		boot_image(run);
	/* Unless a child that outlives the boot was handed the report. */
	if (run->owner == REPORT_BOOT) {
		rc = report_write(&run->rep, run->rundir, a.json);
		if (rc < 0)
			rb_warn("%s/report: %s", run->rundir, strerror(-rc));
	}
	start_tier(run);
out:
	debug_log_stop(&dlog);
	free(run);
	return qrc;
}
