/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The manifest tests parse each input from a heap block of exactly its
 * length (no terminating NUL), so ASan reports any read past len; the
 * struct is filled with junk first, so a field the parser forgets shows.
 * err holds the last refusal's reason.
 */
#ifndef RAMBOOT_MANIFEST_IN_H
#define RAMBOOT_MANIFEST_IN_H

#include <stdlib.h>
#include <string.h>

#include "format/manifest.h"

static char err[256];

static int parse_n(const char *buf, size_t len, struct manifest *m)
{
	char *copy = malloc(len ? len : 1);
	int rc;

	if (!copy)
		abort();
	memcpy(copy, buf, len);
	memset(m, 0x5a, sizeof(*m));
	err[0] = '\0';
	rc = manifest_parse(len ? copy : copy + 1, len, m, err, sizeof(err));
	free(copy);
	return rc;
}

static int parse(const char *s, struct manifest *m)
{
	return parse_n(s, strlen(s), m);
}

#endif
