// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Step 5 of publish.c's order: the side files and temporaries no kept
 * manifest names, removed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/msg.h"
#include "format/cindex.h"
#include "format/manifest.h"
#include "lib/hex.h"
#include "publish/publish.h"
#include "publish/publishint.h"

bool publish_is_stale_temp(const char *base, const char *manifest, const char *name)
{
	size_t n = strlen(name), b = strlen(base), m = strlen(manifest);

	if (n < 10 || name[0] != '.' || name[n - 9] != '.' || !hex_lower(name + n - 8, 8))
		return false;
	if (n - 10 == m && !strncmp(name + 1, manifest, m))
		return true;
	if (n - 10 != b + strlen(PUBLISH_HASH_SUFFIX) + PUBLISH_HASH_HEX &&
	    n - 10 != b + strlen(PUBLISH_CINDEX_SUFFIX) + PUBLISH_HASH_HEX &&
	    n - 10 != b + strlen(PUBLISH_IMAGE_SUFFIX) + PUBLISH_HASH_HEX &&
	    n - 10 != b + strlen(PUBLISH_DELTA_SUFFIX) + PUBLISH_HASH_HEX)
		return false;
	{
		char inner[NAME_MAX + 1];

		snprintf(inner, sizeof(inner), "%.*s", (int)(n - 10), name + 1);
		return publish_is_hash_name(base, inner) || publish_is_cindex_name(base, inner) ||
		       publish_is_image_name(base, inner) || publish_is_delta_name(base, inner);
	}
}

bool publish_kept(const char *const keep[SWEEP_KEEP], const char *name)
{
	size_t i;

	for (i = 0; i < SWEEP_KEEP; i++)
		if (keep[i] && !strcmp(keep[i], name))
			return true;
	return false;
}

void publish_keep_named(const struct manifest *m, bool have, const char **keep)
{
	keep[0] = have && m->verity_root[0] ? m->verity_hash : NULL;
	keep[1] = have && m->cindex[0] ? m->cindex : NULL;
	keep[2] = have && m->image[0] ? m->image : NULL;
	keep[3] = have && m->delta[0] ? m->delta : NULL;
}

DIR *publish_sweep_open(int dirfd, const char *prefix, const char *base, const char *what)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;

	if (!dir) {
		if (fd >= 0)
			(void)close(fd);
		rb_warn("cannot list the directory of %s%s: %s stay", prefix, base, what);
	}
	return dir;
}

void publish_sweep_close(DIR *dir, int dirfd, const char *prefix, bool removed)
{
	(void)closedir(dir);
	if (removed && fsync(dirfd) < 0)
		rb_warn("%s: directory fsync failed: %s", prefix[0] ? prefix : ".", strerror(errno));
}

void publish_sweep(int dirfd, const char *prefix, const char *base, const char *manifest,
		   const char *const keep[SWEEP_KEEP], bool keep_all)
{
	struct dirent *d;
	DIR *dir = publish_sweep_open(dirfd, prefix, base, "older hash files");
	bool removed = false;

	if (!dir)
		return;
	while ((d = readdir(dir))) {
		bool tmp = publish_is_stale_temp(base, manifest, d->d_name);

		if (!tmp && (keep_all || (!publish_is_hash_name(base, d->d_name) &&
					      !publish_is_cindex_name(base, d->d_name) &&
					      !publish_is_delta_name(base, d->d_name)) ||
			     publish_kept(keep, d->d_name)))
			continue;
		if (unlinkat(dirfd, d->d_name, 0) < 0) {
			rb_warn("%s%s: cannot remove: %s", prefix, d->d_name, strerror(errno));
			continue;
		}
		removed = true;
		if (!tmp)
			printf("removed %s%s\n", prefix, d->d_name);
	}
	publish_sweep_close(dir, dirfd, prefix, removed);
}
