// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ramboot.cache= in `ramboot boot` (docs/cache.md, "At boot"): boot from
 * the local disk's slot when it holds the server's image, else from the
 * network image with a refresh of the cache behind the boot. Only the
 * server's manifest is read from the network to decide, under the boot's
 * verification policy (a file, or an http:// URL fetched with the boot's
 * timeout); the look at the cache and the manifest's read run in a child
 * the boot can give up on. Whatever goes wrong with the cache
 * is one warning line, fallback= in the report and the network boot.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "lib/proc.h"
#include "lib/sysutil.h"
#include "boot/cache.h"
#include "boot/modes.h"
#include "boot/outcome.h"
#include "boot/scrub.h"
#include "boot/settings.h"
#include "boot/verity.h"
#include "cache/cache.h"
#include "dev/blkdev.h"
#include "dev/loopdev.h"
#include "format/manifest.h"
#include "load/load.h"
#include "source/source.h"
#include "trust/policy.h"

/* After a refresh behind the boot, how long the switch waits for the
 * loop device the boot's root runs on (the hook sets it up), and for one
 * that is there but not fit (read-write, another size). */
#define CACHE_SWITCH_WAIT 120.0
#define CACHE_SWITCH_UNFIT 2.0

/* Each wait for a web server, as ramboot.timeout= says (source/http.h). */
static int boot_timeout_ms(const struct boot_settings *s)
{
	return http_timeout_ms(s->timeout_set ? s->timeout : LOAD_STALL_TIMEOUT);
}

/* The manifest and the look, in a child (shared memory). */
struct child_look {
	struct child_beat cb;
	const char *manifest;         /* NULL: the hash is ramboot.sha256= */
	bool offline;                 /* no hash: the server cannot be reached */
	bool signed_only;
	int timeout_ms;               /* an http:// manifest: each wait */
	struct cache_look_req q;
	char sha256[65];
	int mrc;                      /* the manifest's read, 0 or -errno */
	char merr[512];
	char signed_by[96];
	struct cache_look_res r;
};

/* A read of the server's manifest that failed because the server cannot
 * be reached (not one that read a manifest and refused it): what
 * ramboot.cache.offline= boots the cache after. */
static bool unreachable(int rc)
{
	switch (-rc) {
	case EIO: case ETIMEDOUT: case EHOSTUNREACH: case ENETUNREACH: case EHOSTDOWN:
	case ENETDOWN: case ECONNREFUSED: case ECONNRESET: case ENOTCONN: case ESTALE:
		return true;
	default:
		return false;
	}
}

static void look_child(void *arg)
{
	struct child_look *c = arg;
	struct trust_policy p = { .manifest = c->manifest, .signed_only = c->signed_only };
	bool have = false;
	struct manifest m;
	const struct trust_want w = {
		.sha256 = c->sha256, .man = &m, .have_man = &have, .signed_by = c->signed_by,
		.signed_by_len = sizeof(c->signed_by), .read_rc = &c->mrc,
	};
	char *text = NULL;
	bool served = false;
	enum run_err e;

	if (c->manifest) {
		/* Over HTTP, a server that does not answer (mrc: a connection
		 * refused, reset, timed out; a 5xx) is told from a manifest
		 * it served and the policy refused (mrc from the parse or
		 * the signature). */
		if (source_is_url(c->manifest)) {
			c->mrc = http_fetch(c->manifest, c->timeout_ms, MANIFEST_HARD_MAX, &text,
					    &p.text_len, c->merr, sizeof(c->merr));
			if (c->mrc < 0)
				return;
			p.text = text;
			served = true;
		}
		/* Under the boot's policy, as the loader and the refresh read
		 * it; the look needs the whole image's hash and size only. */
		e = trust_policy_read(&p, &w, c->merr, sizeof(c->merr));
		free(text);
		if (e != RUN_OK) {
			if (c->mrc == 0 || (served && unreachable(c->mrc)))
				c->mrc = -EINVAL;
			return;
		}
		c->q.size = m.size;
		manifest_free(&m);
	}
	c->q.sha256 = c->offline ? NULL : c->sha256;
	cache_look(&c->q, &c->r);
}

/* The image the boot runs on, opened before the refresh (its path may be
 * gone after the switch of root): what the switch looks for its loop
 * device by. 0, or -errno with why. */
