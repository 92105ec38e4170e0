// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: cstate_parse() on arbitrary bytes (the cache's state
 * file is read from a local disk that may have rotted or been written by
 * anyone with the disk). Besides the sanitizers, it checks that a
 * refusal is -EINVAL with a NUL-terminated reason, and that an accepted
 * state is one (the active slot holds an image) and, the text being
 * canonical, that cstate_format() gives back the input byte for byte.
 * See docs/fuzzing.md.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/cstate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cstate s;
	char err[160], back[CSTATE_MAX];
	ssize_t n;
	int rc;

	memset(err, 'x', sizeof(err));
	rc = cstate_parse((const char *)data, size, &s, err, sizeof(err));
	if (rc) {
		if (rc != -EINVAL || !memchr(err, '\0', sizeof(err)) || !err[0])
			abort();
		return 0;
	}
	if (s.active > 1 || s.active < -1 || (s.active >= 0 && !s.slot[s.active].used))
		abort();
	n = cstate_format(&s, back, sizeof(back));
	if (n < 0 || (size_t)n != size || memcmp(back, data, size))
		abort();
	return 0;
}
