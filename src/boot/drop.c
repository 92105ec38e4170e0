// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `ramboot boot --drop=PATH --reason=TEXT`, for the hooks.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/base.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "lib/report.h"
#include "lib/text.h"
#include "boot/drop.h"
#include "boot/modes.h"
#include "dev/loopdev.h"
#include "trust/vboot.h"

/* The cache's slot on its loop device (/dev/loopN), kept until now. */
static void drop_slot(const char *dev)
{
	const char *name = strrchr(dev, '/');
	int rc = loopdev_detach(name ? name + 1 : dev);

	if (rc < 0)
		rb_warn("%s: %s", dev, strerror(-rc));
}

/*
 * --drop=PATH --reason=TEXT: a hook did not take the RAM copy that this
 * boot announced (it did not mount, or the output was unusable). Free
 * the copy if it is ours (the report's ram_path, or inside our tmpfs)
 * and record the fallback in the report, so that the report and the
 * running system agree. Always 0: a hook must go on booting.
 */
int boot_drop(const char *path, const char *reason)
{
	char rundir[PATH_MAX], ram[PATH_MAX + 8], clean[256], verity[16], cimg[64];
	char *text, *copy, *vdev;
	struct report_set set[7];
	size_t n = 0;
	bool ours;
	int dfd, rc;

	if (rb_path(rundir, sizeof(rundir), REPORT_DIR) < 0)
		return RB_EXIT_OK;
	(void)report_mkdir(rundir);
	snprintf(ram, sizeof(ram), "%s/ram/", rundir);
	text = calloc(1, REPORT_AMEND_MAX + 1);
	copy = malloc(PATH_MAX);
	vdev = malloc(PATH_MAX);
	if (!text || !copy || !vdev)
		goto out;
	/* What this boot made, as its report says (a key written twice is
	 * none: it cannot be trusted). */
	if (rb_read_regular(REPORT_DIR "/report", text, REPORT_AMEND_MAX + 1) < 0)
		text[0] = '\0';
	rc = report_text_get(text, key_name(RK_RAM_PATH), copy, PATH_MAX);
	if (rc != 1)
		copy[0] = '\0';
	ours = rc == 1 && !strcmp(copy, path);
	if (report_text_get(text, key_name(RK_VERITY_DEVICE), vdev, PATH_MAX) != 1)
		vdev[0] = '\0';
	if (report_text_get(text, key_name(RK_VERITY), verity, sizeof(verity)) != 1)
		verity[0] = '\0';
	/* The cache's slot, on a loop device that stays until detached. */
	if (report_text_get(text, key_name(RK_CACHE_IMAGE), cimg, sizeof(cimg)) != 1)
		cimg[0] = '\0';
	if (*path && !strcmp(vdev, path)) {
		/* The mapping goes first (it holds the copy open), then the
		 * copy under it, if any. */
		char err[256];

		if (vboot_unmap(rundir, err, sizeof(err)) < 0)
			rb_warn("%s", err);
		if (copy[0])
			drop_copy(rundir, copy);
		if (cimg[0])
			drop_slot(cimg);
	} else if (cimg[0] && !strcmp(path, cimg)) {
		drop_slot(cimg);
	} else if (ours || !strncmp(path, ram, strlen(ram))) {
		drop_copy(rundir, path);
	} else {
		rb_warn("%s: not the RAM copy of this boot; left alone", path);
	}
	text_scrub(clean, sizeof(clean), reason, SIZE_MAX, ' ');
	rb_warn("%s; booting from the network image", clean);
	if (!strcmp(verity, "on")) {
		set[n++] = (struct report_set){ RK_VERITY, "failed" };
		set[n++] = (struct report_set){ RK_VERITY_DEVICE, "" };
	}
	if (cimg[0]) {
		set[n++] = (struct report_set){ RK_CACHE, "fallback" };
		set[n++] = (struct report_set){ RK_CACHE_IMAGE, "" };
	}
	set[n++] = (struct report_set){ RK_MODE_DONE, "off" };
	set[n++] = (struct report_set){ RK_RAM_PATH, "" };
	set[n++] = (struct report_set){ RK_FALLBACK, clean };
	dfd = open(rundir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	rc = dfd < 0 ? -errno : report_amend_at(dfd, set, n, REPORT_AMEND_CREATE);
	if (dfd >= 0)
		(void)close(dfd);
	if (rc < 0)
		rb_warn("%s/report: %s", rundir, strerror(-rc));
out:
	free(vdev);
	free(copy);
	free(text);
	return RB_EXIT_OK;
}
