// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * --wait-loop: the loop device comes later. The search itself is
 * dev/loopwatch.c's, which the cache's switch after a refresh shares.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "lazy/lazyint.h"
#include "dev/loopdev.h"
#include "lib/clock.h"
#include "lib/msg.h"
#include "lib/path.h"

/* Open, while the paths are there, what the look needs (loopdev.h). */
int lazy_open_wait_dirs(struct lazy *L)
{
	char err[PATH_MAX + 64];

	if (L->o->loop)
		return lazy_fail(L, LAZY_USAGE, "--wait-loop looks for the loop device: not with "
				 "--loop");
	if (loopdev_watch_open(&L->lw, L->o->image, &L->img_st, L->size, err, sizeof(err)) < 0)
		return lazy_fail(L, LAZY_LOOP, "%s", err);
	return 0;
}

/* Wait up to --wait-loop seconds for the image's loop device; then what
 * open_loop() does, through the descriptors of lazy_open_wait_dirs(). */
int lazy_wait_loop(struct lazy *L)
{
	double deadline = now_sec() + L->o->wait_loop;
	char why[512] = "", p[PATH_MAX];
	int rc;

	lazy_set_state(L, "waiting-loop");
	for (;;) {
		why[0] = '\0';
		rc = loopdev_watch_look(&L->lw, &L->loop_fd, L->loop_name, sizeof(L->loop_name), why,
					sizeof(why));
		if (rc == 1)
			break;
		if (rc < 0)
			return lazy_fail(L, LAZY_LOOP, "%s", why);
		if ((rc = lazy_guard_outcome(L)) != 0)
			return rc;
		if (now_sec() >= deadline) {
			if (why[0])
				return lazy_fail(L, LAZY_LOOP, "%s", why);
			return lazy_fail(L, LAZY_NOLOOP, "no loop device backed by %s within %g s "
					 "(--wait-loop)", L->o->image, L->o->wait_loop);
		}
		nap_ms(LAZY_WAIT_POLL_MS);
	}
	if (rb_path(p, sizeof(p), "/dev/%s", L->loop_name) < 0)
		snprintf(p, sizeof(p), "/dev/%s", L->loop_name);
	snprintf(L->r->loop, sizeof(L->r->loop), "%s", p);
	lazy_open_counters(L, L->lw.sysblock_fd);
	rb_debug("%s is backed by %s", L->r->loop, L->o->image);
	return 0;
}
