// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The state of an image in the cache: read (and checked, with the active
 * slot's chunk index), committed atomically, and reported (cache_status).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/outfile.h"
#include "lib/sha256.h"
#include "cache/cache.h"
#include "cache/cacheint.h"

void cache_slot_name(int i, const char *suffix, char *out, size_t len)
{
	snprintf(out, len, "%c%s", cstate_slot_name(i), suffix ? suffix : "");
}

int cache_read_at(int dirfd, const char *name, size_t max, char **buf, size_t *len, char *err,
		  size_t errlen)
{
	struct stat st;
	ssize_t n;
	char *b;
	int fd, rc;

	*buf = NULL;
	*len = 0;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		if (rc == -ELOOP)
			return rb_errfmt(err, errlen, rc, "%s: is a symbolic link; not read", name);
		return rb_errfmt(err, errlen, rc, "%s: %s", name, strerror(-rc));
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		(void)close(fd);
		return rb_errfmt(err, errlen, -EINVAL, "%s: not a regular file", name);
	}
	if ((uint64_t)st.st_size > max) {
		(void)close(fd);
		return rb_errfmt(err, errlen, -EFBIG, "%s: larger than %zu bytes", name, max);
	}
	b = malloc((size_t)st.st_size + 1);
	if (!b) {
		(void)close(fd);
		return rb_errfmt(err, errlen, -ENOMEM, "out of memory");
	}
	n = read_full(fd, b, (size_t)st.st_size + 1);
	rc = close_checked(fd);
	if (n < 0 || rc < 0) {
		free(b);
		rc = n < 0 ? (int)n : rc;
		return rb_errfmt(err, errlen, rc, "%s: %s", name, strerror(-rc));
	}
	if ((size_t)n > max) {
		free(b);
		return rb_errfmt(err, errlen, -EFBIG, "%s: larger than %zu bytes", name, max);
	}
	*buf = b;
	*len = (size_t)n;
	return 0;
}

int cache_state_read(int dirfd, struct cstate *s, struct cindex *ci, char *err, size_t errlen)
{
	char why[256], name[16];
	uint8_t sum[32];
	char *buf;
	size_t len;
	int rc;

	memset(s, 0, sizeof(*s));
	s->active = -1;
	if (ci)
		memset(ci, 0, sizeof(*ci));
	rc = cache_read_at(dirfd, CACHE_STATE, CSTATE_MAX, &buf, &len, err, errlen);
	if (rc == -ENOENT)
		return rc;
	if (rc < 0)
		return rc == -EFBIG ? -EINVAL : rc;
	rc = cstate_parse(buf, len, s, why, sizeof(why));
	free(buf);
	if (rc < 0)
		return rb_errfmt(err, errlen, -EINVAL, "%s: %s", CACHE_STATE, why);
	if (!ci || s->active < 0)
		return 0;
	/* The active slot's chunk index: the one the state names. */
	cache_slot_name(s->active, ".cindex", name, sizeof(name));
	rc = cache_read_at(dirfd, name, cindex_text_max(CINDEX_CHUNKS_MAX), &buf, &len, why,
			   sizeof(why));
	if (rc < 0)
		return rb_errfmt(err, errlen, -EINVAL, "%s", why);
	sha256(buf, len, sum);
	if (memcmp(sum, s->slot[s->active].cindex_sha256, 32)) {
		free(buf);
		return rb_errfmt(err, errlen, -EINVAL, "%s: not the index the state names", name);
	}
	rc = cindex_parse(buf, len, ci, why, sizeof(why));
	free(buf);
	if (rc == 0 && ci->size != s->slot[s->active].size) {
		cindex_free(ci);
		rc = -EINVAL;
		snprintf(why, sizeof(why), "size differs from the state's");
	}
	if (rc < 0)
		return rb_errfmt(err, errlen, rc == -ENOMEM ? rc : -EINVAL, "%s: %s", name, why);
	return 0;
}

