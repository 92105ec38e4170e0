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
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "lib/ramboot.h"
#include "boot/cmdline.h"
#include "codec/codec.h"
#include "lazy/lazy.h"
#include "load/load.h"
#include "format/manifest.h"
#include "lib/outfile.h"
#include "lib/report.h"
#include "trust/sign.h"
#include "swap/swap.h"
#include "lib/sysutil.h"
#include "udpcast/udpcast.h"
#include "trust/vboot.h"
#include "dev/zram.h"
#include "profile/profile.h"

extern char **environ;

#define CONF_PATH "/etc/ramboot.conf"
#define CONF_MAX (64 * 1024)
#define CMDLINE_MAX 8192

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

/* The debug log: stderr copied to /run/ramboot/boot.log by a child. */
struct debug_log {
	pid_t pid;
	int saved_err;
	char path[PATH_MAX];
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: ramboot boot [--image=PATH] [--cmdline=STRING] [--json] [--query | --explain]\n"
		"\n"
		"Initramfs entry point: act on ramboot= on the kernel command line\n"
		"(off | prefetch | ram | lazy), the RAMBOOT_* environment and " CONF_PATH ".\n"
		"\n"
		"  --image=PATH          the image to copy (default: ramboot.image=, else\n"
		"                        the first field of ltsp.image= under the root mount)\n"
		"  --default-image=PATH  the image when no setting names one\n"
		"  --cmdline=STRING      parse STRING instead of /proc/cmdline\n"
		"  --json                also write " REPORT_DIR "/report.json\n"
		"  --drop=PATH           (for the hooks) the RAM copy PATH was not used: free\n"
		"                        it and record the fallback in the report\n"
		"  --reason=TEXT         with --drop: why, for the report\n"
		"  --explain             the dry run: every setting with its source, the\n"
		"                        image, manifest, keys, verification and memory\n"
		"                        verdict; nothing is copied, mounted or written\n"
		"  --query               (for the hooks) print mode=MODE and image=PATH (the\n"
		"                        image the settings name, empty for none) and stop\n"
		"  --mounted             (for the hooks) the caller mounts the root from the\n"
		"                        image itself: ramboot.verity=1 cannot be met (a\n"
		"                        fallback)\n"
		"  -h, --help            show this help\n"
		"\n"
		"On a RAM copy, and with ramboot.verity=1 (the dm-verity mapping to mount),\n"
		"stdout is one line: RAMBOOT_IMAGE=<path>. Exit status 0 in\n"
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

