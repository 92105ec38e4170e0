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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ramboot.h"
#include "cmdline.h"
#include "load.h"
#include "report.h"
#include "swap.h"
#include "zram.h"

extern char **environ;

#define CONF_PATH "/etc/ramboot.conf"
#define CONF_MAX (64 * 1024)
#define CMDLINE_MAX 8192

struct boot_args {
	const char *image;          /* --image: wins over every setting */
	const char *default_image;  /* --default-image: used when none is set */
	const char *cmdline;        /* --cmdline: instead of /proc/cmdline */
	bool json;
};

/* The debug log: stderr copied to /run/ramboot/boot.log by a child. */
struct debug_log {
	pid_t pid;
	int saved_err;
	char path[PATH_MAX];
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: ramboot boot [--image=PATH] [--cmdline=STRING] [--json]\n"
		"\n"
		"Initramfs entry point: act on ramboot= on the kernel command line\n"
		"(off | prefetch | ram), the RAMBOOT_* environment and " CONF_PATH ".\n"
		"\n"
		"  --image=PATH          the image to copy (default: ramboot.image=, else\n"
		"                        the first field of ltsp.image= under the root mount)\n"
		"  --default-image=PATH  the image when no setting names one\n"
		"  --cmdline=STRING      parse STRING instead of /proc/cmdline\n"
		"  --json                also write " REPORT_DIR "/report.json\n"
		"  -h, --help            show this help\n"
		"\n"
		"On a RAM copy stdout is one line: RAMBOOT_IMAGE=<path>. Exit status 0 in\n"
		"every runtime outcome (failures fall back to the network image and are\n"
		"recorded in " REPORT_DIR "/report); 2 for a bad command line.\n");
}

/* ---- settings ---- */

static void load_settings(struct boot_settings *s, const struct boot_args *a)
{
	char path[PATH_MAX], *buf;
	ssize_t n;
	int i;

	settings_init(s);

	if (rb_path(path, sizeof(path), CONF_PATH) == 0) {
		buf = malloc(CONF_MAX + 1);
		if (buf) {
			n = read_str_abs(path, buf, CONF_MAX + 1);
			if (n >= 0)
				settings_parse_conf(s, buf, (size_t)n);
			else if (n != -ENOENT)
				rb_warn("%s: %s", path, strerror((int)-n));
			free(buf);
		}
	}

	settings_parse_env(s, environ);

	if (a->cmdline) {
		settings_parse_cmdline(s, a->cmdline);
	} else {
		buf = malloc(CMDLINE_MAX);
		if (buf) {
			n = rb_read_str("/proc/cmdline", buf, CMDLINE_MAX);
			if (n >= 0)
				settings_parse_cmdline(s, buf);
			else
				rb_warn("/proc/cmdline: %s", strerror((int)-n));
			free(buf);
		}
	}

	for (i = 0; i < s->nwarn && i < SET_WARN_MAX; i++)
		rb_warn("%s", s->warn[i]);
	if (s->nwarn > SET_WARN_MAX)
		rb_warn("%d more warnings about settings", s->nwarn - SET_WARN_MAX);
}

/* The root file system mount of the initramfs: initramfs-tools exports
 * rootmnt=/root, dracut uses /sysroot. */
static const char *root_mount(void)
{
	const char *r = getenv("rootmnt");

	return r && *r == '/' ? r : "/root";
}

/* The image to copy: --image, ramboot.image=, the first field of
 * ltsp.image= (LTSP's list "img,options,,img2,..."), --default-image.
 * Setting paths are looked up below the root prefix, relative ones
 * under the root mount, as LTSP's initrd-bottom does. */
static int resolve_image(const struct boot_settings *s, const struct boot_args *a,
			 char *out, size_t len)
{
	char first[SET_PATH_MAX];
	const char *img;
	int rc;

	if (a->image) {
		if (strlen(a->image) >= len)
			return -ENAMETOOLONG;
		snprintf(out, len, "%s", a->image);
		return 0;
	}
	if (s->image[0]) {
		img = s->image;
	} else if (s->ltsp_image[0]) {
		rc = ltsp_image_first(s->ltsp_image, first, sizeof(first));
		if (rc < 0)
			return rc;
		img = first;
	} else if (a->default_image) {
		if (strlen(a->default_image) >= len)
			return -ENAMETOOLONG;
		snprintf(out, len, "%s", a->default_image);
		return 0;
	} else {
		return -ENOENT;
	}
	if (img[0] == '/')
		return rb_path(out, len, "%s", img);
	return rb_path(out, len, "%s/%s", root_mount(), img);
}

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

