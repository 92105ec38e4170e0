// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: delta_apply() (codec/delta.h) of arbitrary bytes as
 * the delta, against a fixed 64 KiB older image (a delta comes from the
 * server, whom a cache trusts only after the result verifies). The
 * delta's SHA-256 is that of the input, so the input reaches the decoder
 * and its framing checks. Besides the sanitizers, it checks that a
 * failure is -errno with a NUL-terminated reason, and that a success
 * rebuilt exactly the frame's content size. See docs/fuzzing.md.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "codec/delta.h"
#include "lib/sha256.h"

#define OLD_LEN 65536
#define NEW_MAX (1024 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The older image: the bytes fuzz/run.sh makes its seeds against. */
static int old_image(void)
{
	static uint8_t old[OLD_LEN];
	int fd = memfd_create("old", MFD_CLOEXEC);
	size_t i;

	for (i = 0; i < OLD_LEN; i++)
		old[i] = (uint8_t)((i * 7 + i / 251) & 0xff);
	if (fd < 0 || write(fd, old, OLD_LEN) != OLD_LEN)
		abort();
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ofd = -1;
	unsigned long long fcs;
	uint8_t sum[32];
	char err[256];
	int dfd, nfd, rc;

	if (ofd < 0)
		ofd = old_image();
	fcs = ZSTD_getFrameContentSize(data, size);
	if (fcs == 0 || fcs > NEW_MAX)
		return 0;
	dfd = memfd_create("delta", MFD_CLOEXEC);
	nfd = memfd_create("new", MFD_CLOEXEC);
	if (dfd < 0 || nfd < 0 || (size && write(dfd, data, size) != (ssize_t)size) ||
	    lseek(dfd, 0, SEEK_SET) < 0 || ftruncate(nfd, (off_t)fcs) < 0)
		abort();
	sha256(data, size, sum);
	memset(err, 'x', sizeof(err));
	rc = delta_apply(ofd, OLD_LEN, dfd, size, sum, nfd, fcs, err, sizeof(err));
	if (rc > 0 || (rc < 0 && (!memchr(err, '\0', sizeof(err)) || !err[0])))
		abort();
	if (rc == 0 && lseek(nfd, 0, SEEK_END) != (off_t)fcs)
		abort();
	close(dfd);
	close(nfd);
	return 0;
}
