// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ramboot.cache= in `ramboot boot` (docs/cache.md, "At boot"): boot from
 * the local disk's slot when it holds the server's image, else from the
 * network image with a refresh of the cache behind the boot. Only the
 * server's manifest is read from the network to decide, under the boot's
 * verification policy; the look at the cache and the manifest's read run
 * in a child the boot can give up on. Whatever goes wrong with the cache
 * is one warning line, fallback= in the report and the network boot.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/ramboot.h"
#include "lib/sysutil.h"
#include "boot/bootint.h"
#include "cache/cache.h"
#include "dev/loopdev.h"
#include "format/manifest.h"
#include "load/load.h"
#include "trust/sign.h"

/* The manifest and the look, in a child (shared memory). */
struct child_look {
	struct child_beat cb;
	const char *manifest;         /* NULL: the hash is ramboot.sha256= */
	bool signed_only;
	struct cache_look_req q;
	char sha256[65];
	int mrc;                      /* the manifest's read, 0 or -errno */
	char merr[512];
	char signed_by[96];
	struct cache_look_res r;
};

static void look_child(void *arg)
{
	struct child_look *c = arg;
	struct sign_who who;
	struct manifest m;

	if (c->manifest) {
		c->mrc = c->signed_only ?
			 sign_manifest_load(c->manifest, NULL, &m, &who, c->merr, sizeof(c->merr)) :
			 manifest_load(c->manifest, &m, c->merr, sizeof(c->merr));
		if (c->mrc < 0)
			return;
		if (c->signed_only)
			snprintf(c->signed_by, sizeof(c->signed_by), "%s %s", who.name, who.keyid);
		snprintf(c->sha256, sizeof(c->sha256), "%s", m.sha256);
		c->q.size = m.size;
		manifest_free(&m);
	}
	c->q.sha256 = c->sha256;
	cache_look(&c->q, &c->r);
}

/* The image's name in the cache: its file name, as `ramboot cache
 * refresh` names it. */
static const char *image_name(const char *image)
{
	const char *slash = strrchr(image, '/');

	return slash ? slash + 1 : image;
}

/* The refresh behind the boot, in a detached child at idle priority; it
 * owns the report from now on and amends it when it ends. */
static void start_refresh(const char *device, const char *image, const char *manifest,
			  const struct vplan *vp, const char *rundir, const char *logpath,
			  bool json, struct boot_report *rep)
{
	struct cache_refresh_opts o;
	struct cache_refresh_result r;
	struct report_set set[5];
	char err[512], gen[24], net[24], loc[24], slot[2] = "";
	pid_t pid;
	int rc, dfd;

	rc = report_write(rep, rundir, json);
	if (rc < 0)
		rb_warn("%s/report: %s", rundir, strerror(-rc));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		rb_warn("cache: the refresh cannot start: %s", strerror(errno));
		return;
	}
	if (pid > 0) {
		rb_debug("cache refresh of %s in process %d", image, (int)pid);
		return;
	}
	dfd = boot_child_detach(rundir, logpath);
	rb_set_cmd("cache");
	(void)io_prio_idle();
	(void)cpu_nice_bg();
	memset(&o, 0, sizeof(o));
	o.image = image;
	o.manifest = manifest;
	o.signed_only = vp->signed_only;
	rc = cache_boot_refresh(device, &o, &r, err, sizeof(err));
	if (rc < 0) {
		rb_warn("cache: refresh of %s: %s", image, err);
		set[0] = (struct report_set){ RK_CACHE_ERROR, err };
		rc = 1;
	} else {
		/* Here the running image's loop device would move onto the new
		 * slot (LOOP_CHANGE_FD, as the lazy copier does for RAM): the
		 * slot holds the same bytes, verified. Not done yet: the boot
		 * runs on from the network image until the next one. */
		snprintf(gen, sizeof(gen), "%" PRIu64, r.generation);
		snprintf(net, sizeof(net), "%" PRIu64, r.bytes_network);
		snprintf(loc, sizeof(loc), "%" PRIu64, r.bytes_local);
		slot[0] = cstate_slot_name(r.slot);
		set[0] = (struct report_set){ RK_CACHE, "refreshed" };
		set[1] = (struct report_set){ RK_CACHE_SLOT, slot };
		set[2] = (struct report_set){ RK_CACHE_GENERATION, gen };
		set[3] = (struct report_set){ RK_CACHE_BYTES_NETWORK, net };
		set[4] = (struct report_set){ RK_CACHE_BYTES_LOCAL, loc };
		rc = 5;
		rb_debug("cache: slot %s of %s refreshed, generation %s, %s bytes from the network, "
			 "%s local", slot, image, gen, net, loc);
	}
	if (dfd >= 0)
		(void)report_amend_at(dfd, set, (size_t)rc, 0);
	_exit(0);
}