	/* A file that is there but cannot be read whole is not "no
	 * settings": what it says about verification is unknown, so a RAM
	 * copy is refused (conf_bad). Never cut at a size either. */
	if (rb_path(path, sizeof(path), CONF_PATH) == 0) {
		struct stat st;

		if (stat(path, &st) < 0) {
			if (errno != ENOENT) {
				rb_warn("%s: %s", path, strerror(errno));
				s->conf_bad = true;
			}
		} else if (!S_ISREG(st.st_mode) || st.st_size > CONF_MAX) {
			rb_warn("%s: %s; its settings are ignored", path, S_ISREG(st.st_mode) ?
				"larger than 64 KiB" : "not a regular file");
			s->conf_bad = true;
		} else if ((buf = malloc(CONF_MAX + 2)) == NULL) {
			s->conf_bad = true;
		} else {
			n = read_str_abs(path, buf, CONF_MAX + 2);
			if (n >= 0 && n <= CONF_MAX) {
				settings_parse_conf(s, buf, (size_t)n);
			} else {
				rb_warn("%s: %s", path, n < 0 ? strerror((int)-n) : "grew while read");
				s->conf_bad = true;
			}
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
	/* Anything there (a directory, a FIFO, a dangling link) is a
	 * manifest that the loader then fails to read: a fallback, never
	 * an unverified copy. Only no name at all means "no manifest". */
	return lstat(buf, &st) == 0 || errno != ENOENT ? buf : NULL;
}

static void fill_from_result(struct boot_report *rep, const struct load_result *r,
			     bool hash_asked)
{
	rep->bytes = r->bytes_out ? r->bytes_out : r->bytes_in;
	rep->seconds = r->seconds;
	rep->bytes_per_second = r->seconds > 0 ? (uint64_t)((double)r->bytes_in / r->seconds) : 0;
	snprintf(rep->codec, sizeof(rep->codec), "%s", r->codec ? r->codec : "");
	snprintf(rep->fstype, sizeof(rep->fstype), "%s", r->fstype);
	rep->chunks = r->chunks;
	rep->chunks_retried = r->chunks_retried;
	if (!hash_asked)
		snprintf(rep->hash, sizeof(rep->hash), "none");
	else if (r->verified)
		snprintf(rep->hash, sizeof(rep->hash), "ok");
	else if (r->err == LOAD_HASH || r->err == LOAD_SIZE)
		snprintf(rep->hash, sizeof(rep->hash), "mismatch");
	else
		snprintf(rep->hash, sizeof(rep->hash), "none");
}

/* The fallback reason for a failed load, from its category. */
static const char *fallback_reason(const struct load_result *r)
{
	switch (r->err) {
	case LOAD_NOMEM: return "not enough memory";
	case LOAD_HASH:
	case LOAD_SIZE: return "hash mismatch";
	case LOAD_MANIFEST: return "bad manifest";
	case LOAD_SIGNATURE: return "not signed";
	case LOAD_STALL: return "source stalled";
	case LOAD_SIGNAL: return "interrupted";
	case LOAD_FSTYPE: return "not a usable image";
	case LOAD_CHANGED: return "image changed while read";
	default: return "load failed";
	}
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

/* A copy is made only when its verification is what was asked for:
 * unparsable hash settings or an unreadable ramboot.conf are a fallback. */
static bool settings_usable(const struct boot_settings *s, struct boot_report *rep)
{
	if (s->verify_bad) {
		fallback(rep, "verification unusable", "ramboot.sha256= or ramboot.manifest= does "
			 "not parse; a copy that cannot be verified is not booted");
		return false;
	}
	if (s->conf_bad) {
		fallback(rep, "settings unreadable", "ramboot.conf could not be read whole");
		return false;
	}
	return true;
}

/* What a copy is checked against (ramboot.verify=, docs/cmdline.md). */
struct vplan {
	enum boot_verify policy;  /* never VERIFY_AUTO once planned */
	const char *manifest;     /* NULL: none */
	const char *sha256;       /* NULL: none (ramboot.sha256=) */
	bool signed_only;
};

/*
 * The policy for this boot: AUTO is "signed" when the initrd holds trusted
 * keys. false after a fallback: the policy cannot be met (signed without
 * a manifest, hash without either) or does not parse; never a copy that
 * is less verified than asked.
 */
static bool verify_plan(const struct boot_settings *s, const char *manifest, struct vplan *p,
			struct boot_report *rep)
{
	memset(p, 0, sizeof(*p));
	p->policy = s->verify;
	if (s->verify_policy_bad) {
		fallback(rep, "verification unusable", "ramboot.verify= does not parse; a copy "
			 "that cannot be verified as asked is not booted");
		return false;
	}
	if (p->policy == VERIFY_AUTO && sign_keys_count(NULL) > 0)
		p->policy = VERIFY_SIGNED;
	switch (p->policy) {
	case VERIFY_SIGNED:
		if (!manifest) {
			fallback(rep, "not signed", "ramboot.verify=signed and no manifest");
			return false;
		}
		/* ramboot.sha256= is no signature: the signed manifest decides. */
		p->manifest = manifest;
		p->signed_only = true;
		break;
	case VERIFY_OFF:
		break;
	case VERIFY_HASH:
	case VERIFY_AUTO:
		p->sha256 = s->sha256[0] ? s->sha256 : NULL;
		p->manifest = p->sha256 ? NULL : manifest;
		if (p->policy == VERIFY_HASH && !p->sha256 && !p->manifest) {
			fallback(rep, "no verification", "ramboot.verify=hash and neither a manifest "
				 "nor ramboot.sha256=");
			return false;
		}
		if (p->policy == VERIFY_AUTO)
			p->policy = p->sha256 || p->manifest ? VERIFY_HASH : VERIFY_OFF;
		break;
	}
	snprintf(rep->verify, sizeof(rep->verify), "%s", boot_verify_name(p->policy));
	return true;
}

static void fill_opts(struct load_opts *o, const struct boot_settings *s,
		      const char *image, const struct vplan *vp)
{
	load_opts_init(o);
	o->source = image;
	o->decompress = s->decompress;
	if (vp) {
		o->sha256 = vp->sha256;
		o->manifest = vp->manifest;
		o->signed_only = vp->signed_only;
	}
	if (s->minfree_set)
		o->min_free = s->minfree;
	if (s->timeout_set)
		o->stall_timeout = s->timeout;
	/* The console of a RAM copy (docs/cmdline.md): a line each tenth of
	 * the copy; with the kernel's `quiet` (a splash screen over it) only
	 * the lines that say it began and ended, unless ramboot.debug. */
	o->progress = s->quiet && !s->debug ? PROGRESS_NONE : PROGRESS_CONSOLE;
}

/* What a load in a child process shares with the boot. */
struct child_load {
	struct child_beat cb;         /* cb.done: r and rc are final */
	struct load_opts o;
	struct load_result r;
	int rc;
};

#define CHILD_GRACE_S 15.0

static void load_child(void *arg)
{
	struct child_load *c = arg;

	c->o.heartbeat_ms = &c->cb.beat_ms;
	c->rc = load_run(&c->o, &c->r);
}

/*
 * The load runs in a child process (child_run), so that the boot step
 * returns even when the kernel holds a read of the source and will not
 * let go (a hard NFS mount in D state). The child cancels itself after the
 * stall timeout (guard.c) and reports here; if it cannot even do that, the
 * boot gives up on it after the stall timeout and a grace period, kills
 * it, and leaves it to the kernel. Returns the load's exit code; *stuck
 * when the child was given up.
 */
static int load_in_child(const struct load_opts *o, struct load_result *r, bool *stuck)
{
	struct child_load *c;
	int rc, status;

	*stuck = false;
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED)
		return load_run(o, r);
	memset(c, 0, sizeof(*c));
	c->o = *o;
	rc = child_run(load_child, c, &c->cb,
		       o->stall_timeout > 0 ? o->stall_timeout + CHILD_GRACE_S : 0, &status);
	if (rc < 0) {
		munmap(c, sizeof(*c));
		return load_run(o, r);
	}
	if (rc == CHILD_DONE) {
		*r = c->r;
		rc = c->rc;
	} else {
		*stuck = rc == CHILD_KILLED;
		memset(r, 0, sizeof(*r));
		r->err = LOAD_STALL;
		r->reader_stuck = true;
		snprintf(r->error, sizeof(r->error), "%s: the copy did not return %.0f s after "
			 "the source stopped; left to the kernel", o->source,
			 o->stall_timeout + CHILD_GRACE_S);
		if (!*stuck)
			snprintf(r->error, sizeof(r->error), "%s: the copy ended without a result "
				 "(status 0x%x)", o->source, (unsigned)status);
		rc = load_exit_code(r->err);
	}
	munmap(c, sizeof(*c));
	return rc;
}

/* The bound on a read of a network path in the boot process: the stall
 * timeout and the grace of a load (cmdline.md: ramboot boot returns at
 * the latest 15 s after ramboot.timeout=); 0: no bound. */
static double read_limit(const struct boot_settings *s)
{
	double t = s->timeout_set ? s->timeout : LOAD_STALL_TIMEOUT;

	return t > 0 ? t + CHILD_GRACE_S : 0;
}

/* The first bytes of the image, read in a child the boot can give up on. */
struct child_head {
	struct child_beat cb;
	const char *path;
	uint8_t head[64];
	ssize_t n;
};

static void head_child(void *arg)
{
	struct child_head *c = arg;
	int fd = open(c->path, O_RDONLY | O_CLOEXEC);

	c->n = fd < 0 ? -errno : pread_full(fd, c->head, sizeof(c->head), 0);
	if (fd >= 0)
		(void)close(fd);
}

/* 1 and the codec of path's first bytes in *name; 0 when they cannot be
 * read (or not within limit: the child is left to the kernel). */
static int image_codec(const char *path, double limit, const char **name)
{
	struct child_head *c;
	int rc, status;

	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED)
		return 0;
	memset(c, 0, sizeof(*c));
	c->path = path;
	c->n = -EIO;
	rc = child_run(head_child, c, &c->cb, limit, &status);
	if (rc == CHILD_DONE && c->n > 0) {
		*name = codec_detect(c->head, (size_t)c->n)->name;
		rc = 1;
	} else {
		if (rc == CHILD_KILLED)
			rb_warn("%s: its first bytes did not come within %.0f s", path, limit);
		rc = 0;
	}
	munmap(c, sizeof(*c));
	return rc;
}

/* Does the manifest name a hash tree? Read in a child the boot can give
 * up on. */
struct child_vman {
	struct child_beat cb;
	const char *path;
	int rc;
	bool has;
	char err[256];
};

static void vman_child(void *arg)
{
	struct child_vman *c = arg;
	struct manifest m;

	c->rc = manifest_load(c->path, &m, c->err, sizeof(c->err));
	if (c->rc == 0) {
		c->has = m.verity_root[0] != '\0';
		manifest_free(&m);
	}
}

/* The RAM copy's name: the image's, without the transport suffix
 * (x86_64.img.zst -> x86_64.img), and only of characters that need no
 * quoting, so that the one stdout line is always one plain line. */
static void copy_name(const char *image, char *name, size_t len)
{
	static const char *const suffixes[] = { ".zst", ".zstd", ".xz", ".lzo", ".lzop", ".gz" };
	const char *base = strrchr(image, '/');
	size_t i, n;

	base = base ? base + 1 : image;
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		base = "image";
	n = strnlen(base, len - 1);
	memcpy(name, base, n);
	name[n] = '\0';
	for (i = 0; i < ARRAY_SIZE(suffixes); i++) {
		size_t sl = strlen(suffixes[i]);

		if (n > sl && !strcmp(name + n - sl, suffixes[i])) {
			name[n - sl] = '\0';
			break;
		}
	}
	for (i = 0; name[i]; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._,+@%-",
			    name[i]))
			name[i] = '_';
	if (name[0] == '.')
		name[0] = '_';
}

