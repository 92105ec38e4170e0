// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/ramboot.h"

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
