/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The loader: stream an image (file, block device, pipe or udpcast
 * stream: source/source.h) into RAM (a file in a dedicated tmpfs, or a
 * zram block device), decompressing and hashing on the way. `ramboot
 * load` and `ramboot boot` both call load_run(). The stages have a file each:
 *
 *   source.c  open the source (source/), learn its format and size
 *   pipe.c    reader -> codec (codec*.c) -> writer -> hasher threads
 *   sink.c    the destination: tmpfs, file (outfile.c), block device, zram
 *   load.c    the run: memory check, the pipeline, verification, undo
 *   guard.c   signals and stalls become a cancellation
 *   prefetch.c, progress.c, load_cmd.c (ramboot load / ramboot manifest)
 */
#ifndef RAMBOOT_LOAD_H
#define RAMBOOT_LOAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/runerr.h"

struct udpcast_opts;

/* PROGRESS_CONSOLE: a plain line each time another tenth of the source
 * is read, at most one every few seconds (progress.c), for a console
 * that keeps every line: `ramboot boot`. */
enum progress_mode { PROGRESS_AUTO, PROGRESS_BAR, PROGRESS_PLAIN, PROGRESS_NONE,
		     PROGRESS_CONSOLE };

#define LOAD_STALL_TIMEOUT 30.0  /* seconds without progress (default) */
#define LOAD_RETRIES 3           /* reads again of a failed chunk (default) */
#define LOAD_MIRRORS_MAX 8       /* --mirror URLs beside the source */
#define LOAD_CONNECTIONS 4       /* parallel ranged fetches of an http:// image */

/* Settings: filled once from the command line, never changed by the run. */
struct load_opts {
	const char *source;      /* path, block device, or "-" for stdin; with
				  * source_is_fd or udpcast, its name in messages */
	int source_fd;           /* with source_is_fd: read this descriptor
				  * (a dup of it; source names it in messages),
				  * no path opened: a child that outlives the
				  * initramfs's /dev and /proc reads this way */
	bool source_is_fd;
	/* The image is the stream of a udpcast session (udpcast/udpcast.h):
	 * the stdout of a udp-receiver with these options; NULL: none. */
	const struct udpcast_opts *udpcast;
	const char *dest;        /* file, block device; NULL with prefetch */
	bool prefetch;           /* read once into the page cache, keep nothing */
	bool force;              /* replace an existing regular file DEST */
	const char *decompress;  /* "auto" (default), "none", "zstd", ... */
	int threads;             /* 0: online CPUs */
	const char *sha256;      /* 64 hex digits or NULL */
	const char *manifest;    /* manifest file or NULL */
	uint64_t min_free;       /* bytes that must stay free (default 256M) */
	const char *tmpfs;       /* mount a tmpfs here and write DEST inside */
	enum progress_mode progress;
	/* `ramboot boot`: once the memory check passed, one line on stderr
	 * and in the kernel log says what is copied: "IMAGE (SIZE, CODEC)
	 * into RAM (announce)"; NULL: none. */
	const char *announce;
	const char *expect_fs;   /* "squashfs", ... or NULL */
	double stall_timeout;    /* seconds without progress, 0: never */
	/* If set, the monotonic time (ms) of the last progress is published
	 * here while the run goes on (a watcher in another process). */
	_Atomic long long *heartbeat_ms;
	/* --prefetch: the boot profile (profile.h), a file, "none", or NULL
	 * for SOURCE.profile beside the source when there is one; with
	 * profile_only nothing beyond its ranges is read. */
	const char *profile;
	bool profile_only;
	/* --prefetch: the loop device whose reads go first ("loop3" or
	 * "/dev/loop3"); NULL: the one backed by the source, if any. */
	const char *loop;
	uint64_t rate;           /* --prefetch: bytes/s at most, 0: no cap */
	int retries;             /* a chunk that fails its hash (version 2
				  * manifest), or its read, is read again up to
				  * this many times (seekable raw sources) */
	double wait_loop;        /* --prefetch: read nothing until the loop device
				  * backed by the source appears, for at most
				  * this long (s; 0: do not wait) */
	/* --signed: the manifest must be signed by a trusted key (sign.h):
	 * the public keys in keydir, or NULL for the initrd's own. */
	bool signed_only;
	const char *keydir;
	/* --no-verify: an http:// source is copied with neither --sha256 nor
	 * a manifest with chunk hashes (otherwise refused) */
	bool no_verify;
	/* --mirror: more http:// URLs of the same image (same size, same
	 * bytes) beside source; chunks are fetched from any that answers. */
	const char *mirrors[LOAD_MIRRORS_MAX];
	unsigned n_mirrors;
	/* --connections: ranged fetches at once of an uncompressed http://
	 * image with chunk hashes; 0: LOAD_CONNECTIONS */
	int connections;
};

