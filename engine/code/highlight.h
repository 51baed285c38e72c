/*
 * highlight.h - syntax highlighting of C, C++ and CUDA sources: spans of
 * (byte range, capture name) from kloop's highlight query
 * (grammars/queries/highlights.scm), for the code pane, which asks for
 * the lines on screen only.
 *
 * Spans never overlap and come sorted by start; where captures nest, the
 * innermost wins, and where two patterns capture the same node, the one
 * written first in the query wins.  Bytes no capture covers have no span.
 * Capture names ("keyword", "function.kernel", "punctuation.launch", ...)
 * are static strings owned by the compiled query.  The matching is
 * tree-sitter's own query cursor, limited to the range asked for
 * (ts_query_cursor_set_byte_range), over the query compiled once per
 * process (syntax_query_get()).
 */
#ifndef KL_HIGHLIGHT_H
#define KL_HIGHLIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "syntax.h"

struct hl_span {
	uint32_t start;   /* first byte */
	uint32_t end;     /* one past the last byte */
	const char *name; /* capture name without the @, static */
};

/*
 * Highlight bytes [start, end) of d (clipped to the source): fills *out
 * with a fresh array of *n spans, clipped to the range, that the caller
 * frees (NULL and 0 for an empty range).  Returns 0, or -1 with err when
 * the highlight query cannot be compiled (a defect of kloop's query).
 */
int highlight_range(const struct syntax_doc *d, uint32_t start, uint32_t end, struct hl_span **out,
                    size_t *n, char *err);

/* 0 while the highlight query is being compiled on the warming thread
 * (syntax_query_warm()), when highlight_range() would wait for it; else 1 */
int highlight_ready(void);

#endif
