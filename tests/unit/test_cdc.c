// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The content-defined chunker (format/cdc.h): its gear table is the rule
 * of cdc.h; it cuts where a plain byte-by-byte reading of that rule cuts;
 * the cuts do not depend on how the input is cut into buffers; lengths
 * stay from CDC_MIN to CDC_MAX; a known input gives known cuts; an
 * insertion changes only the chunks around it; with a marker, the
 * superblock is a chunk, a chunk ends after a marker (a compressed
 * stream's start) that ends a block of CDC_MIN bytes or more once it is
 * CDC_MIN long, and after no other marker but a few chosen by their
 * bytes; the chunks of a run of short blocks are found again after a
 * change before them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "format/cdc.h"

#define DATA_LEN (4u << 20)
#define CUTS_MAX 1024
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* len bytes of splitmix64's output from state seed, each value's bytes
 * least significant first (the same bytes on any host). */
static uint8_t *data_make(uint64_t seed, size_t len)
{
	uint8_t *d = malloc(len);
	size_t i;

	if (!d)
		abort();
	for (i = 0; i < len; i += 8) {
		uint64_t v = splitmix64(&seed);
		size_t j;

		for (j = 0; j < 8 && i + j < len; j++)
			d[i + j] = (uint8_t)(v >> (8 * j));
	}
	return d;
}

/* The marker the chunkers of the tests use (CDC_MARK_*). */
static unsigned mark_kind = CDC_MARK_NONE;

static const struct {
	unsigned kind;
	const char *name;
	const char *m;
	size_t len;
} markers[] = {
	{ CDC_MARK_ZLIB, "gear-fastcdc-sqfs-zlib", "\x78\xda", 2 },
	{ CDC_MARK_XZ, "gear-fastcdc-sqfs-xz", "\xfd\x37\x7a\x58\x5a\x00", 6 },
	{ CDC_MARK_ZSTD, "gear-fastcdc-sqfs-zstd", "\x28\xb5\x2f\xfd", 4 },
};

/* The end offsets of the chunks of d[0..len), fed in pieces of the sizes
 * step() gives; the last chunk's end (len) included. */
static size_t cuts_fed(const uint8_t *d, size_t len, size_t (*step)(size_t k), uint64_t *cuts)
{
	struct cdc c;
	size_t at = 0, n = 0, k = 0;

	cdc_init(&c);
	cdc_set_marker(&c, mark_kind);
	while (at < len) {
		size_t piece = step(k++), done = 0;

		if (piece > len - at)
			piece = len - at;
		while (done < piece) {
			bool cut;

			done += cdc_next(&c, d + at + done, piece - done, &cut);
			if (cut && n < CUTS_MAX)
				cuts[n++] = at + done;
		}
		at += piece;
	}
	if (cdc_pending(&c) && n < CUTS_MAX)
		cuts[n++] = len;
	return n;
}

static size_t step_all(size_t k)
{
	(void)k;
	return SIZE_MAX;
}

static size_t step_1(size_t k)
{
	(void)k;
	return 1;
}

static size_t step_odd(size_t k)
{
	static const size_t s[] = { 7, 4096, 1, 65536, 16320, 3, 262144, 16383, 64, 100000 };

	return s[k % (sizeof(s) / sizeof(s[0]))];
}

static size_t step_rand(size_t k)
{
	uint64_t s = k * 2654435761u;

	return 1 + splitmix64(&s) % 300000;
}

/* Whether the stream's bytes that end at d[i] are mark_kind's marker. */
static int marked(const uint8_t *d, size_t i)
{
	size_t k;

	for (k = 0; k < ARRAY_LEN(markers); k++)
		if (markers[k].kind == mark_kind)
			return i + 1 >= markers[k].len &&
			       !memcmp(d + i + 1 - markers[k].len, markers[k].m, markers[k].len);
	return 0;
}

/* cdc.h's rule read byte by byte, nothing skipped. */
static size_t cuts_plain(const uint8_t *d, size_t len, uint64_t *cuts)
{
	uint64_t h = 0;
	size_t i, n = 0, l = 0, mark_end = 0;

	for (i = 0; i < len; i++) {
		int end;

		h = (h << 1) + cdc_gear[d[i]];
		l++;
		end = l == CDC_MAX ||
		      (l >= CDC_MIN && l < CDC_AVG && (h >> (64 - 18)) == 0) ||
		      (l >= CDC_AVG && l < CDC_MAX && (h >> (64 - 14)) == 0);
		if (mark_kind != CDC_MARK_NONE) {
			end |= i + 1 == CDC_SQFS_SUPER;
			if (marked(d, i)) {
				end |= l >= CDC_MIN &&
				       (i + 1 - mark_end >= CDC_BLOCK_LONG || (h >> (64 - 3)) == 0);
				mark_end = i + 1;
			}
		}
		if (end) {
			if (n < CUTS_MAX)
				cuts[n++] = i + 1;
			h = 0;
			l = 0;
		}
	}
	if (l && n < CUTS_MAX)
		cuts[n++] = len;
	return n;
}

static void test_gear_table(void)
{
	uint64_t s = CDC_SEED;
	int i, bad = 0;

	for (i = 0; i < 256; i++)
		if (cdc_gear[i] != splitmix64(&s))
			bad++;
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(CDC_SEED, 0x72616d626f6f7463ULL);
	CHECK(!memcmp("rambootc", "\x72\x61\x6d\x62\x6f\x6f\x74\x63", 8));
}

static void test_rule(void)
{
	uint8_t *d = data_make(42, DATA_LEN);
	static uint64_t a[CUTS_MAX], b[CUTS_MAX];
	size_t k;

	/* no marker, then each (zlib's 2 bytes: a few cuts in random bytes) */
	for (k = 0; k <= ARRAY_LEN(markers); k++) {
		size_t na, nb;

		mark_kind = k ? markers[k - 1].kind : CDC_MARK_NONE;
		na = cuts_fed(d, DATA_LEN, step_all, a);
		nb = cuts_plain(d, DATA_LEN, b);
		CHECK_EQ_INT(na, nb);
		CHECK(na > 20 && !memcmp(a, b, na * sizeof(a[0])));
	}
	mark_kind = CDC_MARK_NONE;
	CHECK_EQ_STR(cdc_name(CDC_MARK_NONE), "gear-fastcdc");
	for (k = 0; k < ARRAY_LEN(markers); k++)
		CHECK_EQ_STR(cdc_name(markers[k].kind), markers[k].name);
	free(d);
}

static void test_buffer_cuts(void)
{
	uint8_t *d = data_make(7, DATA_LEN);
	static uint64_t a[CUTS_MAX], b[CUTS_MAX];
	size_t (*steps[])(size_t) = { step_1, step_odd, step_rand };
	size_t i, k;

	/* no marker, then each (in random bytes: zlib's 2 bytes and chance
	 * gear cuts; with a few of each marker planted) */
	for (k = 0; k <= ARRAY_LEN(markers); k++) {
		size_t na;

		mark_kind = k ? markers[k - 1].kind : CDC_MARK_NONE;
		if (k)
			for (i = 1; i < 200; i++)
				memcpy(d + i * 20011, markers[k - 1].m, markers[k - 1].len);
		na = cuts_fed(d, DATA_LEN, step_all, a);
		CHECK(na > 20);
		for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
			size_t nb = cuts_fed(d, DATA_LEN, steps[i], b);

			if (nb != na || memcmp(a, b, na * sizeof(a[0])))
				printf("#   marker %zu, feeding pattern %zu cuts differently\n", k, i);
			CHECK_EQ_INT(nb, na);
			CHECK(!memcmp(a, b, na * sizeof(a[0])));
		}
		CHECK_EQ_INT(cuts_plain(d, DATA_LEN, b), na);
		CHECK(!memcmp(a, b, na * sizeof(a[0])));
	}
	mark_kind = CDC_MARK_NONE;
	free(d);
}

