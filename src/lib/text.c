// SPDX-License-Identifier: GPL-2.0-or-later
/* Text shown on one line (text.h). */
#include <stdio.h>
#include <string.h>

#include "lib/text.h"

size_t text_escape(char *s, size_t cap)
{
	char tmp[1024];
	size_t i, o = 0;

	for (i = 0; s[i] && o + 1 < sizeof(tmp); i++) {
		unsigned char c = (unsigned char)s[i];
		int w = 0;

		if (!text_is_ctl(c))
			tmp[o++] = (char)c;
		else if (c == '\n' || c == '\t' || c == '\r')
			w = snprintf(tmp + o, sizeof(tmp) - o, "\\%c", c == '\n' ? 'n' :
				     c == '\t' ? 't' : 'r');
		else
			w = snprintf(tmp + o, sizeof(tmp) - o, "\\x%02x", c);
		if (w < 0 || (size_t)w >= sizeof(tmp) - o)
			break;
		o += (size_t)w;
	}
	if (o >= cap)
		o = cap - 1;
	memcpy(s, tmp, o);
	s[o] = '\0';
	return o;
}

size_t text_scrub(char *dst, size_t cap, const char *src, size_t n, char with)
{
	size_t i;

	for (i = 0; i < n && src[i] && i + 1 < cap; i++)
		dst[i] = text_is_ctl((unsigned char)src[i]) ? with : src[i];
	dst[i] = '\0';
	return i;
}
