/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the loader: the state of one run, shared by its stages
 * (source.c, sink.c, load.c, prefetch.c). Not for other callers.
 */
#ifndef RAMBOOT_LOADINT_H
#define RAMBOOT_LOADINT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "codec/codec.h"
#include "lib/guard.h"
#include "load/load.h"
#include "format/manifest.h"
#include "lib/outfile.h"
#include "source/mirror.h"
#include "source/source.h"

struct sink {
	int fd;                  /* -1: none */
	bool blk;                /* a block device */
	struct outfile of;       /* a file: not yet named */
	bool have_of;
	bool tmpfs_mounted, tmpfs_mkdir;
	int zram_id;             /* >= 0: we sized this zram device */
	uint64_t limit;          /* block device size */
};

/* State of one run: what was opened or made, to undo on failure. */
struct run {
	const struct load_opts *o;
	struct load_result *r;
	struct guard *guard;     /* NULL: no guard (tests) */
	struct source src;       /* source/: the bytes to read */
	const struct codec *codec; /* NULL: detect from the first chunk */
	uint64_t estimate;       /* output bytes, 0 if unknown */
	bool estimate_exact;
	struct sink snk;
	struct manifest man;
	bool have_man;
	bool chunked;            /* a version 2 manifest: chunks verified */
	char want_sha[65];
	uint64_t dec_mem;        /* decoder memory bound, counted in the check */
	/* An uncompressed http:// image with chunk hashes: fetched by ranges
	 * from these mirrors (fetch.c), the source never streamed. */
	struct mirror_set *ms;
	uint64_t part_have;      /* bytes of DEST.part an earlier run left */
	bool part_made;          /* DEST.part and DEST.part-state are ours */
	bool keep_part;          /* a failure keeps DEST.part and the tmpfs */
	bool tmpfs_reused;       /* --tmpfs already mounted, holding DEST.part */
	unsigned next_mirror;    /* a stream: the next o->mirrors[] to read */
};

/* Record the first failure of the run (category and message); returns
 * the exit code for it (lib/runerr.h). */
#define load_fail(u, ...) run_fail(RUN_ERROR((u)->r), __VA_ARGS__)
/* The signal or stall the guard saw wins over what it caused (a read
 * error, a short image); 0: none. */
#define load_guard_outcome(u) \
	run_guard_outcome(RUN_ERROR((u)->r), (u)->guard, (u)->o->source, (u)->o->stall_timeout)

/* source.c */
int load_source_open(struct run *u);
int load_source_probe(struct run *u);
int load_source_end(struct run *u);
int load_source_again(struct run *u);

/* sink.c */
int sink_mount_tmpfs(struct run *u);
int sink_open(struct run *u);
int sink_commit(struct run *u);
void sink_undo(struct run *u);

/* fetch.c */
int fetch_setup(struct run *u);
int fetch_run(struct run *u);
int fetch_commit(struct run *u);
void fetch_undo(struct run *u);
bool fetch_dest_is_file(struct run *u);
/* DEST.part-state of an earlier run is there: its tmpfs is used again. */
bool fetch_resumes(struct run *u);
void fetch_close(struct run *u);

/* prefetch.c */
int prefetch_run(struct run *u);

#endif
