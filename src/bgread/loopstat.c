// SPDX-License-Identifier: GPL-2.0-or-later
/* The loop device's counters (loopstat.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bgread/loopstat.h"
#include "dev/loopdev.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/path.h"

int bgread_parse_inflight(const char *s, uint64_t *reads)
{
	unsigned long long r, w;

	if (sscanf(s, " %llu %llu", &r, &w) != 2)
		return -EINVAL;
	*reads = r;
	return 0;
}

int bgread_parse_stat(const char *s, uint64_t *reads_done)
{
	unsigned long long r;
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	r = strtoull(s, &end, 10);
	if (errno || (*end != ' ' && *end != '\t' && *end != '\n' && *end != '\0'))
		return -EINVAL;
	*reads_done = r;
	return 0;
}

void bgread_loop_init(struct bgread_loop *lp)
{
	lp->name[0] = '\0';
	lp->inflight_fd = lp->stat_fd = -1;
}

static int open_attr(int dirfd, const char *name, const char *attr)
{
	char p[PATH_MAX];

	if (dirfd >= 0) {
		snprintf(p, sizeof(p), "%s/%s", name, attr);
		return openat(dirfd, p, O_RDONLY | O_CLOEXEC);
	}
	if (rb_path(p, sizeof(p), "/sys/block/%s/%s", name, attr) < 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return open(p, O_RDONLY | O_CLOEXEC);
}

int bgread_loop_open(struct bgread_loop *lp, int dirfd, const char *name)
{
	int e;

	snprintf(lp->name, sizeof(lp->name), "%s", name);
	lp->inflight_fd = open_attr(dirfd, name, "inflight");
	e = errno;
	/* Optional: without it, only reads in flight tell the boot reads. */
	lp->stat_fd = open_attr(dirfd, name, "stat");
	if (lp->inflight_fd < 0) {
		errno = e;
		return -e;
	}
	return 0;
}

int bgread_loop_find(struct bgread_loop *lp, const char *path, const struct stat *st, char *err,
		     size_t errlen)
{
	char name[64] = "";
	int rc = loopdev_find(path, st, name, sizeof(name), err, errlen);

	if (rc == -ENOENT || !name[0])
		return rc < 0 ? rc : -ENOENT;
	/* Several: the first one's reads stand for the boot's. */
	if (rc < 0)
		rb_debug("%s", err);
	rc = bgread_loop_open(lp, -1, name);
	if (rc < 0)
		snprintf(err, errlen, "/sys/block/%s/inflight: %s", name, strerror(-rc));
	return rc;
}

bool bgread_loop_read(const struct bgread_loop *lp, uint64_t *inflight, uint64_t *done)
{
	char buf[256];

	if (pread_text(lp->inflight_fd, buf, sizeof(buf)) <= 0 ||
	    bgread_parse_inflight(buf, inflight) < 0)
		*inflight = 0;
	return pread_text(lp->stat_fd, buf, sizeof(buf)) > 0 && bgread_parse_stat(buf, done) == 0;
}

void bgread_loop_close(struct bgread_loop *lp)
{
	close_fd(&lp->inflight_fd);
	close_fd(&lp->stat_fd);
}