/* The cache could not be used: the network boot, as without it. */
static void unusable(struct boot_report *rep, const char *reason, const char *error)
{
	snprintf(rep->cache, sizeof(rep->cache), "fallback");
	fallback(rep, reason, error);
}

/* A hit: the slot, through dm-verity with ramboot.verity=1. false after
 * a fallback (the loop device is gone then). */
static bool boot_slot(const struct boot_settings *s, const char *image, const char *manifest,
		      const struct vplan *vp, const struct cache_look_res *r, const char *rundir,
		      struct boot_report *rep)
{
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
			ok = do_verity(s, image, rep->cache_image, false, manifest, vp, lr, rundir,
				       rep);
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
	rb_note("booting from the local cache: %s, slot %s of %s (generation %" PRIu64 ")%s",
		rep->cache_device, rep->cache_slot, image_name(image), rep->cache_generation,
		s->verity ? ", through dm-verity" : ", verified when it was written");
	print_image(s->verity ? rep->verity_device : rep->cache_image);
	return true;
}

bool do_cache(const struct boot_settings *s, const char *image, const char *manifest,
	      const struct vplan *vp, const char *rundir, const char *logpath, bool json,
	      struct boot_report *rep)
{
	const char *mpath = vp->manifest ? vp->manifest : manifest;
	struct child_look *c;
	struct cache_look_res r;
	char msg[640];
	int crc, status;

	snprintf(rep->cache, sizeof(rep->cache), "fallback");
	if (!vp->sha256 && !mpath) {
		unusable(rep, "cache unusable", "no manifest beside the image (ramboot manifest): "
			 "which image the cache holds cannot be told");
		return true;
	}
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED) {
		unusable(rep, "cache unusable", strerror(errno));
		return true;
	}
	memset(c, 0, sizeof(*c));
	c->manifest = vp->sha256 ? NULL : mpath;
	c->signed_only = vp->signed_only;
	if (vp->sha256)
		snprintf(c->sha256, sizeof(c->sha256), "%s", vp->sha256);
	c->q.spec = s->cache;
	c->q.name = image_name(image);
	c->mrc = -EIO;
	snprintf(c->merr, sizeof(c->merr), "the reader ended without a result");
	crc = child_run(look_child, c, &c->cb, read_limit(s), &status);
	r = c->r;
	if (crc == CHILD_DONE && !c->mrc && c->signed_by[0])
		snprintf(rep->signed_by, sizeof(rep->signed_by), "%s", c->signed_by);
	if (crc != CHILD_DONE) {
		if (r.loop[0])
			(void)loopdev_detach(r.loop);
		snprintf(msg, sizeof(msg), "the look at the cache did not end%s", crc == CHILD_KILLED ?
			 " in time; left to the kernel" : "");
		munmap(c, sizeof(*c));
		unusable(rep, "cache unusable", msg);
		return true;
	}
	if (c->manifest && c->mrc < 0) {
		snprintf(msg, sizeof(msg), "%s: %s", c->manifest, c->merr);
		munmap(c, sizeof(*c));
		rep->cache[0] = '\0';
		fallback(rep, vp->signed_only ? "not signed" : "bad manifest", msg);
		return true;
	}
	munmap(c, sizeof(*c));
	snprintf(rep->cache_device, sizeof(rep->cache_device), "%s", r.device);
	if (r.slot >= 0) {
		snprintf(rep->cache_slot, sizeof(rep->cache_slot), "%c", cstate_slot_name(r.slot));
		rep->cache_generation = r.generation;
	} else if (r.look == CACHE_MISS) {
		snprintf(rep->cache_slot, sizeof(rep->cache_slot), "-");
	}
	if (r.look == CACHE_UNUSABLE) {
		unusable(rep, "cache unusable", r.error);
		return true;
	}
	if (r.look == CACHE_HIT) {
		snprintf(rep->cache, sizeof(rep->cache), "hit");
		(void)boot_slot(s, image, manifest, vp, &r, rundir, rep);
		return true;
	}
	snprintf(rep->cache, sizeof(rep->cache), "miss");
	if (s->verity && !do_verity(s, image, image, s->mode == BOOT_LAZY, manifest, vp, NULL,
				    rundir, rep))
		return true;
	if (s->verity)
		print_image(rep->verity_device);
	if (s->mode == BOOT_LAZY)
		do_lazy(s, image, vp, rundir, rep);
	else
		snprintf(rep->mode_done, sizeof(rep->mode_done), "cache");
	rb_note("the local cache does not hold this image (%s); booting from the network, "
		"refreshing %s behind the boot", rep->cache_slot[0] == '-' ? "empty" : "another one",
		r.device);
	start_refresh(r.device, image, vp->sha256 ? NULL : mpath, vp, rundir, logpath, json, rep);
	return false;
}
