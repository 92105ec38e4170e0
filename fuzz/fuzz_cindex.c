// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: cindex_parse() on arbitrary bytes (a chunk index
 * comes from the server). Besides the sanitizers, it checks that a
 * refusal is -EINVAL (or -ENOMEM) with a NUL-terminated reason and
 * nothing allocated; that an accepted index tiles its image (contiguous
 * chunks from 0 to the size, lengths from MIN to MAX but the last one's,
 * at most size / MIN + 1 and CINDEX_CHUNKS_MAX chunks); and, the text
 * being canonical, that cindex_format() gives back the input byte for
 * byte. The same bytes are then chunked (format/cdc.h) whole and in two
 * pieces, which must cut alike. See docs/fuzzing.md.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/cdc.h"
#include "format/cindex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Where the chunks of d[0..n) end, fed whole or split at `split`: the
 * number of cuts and a sum of their offsets. */
static void cuts(const uint8_t *d, size_t n, size_t split, uint64_t *count, uint64_t *sum)
{
	struct cdc c;
	size_t at = 0;

	*count = *sum = 0;
	cdc_init(&c);
	while (at < n) {
		size_t end = at < split && split < n ? split : n;
		bool cut;

		at += cdc_next(&c, d + at, end - at, &cut);
		if (cut) {
			++*count;
			*sum += at;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cindex ci;
	char err[256];
	uint64_t c1, s1, c2, s2;
	int rc;

	err[0] = '\0';
	rc = cindex_parse((const char *)data, size, &ci, err, sizeof(err));
	if (rc) {
		if ((rc != -EINVAL && rc != -ENOMEM) || !err[0] || !memchr(err, '\0', sizeof(err)) ||
		    ci.chunk || ci.n)
			abort();
	} else {
		uint64_t next = 0;
		uint32_t i;
		char *text;
		size_t cap;
		ssize_t n;

		if (ci.min < CINDEX_LEN_FLOOR || ci.min > ci.avg || ci.avg > ci.max ||
		    ci.max > CINDEX_LEN_LIMIT || !ci.chunker[0] || ci.n > CINDEX_CHUNKS_MAX ||
		    (ci.size > 1 && ci.n > (ci.size - 2) / ci.min + 2) || ci.n > ci.size || (ci.n && !ci.chunk) ||
		    (!ci.n && (ci.chunk || ci.size)))
			abort();
		for (i = 0; i < ci.n; i++) {
			if (ci.chunk[i].off != next || ci.chunk[i].len == 0 ||
			    ci.chunk[i].len > ci.max || (ci.chunk[i].len < ci.min && i && i + 1 < ci.n))
				abort();
			next += ci.chunk[i].len;
		}
		if (next != ci.size)
			abort();
		cap = cindex_text_max(ci.n) + 1;
		text = malloc(cap);
		if (!text)
			abort();
		n = cindex_format(&ci, text, cap);
		if (n < 0 || (size_t)n != size || memcmp(text, data, size))
			abort();
		free(text);
		cindex_free(&ci);
	}

	cuts(data, size, SIZE_MAX, &c1, &s1);
	cuts(data, size, size / 2, &c2, &s2);
	if (c1 != c2 || s1 != s2)
		abort();
	return 0;
}
