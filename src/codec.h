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

/* Decoder memory allowed unless a manifest raises it. */
#define CODEC_MEMLIMIT_DEFAULT (256ULL * 1024 * 1024)

struct codec_cfg {
	int threads;
	uint64_t memlimit;       /* decoder memory limit, all threads */
};

struct codec {
	const char *name;
	const uint8_t *magic;
	size_t magic_len;
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
	/* Optional: run the whole decode itself (parallel codecs). Returns
	 * 0 or -errno; the first input chunk is handed in. */
	int (*drive)(struct pipe *p, struct chunk *first, const struct codec_cfg *cfg);
	/* Optional: output size from a seekable source, -errno if unknown;
	 * *exact is set when the format records it exactly. */
	int (*content_size)(int fd, uint64_t file_size, uint64_t *out, int *exact);
};

extern const struct codec codec_none, codec_zstd, codec_xz, codec_lzo, codec_gzip;

/* Find a codec by name ("none", "zstd", "xz", "lzo", "gzip"). */
const struct codec *codec_by_name(const char *name);
/* Detect from the first bytes; codec_none when nothing matches. */
const struct codec *codec_detect(const uint8_t *buf, size_t len);
/* An upper bound of the memory the codec allocates with cfg (0 for none
 * or an unknown codec), counted in the loader's memory check. */
uint64_t codec_mem_bound(const struct codec *c, const struct codec_cfg *cfg);
/* Drive a stream codec over the pipe. Returns 0 or -errno. */
int codec_drive(const struct codec *c, struct pipe *p, struct chunk *first,
		const struct codec_cfg *cfg);

#endif
