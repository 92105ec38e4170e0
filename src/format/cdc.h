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
 * or without a marker (below: "gear-fastcdc-sqfs-zlib", "-sqfs-xz",
 * "-sqfs-zstd"):
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
 *   - with a marker, the start of a compressed stream: zlib at levels 7
 *     to 9 (78 da), xz (fd 37 7a 58 5a 00) or zstd (28 b5 2f fd).
 *     squashfs compresses each data block, fragment block and 8 KiB
 *     metadata block alone, each one such a stream, so the markers of
 *     the image's compressor (gzip at mksquashfs's default level 9, xz,
 *     zstd) split the stream into squashfs's own blocks (a block's
 *     "length": from the end of one marker to the end of the next, at
 *     any position, in a chunk or across a cut). Then also:
 *       the stream's first CDC_SQFS_SUPER bytes, the superblock, are a
 *       chunk alone: every rebuild changes them (its time, its tables'
 *       offsets), and they would take the rest of their chunk with them;
 *       a chunk of L bytes ends after a marker when CDC_MIN <= L and the
 *       block the marker ends is CDC_BLOCK_LONG (4 KiB) or longer: data
 *       and fragment blocks. A changed block costs itself, not the chunks
 *       it shares with its neighbours (the chunk ends just after the next
 *       block's marker, which every block has: it matches as well as a
 *       cut before it would);
 *       after a shorter block (the tables' metadata blocks: 8 KiB that
 *       compress to 1 to 3 KiB) when CDC_MIN <= L and the top 3 bits of h
 *       are 0: one marker in 8, chosen by the 64 bytes before it. Cutting
 *       at the first marker past CDC_MIN instead made the cuts of a run of
 *       short blocks depend on where the run's first chunk started: after
 *       a change they kept their phase against the old cuts, and a rebuilt
 *       image's directory table, unchanged, came out as new chunks (zstd:
 *       0.3 MB of 1.5 MB fetched). 4 KiB, not CDC_MIN: zlib's 2-byte
 *       marker is found by chance about every 64 KiB of compressed bytes,
 *       and a chance marker less than the threshold before a block's
 *       start would make that block short. Measured on one-package
 *       rebuilds of a 128 MB image (docs/cache.md): 2 KiB lets xz's
 *       tables keep their phase, 8 and 16 KiB take cuts from small data
 *       blocks;
 *     The index (cindex_build) takes the marker from the squashfs
 *     superblock at the image's start; none for anything else, or lzo,
 *     lz4, lzma, which have no marker. One marker, not all three: a
 *     marker found by chance in another compressor's blocks makes a cut
 *     there;
 *   - the bytes of a chunk before CDC_MIN - 64 are not hashed (they cannot
 *     reach the first h that is tested): a fifth of the work saved, the
 *     boundaries the same as if they were. With a marker they are still
 *     looked at for markers: one early in a chunk sets the length of the
 *     block the next one ends.
 *
 * G is 256 64-bit values: the outputs 1 to 256 of splitmix64 (Steele,
 * Lea, Flood 2014; the generator of java.util.SplittableRandom) started
 * from the state 0x72616d626f6f7463 ("rambootc" in ASCII). The table in
 * cdc.c is that rule's output; tests/unit/test_cdc.c computes it again.
 *
 * Parameters: 16 KiB / 64 KiB / 256 KiB (min / average / max; chunks of
 * random bytes come out at 74 KiB on average, the chunks of a squashfs
 * image with a marker at about its compressed blocks' length, 34 KiB on
 * the bench's 128 MB zstd image). On
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
 * buffers: the whole state is h, the last 8 bytes, the current chunk's
 * length and, with a marker, the stream's position and its last marker's
 * end.
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

#define CDC_SQFS_SUPER 96u      /* a squashfs superblock's bytes */
#define CDC_BLOCK_LONG (4u * 1024)  /* a block this long ends a chunk (cdc.h) */

struct cdc {
	uint64_t h;     /* gear hash of the current chunk's last bytes */
	uint64_t w;     /* its last 8 bytes hashed, the last one lowest */
	uint32_t len;   /* bytes of the current chunk seen so far */
	uint64_t mmagic, mmask;  /* the marker (cdc_set_marker): w & mmask == mmagic */
	bool marked;    /* a marker is set: the rule with markers */
	uint64_t pos;   /* bytes of the stream seen so far (with a marker) */
	uint64_t mark_end;  /* the stream's bytes up to the last marker's end */
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
	c->pos = 0;
	c->mark_end = 0;
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
