// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: lzop_parse_header() on arbitrary bytes (an .lzo image
 * is read from the network at boot). Besides the sanitizers, it checks
 * the answers are consistent: only the documented error codes; an
 * accepted header fits in the input, parses the same from exactly its
 * own bytes, and any shorter prefix asks for more bytes (-EAGAIN).
 * See docs/fuzzing.md.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/lzop.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lzop_header h, h2;
	uint8_t *copy;
	int rc;

	rc = lzop_parse_header(data, size, &h);
	switch (rc) {
	case 0:
	case -EAGAIN:
	case -EINVAL:
	case -ENOTSUP:
	case -EBADMSG:
		break;
	default:
		abort();
	}
	if (rc == 0) {
		if (h.header_len < LZOP_MAGIC_LEN || h.header_len > size)
			abort();
		/* exactly the header, in a block of its own size */
		copy = malloc(h.header_len);
		if (!copy)
			abort();
		memcpy(copy, data, h.header_len);
		if (lzop_parse_header(copy, h.header_len, &h2) ||
		    h2.header_len != h.header_len || h2.flags != h.flags ||
		    h2.method != h.method)
			abort();
		if (lzop_parse_header(copy, h.header_len - 1, &h2) != -EAGAIN)
			abort();
		free(copy);
		/* block header lengths for the accepted flags */
		if (lzop_block_header_len(h.flags, 100, 50) < 8 ||
		    lzop_block_header_len(h.flags, 100, 50) > 24)
			abort();
	}
	return 0;
}
