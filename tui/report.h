/*
 * report.h - what kloop says about candidates, as text: the population
 * table's rows, a candidate's results (diagnostics, resources,
 * correctness, timing against the baseline), the `show` page and the
 * diff against a parent (by function, then by line).  The panes draw
 * these lines; the REPL prints them.  No curses here.
 */
#ifndef KL_REPORT_H
#define KL_REPORT_H

#include "state.h"
#include "util.h"

/* the population table's header line (no newline) */
void report_table_header(strbuf *sb);
/*
 * One row of the population table for c (no newline): id, parent, origin,
 * status (zStatus instead, when not NULL: e.g. "timing 12"), median time,
 * speedup, and the idea.  The columns line up with report_table_header().
 */
void report_table_row(const struct cand *c, const char *zStatus, strbuf *sb);

/*
 * The results of c's last evaluation as lines: verdict and reason, compile
 * time and command, compiler diagnostics, per-kernel resources, the
 * correctness report, timing with its spread, the baseline and speedup,
 * the last output of a crash.  "not evaluated yet" when there is none.
 */
void report_results(const struct state *st, const struct cand *c, strbuf *sb);

/* `show ID`: a header (name, origin, parents, idea), the results, then
 * the source with line numbers */
void report_show(const struct state *st, const struct cand *c, strbuf *sb);

/*
 * `diff`: b against a (a NULL: b's first parent).  First the functions
 * that changed, were added or removed (tree-sitter, engine/splice.h), then
 * the unified line diff.  0, or -1 + err when b has no parent to compare.
 */
int report_diff(const struct state *st, const struct cand *a, const struct cand *b, strbuf *sb,
                char *err);

/* the short form of a status for narrow columns ("compile_err") */
const char *report_status_short(const char *zStatus);

#endif
