/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The loader: stream an image (file, block device or pipe) into RAM
 * (a file in a dedicated tmpfs, or a zram block device), decompressing
 * and hashing on the way. `ramboot load` and `ramboot boot` both call
 * load_run().
 */
#ifndef RAMBOOT_LOAD_H
#define RAMBOOT_LOAD_H

#include <stdbool.h>
#include <stdint.h>

enum progress_mode { PROGRESS_AUTO, PROGRESS_BAR, PROGRESS_PLAIN, PROGRESS_NONE };

/* Settings: filled once from the command line, never changed by the run. */
struct load_opts {
	const char *source;      /* path, block device, or "-" for stdin */
	const char *dest;        /* file, block device; NULL with prefetch */
	bool prefetch;           /* read once into the page cache, keep nothing */
	const char *decompress;  /* "auto" (default), "none", "zstd", ... */
	int threads;             /* 0: online CPUs */
	const char *sha256;      /* 64 hex digits or NULL */
	const char *manifest;    /* manifest file or NULL */
	uint64_t min_free;       /* bytes that must stay free (default 256M) */
	const char *tmpfs;       /* mount a tmpfs here and write DEST inside */
	enum progress_mode progress;
	const char *expect_fs;   /* "squashfs", ... or NULL */
};

void load_opts_init(struct load_opts *o);

/* What happened; filled as far as the run got. */
struct load_result {
	uint64_t bytes_in;       /* compressed bytes read */
	uint64_t bytes_out;      /* bytes written to RAM */
	double seconds;
	const char *codec;       /* "none", "zstd", ... */
	char sha256[65];         /* of the bytes written (empty if not asked) */
	bool verified;           /* a hash was given and matched */
	char fstype[32];         /* blkid TYPE of the result, "" if unknown */
	char dest_path[4096];    /* the file/device holding the image */
	bool mounted_tmpfs;      /* we mounted opts.tmpfs (left mounted on success) */
	char error[256];         /* the one-line error, "" on success */
};

/* Run a load. Returns RB_EXIT_OK, RB_EXIT_FAIL, RB_EXIT_USAGE or
 * RB_EXIT_NOMEM; on failure nothing is left behind (partial output
 * removed, zram device reset, our tmpfs unmounted). */
int load_run(const struct load_opts *o, struct load_result *r);

#endif
