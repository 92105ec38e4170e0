// SPDX-License-Identifier: GPL-2.0-or-later
/* The source of an image: see source.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/msg.h"
#include "dev/blkdev.h"
#include "source/source.h"

bool source_is_url(const char *name)
{
	return name && !strncasecmp(name, "http://", 7);
}

int source_open(struct source *s, const struct source_spec *sp, char *err, size_t errlen)
{
	const char *name = sp->name;
	int rc;

	memset(s, 0, sizeof(*s));
	s->name = name;
	s->fd = -1;
	if (sp->udpcast) {
		/* udp-receiver's stdout: read like stdin. */
		s->kind = SRC_UDPCAST;
		rc = udpcast_rx_start(&s->rx, sp->udpcast, &s->fd, err, errlen);
		if (rc < 0)
			return rc;
	} else if (sp->http) {
		/* The body of a GET, on its socket; ranged reads use a
		 * connection of their own. */
		s->kind = SRC_HTTP;
		s->http = malloc(sizeof(*s->http));
		if (!s->http)
			return rb_errfmt(err, errlen, -ENOMEM, "%s: %s", name, strerror(ENOMEM));
		rc = http_init(s->http, name, sp->timeout_ms, err, errlen);
		if (rc < 0 || (rc = http_stream_open(s->http, &s->fd, err, errlen)) < 0) {
			free(s->http);
			s->http = NULL;
			return rc;
		}
		s->size = s->http->size;
	} else if (sp->fd >= 0) {
		s->fd = fcntl(sp->fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	} else {
		/* O_NONBLOCK: opening a FIFO must not wait for a writer; it
		 * is cleared again below, reads block as usual. */
		s->fd = open(name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (s->fd >= 0)
			(void)fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) & ~O_NONBLOCK);
	}
	if (s->fd < 0 || fstat(s->fd, &s->st) < 0)
		return rb_errfmt(err, errlen, -errno, "%s: %s", name, strerror(errno));
	if (S_ISREG(s->st.st_mode)) {
		s->size = (uint64_t)s->st.st_size;
	} else if (S_ISBLK(s->st.st_mode)) {
		rc = blk_size(s->fd, &s->size);
		if (rc < 0)
			return rb_errfmt(err, errlen, rc, "%s: %s", name, strerror(-rc));
		s->kind = SRC_BLOCK;
	} else if (sp->seekable) {
		return rb_errfmt(err, errlen, -EINVAL, "%s: not a regular file or a block device",
				 name);
	} else if (S_ISDIR(s->st.st_mode)) {
		return rb_errfmt(err, errlen, -EISDIR, "%s: is a directory", name);
	} else if (s->kind == SRC_FILE) {
		s->kind = SRC_PIPE;
	}
	s->seekable = s->kind == SRC_FILE || s->kind == SRC_BLOCK;
	return 0;
}

ssize_t source_pread(const struct source *s, void *buf, size_t len, uint64_t off)
{
	if (s->kind == SRC_HTTP) {
		char err[512];
		ssize_t n = http_pread(s->http, buf, len, off, err, sizeof(err));

		if (n < 0)
			rb_err("%s", err);
		return n;
	}
	if (!s->seekable)
		return -ESPIPE;
	return pread_full(s->fd, buf, len, (off_t)off);
}

ssize_t source_read(struct source *s, void *buf, size_t len)
{
	for (;;) {
		ssize_t n = read(s->fd, buf, len);

		if (n >= 0)
			return n;
		if (errno == EAGAIN && s->kind == SRC_HTTP)
			return -ETIMEDOUT;     /* SO_RCVTIMEO */
		if (errno != EINTR)
			return -errno;
	}
}

int source_end(struct source *s, char *err, size_t errlen)
{
	struct stat st;

	/* The stream ended: complete only if udp-receiver says so. */
	if (s->kind == SRC_UDPCAST)
		return udpcast_rx_end(&s->rx, err, errlen);
	if (s->kind == SRC_HTTP)
		return http_stream_end(s->http, s->fd, err, errlen);
	/* An image replaced on the server while it was read. */
	if (s->kind != SRC_FILE || fstat(s->fd, &st) < 0)
		return 0;
	if (st.st_size != s->st.st_size || st.st_mtim.tv_sec != s->st.st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != s->st.st_mtim.tv_nsec)
		return rb_errfmt(err, errlen, -ESTALE, "%s: source changed while being read",
				 s->name);
	return 0;
}

int source_close(struct source *s)
{
	int rc = 0;

	if (s->fd >= 0)
		rc = close_checked(s->fd);
	s->fd = -1;
	if (s->kind == SRC_UDPCAST)
		udpcast_rx_stop(&s->rx);
	if (s->http) {
		int hr = http_close(s->http);

		rc = rc < 0 ? rc : hr;
		free(s->http);
		s->http = NULL;
	}
	return rc;
}

enum run_err source_verdict(int rc)
{
	return rc == -ESTALE ? RUN_CHANGED : rc < 0 ? RUN_SOURCE : RUN_OK;
}
