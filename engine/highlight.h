/*
 * highlight.h - syntax highlighting of C, C++ and CUDA sources: spans of
 * (byte range, capture name) from kloop's highlight query
 * (grammars/queries/highlights.scm), for the code pane.
 *
 * Spans never overlap and come sorted by start; where captures nest, the
 * innermost wins, and where two patterns capture the same node, the one
 * written first in the query wins.  Bytes no capture covers have no span.
 * Capture names ("keyword", "function.kernel", "punctuation.launch", ...)
 * are static strings owned by the compiled query.  The matching is
 * hlmatch.c's, compiled from the embedded highlights.scm on first use
 * (make that first call from one thread; later calls may run on several
 * threads at once, on different docs).
 *
 * A `struct highlight` keeps the spans of a whole document and updates
 * them after an edit (syntax_edit()) by re-highlighting only the range the
 * edit may have changed.
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

/* the spans of a document, kept up to date by highlight_update() */
struct highlight {
	struct hl_span *spans; /* sorted, non-overlapping, owned */
	size_t n;              /* spans in use */
	size_t alloc;          /* spans allocated */
};

#define HIGHLIGHT_INIT                                                                             \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

/*
 * Highlight bytes [start, end) of d (clipped to the source): fills *out
 * with a fresh array of *n spans, clipped to the range, that the caller
 * frees.  Returns 0, or -1 with err when the highlight query cannot be
 * compiled (a defect of kloop's query).
 */
int highlight_range(const struct syntax_doc *d, uint32_t start, uint32_t end, struct hl_span **out,
                    size_t *n, char *err);

/*
 * The same spans computed by tree-sitter's own query cursor over the
 * compiled highlights.scm (syntax_query_get()): the reference that
 * highlight_range() is tested against.  Costs a ts_query_new() once per
 * process and about five times as long per call.
 */
int highlight_range_reference(const struct syntax_doc *d, uint32_t start, uint32_t end,
                              struct hl_span **out, size_t *n, char *err);

/* free the compiled matcher (for leak checkers); the next call compiles it again */
void highlight_shutdown(void);

/* highlight all of d into h (replacing what h held); 0 or -1 with err */
int highlight_all(struct highlight *h, const struct syntax_doc *d, char *err);

/*
 * Bring h, the spans of d before the edit chg (from syntax_edit()), up to
 * date with d after it: spans outside the changed range are kept (shifted
 * by the edit's length change), the changed range, widened to whole lines
 * and to the spans it cuts, is highlighted again.  Same result as
 * highlight_all() on the edited doc.  Returns 0 or -1 with err.
 */
int highlight_update(struct highlight *h, const struct syntax_doc *d,
                     const struct syntax_change *chg, char *err);

/* free h's spans; h may be reused */
void highlight_free(struct highlight *h);

/* the span covering byte b in h (binary search), or NULL */
const struct hl_span *highlight_at(const struct highlight *h, uint32_t b);

#endif