void load_opts_init(struct load_opts *o);

/* Why a run failed: the report and the exit code switch on it. The
 * categories are lib/runerr.h's, one list with the lazy copier's; these
 * are the ones a load meets. */
#define LOAD_OK        RUN_OK
#define LOAD_USAGE     RUN_USAGE      /* bad options (exit 2) */
#define LOAD_SOURCE    RUN_SOURCE     /* the source cannot be opened or read */
#define LOAD_MANIFEST  RUN_MANIFEST   /* the manifest cannot be read or is malformed */
#define LOAD_FORMAT    RUN_FORMAT     /* corrupt input, or a format that cannot be decoded */
#define LOAD_DEST      RUN_DEST       /* the destination cannot be made or written */
#define LOAD_NOMEM     RUN_NOMEM      /* not enough memory (exit 3) */
#define LOAD_SIZE      RUN_SIZE       /* the image size differs from the manifest */
#define LOAD_HASH      RUN_HASH       /* the SHA-256 differs */
#define LOAD_FSTYPE    RUN_FSTYPE     /* not the file system expected, or a truncated one */
#define LOAD_CHANGED   RUN_CHANGED    /* the source changed while it was read */
#define LOAD_STALL     RUN_STALL      /* the source stopped making progress */
#define LOAD_SIGNAL    RUN_SIGNAL     /* interrupted by a signal */
#define LOAD_SIGNATURE RUN_SIGNATURE  /* --signed: the manifest is not signed by a trusted key */

/* RB_EXIT_* for an outcome. */
static inline int load_exit_code(enum run_err e)
{
	return run_err_exit(e);
}

/* What happened; filled as far as the run got. */
struct load_result {
	uint64_t bytes_in;       /* compressed bytes read */
	uint64_t bytes_out;      /* bytes written to RAM */
	double seconds;
	const char *codec;       /* "none", "zstd", ... */
	char sha256[65];         /* of the bytes written (empty if not asked) */
	bool verified;           /* a hash was given and matched */
	uint32_t chunks;         /* version 2 manifest: chunks verified */
	uint32_t chunks_retried; /* of them, read again from the source */
	char signed_by[96];      /* --signed: "NAME KEYID" of the key, else "" */
	/* --manifest and verified: what the manifest the copy was checked
	 * against says (its sha256 and verity-root lines), for a later step
	 * that reads the manifest again (vboot.h). "" otherwise. */
	char manifest_sha256[65];
	char manifest_verity_root[65];
	char fstype[32];         /* blkid TYPE of the result, "" if unknown */
	char dest_path[4096];    /* the file/device holding the image */
	bool mounted_tmpfs;      /* we mounted opts.tmpfs (left mounted on success) */
	bool reader_stuck;       /* a read the kernel would not interrupt was left behind */
	enum run_err err;        /* LOAD_OK on success */
	int signo;               /* the signal, with LOAD_SIGNAL */
	char error[256];         /* the one-line error, "" on success */
};

/* Run a load. Returns RB_EXIT_OK, RB_EXIT_FAIL, RB_EXIT_USAGE or
 * RB_EXIT_NOMEM (load_exit_code(r->err)); on failure nothing is left
 * behind (the new file never got a name, a zram device we sized is
 * reset, our tmpfs unmounted, an old DEST untouched). */
int load_run(const struct load_opts *o, struct load_result *r);

/* Read and hash the whole image, write nothing (ramboot
 * manifest). r->sha256 and r->bytes_out on success; with chunk_size, the
 * hash of each chunk in chunk[] (room entries; more is an error) and
 * their number in r->chunks. */
int load_hash_only(const struct load_opts *o, struct load_result *r, uint64_t chunk_size,
		   uint8_t (*chunk)[32], uint32_t room);

#endif
