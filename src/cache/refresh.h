/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What refresh.c and refresh_http.c share: the state of one refresh
 * (the steps are refresh.c's head), and over HTTP the manifest from the
 * first URL that has it and the chunks by ranges from the mirror set.
 */
#ifndef RAMBOOT_CACHE_REFRESH_H
#define RAMBOOT_CACHE_REFRESH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format/cindex.h"
#include "format/cstate.h"
#include "format/manifest.h"
#include "source/mirror.h"
#include "source/source.h"
#include "cache/cache.h"

/* A chunk of the active slot, found by its hash. */
struct have {
	uint8_t sha256[32];
	uint64_t off;
	uint32_t len;
};

#define RUN_MAX (1024 * 1024)   /* HTTP: adjacent chunks, one request of at most */
#define RUN_CHUNKS 64           /* and of at most that many chunks */

struct refresh {
	const struct cache_refresh_opts *o;
	struct cache_refresh_result *r;
	int dir;                      /* the image's directory, locked */
	struct cstate st;             /* the state as read */
	struct cindex old;            /* the active slot's index */
	struct cindex new;            /* the new image's index */
	struct manifest m;
	bool have_m;
	char *mtext;                  /* the manifest's bytes, as read */
	size_t mlen;
	struct source img;            /* the image (source/), a file */
	const char *image;            /* where its bytes are read: o->image, or
				       * over HTTP the file the manifest names */
	const char *manifest;         /* o->manifest, or IMAGE.manifest over HTTP */
	struct mirror_set *ms;        /* an http:// image: its URLs, ranged reads */
	char url[2048];               /* the image's URL, the manifest's "image" */
	char murl[2048 + 16];         /* the manifest's default URL */
	int afd;                      /* the active slot */
	int sfd;                      /* the slot being written */
	int target;                   /* its number */
	uint8_t sum[32];              /* SHA-256 of the chunks as written */
	char *err;
	size_t errlen;
};

/* The active slot's copy of chunk c, or NULL (refresh.c). */
const struct have *refresh_find_have(const struct have *have, uint32_t nh,
				     const struct cindex_chunk *c);

/* The manifest's bytes over HTTP into f->mtext: f->manifest, or without
 * --manifest IMAGE.manifest of each URL in turn (f->manifest then names
 * the one read). 0 or -errno with f->err (the first URL's failure). */
int refresh_http_manifest(struct refresh *f);

/* The image's bytes come from the file the manifest names beside it
 * (publish --content-addressed), on each mirror. 0 or -errno. */
int refresh_http_follow(struct refresh *f);

/* The mirror set of the image and --mirror URLs (their files the
 * manifest names), its size in f->img.size. 0 or -errno with f->err. */
int refresh_http_open(struct refresh *f);

/* Chunk i of the new index into buf, as refresh.c's image_read(): the
 * chunks from i that the active slot does not hold come in one ranged
 * read (run, *run_off, *run_len), each checked by its hash. */
ssize_t refresh_http_read(struct refresh *f, const struct have *have, uint32_t nh, uint32_t i,
			  uint8_t *buf, uint8_t *run, uint64_t *run_off, uint64_t *run_len);

/* Say what each URL served (more than one), and close the set. */
void refresh_http_close(struct refresh *f);

#endif
