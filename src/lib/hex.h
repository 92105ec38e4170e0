/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Hexadecimal, lower case, the one encoder and decoder of the program:
 * hashes, key IDs, verity roots and salts, temporary names.
 */
#ifndef RAMBOOT_HEX_H
#define RAMBOOT_HEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* n bytes into 2n hex digits and a NUL: out holds 2n + 1. */
void hex_encode(const void *bytes, size_t n, char *out);
/* The first 2n characters of s, hex digits of either case, into n
 * bytes; a character that is not one (the NUL of a short string too)
 * is -EINVAL and writes nothing. What follows them is the caller's. */
int hex_decode(const char *s, size_t n, uint8_t *out);
/* Are the first n characters of s lower-case hex digits (as
 * hex_encode() writes them)? */
bool hex_lower(const char *s, size_t n);
/* The value of a hex digit (either case), -1 for anything else. */
int hex_digit(char c);

#endif
