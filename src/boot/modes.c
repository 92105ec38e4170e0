// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The modes of `ramboot boot` that read the image: ramboot=ram (a copy
 * in a child the boot can give up on, from a udpcast session first when
 * asked) and ramboot=prefetch (a read into the page cache in the
 * background) and ramboot=lazy (its copier started in a child the boot
 * can give up on; the copy goes on behind the boot).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/base.h"
#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "lib/proc.h"
#include "lib/sysutil.h"
#include "lib/units.h"
#include "boot/modes.h"
#include "boot/outcome.h"
#include "boot/settings.h"
#include "boot/verity.h"
#include "codec/codec.h"
#include "dev/zram.h"
#include "lazy/lazy.h"
#include "load/load.h"
#include "udpcast/udpcast.h"

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

static void fill_opts(struct load_opts *o, const struct boot_settings *s, const char *image,
		      const struct vplan *vp)
{
	int i;

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
	/* ramboot.url=: the image is its first URL, the others its mirrors. */
	for (i = 1; i < s->nurl && o->n_mirrors < LOAD_MIRRORS_MAX; i++)
		o->mirrors[o->n_mirrors++] = settings_url(s, i);
	/* An image over HTTP (ramboot.url=) is copied unchecked only when
	 * ramboot.verify=off says so (verify_plan() refused the rest). */
	o->no_verify = s->verify == VERIFY_OFF && !s->verify_policy_bad;
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
static int load_in_child(const struct boot_settings *s, const struct load_opts *o,
			 struct load_result *r, bool *stuck)
{
	long long beat0;
	struct child_load *c = calloc(1, sizeof(*c));
	int rc, status;

	*stuck = false;
	if (!c)
		return load_run(o, r);
	c->o = *o;
	/* Until its first byte, the boot's deadline too: the manifest's
	 * read and the source's start take what is left of it. */
	c->cb.first_by = boot_deadline();
	beat0 = (long long)(now_sec() * 1000);
	rc = child_call(load_child, c, sizeof(*c),
			o->stall_timeout > 0 ? o->stall_timeout + CHILD_GRACE_S : 0, &status);
	/* The data that came pushes the boot's deadline on, from when the
	 * last of it came (a stall after it has used its share). */
	if (rc > 0 && c->cb.beat_ms > beat0)
		boot_deadline_progress(s, (double)c->cb.beat_ms / 1000);
	if (rc < 0) {
		free(c);
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
	free(c);
	return rc;
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
	struct child_head c = { .path = path, .n = -EIO };
	int rc, status;

	rc = child_call(head_child, &c, sizeof(c), limit, &status);
	if (rc == CHILD_DONE && c.n > 0) {
		*name = codec_detect(c.head, (size_t)c.n)->name;
		return 1;
	}
	if (rc == CHILD_KILLED)
		rb_warn("%s: its first bytes did not come within %.0f s", path, limit);
	return 0;
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
void drop_copy(const char *rundir, const char *path)
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
	uo.udpcast = &uc;
	*rc = load_in_child(s, &uo, r, stuck);
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

void do_ram(struct boot_run *run)
{
	const struct boot_settings *s = &run->s;
	const char *image = run->image, *rundir = run->rundir;
	struct boot_report *rep = &run->rep;
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
	fill_opts(&o, s, image, &run->vp);
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

	if (s->source != SOURCE_UDPCAST || s->nurl ||
	    udpcast_first(s, &o, r, &rc, &stuck, id, rundir, rep) == 1) {
		snprintf(rep->source_used, sizeof(rep->source_used), s->nurl ? "http" : "network");
		rb_debug("loading %s into %s", image, dest);
		rc = load_in_child(s, &o, r, &stuck);
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
		/* A copy over HTTP that failed part-way keeps DEST.part in its
		 * tmpfs for a run again: a boot never runs again, it drops it. */
		if (id >= 0 || stuck || r->part_kept)
			drop_copy(rundir, dest);
		else if (s->target == TARGET_TMPFS)
			rmdir(tmpfs);   /* the loader unmounted its tmpfs */
		fallback(rep, fallback_reason(r), r->error[0] ? r->error : "unknown error");
		goto out;
	}
	snprintf(rep->ram_path, sizeof(rep->ram_path), "%s",
		 r->dest_path[0] ? r->dest_path : dest);
	if (s->verity && !do_verity(run, rep->ram_path, false, r)) {
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
void do_prefetch(struct boot_run *run)
{
	const struct boot_settings *s = &run->s;
	const char *image = run->image, *rundir = run->rundir;
	struct boot_report *rep = &run->rep;
	bool json = run->a->json;
	struct load_opts o;
	struct load_result *r;
	pid_t pid;
	int dfd;

	/* Written before the fork: the child rewrites it when done. */
	snprintf(rep->mode_done, sizeof(rep->mode_done), "prefetch");
	pid = boot_hand_over(run, REPORT_PREFETCH, "prefetch", image);
	if (pid < 0) {
		fallback(rep, "prefetch failed", strerror(errno));
		run->owner = REPORT_BOOT;
		return;
	}
	if (pid > 0)
		return;
	dfd = boot_child_detach(rundir, run->logpath);
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

#define LAZY_WAIT_LOOP 120.0   /* seconds for the loop device to appear */

/* The copier's start, in a child of the boot (child_call). */
struct child_lazy {
	struct child_beat cb;
	struct lazy_opts o;
	struct lazy_result r;
	int rc;
};

static void lazy_child(void *arg)
{
	struct child_lazy *c = arg;

	rb_set_cmd("lazy");
	c->rc = lazy_start(&c->o, &c->r);
}

/*
 * ramboot=lazy: the boot goes on from the network image at once; a
 * copier started here copies it into RAM in the background, verifies it
 * and switches the image's loop device to the copy (lazy.h). Started
 * before the image is mounted (LTSP's PRE_INITRD_BOTTOM hook runs before
 * it sets up the loop device), so it opens what it needs now and waits
 * for the loop device. stdout stays empty: the hooks change nothing.
 */
int do_lazy(struct boot_run *run, int image_fd, const char *loop, char *why, size_t len)
{
	const struct boot_settings *s = &run->s;
	const struct vplan *vp = &run->vp;
	char tmpfs[PATH_MAX + 8], pbuf[PATH_MAX], urls[SET_PATH_MAX + 8];
	struct child_lazy *c = calloc(1, sizeof(*c));
	struct lazy_opts *o;
	double limit = read_limit(s);
	int status, crc, rc = 0;

	if (!c)
		return rb_errfmt(why, len, -ENOMEM, "%s", strerror(ENOMEM));
	o = &c->o;
	lazy_opts_init(o);
	o->background = true;
	o->boot_report = true;
	o->image = run->image;
	if (image_fd < 0 && s->nurl > 1) {
		/* ramboot.url='s mirrors: the copier takes them as one list. */
		size_t n = 0;

		for (int i = 0; i < s->nurl && n < sizeof(urls); i++)
			n += (size_t)snprintf(urls + n, sizeof(urls) - n, "%s%s", i ? "," : "",
					      settings_url(s, i));
		if (n < sizeof(urls))
			o->image = urls;
	}
	if (image_fd >= 0) {
		/* The bytes at disk speed, the loop device the hook mounts. */
		o->image_fd = image_fd;
		o->loop = loop;
		o->source_name = "cache";
	} else if (!lazy_is_http(run->image)) {
		o->wait_loop = LAZY_WAIT_LOOP;
	}
	/* Over HTTP the copier makes the loop device the hook mounts. */
	o->unverified = s->verify == VERIFY_OFF;
	if (s->target == TARGET_ZRAM && !lazy_serves_http(o)) {
		o->target = LAZY_TARGET_ZRAM;
	} else {
		snprintf(tmpfs, sizeof(tmpfs), "%s/ram", run->rundir);
		o->tmpfs = tmpfs;
	}
	if (vp->sha256) {
		o->sha256 = vp->sha256;
	} else if (vp->manifest) {
		o->manifest = vp->manifest;
		o->signed_only = vp->signed_only;
	}
	if (s->minfree_set)
		o->min_free = s->minfree;
	if (s->profile[0]) {
		/* Like the manifest: under the root prefix, a relative path
		 * under the root mount. */
		int prc = !strcmp(s->profile, "none") ? (snprintf(pbuf, sizeof(pbuf), "none"), 0) :
			  s->profile[0] == '/' ? rb_path(pbuf, sizeof(pbuf), "%s", s->profile) :
			  rb_path(pbuf, sizeof(pbuf), "%s/%s", root_mount(), s->profile);

		if (prc == 0)
			o->profile = pbuf;
	}
	if (s->timeout_set)
		o->stall_timeout = s->timeout;
	/* The copy from the lab's multicast stream, checked against the
	 * hash above; from the image when that fails (lazy.md). */
	if (s->source == SOURCE_UDPCAST && image_fd < 0)
		o->udpcast = s->udpcast;
	/* In a child: the copier's own start (it forks again) must not touch
	 * our stdout, which the hook reads to EOF. Its start reads the
	 * network image (the profile's identity, the manifest) before the
	 * copy goes to the background: bounded as a load is, a child held
	 * in the kernel is left to it. */
	c->rc = RB_EXIT_FAIL;
	crc = child_call(lazy_child, c, sizeof(*c), limit, &status);
	if (crc < 0) {
		rc = rb_errfmt(why, len, crc, "%s", strerror(-crc));
	} else if (crc == CHILD_KILLED) {
		rc = rb_errfmt(why, len, -ETIMEDOUT, "the copier's start did not return within "
			       "%.0f s; left to the kernel", limit);
	} else if (crc != CHILD_DONE) {
		rc = rb_errfmt(why, len, -EIO, "the copier could not start (status %d)",
			       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	} else if (c->rc != RB_EXIT_OK) {
		/* -ENOMEM: the copier's memory rule said no (lazy_exit_code). */
		rc = rb_errfmt(why, len, c->rc == RB_EXIT_NOMEM ? -ENOMEM : -EIO, "%s",
			       c->r.error[0] ? c->r.error : "the copier could not start");
	}
	if (rc == 0) {
		/* Over HTTP the copy is a tmpfs file, whatever was asked. */
		snprintf(run->rep.target, sizeof(run->rep.target), "%s",
			 boot_target_name(lazy_serves_http(o) ? TARGET_TMPFS : s->target));
		snprintf(run->rep.mode_done, sizeof(run->rep.mode_done), "lazy");
		rb_debug("lazy copy of %s started in process %d; progress in %s/lazy", run->image,
			 (int)c->r.child, run->rundir);
		if (lazy_serves_http(o)) {
			snprintf(run->rep.fstype, sizeof(run->rep.fstype), "%s", c->r.fstype);
			print_image(c->r.loop);
		}
	}
	free(c);
	return rc;
}

void lazy_from_network(struct boot_run *run)
{
	struct boot_report *rep = &run->rep;
	char why[640];
	int rc = do_lazy(run, -1, NULL, why, sizeof(why));

	if (rc == 0)
		return;
	/* As a RAM copy's: the target asked for, though nothing was made. */
	snprintf(rep->target, sizeof(rep->target), "%s", boot_target_name(run->s.target));
	if (rc == -ENOMEM)
		fallback(rep, "not enough memory", why);
	else
		fallback(rep, "lazy copy not started", why);
}
