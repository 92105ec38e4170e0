/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Codecs: one file each, chosen from magic bytes. A stream codec has
 * init/step/finish/end and is driven by codec_drive(); a codec may also
 * have its own driver (zstd decodes independent frames in parallel).
 */
#ifndef RAMBOOT_CODEC_H
#define RAMBOOT_CODEC_H

#include <stddef.h>
#include <stdint.h>

struct pipe;
struct chunk;

struct codec_buf {
	const uint8_t *in;
	size_t in_len;           /* bytes left at in */
	uint8_t *out;
	size_t out_len;          /* room left at out */
};

/*
 * Decoder memory. memlimit is the most memory, in bytes, a decoder may
 * allocate for itself: windows, dictionaries, block and frame buffers,
 * per-thread state. The pipeline's own buffers (pipe.h) are not part of
 * it. 0 means CODEC_MEMLIMIT_DEFAULT. A stream that needs more for one
 * frame or block fails before anything that big is allocated, with a
 * message that says what it needs; threads are given less work (xz fewer
 * threads, zstd fewer frames in flight) rather than exceed it.
 *
 *   zstd   Frames whose window is above half the limit are refused (the
 *          largest power of two: 128 MiB, windowLog 27, at the default,
 *          what the zstd CLI accepts without --memory). With threads > 1
 *          the rest, less the workers' decoder state, holds the frames
 *          decoded in parallel: their input buffers, and their output
 *          until the writer (and hasher) are done with it. At least one
 *          frame is always in flight, so a stream makes progress; no
 *          more is used than two of the largest frames per worker.
 *   xz     liblzma's limit: the multi-threaded decoder runs fewer
 *          threads to stay below it; a block that needs more for one
 *          thread (its dictionary) is refused.
 *   lzo    The block buffers: a block (at most 64 MiB, by the format)
 *          may need two of its size; lzop writes 256 KiB blocks.
 *   gzip   Fixed (inflate's 32 KiB window); the limit does not apply.
 *
 * The default, 256 MiB, takes what the tools write at any level (zstd
 * --ultra -22 and --long use windowLog 27, xz -9e a 64 MiB dictionary:
 * 65 MiB to decode) with room left for parallel frames and xz threads.
 * zstd --long=28 and above, or a larger xz dictionary, need it raised.
 * The loader counts codec_mem_bound() in its free-memory check, so a
 * client short of memory is refused before anything is written rather
 * than running out halfway.
 */
#define CODEC_MEMLIMIT_DEFAULT (256ULL * 1024 * 1024)

struct codec_cfg {
	int threads;             /* decoder threads; <= 1: decode in one */
	uint64_t memlimit;       /* decoder memory limit, bytes; 0: the default */
};

/* The hooks of a codec that decodes step by step: codec_drive() runs
 * them, one loop for all of them (gzip, lzo, xz). */
struct codec_stream {
	/* 0 or -errno; *state for the other calls. */
	int (*init)(void **state, const struct codec_cfg *cfg);
	/* Consume from in, produce into out. Returns 0 to be called again
	 * (input used up or output full), or -errno with a message in msg. */
	int (*step)(void *state, struct codec_buf *b, char *msg, size_t msglen);
	/* At the end of input: 0 when the stream ended at a complete
	 * stream/frame boundary, else -EBADMSG/-EPROTO with a message. May
	 * still produce output (call again while it returns -EAGAIN). */
	int (*finish)(void *state, struct codec_buf *b, char *msg, size_t msglen);
	void (*end)(void *state);
};

/* .magic and .magic_len of a codec, from one array. */
#define CODEC_MAGIC(m) .magic = (m), .magic_len = sizeof(m)

struct codec {
	const char *name;
	const uint8_t *magic;
	size_t magic_len;
	/* The step hooks; or, instead, drive: */
	struct codec_stream stream;
	/* Run the whole decode itself (parallel codecs). Returns
	 * 0 or -errno; the first input chunk is handed in. */
	int (*drive)(struct pipe *p, struct chunk *first, const struct codec_cfg *cfg);
	/* Optional: output size from a seekable source, -errno if unknown;
	 * *exact is set when the format records it exactly. */
	int (*content_size)(int fd, uint64_t file_size, uint64_t *out, int *exact);
	/* Optional: see codec_mem_bound(); NULL is 0. */
	uint64_t (*mem_bound)(const struct codec_cfg *cfg);
	/* Optional: see codec_mem_need(); NULL: mem_bound. */
	uint64_t (*mem_need)(int fd, uint64_t file_size, const struct codec_cfg *cfg);
};

extern const struct codec codec_none, codec_zstd, codec_xz, codec_lzo, codec_gzip;

/* The codec a name means ("lzop" -> "lzo", "raw" -> "none"), NULL when
 * none does (codec_names.c). */
const char *codec_canonical(const char *name);
/* Find a codec by name ("none", "zstd", "xz", "lzo", "gzip"). */
const struct codec *codec_by_name(const char *name);
/* Detect from the first bytes; codec_none when nothing matches. */
const struct codec *codec_detect(const uint8_t *buf, size_t len);
/* cfg->memlimit, or the default when it is 0. */
uint64_t codec_memlimit(const struct codec_cfg *cfg);
/* An upper bound of the memory the codec's decoder may allocate with cfg
 * (threads and memlimit), pipeline buffers excluded: what the loader adds
 * to the image size before it checks MemAvailable. About the memlimit at
 * most (gzip: a fixed 64 KiB; zstd with a tiny limit: its decoder state);
 * 0 for "none". c NULL: the largest over all codecs, for a source whose
 * format is not known yet (a pipe). */
uint64_t codec_mem_bound(const struct codec *c, const struct codec_cfg *cfg);
/* The same for a seekable source fd, tightened by what its headers say
 * (the zstd window and frame size, the xz dictionary and block size, the
 * lzop block size): the bound is for any stream, the need for this one,
 * which matters on a client with little RAM. Never above the bound. */
uint64_t codec_mem_need(const struct codec *c, int fd, uint64_t file_size,
			const struct codec_cfg *cfg);
/* Drive a stream codec over the pipe. Returns 0 or -errno. */
int codec_drive(const struct codec *c, struct pipe *p, struct chunk *first,
		const struct codec_cfg *cfg);

#endif
