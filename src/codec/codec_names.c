// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The names the codecs answer to, in one table: `-d` and
 * ramboot.decompress= accept the same words. Apart from codec.c, so that
 * the settings parser (and its fuzz target) need no decoder library.
 */
#include <stddef.h>
#include <string.h>

#include "lib/base.h"
#include "codec/codec.h"

const char *codec_canonical(const char *name)
{
	static const char *const names[][2] = {
		{ "none", "none" }, { "raw", "none" },
		{ "zstd", "zstd" },
		{ "xz", "xz" },
		{ "lzo", "lzo" }, { "lzop", "lzo" },
		{ "gzip", "gzip" }, { "gz", "gzip" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i][0]))
			return names[i][1];
	return NULL;
}
