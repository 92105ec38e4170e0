// SPDX-License-Identifier: GPL-2.0-or-later
/* lib/fdio.c: the read and write loops and open_stat(). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "lib/base.h"
#include "lib/fdio.h"

static char dir[] = "/tmp/rb-test-fdio-XXXXXX";

static void test_io(void)
{
	char path[64], buf[16];
	int fd;

	snprintf(path, sizeof(path), "%s/io", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK_EQ_INT(write_all(fd, "abcdef", 6), 0);
	CHECK_EQ_INT(pwrite_full(fd, "XY", 2, 2), 0);
	/* pwrite leaves the file offset where write_all put it */
	CHECK_EQ_INT(write_all(fd, "gh", 2), 0);
	CHECK_EQ_INT((int)pread_full(fd, buf, sizeof(buf), 0), 8);
	CHECK(memcmp(buf, "abXYefgh", 8) == 0);
	CHECK_EQ_INT((int)pread_full(fd, buf, 3, 6), 2);
	CHECK_EQ_INT((int)pread_full(fd, buf, 3, -1), -EINVAL);
	CHECK_EQ_INT(pwrite_full(fd, "z", 1, -1), -EINVAL);
	CHECK(lseek(fd, 1, SEEK_SET) == 1);
	CHECK_EQ_INT((int)read_full(fd, buf, sizeof(buf)), 7);
	CHECK(memcmp(buf, "bXYefgh", 7) == 0);
	CHECK_EQ_INT(pwrite_full(-1, "z", 1, 0), -EBADF);
	close(fd);
}

static void test_open_stat(void)
{
	char path[64], err[128];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/io", dir);
	fd = open_stat(path, &st, err, sizeof(err));
	CHECK(fd >= 0);
	CHECK_EQ_INT((int)st.st_size, 8);
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	snprintf(path, sizeof(path), "%s/none", dir);
	CHECK_EQ_INT(open_stat(path, &st, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, "/none: No such file or directory") != NULL);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	RUN(test_io);
	RUN(test_open_stat);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			return 1;
	}
	return TAP_DONE();
}
