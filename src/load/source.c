// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The source of a load: a file, a block device or a pipe. Before anything
 * is written, its format and the size of the image are learnt from its
 * first and last bytes where it can be read twice.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "load/loadint.h"
#include "format/squashfs.h"
#include "udpcast/udpcast.h"
#include "dev/blkdev.h"

int source_open(struct run *u)
{
	const char *path = u->o->source;
	struct source *s = &u->src;
	int rc;

	if (udpcast_source_armed()) {
		char err[200];

		/* udp-receiver's stdout: read like stdin. */
		rc = udpcast_source_open(&s->fd, err, sizeof(err));
		if (rc < 0)
			return load_fail(u, LOAD_SOURCE, "%s", err);
	} else if (u->o->source_is_fd) {
		s->fd = fcntl(u->o->source_fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
		if (s->fd < 0)
			return load_fail(u, LOAD_SOURCE, "%s: %s", path, strerror(errno));
	} else if (!strcmp(path, "-")) {
		s->fd = STDIN_FILENO;
	} else {
		/* O_NONBLOCK: opening a FIFO must not wait for a writer; it
		 * is cleared again below, reads block as usual. */
		s->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (s->fd < 0)
			return load_fail(u, LOAD_SOURCE, "%s: %s", path, strerror(errno));
		(void)fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) & ~O_NONBLOCK);
	}
	if (fstat(s->fd, &s->st) < 0)
		return load_fail(u, LOAD_SOURCE, "%s: %s", path, strerror(errno));
	if (S_ISREG(s->st.st_mode)) {
		s->seekable = true;
		s->size = (uint64_t)s->st.st_size;
	} else if (S_ISBLK(s->st.st_mode)) {
		rc = blk_size(s->fd, &s->size);
		if (rc < 0)
			return load_fail(u, LOAD_SOURCE, "%s: %s", path, strerror(-rc));
		s->seekable = true;
	} else if (S_ISDIR(s->st.st_mode)) {
		return load_fail(u, LOAD_SOURCE, "%s: is a directory", path);
	}
	if (s->seekable)
		(void)posix_fadvise(s->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return 0;
}

/* Format and output size, from a seekable source's first and last bytes. */
int source_probe(struct run *u)
{
	struct source *s = &u->src;
	uint8_t head[SQUASHFS_SB_MIN];
	ssize_t n = 0;
	int exact = 0;

	if (s->seekable) {
		n = pread_full(s->fd, head, sizeof(head), 0);
		if (n < 0)
			return load_fail(u, LOAD_SOURCE, "%s: %s", u->o->source, strerror((int)-n));
	}
	if (strcmp(u->o->decompress, "auto"))
		s->codec = codec_by_name(u->o->decompress);
	else if (s->seekable)
		s->codec = codec_detect(head, (size_t)n);
	if (!s->seekable)
		return 0;      /* a pipe: detected from the first chunk later */

	if (s->codec == &codec_none) {
		uint64_t used;

		s->estimate = s->size;
		s->estimate_exact = true;
		/* A raw squashfs says how long it is: a shorter file is a
		 * truncated image; on a block device only what it uses is
		 * copied (rounded up to the 4 KiB it is padded to). */
		if (squashfs_bytes_used(head, (size_t)n, &used) == 0) {
			uint64_t padded = (used + 4095) & ~4095ULL;

			if (used > s->size)
				return load_fail(u, LOAD_FSTYPE, "%s: truncated squashfs: %llu of "
						 "%llu bytes", u->o->source,
						 (unsigned long long)s->size,
						 (unsigned long long)used);
			if (S_ISBLK(s->st.st_mode) && padded < s->size)
				s->size = s->estimate = padded;
		}
	} else if (s->codec && s->codec->content_size &&
		   s->codec->content_size(s->fd, s->size, &s->estimate, &exact) == 0) {
		s->estimate_exact = exact;
	}
	return 0;
}

/* The source must not have changed while it was read (an image replaced
 * on the server): same size and mtime as when opened. */
int source_unchanged(struct run *u)
{
	const struct source *s = &u->src;
	struct stat st;

	if (udpcast_source_armed()) {
		char err[200];

		/* The stream ended: complete only if udp-receiver says so. */
		if (udpcast_source_end(err, sizeof(err)) < 0)
			return load_fail(u, LOAD_SOURCE, "%s", err);
		return 0;
	}
	if (!S_ISREG(s->st.st_mode) || fstat(s->fd, &st) < 0)
		return 0;
	if (st.st_size != s->st.st_size || st.st_mtim.tv_sec != s->st.st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != s->st.st_mtim.tv_nsec)
		return load_fail(u, LOAD_CHANGED, "%s: source changed while being read",
				 u->o->source);
	return 0;
}

void source_close(struct run *u)
{
	if (u->src.fd > STDIN_FILENO)
		(void)close(u->src.fd);
	u->src.fd = -1;
	udpcast_source_close();
}
