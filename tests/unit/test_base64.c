// SPDX-License-Identifier: GPL-2.0-or-later
/* lib/base64.c: the test vectors of RFC 4648 section 10 both ways, blanks
 * between the characters, and what is refused: a character outside the
 * alphabet, padding in the middle, too much or too little of it, bits
 * left over that are not zero, a lone character, a full output buffer. */
#include <errno.h>
#include <string.h>

#include "tap.h"
#include "lib/base64.h"

static const char *const vec[][2] = {
	{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
	{ "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
};

static long dec(const char *in, unsigned char *out, size_t cap)
{
	return b64_decode(out, cap, in, strlen(in));
}

static void test_vectors(void)
{
	unsigned char out[16];
	char enc[16];
	size_t i;

	for (i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		size_t n = strlen(vec[i][0]);

		CHECK_EQ_INT((int)b64_encode(enc, (const unsigned char *)vec[i][0], n),
			     (int)strlen(vec[i][1]));
		CHECK_EQ_STR(enc, vec[i][1]);
		CHECK_EQ_INT((int)dec(vec[i][1], out, sizeof(out)), (int)n);
		CHECK(memcmp(out, vec[i][0], n) == 0);
	}
}

static void test_round_trip(void)
{
	unsigned char in[256], out[256];
	char enc[400];
	size_t n;

	for (n = 0; n < sizeof(in); n++)
		in[n] = (unsigned char)(n * 37 + 11);
	for (n = 0; n <= sizeof(in); n += 17) {
		b64_encode(enc, in, n);
		CHECK_EQ_INT((int)dec(enc, out, sizeof(out)), (int)n);
		CHECK(memcmp(in, out, n) == 0);
	}
}

static void test_blanks(void)
{
	unsigned char out[16];

	CHECK_EQ_INT((int)dec(" Zm9v\nYmFy\r\n", out, sizeof(out)), 6);
	CHECK(memcmp(out, "foobar", 6) == 0);
	CHECK_EQ_INT((int)dec("Zm8\t=", out, sizeof(out)), 2);
}

static void test_refused(void)
{
	unsigned char out[16];

	CHECK_EQ_INT((int)dec("Zm9v!", out, sizeof(out)), -EINVAL);
	CHECK_EQ_INT((int)dec("Zg==Zg==", out, sizeof(out)), -EINVAL);
	CHECK_EQ_INT((int)dec("Zg=", out, sizeof(out)), -EINVAL);
	CHECK_EQ_INT((int)dec("Zm8==", out, sizeof(out)), -EINVAL);
	CHECK_EQ_INT((int)dec("Zm9v=", out, sizeof(out)), -EINVAL);
	CHECK_EQ_INT((int)dec("Zh==", out, sizeof(out)), -EINVAL);   /* bits left over */
	CHECK_EQ_INT((int)dec("Zm9=", out, sizeof(out)), -EINVAL);
	/* One character is six bits: no byte, and not base64. */
	CHECK_EQ_INT((int)dec("A", out, sizeof(out)), -EINVAL);
	CHECK_EQ_INT((int)dec("Zm9vA", out, sizeof(out)), -EINVAL);
	CHECK_EQ_INT((int)dec("Zm9vYmFy", out, 5), -EINVAL);
	CHECK_EQ_INT((int)dec("Zm9vYmFy", out, 6), 6);
}

int main(void)
{
	RUN(test_vectors);
	RUN(test_round_trip);
	RUN(test_blanks);
	RUN(test_refused);
	return TAP_DONE();
}