static void do_swap(const struct boot_settings *s, struct boot_report *rep)
{
	struct swap_opts o;
	struct swap_result r;
	char msg[300];
	int rc;

	if (s->swap != SWAP_ZRAM)
		return;
	swap_opts_init(&o);
	if (s->swap_size[0])
		o.size = s->swap_size;
	if (s->swap_algorithm[0])
		o.algorithm = s->swap_algorithm;
	if (s->swap_priority_set)
		o.priority = s->swap_priority;
	memset(&r, 0, sizeof(r));
	rc = swap_setup(&o, &r);
	if (rc != RB_EXIT_OK) {
		snprintf(msg, sizeof(msg), "swap: %s", r.error[0] ? r.error : "setup failed");
		rb_warn("%s", msg);
		report_add_error(rep, msg);
		return;
	}
	snprintf(rep->swap_device, sizeof(rep->swap_device), "%s", r.device);
	rep->swap_size = r.size;
	snprintf(rep->swap_algorithm, sizeof(rep->swap_algorithm), "%s", r.algorithm);
	rep->swap_priority = r.priority;
	rb_debug("swap on %s, %llu bytes, %s, priority %d", r.device,
		 (unsigned long long)r.size, r.algorithm, r.priority);
}

/* IMAGE.manifest next to the image is used when present: a server that
 * publishes manifests gets verified copies without per-client settings.
 * "ramboot.manifest=none" turns that off. */
static const char *pick_manifest(const struct boot_settings *s, const char *image,
				 char *buf, size_t len)
{
	struct stat st;
	int rc;

	if (!strcmp(s->manifest, "none"))
		return NULL;
	if (s->manifest[0]) {
		/* Like the image: relative to the root mount. */
		if (s->manifest[0] == '/')
			rc = rb_path(buf, len, "%s", s->manifest);
		else
			rc = rb_path(buf, len, "%s/%s", root_mount(), s->manifest);
		return rc < 0 ? NULL : buf;
	}
	if (snprintf(buf, len, "%s.manifest", image) >= (int)len)
		return NULL;
	return stat(buf, &st) == 0 && S_ISREG(st.st_mode) ? buf : NULL;
}

static void fill_from_result(struct boot_report *rep, const struct load_result *r,
			     bool hash_asked, const char *want_sha)
{
	rep->bytes = r->bytes_out ? r->bytes_out : r->bytes_in;
	rep->seconds = r->seconds;
	rep->mbps = r->seconds > 0 ? (double)r->bytes_in / r->seconds / 1e6 : 0;
	snprintf(rep->codec, sizeof(rep->codec), "%s", r->codec ? r->codec : "");
	snprintf(rep->fstype, sizeof(rep->fstype), "%s", r->fstype);
	if (!hash_asked)
		snprintf(rep->hash, sizeof(rep->hash), "none");
	else if (r->verified)
		snprintf(rep->hash, sizeof(rep->hash), "ok");
	else if ((want_sha && *want_sha && r->sha256[0] && strcmp(want_sha, r->sha256)) ||
		 strstr(r->error, "mismatch"))
		snprintf(rep->hash, sizeof(rep->hash), "mismatch");
	else
		snprintf(rep->hash, sizeof(rep->hash), "none");
}

/* Print the one stdout line, quoted for the shell when needed. */
static void print_image(const char *path)
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

static void fallback(struct boot_report *rep, const char *reason, const char *error)
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