static void test_lengths(void)
{
	uint8_t *d = data_make(1, DATA_LEN);
	static uint64_t a[CUTS_MAX];
	size_t n = cuts_fed(d, DATA_LEN, step_all, a), i, bad = 0;
	uint64_t prev = 0, sum = 0;

	for (i = 0; i < n; i++) {
		uint64_t l = a[i] - prev;

		if (l > CDC_MAX || (l < CDC_MIN && i + 1 < n))
			bad++;
		sum += l;
		prev = a[i];
	}
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(sum, DATA_LEN);
	/* about the average on random bytes (normalized: a little above) */
	CHECK(n > 0 && DATA_LEN / n > CDC_AVG / 2 && DATA_LEN / n < CDC_AVG * 2);

	/* nothing to cut on: zeros give CDC_MAX chunks and a short tail
	 * (the last two read only when the count is right) */
	memset(d, 0, DATA_LEN);
	n = cuts_fed(d, DATA_LEN - 5, step_odd, a);
	CHECK_EQ_INT(n, DATA_LEN / CDC_MAX);
	CHECK_EQ_INT(a[0], CDC_MAX);
	if (n == DATA_LEN / CDC_MAX && n >= 2) {
		CHECK_EQ_INT(a[n - 2], (uint64_t)(n - 1) * CDC_MAX);
		CHECK_EQ_INT(a[n - 1], DATA_LEN - 5);
	}

	/* short inputs: one chunk, whatever its length */
	CHECK_EQ_INT(cuts_fed(d, 1, step_all, a), 1);
	CHECK_EQ_INT(a[0], 1);
	CHECK_EQ_INT(cuts_fed(d, CDC_MIN - 1, step_1, a), 1);
	CHECK_EQ_INT(cuts_fed(d, 0, step_all, a), 0);
	free(d);
}

