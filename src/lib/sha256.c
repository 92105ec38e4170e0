// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * SHA-256 (FIPS 180-4). The block function is chosen once: the x86 SHA
 * extensions (SHA-NI, with SSSE3 and SSE4.1 for the byte shuffles and
 * blends) when CPUID says the CPU has them, the portable C rounds
 * otherwise. The choice is a relaxed atomic: two threads that race to
 * make it make the same one.
 */
#include <stdatomic.h>
#include <string.h>

#include "lib/sha256.h"

#if defined(__x86_64__) || defined(__i386__)
#define SHA256_X86 1
#include <cpuid.h>
#include <immintrin.h>
#else
#define SHA256_X86 0
#endif

typedef void block_fn(uint32_t h[8], const uint8_t *p, size_t blocks);

static const uint32_t K[64] __attribute__((aligned(16))) = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t ror(uint32_t x, unsigned int n)
{
	return (x >> n) | (x << (32 - n));
}

static inline uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void blocks_portable(uint32_t h[8], const uint8_t *p, size_t blocks)
{
	uint32_t w[64];

	for (; blocks; blocks--, p += SHA256_BLOCK) {
		uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
		uint32_t e = h[4], f = h[5], g = h[6], hh = h[7];

		for (int i = 0; i < 16; i++)
			w[i] = be32(p + 4 * i);
		for (int i = 16; i < 64; i++) {
			uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
			uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);

			w[i] = w[i - 16] + s0 + w[i - 7] + s1;
		}
		for (int i = 0; i < 64; i++) {
			uint32_t t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) +
				      ((e & f) ^ (~e & g)) + K[i] + w[i];
			uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) +
				      ((a & b) ^ (a & c) ^ (b & c));

			hh = g;
			g = f;
			f = e;
			e = d + t1;
			d = c;
			c = b;
			b = a;
			a = t1 + t2;
		}
		h[0] += a;
		h[1] += b;
		h[2] += c;
		h[3] += d;
		h[4] += e;
		h[5] += f;
		h[6] += g;
		h[7] += hh;
	}
}

#if SHA256_X86
/*
 * The SHA-NI rounds, in Intel's arrangement: the state lives in two
 * registers as ABEF and CDGH; sha256rnds2 does two rounds, msg1/msg2 the
 * message schedule four words at a time, W[j] in m[j % 4].
 */
__attribute__((target("sha,ssse3,sse4.1")))
static void blocks_shani(uint32_t h[8], const uint8_t *p, size_t blocks)
{
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
	__m128i s0, s1, t, msg, m[4];

	t = _mm_loadu_si128((const __m128i *)(const void *)&h[0]);
	s1 = _mm_loadu_si128((const __m128i *)(const void *)&h[4]);
	t = _mm_shuffle_epi32(t, 0xb1);                 /* CDAB */
	s1 = _mm_shuffle_epi32(s1, 0x1b);               /* EFGH */
	s0 = _mm_alignr_epi8(t, s1, 8);                 /* ABEF */
	s1 = _mm_blend_epi16(s1, t, 0xf0);              /* CDGH */

	for (; blocks; blocks--, p += SHA256_BLOCK) {
		__m128i abef = s0, cdgh = s1;

#pragma GCC unroll 4
		for (int i = 0; i < 4; i++)
			m[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i)),
						bswap);
#pragma GCC unroll 16
		for (int i = 0; i < 16; i++) {
			msg = _mm_add_epi32(m[i % 4],
					    _mm_load_si128((const __m128i *)(const void *)&K[4 * i]));
			s1 = _mm_sha256rnds2_epu32(s1, s0, msg);
			if (i >= 3 && i <= 14) {
				t = _mm_alignr_epi8(m[i % 4], m[(i + 3) % 4], 4);
				m[(i + 1) % 4] = _mm_sha256msg2_epu32(_mm_add_epi32(m[(i + 1) % 4], t),
								      m[i % 4]);
			}
			msg = _mm_shuffle_epi32(msg, 0x0e);
			s0 = _mm_sha256rnds2_epu32(s0, s1, msg);
			if (i >= 1 && i <= 12)
				m[(i + 3) % 4] = _mm_sha256msg1_epu32(m[(i + 3) % 4], m[i % 4]);
		}
		s0 = _mm_add_epi32(s0, abef);
		s1 = _mm_add_epi32(s1, cdgh);
	}

	t = _mm_shuffle_epi32(s0, 0x1b);                /* FEBA */
	s1 = _mm_shuffle_epi32(s1, 0xb1);               /* DCHG */
	s0 = _mm_blend_epi16(t, s1, 0xf0);              /* DCBA */
	s1 = _mm_alignr_epi8(s1, t, 8);                 /* HGFE */
	_mm_storeu_si128((__m128i *)(void *)&h[0], s0);
	_mm_storeu_si128((__m128i *)(void *)&h[4], s1);
}

