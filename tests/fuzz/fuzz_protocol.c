/*
 * fuzz_protocol.c - libFuzzer target for the worker protocol reader: the
 * line splitter both sides use (lb_* in util.h) with a small maximum line,
 * fed in chunks seeded by the first byte, each line parsed as JSON as the
 * engine does.  Checks the lines against a plain split of the whole input
 * and that a line over the maximum is refused (never returned, never
 * buffered past the maximum plus one chunk).
 * Build and run: make fuzz.
 */
#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define REQUIRE(c)                                                                                 \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "REQUIRE failed at %s:%d: %s\n", __FILE__, __LINE__, #c);  \
			__builtin_trap();                                                          \
		}                                                                                  \
	} while (0)

#define MAXLINE 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned seed = data[0];
	const char *p = (const char *)data + 1;
	size_t n = size - 1;
	struct linebuf lb;
	lb_init(&lb, MAXLINE);
	size_t i = 0, ref = 0; /* ref: where the next expected line starts in p */
	int refused = 0;
	while (i < n && !refused) {
		size_t k = 1 + (seed * (i + 3)) % 97;
		if (k > n - i)
			k = n - i;
		lb_add(&lb, p + i, k);
		i += k;
		char *z;
		size_t len;
		int got;
		while ((got = lb_next(&lb, &z, &len)) > 0) {
			const char *nl = memchr(p + ref, '\n', n - ref);
			REQUIRE(nl && (size_t)(nl - (p + ref)) == len && len <= MAXLINE);
			REQUIRE(!memcmp(z, p + ref, len) && z[len] == 0);
			cJSON *o = cJSON_ParseWithLength(z, len);
			if (o && cJSON_IsObject(o)) {
				const char *ev = cJSON_GetStringValue(cJSON_GetObjectItem(o, "ev"));
				(void)ev;
				(void)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "job"));
			}
			cJSON_Delete(o);
			ref += len + 1;
		}
		if (got < 0) {
			/* the pending line is really over the maximum */
			const char *nl = memchr(p + ref, '\n', n - ref);
			size_t line = nl ? (size_t)(nl - (p + ref)) : n - ref;
			REQUIRE(line > MAXLINE);
			refused = 1;
		} else {
			REQUIRE(lb_pending(&lb) <= MAXLINE);
		}
		REQUIRE(lb.sb.len <= MAXLINE + 1 + 97 + lb.off);
	}
	if (!refused) {
		/* everything after the last newline is still pending */
		REQUIRE(lb_pending(&lb) == n - ref);
	}
	lb_free(&lb);
	return 0;
}