/* Free a RAM copy made by this boot: our tmpfs (lazily, if something
 * still holds it), or the zram device. */
static void drop_copy(const char *rundir, const char *path)
{
	char tmpfs[PATH_MAX];
	int id = zram_id_from_path(path);

	if (id >= 0) {
		int rc = zram_hot_remove(id);

		if (rc < 0)
			rb_warn("zram%d: hot_remove: %s", id, strerror(-rc));
		return;
	}
	if (snprintf(tmpfs, sizeof(tmpfs), "%s/ram", rundir) >= (int)sizeof(tmpfs))
		return;
	if (umount2(tmpfs, 0) < 0 && errno != EINVAL && errno != ENOENT)
		(void)umount2(tmpfs, MNT_DETACH);
	(void)rmdir(tmpfs);
}

#define VERITY_TIMEOUT_S 30.0   /* without ramboot.timeout= */

/*
 * ramboot.verity=1: map data (the network image or its RAM copy) through
 * dm-verity with the root hash of the manifest, read under the plan's
 * policy (vboot.h). want_sha: the hash the copy was verified against.
 * false after a fallback: never a copy without the mapping asked for.
 */
static bool do_verity(const struct boot_settings *s, const char *image, const char *data,
		      bool loop, const char *manifest, const struct vplan *vp,
		      const struct load_result *copy, const char *rundir, struct boot_report *rep)
{
	struct vboot_req q;
	struct vboot_res *r;
	int rc;

	snprintf(rep->verity, sizeof(rep->verity), "failed");
	r = calloc(1, sizeof(*r));
	if (!r) {
		fallback(rep, "verity unavailable", "out of memory");
		return false;
	}
	memset(&q, 0, sizeof(q));
	q.image = image;
	q.data = data;
	q.loop = loop;
	q.manifest = manifest;
	q.signed_only = vp->signed_only;
	/* A RAM copy: the manifest read again must be the one the copy was
	 * verified against (a publish may have replaced it meanwhile), by
	 * the whole-image hash it names or, when the copy was checked
	 * chunk by chunk, the hash and the tree's root that manifest named. */
	if (copy && copy->verified) {
		q.want_sha256 = copy->manifest_sha256[0] ? copy->manifest_sha256 :
				copy->sha256[0] ? copy->sha256 : NULL;
		q.want_root = copy->manifest_verity_root[0] ? copy->manifest_verity_root : NULL;
	}
	q.rundir = rundir;
	q.timeout = s->timeout_set ? s->timeout : VERITY_TIMEOUT_S;
	rb_debug("verity: mapping %s (tree of %s)", data, manifest);
	rc = vboot_map(&q, r);
	if (rc < 0) {
		fallback(rep, "verity unavailable", r->error[0] ? r->error : strerror(-rc));
		free(r);
		return false;
	}
	snprintf(rep->verity, sizeof(rep->verity), "on");
	snprintf(rep->verity_device, sizeof(rep->verity_device), "%s", r->node);
	snprintf(rep->verity_root, sizeof(rep->verity_root), "%s", r->root);
	snprintf(rep->fstype, sizeof(rep->fstype), "%s", r->fstype);
	if (!rep->signed_by[0])
		snprintf(rep->signed_by, sizeof(rep->signed_by), "%s", r->signed_by);
	rb_debug("verity: %s over %s, root %s", r->node, r->data_dev, r->root);
	free(r);
	return true;
}

