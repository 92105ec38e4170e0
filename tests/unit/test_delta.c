// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Binary deltas (codec/delta.h), under the sanitizers: delta_make() and
 * delta_apply() round trips (an edit, a move, an insertion, an empty
 * older image), the cap (-EFBIG), and every delta that is not the one
 * named refused with a reason: another SHA-256, cut short, a byte more,
 * a frame of another size, an altered byte, another older image.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tap.h"
#include "lib/sha256.h"
#include "codec/delta.h"

#define LEN (300 * 1024)

static uint8_t *old_img, *new_img;
static char err[256];

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

static int memfd_with(const void *p, size_t n)
{
	int fd = memfd_create("t", MFD_CLOEXEC);

	if (fd < 0 || (n && write(fd, p, n) != (ssize_t)n) || lseek(fd, 0, SEEK_SET) < 0)
		abort();
	return fd;
}

/* Apply d[0..dn) to old[0..on) for an image of nn bytes; what it made in
 * *out (malloc'ed, nn bytes) when 0. */
static int apply(const void *old, size_t on, const void *d, size_t dn, const uint8_t sum[32],
		 size_t nn, uint8_t **out)
{
	int ofd = memfd_with(old, on), dfd = memfd_with(d, dn), nfd = memfd_with(NULL, 0), rc;

	if (ftruncate(nfd, (off_t)nn) < 0)
		abort();
	err[0] = '\0';
	rc = delta_apply(ofd, on, dfd, dn, sum, nfd, nn, err, sizeof(err));
	if (rc == 0 && out) {
		*out = malloc(nn);
		if (!*out || pread(nfd, *out, nn, 0) != (ssize_t)nn)
			abort();
	}
	close(ofd);
	close(dfd);
	close(nfd);
	return rc;
}

static void round_trip(const uint8_t *old, size_t on, const uint8_t *nw, size_t nn,
		       size_t max)
{
	uint8_t sum[32], *got = NULL;
	void *d;
	size_t dn;

	CHECK_EQ_INT(delta_make(old, on, nw, nn, nn, &d, &dn, err, sizeof(err)), 0);
	CHECK(dn <= max);
	sha256(d, dn, sum);
	CHECK_EQ_INT(apply(old, on, d, dn, sum, nn, &got), 0);
	CHECK(got && !memcmp(got, nw, nn));
	free(got);
	free(d);
}

static void test_round_trips(void)
{
	/* an edit of 16 bytes */
	memcpy(new_img, old_img, LEN);
	memset(new_img + 100000, 0x5a, 16);
	round_trip(old_img, LEN, new_img, LEN, 400);
	/* the halves swapped */
	memcpy(new_img, old_img + LEN / 2, LEN / 2);
	memcpy(new_img + LEN / 2, old_img, LEN / 2);
	round_trip(old_img, LEN, new_img, LEN, 400);
	/* 4 KiB inserted: the image grows */
	memcpy(new_img, old_img, 1000);
	fill(new_img + 1000, 4096, 9);
	memcpy(new_img + 5096, old_img + 1000, LEN - 5096);
	round_trip(old_img, LEN, new_img, LEN, 4096 + 400);
	/* no older image: the delta is the image, compressed */
	memset(new_img, 'a', LEN);
	round_trip(old_img, 0, new_img, LEN, 1000);
}

static void test_cap(void)
{
	void *d = (void *)1;
	size_t dn = 1;

	fill(new_img, LEN, 77);
	CHECK_EQ_INT(delta_make(old_img, LEN, new_img, LEN, LEN / 2, &d, &dn, err, sizeof(err)),
		     -EFBIG);
	CHECK(d == NULL && dn == 0);
	CHECK(strstr(err, "larger than") != NULL);
}

static void test_refused(void)
{
	uint8_t sum[32], bad[32], *d2;
	void *d;
	size_t dn;
	int rc;

	memcpy(new_img, old_img, LEN);
	memset(new_img + 5000, 1, 3000);
	CHECK_EQ_INT(delta_make(old_img, LEN, new_img, LEN, LEN, &d, &dn, err, sizeof(err)), 0);
	sha256(d, dn, sum);
	/* another SHA-256 */
	memcpy(bad, sum, 32);
	bad[0] ^= 1;
	CHECK_EQ_INT(apply(old_img, LEN, d, dn, bad, LEN, NULL), -EINVAL);
	CHECK(strstr(err, "not the one its manifest names") != NULL);
	/* cut short: its own hash, but the frame does not end */
	sha256(d, dn - 1, bad);
	CHECK_EQ_INT(apply(old_img, LEN, d, dn - 1, bad, LEN, NULL), -EINVAL);
	CHECK(err[0] != '\0');
	/* a byte more, after the frame */
	d2 = malloc(dn + 1);
	if (!d2)
		abort();
	memcpy(d2, d, dn);
	d2[dn] = 0;
	sha256(d2, dn + 1, bad);
	CHECK_EQ_INT(apply(old_img, LEN, d2, dn + 1, bad, LEN, NULL), -EINVAL);
	CHECK(strstr(err, "after its frame") != NULL);
	/* the file longer than the manifest says */
	CHECK_EQ_INT(apply(old_img, LEN, d2, dn + 1, sum, LEN, NULL) < 0, 1);
	/* an image of another size */
	CHECK_EQ_INT(apply(old_img, LEN, d, dn, sum, LEN - 1, NULL), -EINVAL);
	CHECK(strstr(err, "not a zstd frame of the image's") != NULL);
	/* an altered byte: a decoding error or the frame's checksum */
	memcpy(d2, d, dn);
	d2[dn / 2] ^= 0x40;
	sha256(d2, dn, bad);
	CHECK_EQ_INT(apply(old_img, LEN, d2, dn, bad, LEN, NULL), -EINVAL);
	/* another older image: it decodes into another image (the caller's
	 * check of the result refuses it) or fails, never overruns */
	fill(d2, 1, 1);
	{
		uint8_t *other = malloc(LEN), *got = NULL;

		if (!other)
			abort();
		fill(other, LEN, 5);
		rc = apply(other, LEN, d, dn, sum, LEN, &got);
		CHECK(rc < 0 ? got == NULL && err[0] : memcmp(got, new_img, LEN) != 0);
		free(got);
		/* shorter than the one the delta was made from */
		got = NULL;
		rc = apply(old_img, 4096, d, dn, sum, LEN, &got);
		CHECK(rc < 0 ? got == NULL && err[0] : memcmp(got, new_img, LEN) != 0);
		free(got);
		free(other);
	}
	/* no image */
	CHECK_EQ_INT(apply(old_img, LEN, d, dn, sum, 0, NULL), -EINVAL);
	free(d2);
	free(d);
}

int main(void)
{
	old_img = malloc(LEN);
	new_img = malloc(LEN);
	if (!old_img || !new_img)
		abort();
	fill(old_img, LEN, 1);
	RUN(test_round_trips);
	RUN(test_cap);
	RUN(test_refused);
	free(old_img);
	free(new_img);
	return TAP_DONE();
}
