// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ramboot.verity=1 in `ramboot boot`: the root through a dm-verity
 * mapping of the network image or of its RAM copy (trust/vboot.c maps
 * it), with the manifest read in a child the boot can give up on.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/msg.h"
#include "lib/sysutil.h"
#include "boot/outcome.h"
#include "boot/settings.h"
#include "boot/verity.h"
#include "format/manifest.h"
#include "load/load.h"
#include "trust/vboot.h"

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

#define VERITY_TIMEOUT_S 30.0   /* without ramboot.timeout= */

/*
 * ramboot.verity=1: map data (the network image or its RAM copy) through
 * dm-verity with the root hash of the manifest, read under the plan's
 * policy (vboot.h). want_sha: the hash the copy was verified against.
 * false after a fallback: never a copy without the mapping asked for.
 */
bool do_verity(struct boot_run *run, const char *data, bool loop,
	       const struct load_result *copy)
{
	const struct boot_settings *s = &run->s;
	struct boot_report *rep = &run->rep;
	const char *manifest = run->manifest;
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
	q.image = run->image;
	q.data = data;
	q.loop = loop;
	q.manifest = manifest;
	q.signed_only = run->vp.signed_only;
	/* A RAM copy: the manifest read again must be the one the copy was
	 * verified against (a publish may have replaced it meanwhile), by
	 * the whole-image hash it names or, when the copy was checked
	 * chunk by chunk, the hash and the tree's root that manifest named. */
	if (copy && copy->verified) {
		q.want_sha256 = copy->manifest_sha256[0] ? copy->manifest_sha256 :
				copy->sha256[0] ? copy->sha256 : NULL;
		q.want_root = copy->manifest_verity_root[0] ? copy->manifest_verity_root : NULL;
	}
	q.rundir = run->rundir;
	q.timeout = s->timeout_set ? s->timeout : VERITY_TIMEOUT_S;
	q.deadline = boot_deadline();
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
bool verity_in_manifest(struct boot_run *run)
{
	const char *manifest = run->manifest;
	struct boot_report *rep = &run->rep;
	struct child_vman c = { .path = manifest };
	char msg[PATH_MAX + 320];
	double limit = read_limit(&run->s);
	int rc, status;

	snprintf(rep->verity, sizeof(rep->verity), "failed");
	rc = child_call(vman_child, &c, sizeof(c), limit, &status);
	if (rc != CHILD_DONE || c.rc < 0) {
		if (rc == CHILD_DONE)
			snprintf(msg, sizeof(msg), "%s: %s", manifest, c.err);
		else if (rc == CHILD_KILLED)
			snprintf(msg, sizeof(msg), "%s: the read did not return within %.0f s; "
				 "left to the kernel", manifest, limit);
		else
			snprintf(msg, sizeof(msg), "%s: cannot be read (%s)", manifest,
				 rc < 0 ? strerror(-rc) : "the reader ended without a result");
		fallback(rep, "bad manifest", msg);
		return false;
	}
	if (!c.has) {
		snprintf(msg, sizeof(msg), "%s: no verity-root (made without ramboot manifest "
			 "--verity)", manifest);
		fallback(rep, "verity unavailable", msg);
		return false;
	}
	rep->verity[0] = '\0';
	return true;
}
