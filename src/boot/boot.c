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
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
#include "boot/bootint.h"
#include "lazy/lazy.h"
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

/* ramboot.swap.net=: the tier set up with the swap, its process started
 * once the boot's report is written (netmem_start amends it). */
static struct netmem_opts boot_net;
static struct netmem_tier boot_tier;
static int boot_net_zram = -1;
static bool boot_net_asked;

static void do_swap(const struct boot_settings *s, struct boot_report *rep)
{
	struct swap_opts o;
	struct swap_result r;
	char msg[300];
	int rc;

	if (s->swap != SWAP_ZRAM)
		return;
	swap_opts_init(&o);
	netmem_opts_init(&boot_net);
	if (s->swap_net[0]) {
		boot_net_asked = true;
		memset(&boot_tier, 0, sizeof(boot_tier));
		if (netmem_spec_parse(s->swap_net, &boot_net, msg, sizeof(msg)) < 0) {
			rb_warn("ramboot.swap.net=%s: %s; zram alone", s->swap_net, msg);
			boot_net.server = NULL;
			snprintf(boot_tier.server, sizeof(boot_tier.server), "%.64s", s->swap_net);
			snprintf(boot_tier.state, sizeof(boot_tier.state), "%.150s", msg);
		} else {
			/* Its handshake is one of the boot's waits on the
			 * network: never past the boot's deadline. */
			boot_net.deadline = boot_deadline();
			o.net = &boot_net;
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
			boot_tier = r.net;
			snprintf(boot_tier.state, sizeof(boot_tier.state), "no zram swap");
		}
		report_add_error(rep, msg);
		return;
	}
	if (o.net) {
		boot_tier = r.net;
		boot_net_zram = r.zram_id;
	}
	snprintf(rep->swap_device, sizeof(rep->swap_device), "%s", r.device);
	rep->swap_size = r.size;
	snprintf(rep->swap_algorithm, sizeof(rep->swap_algorithm), "%s", r.algorithm);
	rep->swap_priority = r.priority;
	rb_debug("swap on %s, %llu bytes, %s, priority %d", r.device,
		 (unsigned long long)r.size, r.algorithm, r.priority);
}

