/*
 * same_file.h - for the benchmarks built by cc_bench.sh: whether two files
 * hold the same bytes.
 */
#ifndef KL_BENCH_SAME_FILE_H
#define KL_BENCH_SAME_FILE_H

#include <string.h>

#include "util.h"

/* 1 when files a and b (NULL: none) hold the same bytes */
static inline int same_file(const char *a, const char *b)
{
	strbuf x = STRBUF_INIT, y = STRBUF_INIT;
	int same = a && b && read_file(a, &x, 1u << 30, NULL) >= 0 &&
	           read_file(b, &y, 1u << 30, NULL) >= 0 && x.len == y.len &&
	           !memcmp(x.buf, y.buf, x.len);
	sb_free(&x);
	sb_free(&y);
	return same;
}

#endif
