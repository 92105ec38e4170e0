/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Binary deltas between two versions of an image: one zstd frame whose
 * prefix (ZSTD_DCtx_refPrefix) is the older image, so its matches reach
 * back into the old bytes (what `zstd --patch-from` writes). A server
 * makes one per new image (`ramboot publish --delta`); a local-disk cache
 * that holds the older image rebuilds the new one from it (cache/refresh.c)
 * and checks the result against the manifest, as any copy.
 */
#ifndef RAMBOOT_DELTA_H
#define RAMBOOT_DELTA_H

#include <stddef.h>
#include <stdint.h>

/* The level deltas are made at: at 3, a one-package rebuild of a 130 MB
 * image gives 834 KB in 0.4 s (at 19, 832 KB in a minute). */
#define DELTA_LEVEL 3

/*
 * A delta that rebuilds new[0..newlen) from old[0..oldlen): a malloc'ed
 * *out of *outlen bytes. -EFBIG when it would be larger than cap (a delta
 * so large saves little over the chunks), -ENOTSUP in a build without
 * the zstd compressor (the static one: the server runs the host build),
 * else 0 or -errno with err.
 */
int delta_make(const void *old, size_t oldlen, const void *new_, size_t newlen, size_t cap,
	       void **out, size_t *outlen, char *err, size_t errlen);

/*
 * Rebuild the new image into outfd (open read-write, newlen bytes long
 * already: fallocate) from the old one in oldfd (oldlen bytes) and the
 * delta in dfd (dlen bytes, whose SHA-256 must be dsha). Both images are
 * mapped, not read into memory: the decoder needs no window of its own,
 * so memory stays at the delta's reading buffer and the decoder's block.
 * A read or write fault in a mapping (SIGBUS: a disk that fails, a file
 * cut short) is caught and an error. Fails (-errno, err) on a delta that
 * is not one frame of exactly newlen bytes, or does not decode, or is
 * not dlen bytes with that SHA-256. What outfd holds after a failure is
 * not the image; after success, it is what the delta says: the caller
 * still checks it against the image's hash.
 */
int delta_apply(int oldfd, uint64_t oldlen, int dfd, uint64_t dlen, const uint8_t dsha[32],
		int outfd, uint64_t newlen, char *err, size_t errlen);

/*
 * fn(arg) with SIGBUS caught in this thread: a fault in a mapping of a
 * file (an I/O error, a file cut short under it) is -EIO with err, not
 * the process's death; else what fn returns. fn is left where it faulted:
 * what it allocated stays allocated, what it holds is not to be used.
 */
int delta_guard(int (*fn)(void *), void *arg, char *err, size_t errlen);

#endif
