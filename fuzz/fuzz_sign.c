// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: sign_split() and sign_check() on arbitrary bytes (a
 * signed manifest comes from the network at boot). Besides the
 * sanitizers, it checks what sign.h promises: an unsigned text is all
 * body; a signed one ends in exactly one well-formed signature line that
 * follows the body; a refusal says why; and no text verifies without a
 * trusted key (the key directory here does not exist). See docs/fuzzing.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trust/sign.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct sign_line line;
	struct sign_who who;
	char err[256] = "";
	size_t body = (size_t)-1, i;
	int rc;

	rc = sign_split(buf, size, &body, &line, err, sizeof(err));
	if (rc < 0) {
		if (!err[0])
			abort();
	} else if (rc == 0) {
		if (body != size)
			abort();
	} else {
		static const char pre[] = "signature ed25519 ";

		if (rc != 1 || body >= size || (body && buf[body - 1] != '\n'))
			abort();
		if (size - body < sizeof(pre) - 1 || memcmp(buf + body, pre, sizeof(pre) - 1))
			abort();
		if (strlen(line.keyid) != SIGN_KEYID_LEN)
			abort();
		for (i = 0; i < SIGN_KEYID_LEN; i++)
			if (!((line.keyid[i] >= '0' && line.keyid[i] <= '9') ||
			      (line.keyid[i] >= 'a' && line.keyid[i] <= 'f')))
				abort();
	}
	err[0] = '\0';
	if (sign_check(buf, size, "/nonexistent/ramboot-fuzz-keys", &who, err, sizeof(err)) == 0 ||
	    !err[0])
		abort();
	return 0;
}
