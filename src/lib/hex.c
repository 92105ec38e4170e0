// SPDX-License-Identifier: GPL-2.0-or-later
/* Hexadecimal: see hex.h. */
#include <errno.h>

#include "lib/hex.h"

void hex_encode(const void *bytes, size_t n, char *out)
{
	static const char digit[] = "0123456789abcdef";
	const uint8_t *b = bytes;
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digit[b[i] >> 4];
		out[2 * i + 1] = digit[b[i] & 15];
	}
	out[2 * n] = '\0';
}

int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int hex_decode(const char *s, size_t n, uint8_t *out)
{
	size_t i;

	for (i = 0; i < 2 * n; i++)
		if (hex_digit(s[i]) < 0)
			return -EINVAL;
	for (i = 0; i < n; i++)
		out[i] = (uint8_t)(hex_digit(s[2 * i]) << 4 | hex_digit(s[2 * i + 1]));
	return 0;
}

bool hex_lower(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}