static int switch_prepare(const char *image, struct loopdev_watch *w, char *why, size_t len)
{
	struct stat st;
	uint64_t size;
	int fd, rc = 0;

	w->sysblock_fd = w->dev_fd = -1;
	w->real = NULL;
	fd = open(image, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		rc = -errno;
	else if (S_ISBLK(st.st_mode))
		rc = blk_size(fd, &size);
	else if (S_ISREG(st.st_mode))
		size = (uint64_t)st.st_size;
	else
		rc = -EINVAL;
	if (fd >= 0)
		(void)close(fd);
	if (rc < 0)
		return rb_errfmt(why, len, rc, "%s: %s", image, strerror(-rc));
	return loopdev_watch_open(w, image, &st, size, why, len);
}

/* After a refresh: the loop device the boot's root runs on, found
 * through w, moves onto the slot just committed (LOOP_CHANGE_FD, as the
 * lazy copier's switch to RAM: the same bytes, verified). 0 with *when
 * (seconds since boot), or -errno with why: the boot runs on from the
 * network image, the slot is used from the next boot. */
static int switch_to_slot(const struct loopdev_watch *w, int sfd, int mfd, const char *device,
			  char *loop, size_t looplen, double *when, char *why, size_t len)
{
	double deadline = now_sec() + CACHE_SWITCH_WAIT, unfit = 0;
	struct stat st;
	int lfd = -1, rc;

	/* The hook sets the loop device up after the boot: a refresh that
	 * ends first waits for it, a while. One that is there but not fit
	 * (read-write, another size) is given a moment to become so. */
	for (;;) {
		why[0] = '\0';
		rc = loopdev_watch_look(w, &lfd, loop, looplen, why, len);
		if (rc != 0)
			break;
		if (why[0] && !unfit)
			unfit = now_sec() + CACHE_SWITCH_UNFIT;
		if (now_sec() >= deadline || (unfit && now_sec() >= unfit)) {
			if (!why[0])
				snprintf(why, len, "no read-only loop device is backed by %s within "
					 "%.0f s: the root is not on one that can be switched",
					 w->image, CACHE_SWITCH_WAIT);
			return -ENODEV;
		}
		nap_ms(100);
	}
	if (rc < 0)
		return rc;
	/* The slot becomes the running root: its file system read-only,
	 * as a hit's, so that later read-only mounts of it share it. */
	if (mfd < 0 || cache_fs_ro(mfd, device, why, len) < 0) {
		if (mfd < 0)
			snprintf(why, len, "the cache's mount is gone");
		(void)close(lfd);
		return -EIO;
	}
	if (fstat(sfd, &st) < 0 || (uint64_t)st.st_size != w->size) {
		(void)close(lfd);
		return rb_errfmt(why, len, -EINVAL, "the slot is of %" PRIu64 " bytes, the image of "
				 "%" PRIu64, (uint64_t)st.st_size, w->size);
	}
	rc = loopdev_switch(lfd, &w->st, sfd);
	(void)close(lfd);
	if (rc < 0)
		return rb_errfmt(why, len, rc, "/dev/%s: %s", loop, rc == -ESTALE || rc == -ENXIO ?
				 "no longer backed by the image" : rc == -EPERM ?
				 "no longer read-only" : strerror(-rc));
	*when = boot_sec();
	return 0;
}

/* The refresh behind the boot, in a detached child at idle priority; it
 * owns the report from now on (REPORT_REFRESH) and amends it when it
 * ends, and again after the switch to the slot. */
static void start_refresh(struct boot_run *run, const struct cache_look_res *lr,
			  const char *manifest)
{
	const struct boot_settings *s = &run->s;
	const char *image = run->image, *device = lr->device, *mirrors[CACHE_MIRRORS_MAX];
	struct cache_refresh_opts o;
	struct cache_refresh_result r;
	struct loopdev_watch w;
	struct report_set set[6];
	char err[512], gen[24], net[24], loc[24], secs[24], when[24], loop[32] = "", slot[2] = "";
	char why[640] = "", dev[PATH_MAX], src[PATH_MAX];
	double t0, at = 0;
	pid_t pid;
	int rc, dfd, wrc = -1, sfd = -1, mfd = -1, mfd_m;

	/* The refresh reads the bytes the manifest describes under the name
	 * publish --content-addressed gave them, which no rebuild changes;
	 * the cache keeps them under the image's own name. */
	snprintf(src, sizeof(src), "%s", image);
	if (manifest && !source_is_url(manifest))
		(void)follow_image(s, manifest, src, sizeof(src));
	pid = boot_hand_over(run, REPORT_REFRESH, "cache refresh", image);
	if (pid < 0) {
		rb_warn("cache: the refresh cannot start: %s", strerror(errno));
		return;
	}
	if (pid > 0)
		return;
	dfd = boot_child_detach(run->rundir, run->logpath);
	rb_set_cmd("cache");
	/* Before anything else, while the paths are there. With
	 * ramboot=lazy the image goes to RAM instead: its loop device is the
	 * copier's to switch. */
	memset(&w, 0, sizeof(w));
	w.sysblock_fd = w.dev_fd = -1;
	if (s->mode == BOOT_LAZY)
		snprintf(why, sizeof(why), "ramboot=lazy: the loop device is the lazy copy's to "
			 "switch");
	else if (source_is_url(image))
		snprintf(why, sizeof(why), "the image is read over HTTP: no loop device over a "
			 "file of it to switch");
	else
		wrc = switch_prepare(image, &w, why, sizeof(why));
	/* The manifest too, while its path is there. */
	mfd_m = manifest && !source_is_url(manifest) ?
		open(manifest, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) : -1;
	/* The slot that failed its check at boot, marked bad first: should
	 * the refresh not end, the next boot does not try it again. */
	if (lr->slot_failed && cache_mark_bad(device, cache_image_name(image), lr->slot, lr->sha256,
					      err, sizeof(err)) < 0)
		rb_warn("slot %c of %s not marked bad: %s", cstate_slot_name(lr->slot),
			cache_image_name(image), err);
	(void)io_prio_idle();
	(void)cpu_nice_bg();
	memset(&o, 0, sizeof(o));
	o.image = src;
	o.name = cache_image_name(image);
	o.manifest = manifest;
	o.manifest_open = mfd_m >= 0;
	o.manifest_fd = mfd_m;
	o.signed_only = run->vp.signed_only;
	o.timeout_ms = boot_timeout_ms(s);
	/* ramboot.url='s other URLs: mirrors of the chunks' ranges. */
	for (int i = 1; source_is_url(image) && i < s->nurl && o.n_mirrors < CACHE_MIRRORS_MAX; i++)
		mirrors[o.n_mirrors++] = settings_url(s, i);
	o.mirrors = mirrors;
	/* Exactly the image the look chose: a manifest changed or rolled
	 * back since is refused, and nothing is switched onto. */
	o.expect_sha256 = lr->want_sha256[0] ? lr->want_sha256 : NULL;
	o.expect_size = lr->want_size;
	/* The slot opened for the switch (and its file system made
	 * read-only) only when there is a loop device to switch. */
	o.slot_fd = wrc == 0 ? &sfd : NULL;
	o.mnt_fd = &mfd;
	t0 = now_sec();
	rc = cache_boot_refresh(device, &o, &r, err, sizeof(err));
	if (mfd_m >= 0)
		(void)close(mfd_m);
	snprintf(secs, sizeof(secs), "%.3f", now_sec() - t0);
	if (rc < 0) {
		rb_warn("cache: refresh of %s: %s", image, err);
		set[0] = (struct report_set){ RK_CACHE_ERROR, err };
		set[1] = (struct report_set){ RK_CACHE_REFRESH_SECONDS, secs };
		if (dfd >= 0)
			(void)report_amend_at(dfd, set, 2, 0);
		loopdev_watch_close(&w);
		_exit(0);
	}
	snprintf(gen, sizeof(gen), "%" PRIu64, r.generation);
	snprintf(net, sizeof(net), "%" PRIu64, r.bytes_network);
	snprintf(loc, sizeof(loc), "%" PRIu64, r.bytes_local);
	slot[0] = cstate_slot_name(r.slot);
	set[0] = (struct report_set){ RK_CACHE, "refreshed" };
	set[1] = (struct report_set){ RK_CACHE_SLOT, slot };
	set[2] = (struct report_set){ RK_CACHE_GENERATION, gen };
	set[3] = (struct report_set){ RK_CACHE_BYTES_NETWORK, net };
	set[4] = (struct report_set){ RK_CACHE_BYTES_LOCAL, loc };
	set[5] = (struct report_set){ RK_CACHE_REFRESH_SECONDS, secs };
	rb_debug("cache: slot %s of %s refreshed, generation %s, %s bytes from the network, "
		 "%s local%s%s%s%s", slot, image, gen, net, loc, r.delta ? "; delta " : "",
		 r.delta ? r.delta : "", r.delta_why[0] ? ": " : "", r.delta_why);
	if (dfd >= 0)
		(void)report_amend_at(dfd, set, 6, 0);
	/* The slot holds the image, verified and committed: the running
	 * image's loop device moves onto it. */
	if (wrc == 0 && sfd < 0)
		wrc = rb_errfmt(why, sizeof(why), -EIO, "slot %s: cannot be opened again", slot);
	if (wrc == 0)
		wrc = switch_to_slot(&w, sfd, mfd, device, loop, sizeof(loop), &at, why,
				     sizeof(why));
	if (sfd >= 0)
		(void)close(sfd);
	if (mfd >= 0)
		(void)close(mfd);
	if (wrc == 0) {
		snprintf(when, sizeof(when), "%.2f", at);
		if (rb_path(dev, sizeof(dev), "/dev/%s", loop) < 0)
			snprintf(dev, sizeof(dev), "/dev/%s", loop);
		set[0] = (struct report_set){ RK_CACHE_SWITCHED, when };
		set[1] = (struct report_set){ RK_CACHE_IMAGE, dev };
		set[2] = (struct report_set){ RK_CACHE_SWITCH_ERROR, "" };
		rb_note("%s now reads slot %s of %s on %s (switched at %s s)", dev, slot,
			cache_image_name(image), device, when);
	} else {
		set[0] = (struct report_set){ RK_CACHE_SWITCHED, "" };
		set[1] = (struct report_set){ RK_CACHE_SWITCH_ERROR, why };
		set[2] = (struct report_set){ RK_CACHE_IMAGE, NULL };
		rb_note("slot %s of %s is used from the next boot; not switched now: %s",
			slot, cache_image_name(image), why);
	}
	if (dfd >= 0)
		(void)report_amend_at(dfd, set, 3, 0);
	loopdev_watch_close(&w);
	_exit(0);
}

/* The cache could not be used: the network boot, as without it. */
static void unusable(struct boot_report *rep, const char *reason, const char *error)
{
	snprintf(rep->cache, sizeof(rep->cache), "fallback");
	fallback(rep, reason, error);
}

/* ramboot=lazy on a hit: the slot copied into RAM behind the boot, at
 * disk speed, and the slot's loop device switched to the copy. A copy
 * that does not start leaves the boot on the slot (one warning line):
 * do_lazy() changes the report only when the copier started. */
static void lazy_from_slot(struct boot_run *run, const struct cache_look_res *r)
{
	struct boot_report *rep = &run->rep;
	char err[640];
	uint64_t size;
	int fd = -1, rc;

	rc = cache_slot_open(r->device, cache_image_name(run->image), r->sha256, &fd, &size, err,
			     sizeof(err));
	if (rc == 0) {
		rc = do_lazy(run, fd, rep->cache_image, err, sizeof(err));
		(void)close(fd);          /* the copier has its own */
	}
	if (rc < 0) {
		rb_warn("cache: the copy of the slot into RAM (ramboot=lazy): %s; running from the "
			"local disk", err);
		report_add_error(rep, err);
	}
}

/* A hit: the slot, through dm-verity with ramboot.verity=1. offline: no
 * plan (the server's manifest could not be read). false after a
 * fallback (the loop device is gone then). */
static bool boot_slot(struct boot_run *run, const struct cache_look_res *r, bool offline)
{
	const struct boot_settings *s = &run->s;
	struct boot_report *rep = &run->rep;
	struct load_result *lr;
	bool ok = true;

	if (rb_path(rep->cache_image, sizeof(rep->cache_image), "/dev/%s", r->loop) < 0)
		ok = false;
	snprintf(rep->fstype, sizeof(rep->fstype), "%s", r->fstype);
	if (ok && s->verity) {
		/* Every block read from the disk checked against the tree of
		 * the manifest, which must still name the slot's image. */
		lr = calloc(1, sizeof(*lr));
		ok = lr != NULL;
		if (lr) {
			lr->verified = true;
			snprintf(lr->sha256, sizeof(lr->sha256), "%s", r->sha256);
			ok = do_verity(run, rep->cache_image, false, lr);
			free(lr);
		}
	}
	if (!ok) {
		(void)loopdev_detach(r->loop);
		rep->cache_image[0] = '\0';
		if (!rep->fallback[0])
			unusable(rep, "cache unusable", "out of memory");
		snprintf(rep->cache, sizeof(rep->cache), "fallback");
		return false;
	}
	snprintf(rep->cache_verified, sizeof(rep->cache_verified), s->verity ? "verity" : "refresh");
	snprintf(rep->mode_done, sizeof(rep->mode_done), "cache");
	/* Offline there is nothing to verify a copy against: the boot
	 * stays on the disk. */
	if (s->mode == BOOT_LAZY && !offline)
		lazy_from_slot(run, r);
	rb_note("booting from the local cache: %s, slot %s of %s (generation %" PRIu64 ")%s",
		rep->cache_device, rep->cache_slot, cache_image_name(run->image),
		rep->cache_generation,
		s->verity ? ", through dm-verity" : ", verified when it was written");
	print_image(s->verity ? rep->verity_device : rep->cache_image);
	return true;
}

void do_cache(struct boot_run *run)
{
	const struct boot_settings *s = &run->s;
	const char *image = run->image;
	const struct vplan *vp = &run->vp;
	struct boot_report *rep = &run->rep;
	const char *mpath = vp->manifest ? vp->manifest : run->manifest;
	struct child_look *c;
	struct cache_look_res r;
	char msg[640];
	int crc, status;

	snprintf(rep->cache, sizeof(rep->cache), "fallback");
	if (!vp->sha256 && !mpath) {
		unusable(rep, "cache unusable", "no manifest beside the image (ramboot manifest): "
			 "which image the cache holds cannot be told");
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		unusable(rep, "cache unusable", strerror(ENOMEM));
		return;
	}
	c->manifest = vp->sha256 ? NULL : mpath;
	c->signed_only = vp->signed_only;
	c->timeout_ms = boot_timeout_ms(s);
	if (vp->sha256)
		snprintf(c->sha256, sizeof(c->sha256), "%s", vp->sha256);
	c->q.spec = s->cache;
	c->q.name = cache_image_name(image);
	c->mrc = -EIO;
	snprintf(c->merr, sizeof(c->merr), "the reader ended without a result");
	crc = child_call(look_child, c, sizeof(*c), read_limit(s), &status);
	r = c->r;
	if (crc == CHILD_DONE && !c->mrc && c->signed_by[0])
		snprintf(rep->signed_by, sizeof(rep->signed_by), "%s", c->signed_by);
	if (crc != CHILD_DONE) {
		bool was_reading = c->manifest && c->mrc == -EIO && !c->sha256[0];

		if (r.loop[0])
			(void)loopdev_detach(r.loop);
		snprintf(msg, sizeof(msg), "the look at the cache did not end%s", crc == CHILD_KILLED ?
			 " in time; left to the kernel" : "");
		free(c);
		/* Still reading the server's manifest: the server does not
		 * answer. */
		if (was_reading && do_cache_offline(run, msg))
			return;
		unusable(rep, "cache unusable", msg);
		return;
	}
	if (c->manifest && c->mrc < 0) {
		snprintf(msg, sizeof(msg), "%s", c->merr);
		if (unreachable(c->mrc)) {
			free(c);
			if (do_cache_offline(run, msg))
				return;
			rep->cache[0] = '\0';
			fallback(rep, "bad manifest", msg);
			return;
		}
		free(c);
		rep->cache[0] = '\0';
		fallback(rep, vp->signed_only ? "not signed" : "bad manifest", msg);
		return;
	}
	free(c);
	snprintf(rep->cache_device, sizeof(rep->cache_device), "%s", r.device);
	if (r.slot >= 0) {
		snprintf(rep->cache_slot, sizeof(rep->cache_slot), "%c", cstate_slot_name(r.slot));
		rep->cache_generation = r.generation;
	} else if (r.look == CACHE_MISS) {
		snprintf(rep->cache_slot, sizeof(rep->cache_slot), "-");
	}
	if (r.look == CACHE_UNUSABLE && r.slot_failed && r.slot >= 0) {
		/* The slot failed a check of its content (rotted or altered
		 * since it was verified): marked bad, and a miss. */
		rep->cache_marked_bad[0] = cstate_slot_name(r.slot);
		rep->cache_marked_bad[1] = '\0';
		rb_warn("cache: %s: marked bad; the network image boots and the cache is "
			"refreshed behind the boot", r.error);
		snprintf(msg, sizeof(msg), "%s: marked bad", r.error);
		report_add_error(rep, msg);
		r.look = CACHE_MISS;
	} else if (r.look == CACHE_UNUSABLE) {
		unusable(rep, "cache unusable", r.error);
		return;
	}
	if (r.look == CACHE_HIT) {
		snprintf(rep->cache, sizeof(rep->cache), "hit");
		if (!boot_slot(run, &r, false))
			return;
		/* Through dm-verity: the whole slot read behind the boot,
		 * marked bad when a block fails (scrub.c). With ramboot=lazy
		 * the slot is copied into RAM and verified whole instead. */
		if (s->verity && s->mode == BOOT_CACHE && rep->verity_device[0])
			start_scrub(run, &r, cache_image_name(image), rep->verity_device);
		return;
	}
	snprintf(rep->cache, sizeof(rep->cache), "miss");
	if (s->verity && !do_verity(run, image, s->mode == BOOT_LAZY, NULL))
		return;
	if (s->verity)
		print_image(rep->verity_device);
	if (s->mode == BOOT_LAZY)
		lazy_from_network(run);
	else
		snprintf(rep->mode_done, sizeof(rep->mode_done), "cache");
	rb_note("the local cache does not hold this image (%s); booting from the network, "
		"refreshing %s behind the boot", rep->cache_marked_bad[0] ? "its slot failed a check" :
		r.slot_bad ? "its slot is marked bad" : rep->cache_slot[0] == '-' ? "empty" :
		"another one", r.device);
	start_refresh(run, &r, vp->sha256 ? NULL : mpath);
}

/* ramboot.cache.offline=: the server's manifest (or image) cannot be
 * read; the active slot boots when it was refreshed no longer than the
 * age allowed ago (docs/cache.md, "Offline boot"). why: what failed. true
 * when the slot boots; else the fallback is the caller's. */
bool do_cache_offline(struct boot_run *run, const char *why)
{
	const struct boot_settings *s = &run->s;
	const char *image = run->image;
	struct boot_report *rep = &run->rep;
	struct child_look *c;
	struct cache_look_res r;
	char msg[1024];
	int crc, status;

	if (!s->cache_offline || !s->cache[0])
		return false;
	if (s->verity || s->verity_bad) {
		snprintf(msg, sizeof(msg), "%s; ramboot.cache.offline= does not boot with "
			 "ramboot.verity=1 (the root hash is the server's manifest's)", why);
		unusable(rep, "cache unusable", msg);
		return true;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return false;
	c->offline = true;
	c->q.spec = s->cache;
	c->q.name = cache_image_name(image);
	c->q.offline_age = s->cache_offline;
	crc = child_call(look_child, c, sizeof(*c), read_limit(s), &status);
	r = c->r;
	free(c);
	snprintf(rep->cache_device, sizeof(rep->cache_device), "%s", r.device);
	if (crc != CHILD_DONE || r.look != CACHE_HIT) {
		if (crc != CHILD_DONE && r.loop[0])
			(void)loopdev_detach(r.loop);
		snprintf(msg, sizeof(msg), "%s; no offline boot: %s", why, crc != CHILD_DONE ?
			 "the look at the cache did not end" : r.error);
		unusable(rep, "cache unusable", msg);
		return true;
	}
	snprintf(rep->cache, sizeof(rep->cache), "offline");
	snprintf(rep->cache_slot, sizeof(rep->cache_slot), "%c", cstate_slot_name(r.slot));
	rep->cache_generation = r.generation;
	rep->cache_age = r.age;
	rb_warn("cache: OFFLINE: %s; booting slot %s of %s, refreshed %" PRId64 " s ago "
		"(ramboot.cache.offline= allows %" PRId64 " s); not checked against the server",
		why, rep->cache_slot, cache_image_name(image), r.age, s->cache_offline);
	report_add_error(rep, why);
	if (!boot_slot(run, &r, true))
		return true;
	snprintf(rep->cache, sizeof(rep->cache), "offline");
	return true;
}