/* A block of exactly CDC_BLOCK_LONG ends a chunk at its marker, whatever
 * the 64 bytes before it (which alone cut after a shorter block, one
 * marker in 8: eight fills, so that chance cannot pass for the rule); the
 * first marker sits in the chunk's first CDC_MIN bytes, where it only
 * starts the block. */
static void test_block_long(void)
{
	size_t len = 2u * CDC_MAX, k, n, v;
	uint8_t *d = calloc(1, len);
	static uint64_t a[CUTS_MAX], b[CUTS_MAX];
	const size_t e1 = CDC_SQFS_SUPER + CDC_MIN - 100, e2 = e1 + CDC_BLOCK_LONG;

	if (!d)
		abort();
	for (k = 0; k < ARRAY_LEN(markers); k++) {
		const char *m = markers[k].m;
		size_t ml = markers[k].len;

		mark_kind = markers[k].kind;
		for (v = 1; v <= 8; v++) {
			memset(d, 0, len);
			memset(d + e2 - ml - 64, (int)v, 64);
			memcpy(d + e1 - ml, m, ml);
			memcpy(d + e2 - ml, m, ml);
			/* the chunker's own cuts, and the reference's */
			n = cuts_fed(d, len, step_all, a);
			CHECK(n >= 3 && n == cuts_plain(d, len, b));
			if (n < 3)
				continue;
			CHECK_EQ_INT(a[0], CDC_SQFS_SUPER);
			CHECK_EQ_INT(a[1], e2);
			CHECK_EQ_INT(b[1], e2);
		}
	}
	free(d);
}

/* The cuts of the first 2 MiB of splitmix64's output from state 1: a
 * change to the table, the masks or the lengths shows here. */