/* Before a RAM copy is made for ramboot.verity=1: does the manifest name
 * a hash tree at all? (It is read again, under the policy, for the
 * mapping.) false after a fallback. */
static bool verity_in_manifest(const struct boot_settings *s, const char *manifest,
			       struct boot_report *rep)
{
	struct child_vman *c;
	char msg[PATH_MAX + 320];
	double limit = read_limit(s);
	bool has;
	int rc, status;

	snprintf(rep->verity, sizeof(rep->verity), "failed");
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED) {
		fallback(rep, "bad manifest", strerror(errno));
		return false;
	}
	memset(c, 0, sizeof(*c));
	c->path = manifest;
	rc = child_run(vman_child, c, &c->cb, limit, &status);
	if (rc != CHILD_DONE || c->rc < 0) {
		if (rc == CHILD_DONE)
			snprintf(msg, sizeof(msg), "%s: %s", manifest, c->err);
		else if (rc == CHILD_KILLED)
			snprintf(msg, sizeof(msg), "%s: the read did not return within %.0f s; "
				 "left to the kernel", manifest, limit);
		else
			snprintf(msg, sizeof(msg), "%s: cannot be read (%s)", manifest,
				 rc < 0 ? strerror(-rc) : "the reader ended without a result");
		munmap(c, sizeof(*c));
		fallback(rep, "bad manifest", msg);
		return false;
	}
	has = c->has;
	munmap(c, sizeof(*c));
	if (!has) {
		snprintf(msg, sizeof(msg), "%s: no verity-root (made without ramboot manifest "
			 "--verity)", manifest);
		fallback(rep, "verity unavailable", msg);
		return false;
	}
	rep->verity[0] = '\0';
	return true;
}

/*
 * ramboot.source=udpcast: the copy is read from a udpcast session first
 * (udp-receiver's stdout, source.c), with the decompression, checks and
 * limits of any load. A failure that the network image can mend (no
 * session, a lost stream, no udp-receiver, a copy that fails its hash,
 * holds no file system or cannot be placed, a stall) is dropped and recorded in
 * source_fallback: 1, and the caller reads the image. Other outcomes are
 * the load's (0, with *rc and r): a copy, or a failure that the image
 * would meet as well (memory, the manifest or its signature, which are
 * the network's own, a signal, a reader left to the kernel).
 */
