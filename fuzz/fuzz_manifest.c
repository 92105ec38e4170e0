// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: manifest_parse() on arbitrary bytes (the manifest
 * comes from the network at boot). Besides the sanitizers, it checks that
 * an accepted manifest has a well-formed hash, that it survives
 * manifest_format() and parses back the same, and that a refusal always
 * says why. See docs/fuzzing.md.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct manifest m, back;
	char err[128], text[512], hex[65];
	int rc, n, i;

	err[0] = '\0';
	rc = manifest_parse((const char *)data, size, &m, err, sizeof(err));
	if (rc) {
		if (rc != -EINVAL || !err[0] || !memchr(err, '\0', sizeof(err)))
			abort();
	} else {
		if (strlen(m.sha256) != 64)
			abort();
		for (i = 0; i < 64; i++)
			if (!strchr("0123456789abcdef", m.sha256[i]))
				abort();
		if (!memchr(m.compression, '\0', sizeof(m.compression)))
			abort();
		n = manifest_format(&m, text, sizeof(text));
		if (n <= 0 || (size_t)n >= sizeof(text))
			abort();
		if (manifest_parse(text, (size_t)n, &back, err, sizeof(err)))
			abort();
		if (back.size != m.size || strcmp(back.sha256, m.sha256) ||
		    strcmp(back.compression, m.compression))
			abort();
	}

	/* the same bytes as a --sha256 argument */
	if (size <= 80) {
		char arg[81];

		memcpy(arg, data, size);
		arg[size] = '\0';
		if (!sha256_hex_parse(arg, hex) && (strlen(hex) != 64 || strlen(arg) != 64))
			abort();
	}
	return 0;
}