static void test_pinned(void)
{
	static const uint64_t want[] = {
		85587, 160292, 303461, 373876, 448170, 551326,
		619009, 691606, 774155, 824322, 894677, 931427,
		1004978, 1116298, 1201514, 1295423, 1399816, 1470519,
		1536899, 1670207, 1714096, 1798361, 1882647, 1950018,
		2016891, 2090573, 2097152,
	};
	uint8_t *d = data_make(1, 2u << 20);
	static uint64_t a[CUTS_MAX];
	size_t n = cuts_fed(d, 2u << 20, step_odd, a), i;

	CHECK_EQ_INT(n, ARRAY_LEN(want));
	for (i = 0; i < n && i < ARRAY_LEN(want); i++)
		CHECK_EQ_INT(a[i], want[i]);
	free(d);
}

/* Markers in bytes with no gear cut: zeros, the superblock's 96 bytes a
 * chunk, markers that end a block of CDC_MIN bytes or more ending at
 * chunk lengths below CDC_MIN (no cut), at CDC_MIN and above (a cut right
 * after each), fed in pieces that split them; the other kinds' markers
 * and a marker's bytes out of order cut nothing. */
static void test_markers(void)
{
	size_t len = 4u * CDC_MAX, k, j;
	uint8_t *d = calloc(1, len);
	static uint64_t a[CUTS_MAX], b[CUTS_MAX];
	const size_t m3 = 2 * CDC_MIN + 5000, m4 = 3 * CDC_MIN + 6000, m5 = m4 + 205000;

	if (!d)
		abort();
	for (k = 0; k < ARRAY_LEN(markers); k++) {
		size_t (*steps[])(size_t) = { step_all, step_1, step_odd, step_rand };
		const char *m = markers[k].m;
		size_t ml = markers[k].len, n, s;

		mark_kind = markers[k].kind;
		memset(d, 0, len);
		memcpy(d + 100 - ml, m, ml);
		memcpy(d + CDC_MIN - 1 - ml, m, ml);
		memcpy(d + m3 - ml, m, ml);
		memcpy(d + m4 - ml, m, ml);
		memcpy(d + m5 - ml, m, ml);
		/* then zeros: CDC_MAX chunks, and the rest */
		n = cuts_plain(d, len, a);
		CHECK_EQ_INT(n, 8);
		if (n != 8)
			continue;
		CHECK_EQ_INT(a[0], CDC_SQFS_SUPER);
		CHECK_EQ_INT(a[1], m3);
		CHECK_EQ_INT(a[2], m4);
		CHECK_EQ_INT(a[3], m5);
		CHECK_EQ_INT(a[4], m5 + CDC_MAX);
		CHECK_EQ_INT(a[6], m5 + 3 * CDC_MAX);
		CHECK_EQ_INT(a[7], len);
		for (s = 0; s < ARRAY_LEN(steps); s++) {
			size_t nb = cuts_fed(d, len, steps[s], b);

			CHECK_EQ_INT(nb, n);
			CHECK(nb == n && !memcmp(a, b, n * sizeof(a[0])));
		}
		/* without the marker: zeros' CDC_MAX chunks, no superblock */
		mark_kind = CDC_MARK_NONE;
		CHECK_EQ_INT(cuts_fed(d, len, step_odd, b), 4);
		CHECK_EQ_INT(b[0], CDC_MAX);
		/* the other markers, and this one reversed or one byte short */
		mark_kind = markers[k].kind;
		memset(d, 0, len);
		for (j = 0; j < ARRAY_LEN(markers); j++)
			if (j != k)
				memcpy(d + CDC_MIN + 5000 * (j + 1), markers[j].m, markers[j].len);
		for (j = 0; j < ml; j++)
			d[CDC_MIN + 20000 + j] = (uint8_t)m[ml - 1 - j];
		memcpy(d + CDC_MIN + 30000, m + 1, ml - 1);
		memcpy(d + CDC_MIN + 40000, m, ml - 1);
		d[CDC_MIN + 40000 + ml - 1] = 0x55; /* not xz's last byte, 00 */
		CHECK_EQ_INT(cuts_fed(d, len, step_odd, b), 5);
		CHECK_EQ_INT(b[0], CDC_SQFS_SUPER);
		CHECK_EQ_INT(b[1], CDC_SQFS_SUPER + CDC_MAX);
	}
	mark_kind = CDC_MARK_NONE;
	free(d);
}

