/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Image manifest: a small text file the server writes next to an image
 * (`ramboot manifest IMAGE > IMAGE.manifest`) and the client checks.
 *
 *   ramboot-manifest 1
 *   size 1073741824
 *   sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
 *
 * "size" and "sha256" describe the decompressed image; an optional
 * "memlimit BYTES" raises the decoder memory a client allows for it (an
 * image compressed with a large zstd window or xz dictionary). Blank lines and
 * lines starting with '#' are ignored; unknown keys are kept for later
 * versions (signature, per-chunk hashes) and ignored. A repeated key, a
 * missing size or sha256, or a malformed value is an error.
 */
#ifndef RAMBOOT_MANIFEST_H
#define RAMBOOT_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#define MANIFEST_MAX 65536   /* larger files are refused */

struct manifest {
	uint64_t size;
	char sha256[65];         /* lower-case hex */
	char compression[16];    /* optional "compression" key: of the file the
				  * manifest was made from ("zstd", ...), or "" */
	uint64_t memlimit;       /* optional "memlimit" key: decoder memory the
				  * client may use for this image (bytes), 0:
				  * the default (CODEC_MEMLIMIT_DEFAULT) */
};

/* Parse buf[0..len). Returns 0, or -EINVAL with a message in err
 * ("line 3: bad sha256"). Never reads past len; buf need not be
 * NUL-terminated. */
int manifest_parse(const char *buf, size_t len, struct manifest *m,
		   char *err, size_t errlen);
/* Read and parse a manifest file (absolute path, not prefixed). Anything
 * but a regular file (a directory, a FIFO, a dangling link) is an error:
 * a manifest that is there but cannot be read never means "unverified". */
int manifest_load(const char *path, struct manifest *m, char *err, size_t errlen);
/* Format a manifest into buf; returns length or -ENOSPC. */
int manifest_format(const struct manifest *m, char *buf, size_t len);
/* 64 hex digits, case-insensitive; normalised to lower case in out,
 * which is left alone on -EINVAL. */
int sha256_hex_parse(const char *s, char out[65]);

#endif
