// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Verification: the image did not change and the copy has its hash.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lazy/lazyint.h"
#include "bgread/yield.h"
#include "lib/clock.h"
#include "lib/hex.h"
#include "lib/sha256.h"
#include "lib/fdio.h"
#include "dev/blkdev.h"

/* The image did not change while it was copied (as far as its size and
 * modification time tell). */
static int source_unchanged(struct lazy *L)
{
	struct stat now;
	uint64_t size;

	if (fstat(L->img_fd, &now) < 0)
		return lazy_fail(L, LAZY_SOURCE, "%s: %s", L->o->image, strerror(errno));
	if (S_ISBLK(now.st_mode)) {
		if (blk_size(L->img_fd, &size) < 0 || size != L->size)
			return lazy_fail(L, LAZY_CHANGED, "%s: its size changed", L->o->image);
		return 0;
	}
	if ((uint64_t)now.st_size != L->size || now.st_mtim.tv_sec != L->img_st.st_mtim.tv_sec ||
	    now.st_mtim.tv_nsec != L->img_st.st_mtim.tv_nsec)
		return lazy_fail(L, LAZY_CHANGED, "%s: changed while it was copied", L->o->image);
	return 0;
}

/* SHA-256 of the copy, read back from RAM in offset order. */
int lazy_verify(struct lazy *L)
{
	uint8_t d[32];
	SHA256_CTX sha;
	uint64_t off;
	void *buf;
	int rc;

	if ((rc = source_unchanged(L)) != 0)
		return rc;
	lazy_set_state(L, "verifying");
	if (posix_memalign(&buf, 4096, BGREAD_CHUNK) != 0)
		return lazy_fail(L, LAZY_NOMEM, "out of memory");
	SHA256_Init(&sha);
	for (off = 0; off < L->size; off += BGREAD_CHUNK) {
		uint64_t len = L->size - off < BGREAD_CHUNK ? L->size - off : BGREAD_CHUNK;
		ssize_t n = pread_full(L->copy_fd, buf, len, (off_t)off);

		if (n < 0 || (uint64_t)n != len) {
			free(buf);
			return lazy_fail(L, LAZY_DEST, "%s: cannot read back: %s", L->r->copy,
					 n < 0 ? strerror((int)-n) : "short read");
		}
		SHA256_Update(&sha, buf, len);
		if ((rc = lazy_guard_outcome(L)) != 0) {
			free(buf);
			return rc;
		}
	}
	free(buf);
	SHA256_Final(d, &sha);
	hex_encode(d, sizeof(d), L->r->sha256);
	if (!L->want_sha[0])
		return 0;
	L->hash_done = true;
	L->hash_ok = !strcmp(L->r->sha256, L->want_sha);
	if (!L->hash_ok)
		return lazy_fail(L, LAZY_HASH, "%s: SHA-256 mismatch: got %s, expected %s",
				 L->o->image, L->r->sha256, L->want_sha);
	L->r->verified = boot_sec();
	return 0;
}
