// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The switch: the loop device moves onto the verified copy.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lazy/lazyint.h"
#include "dev/loopdev.h"
#include "lib/clock.h"
#include "lib/fdio.h"

int lazy_switch(struct lazy *L)
{
	int new_fd = -1, rc;

	/* The copy is complete and verified: it may have its name now. */
	if (L->have_of) {
		rc = outfile_commit(&L->of);
		L->have_of = false;
		L->copy_fd = -1;
		L->cp->copy_fd = -1;
		if (rc < 0)
			return lazy_fail(L, LAZY_DEST, "%s: %s", L->r->copy, strerror(-rc));
		L->named = true;         /* of.name keeps the name, for undo */
		new_fd = openat(L->tmpfs_fd, L->of.name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (new_fd < 0)
			return lazy_fail(L, LAZY_DEST, "%s: %s", L->r->copy, strerror(errno));
	} else {
		if (fsync(L->copy_fd) < 0)
			return lazy_fail(L, LAZY_DEST, "%s: %s", L->r->copy, strerror(errno));
		close_fd(&L->copy_fd);
		L->cp->copy_fd = -1;
		new_fd = L->zram_ro_fd;
		L->zram_ro_fd = -1;
	}
	/* The mount may have changed since the start: the loop device must
	 * still be the image's, and read-only (loopdev_switch checks). */
	rc = loopdev_switch(L->loop_fd, &L->img_st, new_fd);
	(void)close(new_fd);
	if (rc == -ESTALE || rc == -EPERM || rc == -ENXIO)
		return lazy_fail(L, LAZY_LOOP, "%s: %s since the copy started", L->r->loop,
				 rc == -EPERM ? "no longer read-only" : "no longer backed by the image");
	if (rc < 0)
		return lazy_fail(L, LAZY_SWITCH, "%s: LOOP_CHANGE_FD: %s", L->r->loop, strerror(-rc));
	L->r->switched = boot_sec();
	/* Nobody reads the network image here any more: drop its pages. */
	(void)posix_fadvise(L->img_fd, 0, 0, POSIX_FADV_DONTNEED);
	close_fd(&L->img_fd);
	return 0;
}