static void fill_opts(struct load_opts *o, const struct boot_settings *s,
		      const char *image, const char *manifest)
{
	load_opts_init(o);
	o->source = image;
	o->decompress = s->decompress;
	o->sha256 = s->sha256[0] ? s->sha256 : NULL;
	o->manifest = o->sha256 ? NULL : manifest;
	if (s->minfree_set)
		o->min_free = s->minfree;
	o->progress = s->debug ? PROGRESS_PLAIN : PROGRESS_NONE;
}

static void do_ram(const struct boot_settings *s, const char *image,
		   const char *manifest, const char *rundir, struct boot_report *rep)
{
	static const char *const suffixes[] = { ".zst", ".zstd", ".xz", ".lzo", ".lzop", ".gz" };
	struct load_opts o;
	struct load_result *r;
	char tmpfs[PATH_MAX], dest[PATH_MAX], msg[PATH_MAX + 64], name[NAME_MAX + 1];
	const char *base;
	size_t i, n;
	int rc, id = -1;

	r = calloc(1, sizeof(*r));
	if (!r) {
		fallback(rep, "load failed", "out of memory");
		return;
	}
	fill_opts(&o, s, image, manifest);
	snprintf(rep->target, sizeof(rep->target), "%s", boot_target_name(s->target));

	if (s->target == TARGET_ZRAM) {
		rc = zram_ensure_module();
		if (rc == 0)
			rc = zram_hot_add(&id);
		if (rc < 0) {
			snprintf(msg, sizeof(msg), "zram: %s", strerror(-rc));
			fallback(rep, "no zram device", msg);
			goto out;
		}
		if (rb_path(dest, sizeof(dest), "/dev/zram%d", id) < 0) {
			zram_hot_remove(id);
			fallback(rep, "load failed", "path too long");
			goto out;
		}
	} else {
		base = strrchr(image, '/');
		base = base ? base + 1 : image;
		if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
			base = "image";
		/* The copy is decompressed: x86_64.img.zst -> x86_64.img. */
		n = strnlen(base, sizeof(name) - 1);
		memcpy(name, base, n);
		name[n] = '\0';
		for (i = 0; i < ARRAY_SIZE(suffixes); i++) {
			size_t sl = strlen(suffixes[i]);

			if (n > sl && !strcmp(name + n - sl, suffixes[i])) {
				name[n - sl] = '\0';
				break;
			}
		}
		if (snprintf(tmpfs, sizeof(tmpfs), "%s/ram", rundir) >= (int)sizeof(tmpfs) ||
		    snprintf(dest, sizeof(dest), "%s/%s", tmpfs, name) >= (int)sizeof(dest)) {
			fallback(rep, "load failed", "path too long");
			goto out;
		}
		if (mkdir(tmpfs, 0755) < 0 && errno != EEXIST) {
			snprintf(msg, sizeof(msg), "%s: %s", tmpfs, strerror(errno));
			fallback(rep, "load failed", msg);
			goto out;
		}
		o.tmpfs = tmpfs;
	}
	o.dest = dest;

	rb_debug("loading %s into %s", image, dest);
	rc = load_run(&o, r);
	fill_from_result(rep, r, o.sha256 || o.manifest, o.sha256);
	if (rc != RB_EXIT_OK) {
		if (id >= 0) {
			int rc2 = zram_hot_remove(id);

			if (rc2 < 0)
				rb_warn("zram%d: hot_remove: %s", id, strerror(-rc2));
		}
		if (s->target == TARGET_TMPFS)
			rmdir(tmpfs);   /* the loader unmounted its tmpfs */
		if (rc == RB_EXIT_NOMEM)
			fallback(rep, "not enough memory", r->error);
		else if (!strcmp(rep->hash, "mismatch"))
			fallback(rep, "hash mismatch", r->error);
		else
			fallback(rep, "load failed", r->error[0] ? r->error : "unknown error");
		goto out;
	}
	snprintf(rep->ram_path, sizeof(rep->ram_path), "%s",
		 r->dest_path[0] ? r->dest_path : dest);
	snprintf(rep->mode_done, sizeof(rep->mode_done), "ram");
	print_image(rep->ram_path);
out:
	free(r);
}

/* Read the image once into the page cache, in the background: the boot
 * goes on at once and later reads of the network image hit RAM. The
 * child leaves the boot's process group and every descriptor of it
 * (the hook reads our stdout to EOF). */
