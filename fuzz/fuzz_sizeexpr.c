// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: sizeexpr_eval(), size_parse() and rate_parse() on
 * arbitrary strings (sizes and rates come from the kernel command line and
 * configuration files). A refusal must say what and where: a message and
 * a column within the string (or just past its end). An old spelling that
 * is still read must come with a documented spelling of the same value.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/units.h"
#include "format/sizeexpr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* parse() over s with each old meaning: the result code is one of the
 * documented ones, and the spelling offered reads back to the value. */
static void units(const char *s, int (*parse)(const char *, enum unit_bare, uint64_t *, char *,
					      size_t))
{
	static const enum unit_bare bare[] = { UNIT_BYTES, UNIT_MIB, UNIT_BITS };
	char note[160], back[160];
	uint64_t v, again;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(bare) / sizeof(bare[0]); i++) {
		note[0] = '\0';
		rc = parse(s, bare[i], &v, note, sizeof(note));
		if (rc != 0 && rc != 1 && rc != -EINVAL && rc != -ERANGE)
			abort();
		if (rc < 0 && !note[0])
			abort();
		if (rc == 1 && (parse(note, bare[i], &again, back, sizeof(back)) != 0 || again != v))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sizeexpr_error e;
	uint64_t v;
	char *s;
	size_t len;
	int rc;

	if (size > 4096)
		return 0;
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	len = strlen(s);
	memset(&e, 0, sizeof(e));
	rc = sizeexpr_eval(s, 4ULL << 30, &v, &e);
	if (rc && (!e.what || e.column < 1 || (size_t)e.column > len + 1))
		abort();
	if (rc && rc != -EINVAL && rc != -EDOM && rc != -ERANGE)
		abort();
	if (!rc && e.old_column && ((size_t)e.old_column > len || !e.old[0] || !e.canon[0]))
		abort();
	units(s, size_parse);
	units(s, rate_parse);
	free(s);
	return 0;
}
