/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Publishing an image on the server: its manifest (manifest.h), signed
 * (sign.h), its dm-verity hash tree (verity.h) and its chunk index
 * (cindex.h) beside it.
 *
 * publish_make() reads the image and builds everything in memory;
 * nothing is written. `ramboot manifest` writes what it made to stdout or
 * -o, the tree to IMAGE.verity, the index to IMAGE.cindex; `ramboot
 * publish` writes the tree and the index under names of their own
 * (IMAGE.verity-ROOT16, PUBLISH_HASH_SUFFIX; IMAGE.cindex-SHA16,
 * PUBLISH_CINDEX_SUFFIX) and the manifest last, each aside, synced and
 * renamed, so that the manifest always names complete side files of its
 * own image.
 */
#ifndef RAMBOOT_PUBLISH_H
#define RAMBOOT_PUBLISH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "format/manifest.h"
#include "trust/sign.h"

#define PUBLISH_HASH_SUFFIX ".verity-"   /* + 16 hex digits of the root hash */
#define PUBLISH_HASH_HEX    16
#define PUBLISH_CINDEX_SUFFIX ".cindex-" /* + 16 hex digits of its SHA-256 */
#define PUBLISH_DELTA_SUFFIX ".delta-"   /* + 16 hex digits of its SHA-256 */
/* --content-addressed: the image's bytes under a name of their own,
 * IMAGE + this + 16 hex digits of the image's SHA-256 (the manifest's
 * sha256, of the image a client gets), which the manifest's "image" key
 * names. Not "*.img": LTSP lists images/\*.img as images of their own
 * (ltsp ipxe menus, ltsp kernel). */
#define PUBLISH_IMAGE_SUFFIX ".sha256-"
#define PUBLISH_KEEP_DEFAULT 2          /* content-addressed images kept */
#define PUBLISH_KEEP_MAX 1000

/* How the content-addressed name gets the image's bytes. */
enum publish_ca {
	PUBLISH_CA_OFF,
	/* A hard link to IMAGE (no space, and IMAGE's inode lives on for
	 * clients that opened IMAGE by its name), else a reflink, else a
	 * copy. */
	PUBLISH_CA_LINK,
	/* Never the inode of IMAGE (for images rewritten in place): a
	 * reflink, else a copy. */
	PUBLISH_CA_COPY,
};

struct publish_req {
	const char *image;
	const char *decompress;  /* "auto", "none", "zstd", ... */
	int threads;             /* 0: online CPUs */
	uint64_t memlimit;       /* the manifest's memlimit, 0: none */
	uint64_t chunk_size;     /* 0: version 1 */
	const char *key;         /* --sign, or NULL */
	bool verity;             /* build the hash tree */
	/* The hash file's name beside the image, recorded in verity-hash;
	 * NULL: IMAGE's name + PUBLISH_HASH_SUFFIX + the root's first 16
	 * hex digits. */
	const char *hash_name;
	bool cindex;             /* build the chunk index (a raw image) */
	/* Its name beside the image, recorded in the manifest's cindex;
	 * NULL: IMAGE's name + PUBLISH_CINDEX_SUFFIX + the first 16 hex
	 * digits of its SHA-256. */
	const char *cindex_name;
	/* Name the image by its content in the manifest (mk->m.image). */
	enum publish_ca ca;
	/* A delta from this older image (a raw image file; codec/delta.h),
	 * named in the manifest; NULL: none. With delta_from_sha256 (hex),
	 * the older image must have that SHA-256, else no delta is made (a
	 * warning). A delta of more than half the image is not made either. */
	const char *delta_from;
	const char *delta_from_sha256;
	/* Its name beside the image; NULL: IMAGE's name +
	 * PUBLISH_DELTA_SUFFIX + the first 16 hex digits of its SHA-256. */
	const char *delta_name;
};

/* The options of a manifest that `ramboot publish` and `ramboot manifest`
 * both take (their getopt values): the key it is signed with and its
 * sizes. A command's own options count on from PUBLISH_OPT_OWN. */
enum {
	PUBLISH_OPT_SIGN = 256, PUBLISH_OPT_CHUNK_SIZE, PUBLISH_OPT_MEM_LIMIT,
	PUBLISH_OPT_MEMLIMIT,    /* --memlimit: the deprecated spelling */
	PUBLISH_OPT_OWN
};

