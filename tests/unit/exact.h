/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The parsers of the text formats (manifest, cindex, cstate, profile) are
 * tested on inputs in a heap block of exactly their length, with no NUL
 * after them: AddressSanitizer reports a read past len (an empty input
 * points past a 1-byte block).
 *
 *   static char err[256];
 *   EXACT_PARSE(manifest_parse, struct manifest, 0x5a)
 *
 * defines parse_n(buf, len, out) and parse(string, out), which run the
 * parser (int fn(buf, len, out, err, errlen)) with err cleared and, when
 * JUNK is not 0, *out filled with that byte first: a field the parser
 * forgets to set shows.
 */
#ifndef RAMBOOT_EXACT_H
#define RAMBOOT_EXACT_H

#include <stdlib.h>
#include <string.h>

#define EXACT_PARSE(fn, type, junk)						\
	static int parse_n(const char *buf, size_t len, type *out)		\
	{									\
		char *copy = malloc(len ? len : 1);				\
		int rc;								\
										\
		if (!copy)							\
			abort();						\
		memcpy(copy, buf, len);						\
		if (junk)							\
			memset(out, junk, sizeof(*out));			\
		err[0] = '\0';							\
		rc = fn(len ? copy : copy + 1, len, out, err, sizeof(err));	\
		free(copy);							\
		return rc;							\
	}									\
										\
	__attribute__((unused))							\
	static int parse(const char *s, type *out)				\
	{									\
		return parse_n(s, strlen(s), out);				\
	}

#endif