/* Print the one stdout line, quoted for the shell when needed. */
void print_image(const char *path)
{
	const char *p;
	bool plain = *path != '\0';

	for (p = path; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789/._,:+@%-", *p))
			plain = false;
	if (plain) {
		printf("RAMBOOT_IMAGE=%s\n", path);
	} else {
		printf("RAMBOOT_IMAGE='");
		for (p = path; *p; p++) {
			if (*p == '\'')
				printf("'\\''");
			else
				putchar(*p);
		}
		printf("'\n");
	}
	fflush(stdout);
}

void fallback(struct boot_report *rep, const char *reason, const char *error)
{
	snprintf(rep->fallback, sizeof(rep->fallback), "%s", reason);
	report_add_error(rep, error);
	snprintf(rep->mode_done, sizeof(rep->mode_done), "off");
	if (error && *error && !strncmp(error, reason, strlen(reason)))
		rb_warn("%s; booting from the network image", error);
	else if (error && *error)
		rb_warn("%s: %s; booting from the network image", reason, error);
	else
		rb_warn("%s; booting from the network image", reason);
}

#define LAZY_WAIT_LOOP 120.0   /* seconds for the loop device to appear */

/*
 * ramboot=lazy: the boot goes on from the network image at once; a
 * copier started here copies it into RAM in the background, verifies it
 * and switches the image's loop device to the copy (lazy.h). Started
 * before the image is mounted (LTSP's PRE_INITRD_BOTTOM hook runs before
 * it sets up the loop device), so it opens what it needs now and waits
 * for the loop device. stdout stays empty: the hooks change nothing.
 */
/* The copier's start, in a child of the boot (child_run). */
struct child_lazy {
	struct child_beat cb;
	const struct lazy_opts *o;
	int rc;
};

static void lazy_child(void *arg)
{
	struct child_lazy *c = arg;

	rb_set_cmd("lazy");
	c->rc = lazy_start(c->o);
}

void do_lazy(const struct boot_settings *s, const char *image, const struct vplan *vp,
	     int image_fd, const char *loop, const char *rundir, struct boot_report *rep)
{
	char tmpfs[PATH_MAX + 8], pbuf[PATH_MAX];
	struct lazy_opts o;
	struct child_lazy c = { .rc = 0 };
	double limit = read_limit(s);
	int status, crc;

	if (!settings_usable(s, rep))
		return;
	lazy_opts_init(&o);
	o.background = true;
	o.image = image;
	if (image_fd >= 0) {
		/* The bytes at disk speed, the loop device the hook mounts. */
		o.image_fd = image_fd;
		o.loop = loop;
		o.source_name = "cache";
	} else {
		o.wait_loop = LAZY_WAIT_LOOP;
	}
	if (s->target == TARGET_ZRAM) {
		o.target = LAZY_TARGET_ZRAM;
	} else {
		snprintf(tmpfs, sizeof(tmpfs), "%s/ram", rundir);
		o.tmpfs = tmpfs;
	}
	if (vp->sha256) {
		o.sha256 = vp->sha256;
	} else if (vp->manifest) {
		o.manifest = vp->manifest;
		o.signed_only = vp->signed_only;
	}
	if (s->minfree_set)
		o.min_free = s->minfree;
	if (s->profile[0]) {
		/* Like the manifest: under the root prefix, a relative path
		 * under the root mount. */
		int rc = !strcmp(s->profile, "none") ? (snprintf(pbuf, sizeof(pbuf), "none"), 0) :
			 s->profile[0] == '/' ? rb_path(pbuf, sizeof(pbuf), "%s", s->profile) :
			 rb_path(pbuf, sizeof(pbuf), "%s/%s", root_mount(), s->profile);

		if (rc == 0)
			o.profile = pbuf;
	}
	if (s->timeout_set)
		o.stall_timeout = s->timeout;
	/* The copy from the lab's multicast stream, checked against the
	 * hash above; from the image when that fails (lazy.md). */
	if (s->source == SOURCE_UDPCAST && image_fd < 0)
		o.udpcast = s->udpcast;
	snprintf(rep->target, sizeof(rep->target), "%s", boot_target_name(s->target));
	/* In a child: the copier's own start (it forks again) must not touch
	 * our stdout, which the hook reads to EOF. Its start reads the
	 * network image (the profile's identity, the manifest) before the
	 * copy goes to the background: bounded as a load is, a child held
	 * in the kernel is left to it. */
	c.o = &o;
	crc = child_call(lazy_child, &c, sizeof(c), limit, &status);
	if (crc == CHILD_DONE)
		status = (c.rc & 0xff) << 8;   /* as an exit status */
	if (crc < 0) {
		fallback(rep, "lazy copy not started", strerror(-crc));
		return;
	}
	if (crc == CHILD_KILLED) {
		char msg[128];

		snprintf(msg, sizeof(msg), "the copier's start did not return within %.0f s; left "
			 "to the kernel", limit);
		fallback(rep, "lazy copy not started", msg);
		return;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char msg[64];

		snprintf(msg, sizeof(msg), "the copier could not start (status %d)",
			 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		fallback(rep, WIFEXITED(status) && WEXITSTATUS(status) == RB_EXIT_NOMEM ?
			 "not enough memory" : "lazy copy not started", msg);
		return;
	}
	snprintf(rep->mode_done, sizeof(rep->mode_done), "lazy");
	rb_debug("lazy copy of %s started; progress in %s/lazy", image, rundir);
}

/*
 * ramboot.profile=record: note which ranges of the network image this
 * boot reads, in the background, until a stop point (docs/profiles.md).
 * Only a boot that reads nothing but what it needs tells that: with
 * ramboot=off. The recorder is `ramboot profile record` in a child that left
 * the boot's session and descriptors; it keeps open what it needs.
 */
static void start_recorder(const struct boot_settings *s, const struct boot_args *a,
			   struct boot_report *rep)
{
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
	if (resolve_image(s, a, image, sizeof(image)) < 0 || stat(image, &st) < 0) {
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
static bool verity_first(const struct boot_settings *s, const struct boot_args *a,
			 const char *image, const char *manifest, const char *rundir,
			 struct boot_report *rep)
{
	struct vplan vp;

	if (a->mounted) {
		snprintf(rep->verity, sizeof(rep->verity), "failed");
		fallback(rep, "verity unavailable", "ramboot.verity=1, but the boot "
			 "script mounts the root from the image itself");
		return false;
	}
	if (!settings_usable(s, rep) || !verify_plan(s, manifest, &vp, rep))
		return false;
	if (!manifest) {
		snprintf(rep->verity, sizeof(rep->verity), "failed");
		fallback(rep, "verity unavailable", "ramboot.verity=1 and no manifest "
			 "(ramboot manifest --verity)");
		return false;
	}
	/* A RAM copy, or the cache (its slot or the image): mapped later. */
	if (s->mode == BOOT_RAM || cache_used(s))
		return verity_in_manifest(s, manifest, rep);
	if (!do_verity(s, image, image, s->mode == BOOT_LAZY, manifest, &vp, NULL, rundir, rep))
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

/*
 * The image's part of the boot (a mode, or ramboot.verity=1): find the
 * image and its manifest, then the mapping and the mode. false when a
 * prefetch child took the report over (the boot must not write it).
 */
static bool boot_image(const struct boot_settings *s, const struct boot_args *a,
		       const char *rundir, const char *logpath, struct boot_report *rep)
{
	char image[PATH_MAX], mbuf[PATH_MAX], msg[PATH_MAX + 128];
	const char *manifest;
	struct vplan vp;
	int rc;

	rc = resolve_image(s, a, image, sizeof(image));
	if (rc < 0) {
		fallback(rep, "no image", rc == -ENOENT ? "neither ramboot.image= nor ltsp.image= "
			 "is set" : strerror(-rc));
		return true;
	}
	snprintf(rep->source, sizeof(rep->source), "%s", image);
	rc = probe_image(s, image, mbuf, sizeof(mbuf), &manifest);
	if (rc < 0) {
		if (rc == -ETIMEDOUT)
			snprintf(msg, sizeof(msg), "%s: no answer by the boot's deadline "
				 "(ramboot.timeout= + 15 s); left to the kernel", image);
		else
			snprintf(msg, sizeof(msg), "%s: %s", image, strerror(-rc));
		/* The server cannot be read: the cache's slot, if allowed. */
		if (cache_used(s) && do_cache_offline(s, image, msg, rundir, rep))
			return true;
		fallback(rep, "image not found", msg);
		return true;
	}
	if (manifest)
		rb_debug("manifest %s", manifest);
	/* A copy or a mapping reads the bytes the manifest describes under
	 * the name publish --content-addressed gave them, which no rebuild
	 * changes. Not a prefetch (for the file the boot script mounts), nor
	 * the cache (the image's own name is its key there). */
	if (manifest && !cache_used(s) && (s->mode == BOOT_RAM || s->mode == BOOT_LAZY ||
					  (s->mode == BOOT_OFF && s->verity)) &&
	    follow_image(s, manifest, image, sizeof(image)))
		snprintf(rep->source, sizeof(rep->source), "%s", image);
	if ((s->verity || s->verity_bad) && !verity_first(s, a, image, manifest, rundir, rep))
		return true;
	if (s->mode == BOOT_OFF)
		return true;
	if (s->mode == BOOT_PREFETCH)
		return do_prefetch(s, image, rundir, logpath, a->json, rep) != 0;
	if (s->mode == BOOT_CACHE && !s->cache[0]) {
		snprintf(rep->cache, sizeof(rep->cache), "fallback");
		fallback(rep, "cache unusable", "ramboot=cache and no ramboot.cache= names the "
			 "cache's device");
		return true;
	}
	if (cache_used(s))
		return !settings_usable(s, rep) || !verify_plan(s, manifest, &vp, rep) ||
		       do_cache(s, image, manifest, &vp, rundir, logpath, a->json, rep);
	if (settings_usable(s, rep) && verify_plan(s, manifest, &vp, rep)) {
		if (s->mode == BOOT_LAZY)
			do_lazy(s, image, &vp, -1, NULL, rundir, rep);
		else
			do_ram(s, image, manifest, &vp, rundir, rep);
	}
	return true;
}

int cmd_boot(int argc, char **argv)
{
	struct boot_args a = { 0 };
	struct boot_settings *s = NULL;
	struct boot_report *rep = NULL;
	struct debug_log dlog = { .pid = -1, .saved_err = -1 };
	char rundir[PATH_MAX];
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

	s = malloc(sizeof(*s));
	rep = malloc(sizeof(*rep));
	if (!s || !rep) {
		rb_warn("out of memory; nothing done");
		goto out;
	}
	report_init(rep);
	if (rb_path(rundir, sizeof(rundir), REPORT_DIR) < 0) {
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
	rc = report_mkdir(rundir);
	if (rc < 0)
		rb_warn("%s: %s", rundir, strerror(-rc));
	if (s->debug) {
		rb_verbose = 1;
		if (rc == 0)
			debug_log_start(&dlog, rundir);
		rb_debug("mode %s, target %s, swap %s", boot_mode_name(s->mode),
			 boot_target_name(s->target), s->swap == SWAP_ZRAM ? "zram" : "off");
	}
	snprintf(rep->mode_asked, sizeof(rep->mode_asked), "%s", boot_mode_name(s->mode));

	/* Swap first: the prefetch child writes the report after us. */
	do_swap(s, rep);

	if (s->profile_record)
		start_recorder(s, &a, rep);
	if ((s->mode != BOOT_OFF || s->verity || s->verity_bad) &&
	    !boot_image(s, &a, rundir, s->debug ? dlog.path : NULL, rep))
		goto out;
	rc = report_write(rep, rundir, a.json);
	if (rc < 0)
		rb_warn("%s/report: %s", rundir, strerror(-rc));
out:
	if (boot_net_asked) {
		/* After the report: the tier's keys are amended into it. */
		boot_net_asked = false;
		if (boot_net.server || boot_tier.state[0]) {
			if (!boot_net.server)
				boot_net.server = boot_tier.server;
			(void)netmem_start(&boot_net, &boot_tier, boot_net_zram, rundir);
		}
	}
	debug_log_stop(&dlog);
	free(s);
	free(rep);
	return qrc;
}
