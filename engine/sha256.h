/*
 * sha256.h - SHA-256 (FIPS 180-4), used for content-hash cache keys.
 */
#ifndef KL_SHA256_H
#define KL_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];   /* chaining state */
	uint64_t nBytes; /* bytes hashed so far */
	uint8_t buf[64]; /* pending partial block */
	size_t nBuf;     /* bytes in buf */
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *p, size_t n);
/* finish and write the digest as 64 lowercase hex digits plus a NUL */
void sha256_hex(struct sha256 *s, char out[65]);

#endif
