// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The names of a published image's side files, and the files written
 * into its directory (publish.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/msg.h"
#include "format/cindex.h"
#include "format/manifest.h"
#include "lib/hex.h"
#include "lib/outfile.h"
#include "publish/publish.h"

/* IMAGE + suffix + PUBLISH_HASH_HEX lower-case hex digits. */
static bool is_side_name(const char *image_name, const char *suffix, const char *name)
{
	size_t b = strlen(image_name), s = strlen(suffix);

	return strlen(name) == b + s + PUBLISH_HASH_HEX && !strncmp(name, image_name, b) &&
	       !strncmp(name + b, suffix, s) && hex_lower(name + b + s, PUBLISH_HASH_HEX);
}

bool publish_is_hash_name(const char *image_name, const char *name)
{
	return is_side_name(image_name, PUBLISH_HASH_SUFFIX, name);
}

bool publish_is_cindex_name(const char *image_name, const char *name)
{
	return is_side_name(image_name, PUBLISH_CINDEX_SUFFIX, name);
}

bool publish_is_delta_name(const char *image_name, const char *name)
{
	return is_side_name(image_name, PUBLISH_DELTA_SUFFIX, name);
}

bool publish_is_image_name(const char *image_name, const char *name)
{
	return is_side_name(image_name, PUBLISH_IMAGE_SUFFIX, name);
}

int publish_dir_open(const char *image, const char **base)
{
	const char *slash = strrchr(image, '/');
	char dir[PATH_MAX];
	int fd;

	*base = slash ? slash + 1 : image;
	if (!**base)
		return -EISDIR;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == image)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - image) >= sizeof(dir))
		return -ENAMETOOLONG;
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - image), image);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int publish_hash_name(const char *image, const char *arg, char *out, size_t outlen,
		      char *err, size_t errlen)
{
	return publish_side_name(image, "--verity", arg, out, outlen, err, errlen);
}

int publish_side_name(const char *image, const char *opt, const char *arg, char *out,
		      size_t outlen, char *err, size_t errlen)
{
	const char *slash = strrchr(arg, '/'), *name = slash ? slash + 1 : arg, *base;
	struct stat a, b;
	int ifd, afd;

	if (!*name || !strcmp(name, ".") || !strcmp(name, "..") ||
	    strlen(name) > MANIFEST_NAME_MAX || strlen(name) >= outlen)
		return rb_errfmt(err, errlen, -EINVAL, "%s: '%s' is not a file name", opt, arg);
	if (slash) {
		/* A path: its directory must be the image's, the hash file is
		 * found beside the image by its name alone. */
		char dir[PATH_MAX];

		if (slash == arg)
			snprintf(dir, sizeof(dir), "/");
		else
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - arg), arg);
		ifd = publish_dir_open(image, &base);
		if (ifd < 0)
			return rb_errfmt(err, errlen, ifd, "%s: cannot open its directory", image);
		afd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (afd < 0 || fstat(ifd, &a) < 0 || fstat(afd, &b) < 0 ||
		    a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
			if (afd >= 0)
				(void)close(afd);
			(void)close(ifd);
			return rb_errfmt(err, errlen, -EINVAL, "%s: '%s' is not in the "
					 "directory of %s (the manifest names the file beside "
					 "the image)", opt, arg, image);
		}
		(void)close(afd);
		(void)close(ifd);
	}
	snprintf(out, outlen, "%s", name);
	return 0;
}

int publish_fill_at(int dirfd, const char *name, bool replace, const struct stat *protect,
		    int (*fill)(int fd, void *arg), void *arg, const char *what, char *err,
		    size_t errlen)
{
	struct outfile of;
	int rc;

	rc = outfile_openat(&of, dirfd, name, 0644, OUTFILE_SYNC | (replace ? OUTFILE_REPLACE : 0),
			    protect, err, errlen);
	if (rc < 0)
		return rc;
	rc = fill(of.fd, arg);
	if (rc < 0) {
		outfile_abort(&of);
		return rb_errfmt(err, errlen, rc, "%s: %s%s", name, what, strerror(-rc));
	}
	rc = outfile_commit(&of);
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "%s: %s", name, strerror(-rc));
	return 0;
}

struct buf_fill {
	const void *buf;
	size_t len;
};

static int buf_fill(int fd, void *arg)
{
	const struct buf_fill *b = arg;

	return write_all(fd, b->buf, b->len);
}

int publish_write_at(int dirfd, const char *name, const void *buf, size_t len, bool replace,
		     const struct stat *protect, char *err, size_t errlen)
{
	struct buf_fill b = { buf, len };

	return publish_fill_at(dirfd, name, replace, protect, buf_fill, &b, "write error: ", err,
			       errlen);
}

void publish_made_free(struct publish_made *mk)
{
	free(mk->text);
	free(mk->tree);
	free(mk->cindex);
	free(mk->delta);
	mk->text = NULL;
	mk->tree = NULL;
	mk->cindex = NULL;
	mk->delta = NULL;
	manifest_free(&mk->m);
}

/* --verity and --cindex, before a byte is hashed: the tree and the index
 * cover what a client maps, so the file must be that image itself. */
