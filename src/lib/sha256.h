/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SHA-256 (FIPS 180-4): the x86 SHA extensions when the CPU has them
 * (checked once, at run time), portable C otherwise.
 *
 * The SHA256_* names are the ones the loader used with OpenSSL's libcrypto;
 * they are macros for our own functions, so that no symbol of ours can
 * stand in for libcrypto's should a library loaded with us use it.
 */
#ifndef RAMBOOT_SHA256_H
#define RAMBOOT_SHA256_H

#include <stddef.h>
#include <stdint.h>

#ifndef SHA256_DIGEST_LENGTH
#define SHA256_DIGEST_LENGTH 32
#endif
#define SHA256_BLOCK 64

struct sha256 {
	uint32_t h[8];
	uint64_t bytes;                 /* hashed so far, buffered ones too */
	unsigned int n;                 /* bytes in buf */
	uint8_t buf[SHA256_BLOCK];
};

void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *data, size_t len);
void sha256_final(struct sha256 *c, uint8_t md[SHA256_DIGEST_LENGTH]);
void sha256(const void *data, size_t len, uint8_t md[SHA256_DIGEST_LENGTH]);
/* "sha-ni" or "portable": which block function this CPU gets. */
const char *sha256_impl(void);
/* Tests: 1 forces the portable code, 0 lets the CPU choose again. */
void sha256_force_portable(int on);

/* A test that holds libcrypto's next to ours defines SHA256_NO_COMPAT. */
#ifndef SHA256_NO_COMPAT
typedef struct sha256 SHA256_CTX;
#define SHA256_Init(c)        sha256_init(c)
#define SHA256_Update(c, d, n) sha256_update((c), (d), (n))
#define SHA256_Final(md, c)   sha256_final((c), (md))
#define SHA256(d, n, md)      sha256((d), (n), (md))
#endif

#endif
