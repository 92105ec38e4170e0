// SPDX-License-Identifier: GPL-2.0-or-later
/* Choosing the compressor from what comp_algorithm offers, and zram
 * device names. */
#include <errno.h>

#include "tap.h"
#include "zram.h"

/* This kernel: zstd missing (built as a module not loaded, or absent). */
static const char *avail = "[lzo-rle] lzo lz4 ";

static void first_offered_wins(void)
{
	char out[32];

	CHECK_EQ_STR(zram_algo_choose(avail, "zstd,lzo-rle,lzo,lz4", out, sizeof(out)), "lzo-rle");
	CHECK_EQ_STR(zram_algo_choose(avail, "lz4,lzo", out, sizeof(out)), "lz4");
	CHECK_EQ_STR(zram_algo_choose("lzo lzo-rle lz4 lz4hc 842 [zstd]", "zstd,lzo-rle", out,
				      sizeof(out)), "zstd");
	CHECK_EQ_STR(zram_algo_choose("lzo [lzo-rle] lz4 lz4hc zstd", "lz4hc,zstd", out,
				      sizeof(out)), "lz4hc");
	/* Empty items and a trailing comma are ignored. */
	CHECK_EQ_STR(zram_algo_choose(avail, ",,zstd,,lz4,", out, sizeof(out)), "lz4");
}

static void names_match_whole_words(void)
{
	char out[32];

	/* "lzo" must not match inside "lzo-rle", nor "lz4" inside "lz4hc". */
	CHECK(zram_algo_choose("[lzo-rle] lz4hc", "lzo,lz4", out, sizeof(out)) == NULL);
	CHECK(zram_algo_offered("[lzo-rle] lzo", "lzo"));
	CHECK(zram_algo_offered("[lzo-rle] lzo", "lzo-rle"));
	CHECK(!zram_algo_offered("[lzo-rle] lzo", "rle"));
	CHECK(!zram_algo_offered("[lzo-rle] lzo", "lzo-"));
	CHECK(!zram_algo_offered("[lzo-rle] lzo", ""));
	CHECK(zram_algo_offered("lzo [zstd]\n", "zstd"));
}

static void none_offered(void)
{
	char out[32];

	CHECK(zram_algo_choose(avail, "zstd,deflate", out, sizeof(out)) == NULL);
	CHECK(zram_algo_choose(avail, "", out, sizeof(out)) == NULL);
	CHECK(zram_algo_choose("", "lzo", out, sizeof(out)) == NULL);
}

static void current_in_brackets(void)
{
	char out[32];

	CHECK_EQ_STR(zram_algo_current(avail, out, sizeof(out)), "lzo-rle");
	CHECK_EQ_STR(zram_algo_current("lzo lz4 [zstd]", out, sizeof(out)), "zstd");
	CHECK(zram_algo_current("lzo lz4", out, sizeof(out)) == NULL);
}

static void device_names(void)
{
	CHECK_EQ_INT(zram_id_from_path("/dev/zram0"), 0);
	CHECK_EQ_INT(zram_id_from_path("/dev/zram12"), 12);
	CHECK_EQ_INT(zram_id_from_path("zram3"), 3);
	CHECK_EQ_INT(zram_id_from_path("/dev/zram"), -EINVAL);
	CHECK_EQ_INT(zram_id_from_path("/dev/zram1p1"), -EINVAL);
	CHECK_EQ_INT(zram_id_from_path("/dev/sda2"), -EINVAL);
	CHECK_EQ_INT(zram_id_from_path("/dev/zram-1"), -EINVAL);
}

int main(void)
{
	RUN(first_offered_wins);
	RUN(names_match_whole_words);
	RUN(none_offered);
	RUN(current_in_brackets);
	RUN(device_names);
	return TAP_DONE();
}