static int udpcast_first(const struct boot_settings *s, const struct load_opts *o,
			 struct load_result *r, int *rc, bool *stuck, int zram_id,
			 const char *rundir, struct boot_report *rep)
{
	struct load_opts uo = *o;
	struct udpcast_opts uc;
	char err[128];

	/* The settings parser dropped options that do not parse. */
	if (udpcast_parse(s->udpcast, &uc, err, sizeof(err)) < 0)
		(void)udpcast_parse(NULL, &uc, err, sizeof(err));
	uo.source = "udpcast";
	/* The session sends the server's image: its format is the network
	 * image's. A pipe cannot be probed, and planning for the memory of
	 * every decoder would refuse small clients; a stream of another
	 * format fails to decode and is read again from the image. */
	if (!strcmp(uo.decompress, "auto")) {
		const char *name;

		/* In a child: a read the kernel holds must not hold the boot. */
		if (image_codec(o->source, read_limit(s), &name) == 1)
			uo.decompress = name;
	}
	/* The wait for a session is no progress: the stall timeout must not
	 * end it before udp-receiver's own start timeout does. */
	if (uo.stall_timeout > 0 && uo.stall_timeout < uc.start_timeout + 5)
		uo.stall_timeout = uc.start_timeout + 5;
	snprintf(rep->source_used, sizeof(rep->source_used), "udpcast");
	rb_debug("reading the image from a udpcast session (%s)",
		 s->udpcast[0] ? s->udpcast : "default options");
	udpcast_source_arm(&uc);
	*rc = load_in_child(&uo, r, stuck);
	udpcast_source_disarm();
	if (*rc == RB_EXIT_OK && r->fstype[0])
		return 0;
	if (*rc == RB_EXIT_OK) {
		/* A copy of something else: drop it, keep the device. */
		if (zram_id >= 0) {
			(void)zram_reset(zram_id);
		} else {
			drop_copy(rundir, r->dest_path[0] ? r->dest_path : o->dest);
			(void)mkdir(o->tmpfs, 0755);
		}
		snprintf(r->error, sizeof(r->error), "udpcast: the copy holds no file system "
			 "that blkid knows");
	} else if (*stuck) {
		return 0;
	} else {
		switch (r->err) {
		/* LOAD_DEST: a stream has no size, which a zram target
		 * needs without a manifest, and may outgrow the tmpfs. */
		case LOAD_SOURCE: case LOAD_FORMAT: case LOAD_HASH: case LOAD_SIZE:
		case LOAD_STALL: case LOAD_FSTYPE: case LOAD_CHANGED: case LOAD_DEST:
			break;
		default:
			return 0;
		}
	}
	/* A failed load left nothing: no tmpfs, a reset zram device. */
	if (r->err == LOAD_SOURCE || r->err == LOAD_FORMAT || r->err == LOAD_DEST ||
	    r->err == LOAD_OK)
		snprintf(rep->source_fallback, sizeof(rep->source_fallback), "%s",
			 r->error[0] ? r->error : "udpcast: load failed");
	else
		snprintf(rep->source_fallback, sizeof(rep->source_fallback), "%s: %.200s",
			 fallback_reason(r), r->error);
	rb_warn("%s; reading the network image instead", rep->source_fallback);
	snprintf(rep->source_used, sizeof(rep->source_used), "network");
	memset(r, 0, sizeof(*r));
	return 1;
}

/* A RAM copy that boots, on the console and in the kernel log (the
 * loader says when it began; a fallback is a warning). */
static void note_copy(const struct boot_report *rep)
{
	char sz[32];
	const char *dev = rep->verity[0] ? ", through dm-verity" : "";

	fmt_size(rep->bytes, sz, sizeof(sz));
	if (strcmp(rep->hash, "ok"))
		rb_note("copied into RAM (%s): %s, %s in %.1f s, not verified%s", rep->target,
			rep->ram_path, sz, rep->seconds, dev);
	else if (rep->signed_by[0])
		rb_note("copied into RAM (%s): %s, %s in %.1f s, verified, signed by %s%s",
			rep->target, rep->ram_path, sz, rep->seconds, rep->signed_by, dev);
	else
		rb_note("copied into RAM (%s): %s, %s in %.1f s, verified%s", rep->target,
			rep->ram_path, sz, rep->seconds, dev);
}

