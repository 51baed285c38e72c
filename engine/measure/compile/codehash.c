/*
 * codehash.c - the hash of a compiled candidate: every byte of its shared
 * object (codehash.h says why the whole object, and what makes two builds
 * of the same code the same bytes).
 */
#include "codehash.h"

#include "sha256.h"
#include "util.h"

void code_hash(const void *p, size_t n, char out[65])
{
	struct sha256 s;
	sha256_init(&s);
	sha256_update(&s, "kloop-code-v2", 14);
	sha256_update(&s, p, n);
	sha256_hex(&s, out);
}

int code_hash_file(const char *zPath, char out[65], char *err)
{
	strbuf sb = STRBUF_INIT;
	if (read_file(zPath, &sb, 1u << 30, err) < 0)
		return -1;
	code_hash(sb.buf ? sb.buf : "", sb.len, out);
	sb_free(&sb);
	return 0;
}