static int do_prefetch(const struct boot_settings *s, const char *image,
		       const char *rundir, const char *logpath, bool json,
		       struct boot_report *rep)
{
	struct load_opts o;
	struct load_result *r;
	pid_t pid;
	int fd, rc;

	/* Written before the fork: the child rewrites it when done. */
	snprintf(rep->mode_done, sizeof(rep->mode_done), "prefetch");
	rc = report_write(rep, rundir, json);
	if (rc < 0)
		rb_warn("%s/report: %s", rundir, strerror(-rc));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fallback(rep, "prefetch failed", strerror(errno));
		return -1;
	}
	if (pid > 0) {
		rb_debug("prefetch of %s in process %d", image, (int)pid);
		return 0;
	}
	setsid();
	signal(SIGHUP, SIG_IGN);
	if (chdir("/") < 0)
		_exit(1);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	if (logpath) {
		int lfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

		if (lfd >= 0)
			dup2(lfd, STDERR_FILENO);
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		_exit(1);
	fill_opts(&o, s, image, NULL);
	o.sha256 = NULL;
	o.prefetch = true;
	o.dest = NULL;
	if (load_run(&o, r) == RB_EXIT_OK) {
		fill_from_result(rep, r, false, NULL);
		rb_debug("prefetch done: %llu bytes in %.1f s",
			 (unsigned long long)r->bytes_in, r->seconds);
	} else {
		report_add_error(rep, r->error[0] ? r->error : "prefetch failed");
		rb_warn("prefetch: %s", r->error);
	}
	/* Only visible if the boot has not yet moved /run to the real root. */
	(void)report_write(rep, rundir, json);
	_exit(0);
}

int cmd_boot(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "image", required_argument, NULL, 'i' },
		{ "default-image", required_argument, NULL, 'D' },
		{ "cmdline", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct boot_args a = { 0 };
	struct boot_settings *s = NULL;
	struct boot_report *rep = NULL;
	struct debug_log dlog = { .pid = -1, .saved_err = -1 };
	char rundir[PATH_MAX], image[PATH_MAX], mbuf[PATH_MAX];
	const char *manifest;
	struct stat st;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': a.image = optarg; break;
		case 'D': a.default_image = optarg; break;
		case 'c': a.cmdline = optarg; break;
		case 'j': a.json = true; break;
		case 'h': usage(stdout); return RB_EXIT_OK;
		default:
			rb_err("bad option '%s'", argv[optind - 1]);
			usage(stderr);
			return RB_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		rb_err("unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return RB_EXIT_USAGE;
	}
	if ((a.image && !*a.image) || (a.default_image && !*a.default_image)) {
		rb_err("empty image path");
		return RB_EXIT_USAGE;
	}

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

	if (s->mode != BOOT_OFF) {
		rc = resolve_image(s, &a, image, sizeof(image));
		if (rc == -ENOENT) {
			fallback(rep, "no image", "neither ramboot.image= nor ltsp.image= is set");
			goto report;
		}
		if (rc < 0) {
			fallback(rep, "no image", strerror(-rc));
			goto report;
		}
		snprintf(rep->source, sizeof(rep->source), "%s", image);
		if (stat(image, &st) < 0) {
			char msg[PATH_MAX + 64];

			snprintf(msg, sizeof(msg), "%s: %s", image, strerror(errno));
			fallback(rep, "image not found", msg);
			goto report;
		}
		if (s->mode == BOOT_PREFETCH) {
			if (do_prefetch(s, image, rundir, s->debug ? dlog.path : NULL,
					a.json, rep) == 0)
				goto out;
			goto report;
		}
		manifest = pick_manifest(s, image, mbuf, sizeof(mbuf));
		if (manifest)
			rb_debug("manifest %s", manifest);
		do_ram(s, image, manifest, rundir, rep);
	}
report:
	rc = report_write(rep, rundir, a.json);
	if (rc < 0)
		rb_warn("%s/report: %s", rundir, strerror(-rc));
out:
	debug_log_stop(&dlog);
	free(s);
	free(rep);
	return RB_EXIT_OK;
}
