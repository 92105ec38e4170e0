// SPDX-License-Identifier: GPL-2.0-or-later
/* lib/hex.c and text_scrub(): the one hex encoder and decoder, and the
 * one scrub of control characters. */
#include <errno.h>
#include <stdint.h>

#include "tap.h"
#include "lib/hex.h"
#include "lib/text.h"

static void test_encode(void)
{
	const uint8_t b[] = { 0x00, 0x01, 0x7f, 0x80, 0xab, 0xff };
	char out[2 * sizeof(b) + 1];

	hex_encode(b, sizeof(b), out);
	CHECK_EQ_STR(out, "00017f80abff");
	hex_encode(b, 0, out);
	CHECK_EQ_STR(out, "");
}

static void test_decode(void)
{
	uint8_t b[4] = { 1, 2, 3, 4 };

	CHECK_EQ_INT(hex_decode("00aBfF", 3, b), 0);
	CHECK_EQ_INT(b[0], 0x00);
	CHECK_EQ_INT(b[1], 0xab);
	CHECK_EQ_INT(b[2], 0xff);
	CHECK_EQ_INT(b[3], 4);
	/* a stray character, a short string: nothing written */
	b[0] = 9;
	CHECK_EQ_INT(hex_decode("0g", 1, b), -EINVAL);
	CHECK_EQ_INT(hex_decode("abc", 2, b), -EINVAL);
	CHECK_EQ_INT(b[0], 9);
	/* what follows the digits is the caller's */
	CHECK_EQ_INT(hex_decode("12 trailing", 1, b), 0);
	CHECK_EQ_INT(b[0], 0x12);
	CHECK_EQ_INT(hex_digit('F'), 15);
	CHECK_EQ_INT(hex_digit('/'), -1);
}

static void test_scrub(void)
{
	char out[8], in[] = "a\nb\x7f" "c\033";

	CHECK_EQ_INT(text_scrub(out, sizeof(out), in, SIZE_MAX, '?'), 6);
	CHECK_EQ_STR(out, "a?b?c?");
	/* cut to the room, and to n */
	CHECK_EQ_INT(text_scrub(out, 3, "abcdef", SIZE_MAX, ' '), 2);
	CHECK_EQ_STR(out, "ab");
	CHECK_EQ_INT(text_scrub(out, sizeof(out), "abcdef", 4, ' '), 4);
	CHECK_EQ_STR(out, "abcd");
	/* in place */
	CHECK_EQ_INT(text_scrub(in, sizeof(in), in, SIZE_MAX, ' '), 6);
	CHECK_EQ_STR(in, "a b c ");
}

int main(void)
{
	RUN(test_encode);
	RUN(test_decode);
	RUN(test_scrub);
	return TAP_DONE();
}
