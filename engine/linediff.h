/*
 * linediff.h - a line diff of two texts (Myers' O(ND) algorithm) written
 * as unified hunks, for the Code pane's diff toggle, the `diff` command,
 * the archive's diffs against a parent and the session report.  Pure.
 */
#ifndef KL_LINEDIFF_H
#define KL_LINEDIFF_H

#include "util.h"

/*
 * Append to sb the unified diff of a and b (NUL-terminated texts) with
 * `context` lines of context around each change: "@@ -l,n +l,n @@" hunk
 * headers, then lines starting with ' ', '-' or '+'.  Texts of more than
 * maxEdits differing lines are summarized in one line instead (the
 * search is bounded).  Returns the number of lines added plus removed.
 */
int linediff_unified(const char *a, const char *b, int context, int maxEdits, strbuf *sb);

#endif
