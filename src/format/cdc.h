/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Content-defined chunking: cut a byte stream where its content says so,
 * so that an insertion or a deletion moves the boundaries near it only
 * and every chunk after it is found again, shifted (a rebuilt squashfs
 * moves every block after its first change: chunks at fixed offsets are
 * then almost all new).
 *
 * The chunker ("gear-fastcdc" in an index, cindex.h) is FastCDC's
 * (Xia et al., USENIX ATC 2016) with normalized chunking at level 2, with
 * or without a marker (below: "gear-fastcdc-zlib", "-xz", "-zstd"):
 *
 *   - a gear hash, h = (h << 1) + G[byte] (64 bits, wrapping), reset to 0
 *     at the start of each chunk. A byte's table value is shifted out of
 *     h after 64 more bytes, so h depends on the last 64 bytes only: it
 *     is a rolling hash over a 64-byte window, one shift, one add and one
 *     load per byte;
 *   - the cut test is on the top bits of h (the bits that depend on the
 *     whole window): a chunk of L bytes ends after its byte L-1 when
 *       L == CDC_MAX, or
 *       CDC_MIN <= L < CDC_AVG and the top 18 bits of h are 0, or
 *       CDC_AVG <= L < CDC_MAX and the top 14 bits of h are 0;
 *     the harder test before the average and the easier one after it
 *     (2 bits either side of log2(CDC_AVG) = 16) pull the lengths towards
 *     the average: fewer tiny and fewer forced CDC_MAX chunks than a
 *     single 16-bit test, the same boundaries found again after a change;
 *   - with a marker, a chunk of L bytes also ends after its byte L-1
 *     when CDC_MIN <= L < CDC_MAX and its last bytes are the marker, the
 *     start of a compressed stream: zlib at levels 7 to 9 (78 da), xz
 *     (fd 37 7a 58 5a 00) or zstd (28 b5 2f fd). squashfs compresses each
 *     data block, fragment block and 8 KiB metadata block alone, each one
 *     such a stream: with the marker of the image's compressor (gzip at
 *     mksquashfs's default level 9, xz, zstd), the cuts fall where
 *     squashfs's own do, and a changed block costs itself, not the
 *     chunks it shares with its neighbours (the chunk ends just after the
 *     next block's marker, which every block has: it matches as well as
 *     a cut before it would). The index (cindex_build) takes the marker
 *     from the squashfs superblock at the image's start; none for
 *     anything else, or lzo, lz4, lzma, which have no marker. One
 *     marker, not all three: a marker found by chance in another
 *     compressor's blocks makes a cut there, and a cut less than CDC_MIN
 *     before a block's start takes that block's cut away;
 *   - the bytes of a chunk before CDC_MIN - 64 are not hashed (they
 *     cannot reach the first h that is tested, nor the marker of the
 *     first byte that is): a fifth of the work saved, the boundaries the
 *     same as if they were.
 *
 * G is 256 64-bit values: the outputs 1 to 256 of splitmix64 (Steele,
 * Lea, Flood 2014; the generator of java.util.SplittableRandom) started
 * from the state 0x72616d626f6f7463 ("rambootc" in ASCII). The table in
 * cdc.c is that rule's output; tests/unit/test_cdc.c computes it again.
 *
 * Parameters: 16 KiB / 64 KiB / 256 KiB (min / average / max; chunks of
 * random bytes come out at 74 KiB on average, the chunks of a squashfs
 * image with a marker at about its compressed blocks' length). On
 * squashfs images rebuilt after a package upgrade (128 KiB blocks,
 * compressed) 95 to 99 % of the bytes are found again (docs/cache.md);
 * the markers make a changed block cost itself; 16 KiB keeps the index
 * small (about 86 bytes of text per chunk: 1.3 MB for 1 GiB of random
 * bytes, 2.5 to 2.8 MB for a 1 GiB squashfs image with a marker) and the
 * chunks large enough to be read from a server by range without the
 * request overhead dominating; 256 KiB bounds a chunk that must be
 * fetched again in full.
 * Changing any of them, or G, changes every boundary: that is a new
 * chunker name in the index.
 *
 * The boundaries depend on the bytes only, never on how they are cut into
 * buffers: the whole state is h, the last 8 bytes and the current
 * chunk's length.
 */
#ifndef RAMBOOT_CDC_H
#define RAMBOOT_CDC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CDC_NAME "gear-fastcdc"
#define CDC_MIN  (16u * 1024)
#define CDC_AVG  (64u * 1024)
#define CDC_MAX  (256u * 1024)
#define CDC_SEED 0x72616d626f6f7463ULL  /* splitmix64's state for G */
/* The markers: their kinds, and their bytes (the last byte lowest). */
#define CDC_MARK_NONE 0u
#define CDC_MARK_ZLIB 1u
#define CDC_MARK_XZ   2u
#define CDC_MARK_ZSTD 3u
#define CDC_MAGIC_ZLIB 0x78daULL
#define CDC_MAGIC_XZ   0xfd377a585a00ULL
#define CDC_MAGIC_ZSTD 0x28b52ffdULL

struct cdc {
	uint64_t h;     /* gear hash of the current chunk's last bytes */
	uint64_t w;     /* its last 8 bytes hashed, the last one lowest */
	uint32_t len;   /* bytes of the current chunk seen so far */
	uint64_t mmagic, mmask;  /* the marker (cdc_set_marker): w & mmask == mmagic */
};

/* The gear table (256 entries). */
extern const uint64_t cdc_gear[256];

/* Cut after the marker of kind (CDC_MARK_*) too; before the first byte.
 * A kind this chunker does not know is no marker. */
void cdc_set_marker(struct cdc *c, unsigned kind);

static inline void cdc_init(struct cdc *c)
{
	c->h = 0;
	c->w = 0;
	c->len = 0;
	cdc_set_marker(c, CDC_MARK_NONE);
}

/* The chunker's name in an index: CDC_NAME, and the marker's. */
const char *cdc_name(unsigned kind);

/*
 * Feed buf[0..n). Returns how many of its bytes belong to the current
 * chunk: all n when the chunk goes on past them (*cut false), or the
 * bytes up to and including the chunk's last (*cut true; the chunker is
 * then at the start of the next chunk, and the caller feeds the rest of
 * buf again). At the end of the stream, the bytes seen since the last cut
 * (cdc_pending()) are the last chunk, shorter than CDC_MIN perhaps.
 */
size_t cdc_next(struct cdc *c, const uint8_t *buf, size_t n, bool *cut);

static inline uint32_t cdc_pending(const struct cdc *c)
{
	return c->len;
}

#endif
