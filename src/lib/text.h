/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Text shown on one line. A control character (below 0x20, or DEL) in a
 * value that goes on a console line, into a key=value file or onto a
 * terminal: a newline would start a second key, an escape sequence would
 * drive the terminal.
 */
#ifndef RAMBOOT_TEXT_H
#define RAMBOOT_TEXT_H

#include <stdbool.h>
#include <stddef.h>

static inline bool text_is_ctl(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}
/* The first n bytes of src (fewer where it ends) into dst, which holds
 * cap > 0 bytes, each control character replaced by `with`, and a NUL.
 * dst may be src. Returns the length written. */
size_t text_scrub(char *dst, size_t cap, const char *src, size_t n, char with);
/* s (NUL-terminated, at most 1023 bytes are looked at) with each control
 * character written as an escape (\n, \t, \r, \xNN), in place, cut to
 * hold cap > 0 bytes with its NUL: one line of text whatever s held.
 * Returns the length. */
size_t text_escape(char *s, size_t cap);

#endif
