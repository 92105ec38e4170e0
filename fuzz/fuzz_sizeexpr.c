// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: sizeexpr_eval() on arbitrary strings (swap sizes come
 * from the kernel command line). A refusal must say what and where: a
 * message and a column within the string (or just past its end).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/sizeexpr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	free(s);
	return 0;
}
