/*
 * fuzz_sse.c - libFuzzer target for the SSE parser (sse.h).  The input's
 * first byte seeds where the stream is cut into chunks; the rest is the
 * stream.  Besides the sanitizers it checks that the events (names and
 * data) are the same however the bytes are cut: fed whole, fed byte by
 * byte, and fed in the seeded chunks.
 * Build and run: make fuzz (FUZZ_SECONDS per target).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sse.h"
#include "util.h"

#define REQUIRE(c)                                                                                 \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "REQUIRE failed at %s:%d: %s\n", __FILE__, __LINE__, #c);  \
			__builtin_trap();                                                          \
		}                                                                                  \
	} while (0)

static int on_event(const char *zEvent, const char *zData, size_t nData, void *arg, char *err)
{
	strbuf *log = arg;
	(void)err;
	REQUIRE(zEvent && *zEvent && zData && strlen(zData) <= nData);
	sb_addf(log, "%s|%zu|", zEvent, nData);
	sb_add(log, zData, nData);
	sb_add(log, "\n", 1);
	return 0;
}

/* feed in chunks of the sizes the seed gives (0: whole, 1: bytes); the
 * events go to log; returns the feed's status */
static int run(const uint8_t *p, size_t n, unsigned seed, size_t maxEvent, strbuf *log)
{
	struct sse s;
	char err[KL_ERRLEN];
	sse_init(&s, maxEvent);
	int rc = 0;
	size_t i = 0;
	while (i < n && rc == 0) {
		size_t k = seed == 0 ? n : seed == 1 ? 1 : 1 + (seed * (i + 7)) % 13;
		if (k > n - i)
			k = n - i;
		rc = sse_feed(&s, (const char *)p + i, k, on_event, log, err);
		i += k;
	}
	if (rc == 0)
		rc = sse_finish(&s, on_event, log, err);
	sse_free(&s);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned seed = data[0];
	const uint8_t *p = data + 1;
	size_t n = size - 1;
	size_t maxEvent = seed & 1 ? 64 : 0; /* a small limit half the time */
	strbuf a = STRBUF_INIT, b = STRBUF_INIT, c = STRBUF_INIT;
	int ra = run(p, n, 0, maxEvent, &a);
	int rb = run(p, n, 1, maxEvent, &b);
	int rc = run(p, n, seed | 2, maxEvent, &c);
	if (ra == 0 && rb == 0 && rc == 0) {
		REQUIRE(a.len == b.len && (!a.len || !memcmp(a.buf, b.buf, a.len)));
		REQUIRE(a.len == c.len && (!a.len || !memcmp(a.buf, c.buf, a.len)));
	}
	sb_free(&a);
	sb_free(&b);
	sb_free(&c);
	return 0;
}
