// SPDX-License-Identifier: GPL-2.0-or-later
/* I/O on descriptors (fdio.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/msg.h"

/* The loop of read_full (off < 0) and pread_full. */
static ssize_t read_loop(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = off < 0 ? read(fd, (char *)buf + done, len - done) :
			    pread(fd, (char *)buf + done, len - done, off + (off_t)done);

		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

ssize_t read_full(int fd, void *buf, size_t len)
{
	return read_loop(fd, buf, len, -1);
}

ssize_t pread_full(int fd, void *buf, size_t len, off_t off)
{
	return off < 0 ? -EINVAL : read_loop(fd, buf, len, off);
}

/* The loop of write_all (off < 0) and pwrite_full. */
static int write_loop(int fd, const void *buf, size_t len, off_t off)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = off < 0 ? write(fd, p, len) : pwrite(fd, p, len, off);

		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		if (off >= 0)
			off += n;
	}
	return 0;
}

int write_all(int fd, const void *buf, size_t len)
{
	return write_loop(fd, buf, len, -1);
}

int pwrite_full(int fd, const void *buf, size_t len, off_t off)
{
	return off < 0 ? -EINVAL : write_loop(fd, buf, len, off);
}

int open_stat(const char *path, struct stat *st, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return rb_errfmt(err, errlen, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, st) < 0) {
		rc = rb_errfmt(err, errlen, -errno, "%s: %s", path, strerror(errno));
		(void)close(fd);   /* read-only: nothing to flush */
		return rc;
	}
	return fd;
}

int close_checked(int fd)
{
	/* Linux closes the descriptor even when close() fails with EINTR:
	 * never retry, but report the error (NFS reports write-back
	 * failures here). */
	if (close(fd) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

ssize_t pread_text(int fd, char *buf, size_t len)
{
	ssize_t n;

	if (fd < 0)
		return -EBADF;
	n = pread_full(fd, buf, len - 1, 0);
	if (n < 0)
		return n;
	buf[n] = '\0';
	return n;
}

void close_fd(int *fd)
{
	if (*fd >= 0)
		(void)close(*fd);
	*fd = -1;
}

void close_fds(int *const fds[], size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		close_fd(fds[i]);
}
