// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `ramboot verity format`: an image hashed into its tree, the hash file
 * written aside and renamed into place. The tree itself is
 * format/verity.c's; the image's size and the salt's randomness are
 * asked of the kernel here.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/outfile.h"
#include "dev/blkdev.h"
#include "format/verity.h"
#include "trust/verity_format.h"

static int random_salt(uint8_t *salt, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = getrandom(salt + done, len - done, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		done += (size_t)n;
	}
	return 0;
}

/* Size of the regular file or block device at fd. */
static int data_size(int fd, const struct stat *st, uint64_t *size)
{
	if (S_ISREG(st->st_mode)) {
		*size = (uint64_t)st->st_size;
		return 0;
	}
	if (S_ISBLK(st->st_mode))
		return blk_size(fd, size);
	return -EINVAL;
}

int verity_format(const char *image, const char *hashfile, bool replace,
		  const uint8_t *salt, size_t salt_len, struct verity_params *p,
		  uint8_t root[VERITY_DIGEST], char *err, size_t errlen)
{
	struct outfile of = { .fd = -1 };
	uint8_t *file = NULL;
	struct stat st;
	uint64_t size;
	size_t len;
	int fd, rc;

	memset(p, 0, sizeof(*p));
	if (salt_len > VERITY_SALT_MAX)
		return rb_errfmt(err, errlen, -EINVAL, "salt longer than 256 bytes");
	fd = open_stat(image, &st, err, errlen);
	if (fd < 0)
		return fd;
	rc = data_size(fd, &st, &size);
	if (rc < 0) {
		rc = rb_errfmt(err, errlen, rc, "%s: %s", image, rc == -EINVAL ?
			       "not a regular file or block device" : strerror(-rc));
		goto out;
	}
	if (size == 0 || size % VERITY_BLOCK) {
		rc = rb_errfmt(err, errlen, -EINVAL, "%s: %" PRIu64 " bytes, not a whole number "
			       "of 4096-byte blocks (a tail would be left unverified)", image, size);
		goto out;
	}
	p->data_blocks = size / VERITY_BLOCK;
	if (salt) {
		memcpy(p->salt, salt, salt_len);
		p->salt_len = salt_len;
	} else {
		rc = random_salt(p->salt, VERITY_SALT_DEFAULT);
		if (rc < 0) {
			rc = rb_errfmt(err, errlen, rc, "getrandom: %s", strerror(-rc));
			goto out;
		}
		p->salt_len = VERITY_SALT_DEFAULT;
	}
	rc = verity_build(fd, p, &file, &len, root, err, errlen);
	if (rc < 0)
		goto out;
	/* Opened after the image is read: a failed hash leaves nothing. The
	 * image itself is never the hash file. */
	rc = outfile_open(&of, hashfile, 0644, OUTFILE_SYNC | (replace ? OUTFILE_REPLACE : 0),
			  &st, err, errlen);
	if (rc < 0)
		goto out;
	rc = write_all(of.fd, file, len);
	if (rc < 0) {
		rb_errfmt(err, errlen, rc, "%s: %s", hashfile, strerror(-rc));
		outfile_abort(&of);
		goto out;
	}
	rc = outfile_commit(&of);
	if (rc < 0)
		rb_errfmt(err, errlen, rc, "%s: %s", hashfile, strerror(-rc));
out:
	free(file);
	if (close_checked(fd) < 0 && rc == 0)
		rc = rb_errfmt(err, errlen, -EIO, "%s: close failed", image);
	return rc;
}
