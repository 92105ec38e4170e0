/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Content-defined chunking: cut a byte stream where its content says so,
 * so that an insertion or a deletion moves the boundaries near it only
 * and every chunk after it is found again, shifted (a rebuilt squashfs
 * moves every block after its first change: chunks at fixed offsets are
 * then almost all new).
 *
 * The chunker ("gear-fastcdc" in an index, cindex.h) is FastCDC's
 * (Xia et al., USENIX ATC 2016) with normalized chunking at level 2:
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
 *   - the bytes of a chunk before CDC_MIN - 64 are not hashed (they
 *     cannot reach the first h that is tested): a fifth of the work
 *     saved, the boundaries the same as if they were.
 *
 * G is 256 64-bit values: the outputs 1 to 256 of splitmix64 (Steele,
 * Lea, Flood 2014; the generator of java.util.SplittableRandom) started
 * from the state 0x72616d626f6f7463 ("rambootc" in ASCII). The table in
 * cdc.c is that rule's output; tests/unit/test_cdc.c computes it again.
 *
 * Parameters: 16 KiB / 64 KiB / 256 KiB (min / average / max; chunks of
 * random bytes come out at 74 KiB on average). On squashfs images rebuilt
 * after a package upgrade (mksquashfs defaults: 128 KiB blocks,
 * compressed) 95 to 98 % of the bytes are found again (docs/cache.md);
 * the average is under a squashfs block, so a changed block costs about
 * one or two chunks; 16 KiB keeps the index small (about 86 bytes of
 * text per chunk: 1.3 MB for a 1 GiB image) and the chunks large enough
 * to be read from a server by range without the request overhead
 * dominating; 256 KiB bounds a chunk that must be fetched again in full.
 * Changing any of them, or G, changes every boundary: that is a new
 * chunker name in the index.
 *
 * The boundaries depend on the bytes only, never on how they are cut into
 * buffers: the whole state is h and the current chunk's length.
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

struct cdc {
	uint64_t h;     /* gear hash of the current chunk's last bytes */
	uint32_t len;   /* bytes of the current chunk seen so far */
};

/* The gear table (256 entries). */
extern const uint64_t cdc_gear[256];

static inline void cdc_init(struct cdc *c)
{
	c->h = 0;
	c->len = 0;
}

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
