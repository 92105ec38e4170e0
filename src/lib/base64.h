/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Base64 (RFC 4648, with padding): signatures and PEM keys.
 */
#ifndef RAMBOOT_BASE64_H
#define RAMBOOT_BASE64_H

#include <stddef.h>

/* n bytes of in into out (4 characters per 3 bytes, rounded up, and a
 * NUL): the characters written. */
size_t b64_encode(char *out, const unsigned char *in, size_t n);
/* Decode in[0..n) (blanks and newlines skipped, "=" only at the end)
 * into out, which holds cap bytes: the byte count, or -EINVAL. */
long b64_decode(unsigned char *out, size_t cap, const char *in, size_t n);

#endif
