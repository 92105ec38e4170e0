// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * SHA-256 (sha256.h): FIPS 180-4's examples, then both block functions
 * (SHA-NI where the CPU has it, and the portable one) against OpenSSL's
 * libcrypto for every length up to a few blocks, every alignment and
 * updates cut at every size.
 */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#define SHA256_NO_COMPAT 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "tap.h"
#include "lib/sha256.h"

static void tohex(const uint8_t *d, char out[65])
{
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void known(void)
{
	static char million[1000000];
	uint8_t d[32];
	char h[65];

	sha256("abc", 3, d);
	tohex(d, h);
	CHECK_EQ_STR(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	sha256("", 0, d);
	tohex(d, h);
	CHECK_EQ_STR(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, d);
	tohex(d, h);
	CHECK_EQ_STR(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	memset(million, 'a', sizeof(million));
	sha256(million, sizeof(million), d);
	tohex(d, h);
	CHECK_EQ_STR(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* Ours against libcrypto's, the block function chosen by portable. */
static void against_openssl(int portable)
{
	static uint8_t buf[4096 + 16];
	uint8_t a[32], b[32];
	int bad = 0;

	sha256_force_portable(portable);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 7));
	for (size_t n = 0; n <= 4096 && !bad; n += n < 300 ? 1 : 37) {
		size_t off = n % 16;

		sha256(buf + off, n, a);
		SHA256(buf + off, n, b);
		if (memcmp(a, b, 32)) {
			printf("#   %zu bytes at offset %zu differ\n", n, off);
			bad = 1;
		}
	}
	/* The same 4096 bytes fed in pieces of every size up to 130. */
	SHA256(buf, 4096, b);
	for (size_t step = 1; step <= 130 && !bad; step++) {
		struct sha256 c;

		sha256_init(&c);
		for (size_t o = 0; o < 4096; o += step)
			sha256_update(&c, buf + o, o + step > 4096 ? 4096 - o : step);
		sha256_final(&c, a);
		if (memcmp(a, b, 32)) {
			printf("#   pieces of %zu differ\n", step);
			bad = 1;
		}
	}
	sha256_force_portable(0);
	CHECK(!bad);
}

static void shani(void)
{
	printf("# this CPU: %s\n", sha256_impl());
	against_openssl(0);
}

static void portable(void)
{
	against_openssl(1);
}

int main(void)
{
	RUN(known);
	RUN(shani);
	RUN(portable);
	return TAP_DONE();
}