static int cpu_has_shani(void)
{
	unsigned int a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSSE3) || !(c & bit_SSE4_1))
		return 0;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return 0;
	return (b & bit_SHA) != 0;
}
#else
static void blocks_shani(uint32_t h[8], const uint8_t *p, size_t blocks)
{
	blocks_portable(h, p, blocks);
}

static int cpu_has_shani(void)
{
	return 0;
}
#endif

enum { IMPL_UNKNOWN, IMPL_PORTABLE, IMPL_SHANI };
static atomic_int impl;
static atomic_int forced;

static int choose(void)
{
	int i = atomic_load_explicit(&impl, memory_order_relaxed);

	if (i == IMPL_UNKNOWN) {
		i = cpu_has_shani() ? IMPL_SHANI : IMPL_PORTABLE;
		atomic_store_explicit(&impl, i, memory_order_relaxed);
	}
	if (atomic_load_explicit(&forced, memory_order_relaxed))
		return IMPL_PORTABLE;
	return i;
}

static void compress(uint32_t h[8], const uint8_t *p, size_t blocks)
{
	if (choose() == IMPL_SHANI)
		blocks_shani(h, p, blocks);
	else
		blocks_portable(h, p, blocks);
}

const char *sha256_impl(void)
{
	return choose() == IMPL_SHANI ? "sha-ni" : "portable";
}

void sha256_force_portable(int on)
{
	atomic_store_explicit(&forced, on != 0, memory_order_relaxed);
}

void sha256_init(struct sha256 *c)
{
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(c->h, iv, sizeof(iv));
	c->bytes = 0;
	c->n = 0;
}

void sha256_update(struct sha256 *c, const void *data, size_t len)
{
	const uint8_t *p = data;

	c->bytes += len;
	if (c->n) {
		size_t take = SHA256_BLOCK - c->n;

		if (take > len)
			take = len;
		memcpy(c->buf + c->n, p, take);
		c->n += (unsigned int)take;
		p += take;
		len -= take;
		if (c->n < SHA256_BLOCK)
			return;
		compress(c->h, c->buf, 1);
		c->n = 0;
	}
	if (len >= SHA256_BLOCK) {
		size_t blocks = len / SHA256_BLOCK;

		compress(c->h, p, blocks);
		p += blocks * SHA256_BLOCK;
		len -= blocks * SHA256_BLOCK;
	}
	if (len) {
		memcpy(c->buf, p, len);
		c->n = (unsigned int)len;
	}
}

void sha256_final(struct sha256 *c, uint8_t md[SHA256_DIGEST_LENGTH])
{
	uint64_t bits = c->bytes * 8;

	c->buf[c->n++] = 0x80;
	if (c->n > SHA256_BLOCK - 8) {
		memset(c->buf + c->n, 0, SHA256_BLOCK - c->n);
		compress(c->h, c->buf, 1);
		c->n = 0;
	}
	memset(c->buf + c->n, 0, SHA256_BLOCK - 8 - c->n);
	for (int i = 0; i < 8; i++)
		c->buf[SHA256_BLOCK - 1 - i] = (uint8_t)(bits >> (8 * i));
	compress(c->h, c->buf, 1);
	for (int i = 0; i < 8; i++) {
		md[4 * i] = (uint8_t)(c->h[i] >> 24);
		md[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
		md[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
		md[4 * i + 3] = (uint8_t)c->h[i];
	}
	memset(c, 0, sizeof(*c));
}

void sha256(const void *data, size_t len, uint8_t md[SHA256_DIGEST_LENGTH])
{
	struct sha256 c;

	sha256_init(&c);
	sha256_update(&c, data, len);
	sha256_final(&c, md);
}