static void do_ram(const struct boot_settings *s, const char *image, const char *manifest,
		   const struct vplan *vp, const char *rundir, struct boot_report *rep)
{
	struct load_opts o;
	struct load_result *r;
	char tmpfs[PATH_MAX], dest[PATH_MAX], msg[PATH_MAX + 64], name[NAME_MAX + 1];
	bool stuck;
	int rc, id = -1;

	if (!settings_usable(s, rep))
		return;
	r = calloc(1, sizeof(*r));
	if (!r) {
		fallback(rep, "load failed", "out of memory");
		return;
	}
	fill_opts(&o, s, image, vp);
	snprintf(rep->target, sizeof(rep->target), "%s", boot_target_name(s->target));
	o.announce = rep->target;

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
		copy_name(image, name, sizeof(name));
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

	if (s->source != SOURCE_UDPCAST ||
	    udpcast_first(s, &o, r, &rc, &stuck, id, rundir, rep) == 1) {
		snprintf(rep->source_used, sizeof(rep->source_used), "network");
		rb_debug("loading %s into %s", image, dest);
		rc = load_in_child(&o, r, &stuck);
	}
	fill_from_result(rep, r, o.sha256 || o.manifest);
	snprintf(rep->signed_by, sizeof(rep->signed_by), "%s", r->signed_by);
	if (r->reader_stuck && !stuck)
		report_add_error(rep, "a read of the image did not return; left to the kernel");
	if (rc == RB_EXIT_OK && !r->fstype[0]) {
		/* Nothing could mount it: keep the network root. */
		drop_copy(rundir, r->dest_path[0] ? r->dest_path : dest);
		fallback(rep, "not a usable image", "the copy holds no file system that blkid "
			 "knows");
		goto out;
	}
	if (rc != RB_EXIT_OK) {
		if (id >= 0 || stuck)
			drop_copy(rundir, dest);
		else if (s->target == TARGET_TMPFS)
			rmdir(tmpfs);   /* the loader unmounted its tmpfs */
		fallback(rep, fallback_reason(r), r->error[0] ? r->error : "unknown error");
		goto out;
	}
	snprintf(rep->ram_path, sizeof(rep->ram_path), "%s",
		 r->dest_path[0] ? r->dest_path : dest);
	if (s->verity && !do_verity(s, image, rep->ram_path, false, manifest, vp, r, rundir,
				    rep)) {
		drop_copy(rundir, rep->ram_path);
		rep->ram_path[0] = '\0';
		goto out;
	}
	snprintf(rep->mode_done, sizeof(rep->mode_done), "ram");
	note_copy(rep);
	print_image(s->verity ? rep->verity_device : rep->ram_path);
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
	int fd, rc, dfd;

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
	/* The report's directory, held open: the prefetch yields to the
	 * boot and may end after the switch of root, when /run has moved. */
	dfd = open(rundir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
	/* Nothing before LTSP (or the boot script) has mounted the image:
	 * its loop device's reads are then what the prefetch yields to. */
	o.wait_loop = 120;
	if (load_run(&o, r) == RB_EXIT_OK) {
		fill_from_result(rep, r, false);
		rb_debug("prefetch done: %llu bytes in %.1f s",
			 (unsigned long long)r->bytes_in, r->seconds);
	} else {
		report_add_error(rep, r->error[0] ? r->error : "prefetch failed");
		rb_warn("prefetch: %s", r->error);
	}
	if (dfd >= 0)
		(void)report_write_at(rep, dfd, json);
	else
		(void)report_write(rep, rundir, json);
	_exit(0);
}

/*
 * --drop=PATH --reason=TEXT: a hook did not take the RAM copy that this
 * boot announced (it did not mount, or the output was unusable). Free
 * the copy if it is ours (the report's ram_path, or inside our tmpfs)
 * and record the fallback in the report, so that the report and the
 * running system agree. Always 0: a hook must go on booting.
 */
/* Does the report text have key=val (a whole line)? */
static bool report_value_is(const char *text, const char *key, const char *val)
{
	size_t k = strlen(key), n = strlen(val);
	const char *p = text;

	if (!*val)
		return false;
	while (p && *p) {
		if (!strncmp(p, key, k) && p[k] == '=' && !strncmp(p + k + 1, val, n) &&
		    (p[k + 1 + n] == '\n' || !p[k + 1 + n]))
			return true;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}

static int cmd_drop(const char *path, const char *reason)
{
	char rundir[PATH_MAX], rpath[PATH_MAX + 16], ram[PATH_MAX + 8], clean[256];
	char *text = NULL;
	const char *rp;
	struct outfile of;
	int rc;

	if (rb_path(rundir, sizeof(rundir), REPORT_DIR) < 0)
		return RB_EXIT_OK;
	(void)report_mkdir(rundir);
	snprintf(rpath, sizeof(rpath), "%s/report", rundir);
	snprintf(ram, sizeof(ram), "%s/ram/", rundir);
	text = calloc(1, 65536);
	if (!text)
		return RB_EXIT_OK;
	if (read_regular_abs(rpath, text, 65536 - 512) < 0)
		text[0] = '\0';
	rp = strstr(text, "\nram_path=");
	rp = rp ? rp + 10 : !strncmp(text, "ram_path=", 9) ? text + 9 : NULL;
	if (report_value_is(text, "verity_device", path)) {
		/* The mapping goes first (it holds the copy open), then the
		 * copy under it, if any. */
		char err[256];

		if (vboot_unmap(rundir, err, sizeof(err)) < 0)
			rb_warn("%s", err);
		if (rp && *rp && *rp != '\n') {
			char copy[PATH_MAX];
			size_t n = strcspn(rp, "\n");

			if (n < sizeof(copy)) {
				memcpy(copy, rp, n);
				copy[n] = '\0';
				drop_copy(rundir, copy);
			}
		}
	} else if ((rp && !strncmp(rp, path, strlen(path)) && (rp[strlen(path)] == '\n' ||
		    !rp[strlen(path)])) || !strncmp(path, ram, strlen(ram))) {
		drop_copy(rundir, path);
	} else {
		rb_warn("%s: not the RAM copy of this boot; left alone", path);
	}
	text_scrub(clean, sizeof(clean), reason, SIZE_MAX, ' ');
	rb_warn("%s; booting from the network image", clean);
	if (report_value_is(text, "verity", "on") &&
	    (report_text_set(text, 65536, "verity", "failed") < 0 ||
	     report_text_set(text, 65536, "verity_device", "") < 0))
		rb_warn("%s: cannot record the dropped mapping", rpath);
	if (report_text_set(text, 65536, "mode_done", "off") == 0 &&
	    report_text_set(text, 65536, "ram_path", "") == 0 &&
	    report_text_set(text, 65536, "fallback", clean) == 0 &&
	    outfile_open(&of, rpath, 0644, OUTFILE_REPLACE, NULL, NULL, 0) == 0) {
		size_t n = strlen(text);

		if (n && text[n - 1] != '\n')
			text[n++] = '\n';
		rc = write_all(of.fd, text, n);
		if (rc == 0)
			rc = outfile_commit(&of);
		else
			outfile_abort(&of);
		if (rc < 0)
			rb_warn("%s: %s", rpath, strerror(-rc));
	}
	free(text);
	return RB_EXIT_OK;
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

static void do_lazy(const struct boot_settings *s, const char *image, const struct vplan *vp,
		    const char *rundir, struct boot_report *rep)
{
	char tmpfs[PATH_MAX + 8], pbuf[PATH_MAX];
	struct lazy_opts o;
	struct child_lazy *c;
	int status, crc;

	if (!settings_usable(s, rep))
		return;
	lazy_opts_init(&o);
	o.background = true;
	o.wait_loop = LAZY_WAIT_LOOP;
	o.image = image;
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
	if (s->source == SOURCE_UDPCAST)
		o.udpcast = s->udpcast;
	snprintf(rep->target, sizeof(rep->target), "%s", boot_target_name(s->target));
	/* In a child: the copier's own start (it forks again) must not touch
	 * our stdout, which the hook reads to EOF. Its start reads the
	 * network image (the profile's identity, the manifest) before the
	 * copy goes to the background: bounded as a load is, a child held
	 * in the kernel is left to it. */
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED) {
		fallback(rep, "lazy copy not started", strerror(errno));
		return;
	}
	memset(c, 0, sizeof(*c));
	c->o = &o;
	crc = child_run(lazy_child, c, &c->cb, read_limit(s), &status);
	if (crc == CHILD_DONE)
		status = (c->rc & 0xff) << 8;   /* as an exit status */
	munmap(c, sizeof(*c));
	if (crc < 0) {
		fallback(rep, "lazy copy not started", strerror(-crc));
		return;
	}
	if (crc == CHILD_KILLED) {
		char msg[128];

		snprintf(msg, sizeof(msg), "the copier's start did not return within %.0f s; left "
			 "to the kernel", read_limit(s));
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
	int fd;

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
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		rb_warn("ramboot.profile=record: %s", strerror(errno));
		return;
	}
	if (pid > 0) {
		rb_debug("recording a boot profile of %s in process %d", image, (int)pid);
		return;
	}
	setsid();
	signal(SIGHUP, SIG_IGN);
	if (chdir("/") < 0)
		_exit(1);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
	}
	rb_set_cmd("profile");
	_exit(profile_record_run(&o) < 0 ? RB_EXIT_FAIL : RB_EXIT_OK);
}

/*
 * --query: what a boot with these settings would do, for a hook that must
 * prepare before the root is mounted (the premount phase sets up a
 * read-only loop device over a block device root for ramboot=lazy). Two
 * lines, mode=MODE and image=PATH (empty when no setting and no
 * --default-image names one); nothing is made, no report is written.
 */
static int query(const struct boot_settings *s, const struct boot_args *a)
{
	char image[PATH_MAX];

	if (resolve_image(s, a, image, sizeof(image)) < 0)
		image[0] = '\0';
	if (printf("mode=%s\nimage=%s\n", boot_mode_name(s->mode), image) < 0 ||
	    fflush(stdout) != 0)
		return -EIO;
	return 0;
}

/*
 * --explain: the dry run an admin asks for. Every setting with the value
 * in force and where it came from, the image, manifest and keys this boot
 * would use, the verification policy and the memory verdict. Nothing is
 * read from the image, copied, mounted or written (stat(2) only); a
 * fallback the boot would take is printed as "would fall back".
 */
static int explain(const struct boot_settings *s, const struct boot_args *a)
{
	struct boot_report *rep = malloc(sizeof(*rep));
	char image[PATH_MAX], mbuf[PATH_MAX], sz[32], av[32], rs[32];
	const char *manifest = NULL;
	uint64_t avail = 0, reserve = s->minfree_set ? s->minfree : 256 * MiB;
	struct vplan vp;
	struct stat st;
	size_t i;
	int rc, keys;

	if (!rep)
		return -ENOMEM;
	report_init(rep);
	printf("settings (value, from):\n");
	for (i = 0; i < SET_NKEYS; i++) {
		const char *name = settings_keys[i];

		printf("  ramboot%s%-16s %-24s %s\n", name[0] ? "." : "", name,
		       s->key_src[i] == SRC_DEFAULT ? "-" : s->key_val[i],
		       set_source_name(s->key_src[i]));
	}
	printf("mode: %s\n", boot_mode_name(s->mode));
	rc = resolve_image(s, a, image, sizeof(image));
	if (rc < 0) {
		printf("image: none (%s)\n", rc == -ENOENT ? "neither ramboot.image= nor "
		       "ltsp.image= is set" : strerror(-rc));
		goto done;
	}
	if (stat(image, &st) < 0) {
		printf("image: %s: %s (would fall back: image not found)\n", image, strerror(errno));
		goto done;
	}
	printf("image: %s (%s)\n", image, fmt_size((uint64_t)st.st_size, sz, sizeof(sz)));
	manifest = pick_manifest(s, image, mbuf, sizeof(mbuf));
	printf("manifest: %s\n", manifest ? manifest : "none");
	keys = sign_keys_count(NULL);
	printf("trusted keys in the initrd: %d\n", keys > 0 ? keys : 0);
	if (!settings_usable(s, rep) || !verify_plan(s, manifest, &vp, rep)) {
		printf("verification: would fall back: %s (%s)\n", rep->fallback, rep->error);
		goto done;
	}
	printf("verification: %s%s\n", boot_verify_name(vp.policy),
	       vp.signed_only ? " (a manifest signed by a trusted key)" :
	       vp.sha256 ? " (ramboot.sha256=)" : vp.manifest ? " (the manifest's SHA-256)" : "");
	if (s->mode == BOOT_RAM || s->mode == BOOT_LAZY) {
		(void)rb_meminfo("MemAvailable", &avail);
		fmt_size(avail, av, sizeof(av));
		fmt_size(reserve, rs, sizeof(rs));
		/* A compressed image's size in RAM is known only once read
		 * (or from its manifest); the file's size is the floor. */
		if ((uint64_t)st.st_size + reserve > avail)
			printf("memory: would fall back: not enough memory (image %s, MemAvailable %s, "
			       "reserve %s)\n", sz, av, rs);
		else
			printf("memory: fits (image %s, MemAvailable %s, reserve %s)\n", sz, av, rs);
	}
done:
	free(rep);
	return fflush(stdout) == 0 ? 0 : -EIO;
}

int cmd_boot(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "image", required_argument, NULL, 'i' },
		{ "default-image", required_argument, NULL, 'D' },
		{ "cmdline", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "drop", required_argument, NULL, 'X' },
		{ "reason", required_argument, NULL, 'R' },
		{ "query", no_argument, NULL, 'Q' },
		{ "explain", no_argument, NULL, 'E' },
		{ "mounted", no_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct boot_args a = { 0 };
	struct boot_settings *s = NULL;
	struct boot_report *rep = NULL;
	struct debug_log dlog = { .pid = -1, .saved_err = -1 };
	char rundir[PATH_MAX], image[PATH_MAX], mbuf[PATH_MAX];
	const char *manifest;
	struct vplan vp;
	struct stat st;
	int c, rc, qrc = RB_EXIT_OK;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': a.image = optarg; break;
		case 'D': a.default_image = optarg; break;
		case 'c': a.cmdline = optarg; break;
		case 'j': a.json = true; break;
		case 'X': a.drop = optarg; break;
		case 'R': a.reason = optarg; break;
		case 'Q': a.query = true; break;
		case 'E': a.explain = true; break;
		case 'M': a.mounted = true; break;
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
	if (a.reason && !a.drop) {
		rb_err("--reason goes with --drop");
		return RB_EXIT_USAGE;
	}
	if ((a.query || a.explain) && (a.drop || a.json || (a.query && a.explain))) {
		rb_err("--%s goes alone (with --image, --default-image, --cmdline)",
		       a.query ? "query" : "explain");
		return RB_EXIT_USAGE;
	}
	/* Before the settings are read: their warnings are for the log too.
	 * The dry runs write nothing, not even there. */
	if (!a.query && !a.explain)
		rb_kmsg_open();
	if (a.drop)
		return cmd_drop(a.drop, a.reason && *a.reason ? a.reason : "the hook refused the copy");

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
	if (a.query) {
		qrc = query(s, &a) < 0 ? RB_EXIT_FAIL : RB_EXIT_OK;
		goto out;
	}
	if (a.explain) {
		qrc = explain(s, &a) < 0 ? RB_EXIT_FAIL : RB_EXIT_OK;
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
	if (s->mode != BOOT_OFF || s->verity || s->verity_bad) {
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
		manifest = pick_manifest(s, image, mbuf, sizeof(mbuf));
		if (manifest)
			rb_debug("manifest %s", manifest);
		if (s->verity || s->verity_bad) {
			/* Fails closed: no copy, no prefetch, no lazy copy
			 * without the mapping asked for. */
			if (a.mounted) {
				snprintf(rep->verity, sizeof(rep->verity), "failed");
				fallback(rep, "verity unavailable", "ramboot.verity=1, but the boot "
					 "script mounts the root from the image itself");
				goto report;
			}
			if (!settings_usable(s, rep) || !verify_plan(s, manifest, &vp, rep))
				goto report;
			if (!manifest) {
				snprintf(rep->verity, sizeof(rep->verity), "failed");
				fallback(rep, "verity unavailable", "ramboot.verity=1 and no manifest "
					 "(ramboot manifest --verity)");
				goto report;
			}
			/* Over the network image now, except for a RAM copy:
			 * over the copy once it is verified. A lazy copy needs
			 * a loop device to switch, even over a block device. */
			if (s->mode == BOOT_RAM && !verity_in_manifest(s, manifest, rep))
				goto report;
			if (s->mode != BOOT_RAM) {
				if (!do_verity(s, image, image, s->mode == BOOT_LAZY, manifest, &vp,
					       NULL, rundir, rep))
					goto report;
				print_image(rep->verity_device);
			}
		}
		if (s->mode == BOOT_OFF)
			goto report;
		if (s->mode == BOOT_PREFETCH) {
			if (do_prefetch(s, image, rundir, s->debug ? dlog.path : NULL,
					a.json, rep) == 0)
				goto out;
			goto report;
		}
		if (settings_usable(s, rep) && verify_plan(s, manifest, &vp, rep)) {
			if (s->mode == BOOT_LAZY)
				do_lazy(s, image, &vp, rundir, rep);
			else
				do_ram(s, image, manifest, &vp, rundir, rep);
		}
	}
report:
	rc = report_write(rep, rundir, a.json);
	if (rc < 0)
		rb_warn("%s/report: %s", rundir, strerror(-rc));
out:
	debug_log_stop(&dlog);
	free(s);
	free(rep);
	return qrc;
}
