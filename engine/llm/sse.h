/*
 * sse.h - an incremental parser of Server-Sent Events (the text/event-stream
 * format of the WHATWG HTML standard), as the LLM providers stream their
 * replies: bytes go in as they arrive, in chunks cut anywhere (mid-line,
 * between a CR and its LF), and each complete event comes out through a
 * callback with its name and its data.
 */
#ifndef KL_SSE_H
#define KL_SSE_H

#include <stddef.h>

#include "util.h"

struct sse {
	strbuf line;     /* the line being received (no terminator yet) */
	strbuf data;     /* the current event's data lines, joined by "\n" */
	char zEvent[64]; /* the current event's name ("" until an event: field) */
	int hasData;     /* a data: field was seen for the current event */
	int afterCR;     /* the last byte fed was a CR (a following LF belongs to it) */
	int bom;         /* bytes of a leading UTF-8 BOM matched so far; -1: past it */
	size_t maxEvent; /* the largest event accepted, in bytes */
	long nEvents;    /* events dispatched so far */
};

/*
 * Called for each complete event: zEvent is its name ("message" when the
 * stream gave none), zData its data (NUL-terminated, nData bytes, the lines
 * joined by "\n").  Both are valid only during the call.  Return 0 to go on,
 * or -1 (with err filled, KL_ERRLEN bytes) to stop the feed with that error.
 */
typedef int (*sse_event_fn)(const char *zEvent, const char *zData, size_t nData, void *arg,
                            char *err);

/* a parser that refuses events larger than maxEvent bytes (0: 64 MiB) */
void sse_init(struct sse *p, size_t maxEvent);
/* free what the parser holds; it may be initialised again */
void sse_free(struct sse *p);

/*
 * Feed n bytes.  Calls fn for every event the bytes complete.  Returns 0, or
 * -1 with err when fn stopped the feed or an event grew past the limit (the
 * parser should then be dropped).
 */
int sse_feed(struct sse *p, const char *buf, size_t n, sse_event_fn fn, void *arg, char *err);

/*
 * 1 when the bytes fed so far end inside a line (no line break after the
 * last of them): a stream that ends there was cut in the middle of an
 * event, which the standard says is not dispatched.
 */
int sse_partial(const struct sse *p);

/*
 * The stream ended: an event still pending (data without the blank line
 * that ends it) is dispatched, as lenient clients do.  Returns 0 or -1 + err
 * as sse_feed().
 */
int sse_finish(struct sse *p, sse_event_fn fn, void *arg, char *err);

#endif