/* Option c (a PUBLISH_OPT_*) of cmd, its value arg, into req: 0, or
 * RB_EXIT_USAGE after the message. v1_ok: --chunk-size=0 (a version 1
 * manifest) is taken. */
int publish_opt(const char *cmd, int c, const char *arg, bool v1_ok, struct publish_req *req);

struct publish_made {
	char *text;              /* the manifest, signed with req->key */
	size_t len;
	uint8_t *tree;           /* with verity: the hash file */
	size_t tree_len;
	char *cindex;            /* with cindex: the index's text */
	size_t cindex_len;
	uint32_t cindex_chunks;
	void *delta;             /* with delta_from: the delta, or NULL when
				  * none was made (mk->m.delta[0] == '\0') */
	size_t delta_len;
	struct stat st;          /* the image, as read */
	struct manifest m;       /* what the text says (m.chunk is NULL) */
	char keyid[SIGN_KEYID_LEN + 1]; /* with key: its id */
	int exit;                /* the exit code a failure asks for */
	int signo;               /* a signal that interrupted the read, or 0 */
};

/*
 * Read req->image once for its size, SHA-256 and chunks (the decompressed
 * image), with verity a second time for its tree, with cindex once more
 * for its chunk index (the loader has no place for a chunker: the reads
 * after the first are plain reads, mostly from the page cache), and make
 * the manifest. Fails (-errno, a message in err, mk->exit set) when
 * verity or cindex is asked and the image is compressed (or, for verity,
 * not a whole number of 4096-byte blocks; checked before anything is
 * read), and when the image changed (size, mtime, or another file at its
 * name) while it was read.
 * publish_made_free() in any case.
 */
int publish_make(const struct publish_req *req, struct publish_made *mk, char *err,
		 size_t errlen);
void publish_made_free(struct publish_made *mk);

/*
 * The hash file's name from --verity=HASHFILE: a plain name, or a path
 * whose directory is the image's (the same directory, by device and
 * inode). 0 and the name in out, or -EINVAL with the reason in err.
 */
int publish_hash_name(const char *image, const char *arg, char *out, size_t outlen,
		      char *err, size_t errlen);
/* The same for the option opt ("--cindex"). */
int publish_side_name(const char *image, const char *opt, const char *arg, char *out,
		      size_t outlen, char *err, size_t errlen);

/*
 * Is name one of the hash files publish names for image_name
 * (IMAGE.verity- and 16 lower-case hex digits)? Pure, for the cleanup.
 */
bool publish_is_hash_name(const char *image_name, const char *name);
/* Is name one of the chunk indexes publish names for image_name
 * (IMAGE.cindex- and 16 lower-case hex digits)? Pure. */
bool publish_is_cindex_name(const char *image_name, const char *name);
/* Is name one of the deltas publish names for image_name (IMAGE.delta-
 * and 16 lower-case hex digits)? Pure. */
bool publish_is_delta_name(const char *image_name, const char *name);
/* Is name one of the content-addressed images publish names for
 * image_name (IMAGE.sha256- and 16 lower-case hex digits)? Pure. */
bool publish_is_image_name(const char *image_name, const char *name);

/*
 * Is name a temporary outfile.c made (".NAME.XXXXXXXX", 8 hex digits) for
 * the manifest `manifest` or for one of publish's hash files, chunk
 * indexes or content-addressed images of image_name? Left behind only
 * by a kill between the link and the rename of a commit; publish
 * removes them. Pure.
 */
bool publish_is_stale_temp(const char *image_name, const char *manifest, const char *name);

/* The image's directory (O_DIRECTORY) and its name in it. fd or -errno. */
int publish_dir_open(const char *image, const char **base);

/*
 * Write buf to name in dirfd the careful way (outfile.h): aside, fsync,
 * rename (replace: over a regular file), fsync of the directory. protect:
 * never this file (the image). 0 or -errno with a message in err.
 */
int publish_write_at(int dirfd, const char *name, const void *buf, size_t len, bool replace,
		     const struct stat *protect, char *err, size_t errlen);

/* The same for a file whose bytes fill(fd, arg) puts in (0 or -errno; a
 * failure is told as "NAME: WHAT...", what "write error: " or ""). */
int publish_fill_at(int dirfd, const char *name, bool replace, const struct stat *protect,
		    int (*fill)(int fd, void *arg), void *arg, const char *what, char *err,
		    size_t errlen);

#endif
