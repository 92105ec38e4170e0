// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * codec_canonical() (codec/codec_names.c): the words `load -d` and
 * ramboot.decompress= accept, and that each one the settings parser
 * takes names a codec the loader has (codec_by_name): a word accepted at
 * boot but unknown to the loader would fail every load.
 */
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "codec/codec.h"

/* Each word and the codec it means. */
static const char *const words[][2] = {
	{ "none", "none" }, { "raw", "none" }, { "zstd", "zstd" }, { "xz", "xz" },
	{ "lzo", "lzo" }, { "lzop", "lzo" }, { "gzip", "gzip" }, { "gz", "gzip" },
};

static void test_names(void)
{
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		CHECK_EQ_STR(codec_canonical(words[i][0]), words[i][1]);
}

/* Whole words, as written: no case folding, no prefixes, no suffixes. */
static void test_not_names(void)
{
	static const char *const no[] = {
		"", "auto", "ZSTD", "Gzip", "zst", "zstd ", " zstd", "zstdx", "x", "lz", "lzop2",
		"gzip\n", "bzip2", "lz4", "none,zstd",
	};
	size_t i;

	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		if (codec_canonical(no[i]) != NULL)
			printf("#   accepted: \"%s\"\n", no[i]);
		CHECK(codec_canonical(no[i]) == NULL);
		CHECK(codec_by_name(no[i]) == NULL);
	}
}

/* Every word names a codec of the loader, and that codec calls itself by
 * the canonical name. */
static void test_loader_has_each(void)
{
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		const struct codec *c = codec_by_name(words[i][0]);

		CHECK(c != NULL);
		if (c)
			CHECK_EQ_STR(c->name, words[i][1]);
	}
	CHECK(codec_by_name("zstd") == &codec_zstd);
	CHECK(codec_by_name("raw") == &codec_none);
	CHECK(codec_by_name("lzop") == &codec_lzo);
	CHECK(codec_by_name("gz") == &codec_gzip);
	CHECK(codec_by_name("xz") == &codec_xz);
}

int main(void)
{
	RUN(test_names);
	RUN(test_not_names);
	RUN(test_loader_has_each);
	return TAP_DONE();
}
