/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Between the files of publish/ (publish.c the command, sweep.c, ca.c
 * for --content-addressed): what the sweep of step 5 keeps, and the
 * image's own name of step 3b.
 */
#ifndef RAMBOOT_PUBLISHINT_H
#define RAMBOOT_PUBLISHINT_H

#include <dirent.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "publish/publish.h"

/* The files (hash file, chunk index, content-addressed image, delta) of
 * the manifests publish keeps (the new one, the previous one, the backup
 * image's). */
#define SWEEP_NAMED 4
#define SWEEP_KEEP (3 * SWEEP_NAMED)

/* Is name among keep[0..SWEEP_KEEP) (NULL entries: none)? */
bool publish_kept(const char *const keep[SWEEP_KEEP], const char *name);
/* The files a manifest names, into keep[0..SWEEP_NAMED) (NULL: none). */
struct manifest;
void publish_keep_named(const struct manifest *m, bool have, const char **keep);
/* Remove what publish_run no longer needs: the hash files and chunk
 * indexes none of keep names (the new manifest's, the previous one's and
 * the backup image's, IMAGE.old.manifest), and temporaries of an earlier
 * publish that was killed. keep_all: the previous or the backup's
 * manifest could not be read, no side file is removed. */
void publish_sweep(int dirfd, const char *prefix, const char *base, const char *manifest,
		   const char *const keep[SWEEP_KEEP], bool keep_all);

/* The directory dirfd, listed through a description of its own (a dup
 * would share its offset with dirfd, and so with the other sweep): NULL
 * after a warning that what would be removed stays ("older images"; base
 * and prefix name the image). */
DIR *publish_sweep_open(int dirfd, const char *prefix, const char *base, const char *what);
/* The end of a sweep: dir closed, and dirfd synced when removed. */
void publish_sweep_close(DIR *dir, int dirfd, const char *prefix, bool removed);

/* The image under its content-addressed name mk->m.image, complete and
 * on disk before the manifest names it. *how: what was done. 0 or
 * -errno with a message in err; a failure leaves no new name. */
int publish_place_image(int dirfd, const char *base, const struct publish_req *req,
			const struct publish_made *mk, const char **how, char *err,
			size_t errlen);

/* The content-addressed images of base in dirfd that keep does not
 * name, beyond the keep_n newest, removed (prefix: for messages). */
void publish_sweep_images(int dirfd, const char *prefix, const char *base,
			  const char *const keep[SWEEP_KEEP], unsigned keep_n,
			  const struct stat *img, const char *new_name);

#endif
