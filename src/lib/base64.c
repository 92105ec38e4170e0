// SPDX-License-Identifier: GPL-2.0-or-later
/* Base64 (base64.h). */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "lib/base64.h"

static const char b64chars[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t b64_encode(char *out, const unsigned char *in, size_t n)
{
	size_t i, o = 0;

	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		out[o++] = b64chars[v >> 18];
		out[o++] = b64chars[(v >> 12) & 63];
		out[o++] = b64chars[(v >> 6) & 63];
		out[o++] = b64chars[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);

		out[o++] = b64chars[v >> 18];
		out[o++] = b64chars[(v >> 12) & 63];
		out[o++] = i + 1 < n ? b64chars[(v >> 6) & 63] : '=';
		out[o++] = '=';
	}
	out[o] = '\0';
	return o;
}

static int b64_value(char c)
{
	const char *p = c ? strchr(b64chars, c) : NULL;

	return p ? (int)(p - b64chars) : -1;
}

long b64_decode(unsigned char *out, size_t cap, const char *in, size_t n)
{
	uint32_t v = 0;
	size_t o = 0, i;
	int bits = 0, pad = 0;

	for (i = 0; i < n; i++) {
		char c = in[i];
		int d;

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			continue;
		if (c == '=') {
			pad++;
			continue;
		}
		d = b64_value(c);
		if (d < 0 || pad)
			return -EINVAL;
		v = v << 6 | (uint32_t)d;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o == cap)
				return -EINVAL;
			out[o++] = (unsigned char)(v >> bits);
		}
	}
	/* Leftover bits must be the padding's zeros, and the padding exact;
	 * six left over are a lone character, which is no byte at all. */
	if (pad > 2 || bits == 6 || (v & ((1u << bits) - 1)) || (bits == 4 && pad != 2) ||
	    (bits == 2 && pad != 1) || (bits == 0 && pad))
		return -EINVAL;
	return (long)o;
}
