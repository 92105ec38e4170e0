/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Image manifest: a small text file the server writes next to an image
 * (`ramboot manifest IMAGE > IMAGE.manifest`) and the client checks.
 *
 *   ramboot-manifest 2
 *   size 1073741824
 *   sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
 *   compression zstd
 *   chunk-size 4194304
 *   chunk 0 5feceb66ffc86f38d952786c6d696c79c2dbc239dd4e91b46729d73a27fb57e9
 *   chunk 1 ...
 *
 * "size" and "sha256" describe the decompressed image; an optional
 * "memlimit BYTES" raises the decoder memory a client allows for it (an
 * image compressed with a large zstd window or xz dictionary).
 *
 * Version 2 adds "chunk-size" (a power of two from MANIFEST_CHUNK_MIN to
 * MANIFEST_CHUNK_MAX) and one "chunk INDEX SHA256" line per chunk of the
 * decompressed image, INDEX counting from 0, in order, exactly
 * ceil(size / chunk-size) of them (none for an empty image), each after
 * "size" and "chunk-size". A loader verifies each chunk as soon as it is
 * written, on every core. Version 1 has neither; its keys are valid in 2.
 *
 * Version 2 may also name the image's content-defined chunk index
 * (cindex.h), a file beside the image, and give the SHA-256 of its bytes:
 * "cindex NAME" and "cindex-sha256 HEX", the two together. A signature of
 * the manifest thus covers the index too.
 *
 * Version 2 may also name a binary delta to this image from one older
 * image (`ramboot publish --delta`): "delta NAME" (a file beside the
 * image), "delta-from HEX" (the SHA-256 of the older image it applies
 * to) and "delta-sha256 HEX" (of the delta's bytes), the three together.
 * A local-disk cache holding that older image rebuilds this one from it
 * and the delta (docs/cache.md); the result is checked against "sha256"
 * as any copy is, so a delta that is wrong costs a fallback, never a bad
 * image. Older clients ignore the keys.
 *
 * Any version may name the file that holds the image's bytes, beside the
 * image: "image NAME" (`ramboot publish --content-addressed` writes it, a
 * name of its own for each image: IMAGE.sha256- and 16 hex digits of
 * the image's SHA-256). A client reads that file in place of IMAGE: the
 * manifest and the bytes it describes then never part, whatever a
 * rebuild does to IMAGE meanwhile. Older clients ignore the key and
 * read IMAGE.
 *
 * Blank lines and lines starting with '#' are ignored; unknown keys are
 * kept for later versions (signature, dm-verity) and ignored: every
 * version of this parser ignores them, so a key added to version 2 (the
 * verity and cindex keys) never breaks an older client. A repeated
 * key, a missing size or sha256 (or, in version 2, chunk-size or a chunk),
 * a key of version 2 in a version 1 manifest, or a malformed value is an
 * error.
 *
 * Size: a version 1 manifest, and the header of a version 2 one, is at
 * most MANIFEST_MAX bytes; each chunk allows MANIFEST_CHUNK_LINE more, up
 * to MANIFEST_CHUNKS_MAX chunks, so no manifest is larger than
 * MANIFEST_HARD_MAX (about 6.3 MiB; the chunk hashes then take 2 MiB of
 * RAM). A larger image needs a larger chunk size.
 */
#ifndef RAMBOOT_MANIFEST_H
#define RAMBOOT_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MANIFEST_MAX        65536     /* version 1; the header of version 2 */
#define MANIFEST_CHUNK_LINE 96        /* bytes allowed per chunk on top */
#define MANIFEST_CHUNKS_MAX 65536u    /* chunks at most (256 GiB at 4 MiB) */
#define MANIFEST_HARD_MAX   (MANIFEST_MAX + (size_t)MANIFEST_CHUNKS_MAX * MANIFEST_CHUNK_LINE)
#define MANIFEST_CHUNK_MIN  (64u * 1024)
#define MANIFEST_CHUNK_MAX  (1024u * 1024 * 1024)
#define MANIFEST_CHUNK_DEFAULT (4u * 1024 * 1024)
/* A chunk size of version 2: a power of two from MANIFEST_CHUNK_MIN to
 * MANIFEST_CHUNK_MAX. */
static inline bool manifest_chunk_size_ok(uint64_t v)
{
	return v >= MANIFEST_CHUNK_MIN && v <= MANIFEST_CHUNK_MAX && !(v & (v - 1));
}
#define MANIFEST_SALT_HEX_MAX 128     /* a dm-verity salt of up to 64 bytes */
#define MANIFEST_NAME_MAX   200       /* a file name beside the image */

struct manifest {
	unsigned int version;    /* 1 or 2 */
	uint64_t size;
	char sha256[65];         /* lower-case hex */
	char compression[16];    /* optional "compression" key: of the file the
				  * manifest was made from ("zstd", ...), or "" */
	uint64_t memlimit;       /* optional "memlimit" key: decoder memory the
				  * client may use for this image (bytes), 0:
				  * the default (CODEC_MEMLIMIT_DEFAULT) */
	uint64_t chunk_size;     /* version 2: bytes per chunk; 0 in version 1 */
	uint32_t nchunks;        /* version 2: ceil(size / chunk_size) */
	uint8_t (*chunk)[32];    /* version 2: the SHA-256 of each chunk (binary),
				  * NULL when there are none or they were not
				  * kept (manifest_load); manifest_free() */
	/* version 2, optional: the image's dm-verity hash tree (verity.h),
	 * written by `ramboot manifest --verity`. verity_root[0] == '\0':
	 * none. The three come together; the image is then a whole number
	 * of 4096-byte blocks. */
	char verity_root[65];    /* root hash, lower-case hex */
	char verity_salt[MANIFEST_SALT_HEX_MAX + 1]; /* hex, "-": no salt */
	char verity_hash[MANIFEST_NAME_MAX + 1];     /* the hash file's name,
						      * beside the image */
	/* version 2, optional: the image's chunk index (cindex.h), written
	 * by `ramboot publish --cindex`. cindex[0] == '\0': none. */
	char cindex[MANIFEST_NAME_MAX + 1];          /* its name, beside the image */
	char cindex_sha256[65];                      /* SHA-256 of its bytes */
	/* version 2, optional: a zstd delta to this image from the image of
	 * SHA-256 delta_from, written by `ramboot publish --delta`.
	 * delta[0] == '\0': none. */
	char delta[MANIFEST_NAME_MAX + 1];           /* its name, beside the image */
	char delta_from[65];                         /* the older image's SHA-256 */
	char delta_sha256[65];                       /* SHA-256 of its bytes */
	/* optional, any version: the file holding the image's bytes, beside
	 * the image (publish --content-addressed). image[0] == '\0': none,
	 * the image itself. */
	char image[MANIFEST_NAME_MAX + 1];
};

/* Parse buf[0..len). Returns 0, or -EINVAL with a message in err
 * ("line 3: bad sha256"), or -ENOMEM. Never reads past len; buf need not
 * be NUL-terminated. The chunk hashes of a version 2 manifest are
 * allocated: manifest_free() when done with a manifest that parsed (a
 * failure frees them). */
int manifest_parse(const char *buf, size_t len, struct manifest *m,
		   char *err, size_t errlen);
void manifest_free(struct manifest *m);
/* Read and parse a manifest file (absolute path, not prefixed). Anything
 * but a regular file (a directory, a FIFO, a dangling link) is an error:
 * a manifest that is there but cannot be read never means "unverified".
 * manifest_load() checks the chunk hashes of a version 2 manifest but
 * does not keep them (m->chunk is NULL: nothing to free);
 * manifest_load_chunks() keeps them (manifest_free()). */
int manifest_load(const char *path, struct manifest *m, char *err, size_t errlen);
int manifest_load_chunks(const char *path, struct manifest *m, char *err, size_t errlen);
/* manifest_load_chunks(), with check() run on the bytes read before they
 * are parsed (a signature check, sign.h): its error (-errno, a message in
 * err) is the result, and nothing is parsed. */
typedef int (*manifest_check_fn)(const char *buf, size_t len, void *ctx, char *err,
				 size_t errlen);
int manifest_load_checked(const char *path, struct manifest *m, manifest_check_fn check,
			  void *ctx, char *err, size_t errlen);
/* Format a manifest into buf (version 2 when m->chunk_size is set, with
 * m->nchunks hashes from m->chunk); returns length or -ENOSPC.
 * manifest_format_max() is a buffer size that always suffices. */
int manifest_format(const struct manifest *m, char *buf, size_t len);
size_t manifest_format_max(const struct manifest *m);
/* 64 hex digits, case-insensitive; normalised to lower case in out,
 * which is left alone on -EINVAL. */
int sha256_hex_parse(const char *s, char out[65]);

#endif
