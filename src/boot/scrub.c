// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ramboot.verity=1 on a cache hit (docs/cache.md, "A bad slot"): the
 * root is the dm-verity mapping of the slot, which checks each block as
 * it is read, after `ramboot boot` has returned. A detached child reads
 * the whole mapping behind the boot, in its idle time (cache/scrub.h),
 * and marks the slot bad when a block fails: the next boot boots from the
 * network and refreshes the cache. It amends the report (cache_scrub=).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/base.h"
#include "lib/msg.h"
#include "lib/proc.h"
#include "boot/outcome.h"
#include "boot/scrub.h"
#include "cache/cache.h"
#include "cache/scrub.h"

int scrub_report(int dfd, const char *name, int slot, const struct cache_scrub_result *r)
{
	static const char *const verdict[] = { "ok", "bad", "error" };
	struct report_set set[4];
	char off[24], secs[24];

	snprintf(secs, sizeof(secs), "%.3f", r->seconds);
	snprintf(off, sizeof(off), "%" PRIu64, r->bad_off);
	set[0] = (struct report_set){ RK_CACHE_SCRUB, verdict[r->verdict] };
	set[1] = (struct report_set){ RK_CACHE_SCRUB_OFFSET,
				      r->verdict == CACHE_SCRUB_BAD ? off : NULL };
	set[2] = (struct report_set){ RK_CACHE_SCRUB_ERROR,
				      r->verdict == CACHE_SCRUB_OK ? NULL : r->why };
	set[3] = (struct report_set){ RK_CACHE_SCRUB_SECONDS, secs };
	switch (r->verdict) {
	case CACHE_SCRUB_OK:
		rb_debug("slot %c of %s scrubbed: every block read through dm-verity, "
			 "none failed (%s s)", cstate_slot_name(slot), name, secs);
		break;
	case CACHE_SCRUB_BAD:
		if (r->marked)
			rb_warn("slot %c of %s failed dm-verity (%s; rotted or altered on the "
				"disk): marked bad; the next boot boots from the network and "
				"refreshes the cache", cstate_slot_name(slot), name, r->why);
		else
			rb_warn("slot %c of %s failed dm-verity (%s)", cstate_slot_name(slot),
				name, r->why);
		break;
	default:
		rb_warn("the scrub of slot %c of %s: %s; nothing marked",
			cstate_slot_name(slot), name, r->why);
		break;
	}
	return dfd < 0 ? -EBADF : report_amend_at(dfd, set, ARRAY_SIZE(set), 0);
}

void start_scrub(struct boot_run *run, const struct cache_look_res *lr, const char *name,
		 const char *mapping)
{
	struct cache_scrub sc;
	struct cache_scrub_result r;
	char err[512];
	pid_t pid;
	int rc, dfd;

	/* The child owns the report from now on: written first, amended
	 * when the scrub ends. */
	pid = boot_hand_over(run, REPORT_SCRUB, "cache scrub", name);
	if (pid < 0) {
		rb_warn("cache: the scrub of slot %c of %s cannot start: %s",
			cstate_slot_name(lr->slot), name, strerror(errno));
		return;
	}
	if (pid > 0)
		return;
	dfd = boot_child_detach(run->rundir, run->logpath);
	rb_set_cmd("cache");
	/* Before anything else, while the paths are there: after the
	 * switch of root, nothing is opened again. */
	rc = cache_scrub_open(&sc, lr->device, name, lr->slot, lr->sha256, mapping, err,
			      sizeof(err));
	(void)io_prio_idle();
	(void)cpu_nice_bg();
	if (rc < 0) {
		memset(&r, 0, sizeof(r));
		r.verdict = CACHE_SCRUB_ERROR;
		snprintf(r.why, sizeof(r.why), "%s", err);
	} else {
		cache_scrub_run(&sc, &r);
		cache_scrub_close(&sc);
	}
	(void)scrub_report(dfd, name, lr->slot, &r);
	if (dfd >= 0)
		(void)close(dfd);
	_exit(0);
}
