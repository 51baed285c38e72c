/*
 * highlight.c - runs kloop's highlight query over a byte range with
 * tree-sitter's query cursor and resolves nested and duplicate captures
 * into flat, non-overlapping spans.
 */
#include "highlight.h"

#include <stdlib.h>

/*
 * Each byte of the range keeps the best capture covering it, as one key:
 * the capturing node's length (shorter, i.e. inner, wins), then the
 * pattern index (earlier wins), then the capture id.  No sorting needed:
 * the captures are tree nodes, so they nest or are disjoint.
 */
#define NO_CAPTURE UINT64_MAX

/* capture `capture` of pattern `pattern` on node: keep it in aKey[] (the
 * bytes [start, end)) where it is the best */
static void note(uint64_t *aKey, uint32_t start, uint32_t end, TSNode node, uint32_t pattern,
                 uint32_t capture)
{
	uint32_t s = ts_node_start_byte(node), e = ts_node_end_byte(node);
	uint64_t key =
	    (uint64_t)(e - s) << 32 | (uint64_t)(pattern & 0xFFFF) << 16 | (capture & 0xFFFF);
	if (s < start)
		s = start;
	if (e > end)
		e = end;
	for (uint32_t i = s; i < e; i++)
		if (key < aKey[i - start])
			aKey[i - start] = key;
}

/* the capture id a key names, or NO_CAPTURE */
static uint64_t key_capture(uint64_t key)
{
	return key == NO_CAPTURE ? NO_CAPTURE : (key & 0xFFFF);
}

int highlight_ready(void)
{
	return !syntax_query_busy("highlights");
}

int highlight_range(const struct syntax_doc *d, uint32_t start, uint32_t end, struct hl_span **out,
                    size_t *n, char *err)
{
	*out = NULL;
	*n = 0;
	const struct syntax_query *sq = syntax_query_get("highlights", err);
	if (!sq)
		return -1;
	if (end > d->len)
		end = (uint32_t)d->len;
	if (start >= end)
		return 0;
	uint32_t width = end - start;
	uint64_t *aKey = xmalloc((size_t)width * sizeof *aKey);
	for (uint32_t i = 0; i < width; i++)
		aKey[i] = NO_CAPTURE;

	const TSQuery *q = syntax_query_ts(sq);
	TSQueryCursor *qc = ts_query_cursor_new();
	ts_query_cursor_set_byte_range(qc, start, end);
	ts_query_cursor_exec(qc, q, syntax_root(d));
	TSQueryMatch m;
	while (ts_query_cursor_next_match(qc, &m)) {
		if (!syntax_query_accept(sq, &m, d))
			continue;
		for (uint16_t i = 0; i < m.capture_count; i++)
			note(aKey, start, end, m.captures[i].node, m.pattern_index,
			     m.captures[i].index);
	}
	ts_query_cursor_delete(qc);

	/* runs of bytes with the same capture become spans */
	struct hl_span *spans = NULL;
	size_t nspans = 0, aspans = 0;
	for (uint32_t i = 0; i < width;) {
		uint64_t id = key_capture(aKey[i]);
		uint32_t j = i + 1;
		while (j < width && key_capture(aKey[j]) == id)
			j++;
		if (id != NO_CAPTURE) {
			uint32_t len;
			xgrow((void **)&spans, &aspans, nspans + 1, sizeof *spans);
			spans[nspans++] =
			    (struct hl_span){start + i, start + j,
			                     ts_query_capture_name_for_id(q, (uint32_t)id, &len)};
		}
		i = j;
	}
	free(aKey);
	*out = spans;
	*n = nspans;
	return 0;
}