/* A run of short blocks, as squashfs's 8 KiB metadata blocks compress:
 * each a marker and 1,000 to 2,500 random bytes. Some of their markers
 * end a chunk, chosen by their bytes, not by where the chunk started:
 * with one block of the run made 700 bytes longer, every cut from the
 * third after it is an old one, 700 bytes later. A rule that cut at the
 * first marker past CDC_MIN could keep its phase against the old cuts
 * for the rest of the run. */
static void test_short_blocks(void)
{
	size_t len = 3u << 20, k;
	uint8_t *d = data_make(11, len), *e = malloc(len + 700);
	static uint64_t a[CUTS_MAX], b[CUTS_MAX];

	if (!e)
		abort();
	for (k = 0; k < ARRAY_LEN(markers); k++) {
		const char *m = markers[k].m;
		size_t ml = markers[k].len, at, at_e, changed = 0, na, nb, i, j, after = 0, lost = 0;
		uint64_t s = 5;

		mark_kind = markers[k].kind;
		for (at = at_e = CDC_SQFS_SUPER, i = 0; at + 6000 < len; i++) {
			size_t bl = 1000 + splitmix64(&s) % 1500, extra = i == 40 ? 700 : 0;

			memcpy(d + at, m, ml);
			memcpy(e + at_e, d + at, bl);
			memset(e + at_e + bl, 0x5a, extra);
			at += bl;
			at_e += bl + extra;
			if (extra)
				changed = at_e;
		}
		memcpy(e, d, CDC_SQFS_SUPER);
		na = cuts_plain(d, at, a);
		nb = cuts_fed(e, at_e, step_rand, b);
		/* chunks longer than a marker past CDC_MIN would make them */
		CHECK(na > 20 && at / na > CDC_MIN + 2500 && at / na < CDC_MAX);
		for (i = 0, j = 0; i + 1 < nb; i++) {
			if (b[i] <= changed || ++after <= 2)
				continue;
			while (j < na && a[j] + 700 < b[i])
				j++;
			if (j >= na || a[j] + 700 != b[i])
				lost++;
		}
		if (lost)
			printf("#   %s: %zu of %zu cuts after the change not found again\n",
			       markers[k].name, lost, after);
		CHECK(after > 20);
		CHECK_EQ_INT(lost, 0);
	}
	mark_kind = CDC_MARK_NONE;
	free(d);
	free(e);
}

/* 100 bytes inserted at 1000: the cuts after the first chunk or two are
 * the old ones, 100 bytes later. */
static void test_insertion(void)
{
	uint8_t *d = data_make(3, DATA_LEN), *e = malloc(DATA_LEN + 100);
	static uint64_t a[CUTS_MAX], b[CUTS_MAX];
	size_t na, nb, i, j, same = 0;

	if (!e)
		abort();
	memcpy(e, d, 1000);
	memset(e + 1000, 'x', 100);
	memcpy(e + 1100, d + 1000, DATA_LEN - 1000);
	na = cuts_fed(d, DATA_LEN, step_all, a);
	nb = cuts_fed(e, DATA_LEN + 100, step_rand, b);
	CHECK_EQ_INT(na, nb);
	/* every cut of the new stream but the first is an old one + 100 */
	for (i = 1, j = 0; i < nb; i++) {
		while (j < na && a[j] + 100 < b[i])
			j++;
		if (j < na && a[j] + 100 == b[i])
			same++;
	}
	CHECK_EQ_INT(same, nb - 1);
	free(d);
	free(e);
}

int main(void)
{
	RUN(test_gear_table);
	RUN(test_rule);
	RUN(test_buffer_cuts);
	RUN(test_lengths);
	RUN(test_pinned);
	RUN(test_insertion);
	RUN(test_markers);
	RUN(test_block_long);
	RUN(test_short_blocks);
	return TAP_DONE();
}
