// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: manifest_parse() on arbitrary bytes (the manifest
 * comes from the network at boot), versions 1 and 2. Besides the
 * sanitizers, it checks that an accepted manifest has a well-formed hash,
 * that a version 2 one has exactly ceil(size / chunk-size) chunk hashes
 * (a power-of-two chunk size within bounds), that it survives
 * manifest_format() and parses back the same, chunks and the chunk index's
 * name and hash included (a name with no '/'), and that a
 * refusal always says why and leaves nothing allocated (LeakSanitizer).
 * See docs/fuzzing.md.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct manifest m, back;
	char err[128], hex[65], *text;
	size_t cap;
	int rc, n, i;

	err[0] = '\0';
	rc = manifest_parse((const char *)data, size, &m, err, sizeof(err));
	if (rc) {
		if ((rc != -EINVAL && rc != -ENOMEM) || !err[0] ||
		    !memchr(err, '\0', sizeof(err)) || m.chunk)
			abort();
	} else {
		if (strlen(m.sha256) != 64)
			abort();
		for (i = 0; i < 64; i++)
			if (!strchr("0123456789abcdef", m.sha256[i]))
				abort();
		if (!memchr(m.compression, '\0', sizeof(m.compression)))
			abort();
		if (m.version == 1 && (m.chunk_size || m.nchunks || m.chunk))
			abort();
		if (m.version == 2) {
			uint64_t want;

			if (m.chunk_size < MANIFEST_CHUNK_MIN || m.chunk_size > MANIFEST_CHUNK_MAX ||
			    (m.chunk_size & (m.chunk_size - 1)))
				abort();
			want = m.size / m.chunk_size + (m.size % m.chunk_size != 0);
			if (m.nchunks != want || m.nchunks > MANIFEST_CHUNKS_MAX ||
			    (m.nchunks && !m.chunk) || (!m.nchunks && m.chunk))
				abort();
		} else if (m.version != 1) {
			abort();
		}
		cap = manifest_format_max(&m);
		text = malloc(cap);
		if (!text)
			abort();
		n = manifest_format(&m, text, cap);
		if (n <= 0 || (size_t)n >= cap)
			abort();
		if (manifest_parse(text, (size_t)n, &back, err, sizeof(err)))
			abort();
		if (back.size != m.size || strcmp(back.sha256, m.sha256) ||
		    strcmp(back.compression, m.compression) || back.memlimit != m.memlimit ||
		    back.version != m.version || back.chunk_size != m.chunk_size ||
		    back.nchunks != m.nchunks || strcmp(back.cindex, m.cindex) ||
		    strcmp(back.cindex_sha256, m.cindex_sha256) ||
		    (m.cindex[0] && (strchr(m.cindex, '/') || strlen(m.cindex_sha256) != 64)) ||
		    (m.nchunks && memcmp(back.chunk, m.chunk, (size_t)m.nchunks * 32)))
			abort();
		manifest_free(&back);
		manifest_free(&m);
		free(text);
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