int cache_state_commit(int dirfd, const struct cstate *s, char *err, size_t errlen)
{
	char text[CSTATE_MAX];
	struct outfile of;
	ssize_t n;
	int rc;

	n = cstate_format(s, text, sizeof(text));
	if (n < 0)
		return rb_errfmt(err, errlen, (int)n, "the state cannot be written: %s",
				 strerror((int)-n));
	rc = outfile_openat(&of, dirfd, CACHE_STATE, 0644, OUTFILE_REPLACE | OUTFILE_SYNC, NULL,
			    err, errlen);
	if (rc < 0)
		return rc;
	rc = outfile_write(&of, text, (size_t)n);
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "%s: cannot commit it: %s", CACHE_STATE,
				 strerror(-rc));
	return 0;
}

int cache_image_dir(struct cache *c, const char *name, bool create, int *dirfd, char *err,
		    size_t errlen)
{
	int images, rc = 0;

	*dirfd = -1;
	if (!*name || name[0] == '.' || strchr(name, '/') || strlen(name) > NAME_MAX ||
	    strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-") !=
	    strlen(name))
		return rb_errfmt(err, errlen, -EINVAL, "image name '%s': one file name of A-Z a-z "
				 "0-9 . _ + -, not starting with a dot", name);
	images = openat(c->root, CACHE_IMAGES, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (images < 0)
		return rb_errfmt(err, errlen, -errno, "%s: %s/: %s", c->what, CACHE_IMAGES,
				 strerror(errno));
	if (create && mkdirat(images, name, 0755) < 0 && errno != EEXIST)
		rc = -errno;
	if (rc == 0) {
		*dirfd = openat(images, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (*dirfd < 0)
			rc = -errno;
	}
	if (rc == 0 && create && fsync(images) < 0)
		rc = -errno;
	(void)close(images);
	if (rc < 0) {
		if (*dirfd >= 0)
			(void)close(*dirfd);
		*dirfd = -1;
		return rb_errfmt(err, errlen, rc, "%s: %s/%s: %s", c->what, CACHE_IMAGES, name,
				 strerror(-rc));
	}
	return 0;
}

static bool newer(const struct stat *a, const struct stat *b)
{
	return a->st_mtim.tv_sec > b->st_mtim.tv_sec ||
	       (a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec > b->st_mtim.tv_nsec);
}

int cache_image_status(struct cache *c, const char *name, struct cache_image_status *s)
{
	struct stat sst, slot;
	struct cindex ci;
	char slotname[16];
	int dirfd, rc, i;

	memset(s, 0, sizeof(*s));
	s->interrupted = -1;
	snprintf(s->name, sizeof(s->name), "%s", name);
	rc = cache_image_dir(c, name, false, &dirfd, s->why, sizeof(s->why));
	if (rc < 0)
		return rc;
	rc = cache_state_read(dirfd, &s->st, &ci, s->why, sizeof(s->why));
	if (rc == 0) {
		s->health = CACHE_OK;
		cindex_free(&ci);
	} else if (rc == -ENOENT) {
		s->health = CACHE_EMPTY;
		s->why[0] = '\0';
	} else {
		s->health = CACHE_CORRUPT;
	}
	/* A refresh truncates the inactive slot first and commits the state
	 * last: a slot written after the state is a refresh that did not
	 * finish (killed, failed, or running now). */
	if (fstatat(dirfd, CACHE_STATE, &sst, AT_SYMLINK_NOFOLLOW) < 0)
		memset(&sst, 0, sizeof(sst));
	for (i = 0; i < 2; i++) {
		cache_slot_name(i, NULL, slotname, sizeof(slotname));
		if (s->health == CACHE_OK && i == s->st.active)
			continue;
		if (fstatat(dirfd, slotname, &slot, AT_SYMLINK_NOFOLLOW) == 0 && newer(&slot, &sst))
			s->interrupted = i;
	}
	(void)close(dirfd);
	return 0;
}
