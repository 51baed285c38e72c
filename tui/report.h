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
/* the same with a mark (report_mark()) in the id's first column */
void report_table_row_marked(const struct cand *c, const char *zStatus, char mark, strbuf *sb);
/* the header and a row as above, without the roofline column ("roof") when
 * bRoof is 0: where it would be "-" in every row shown (the host's), its
 * room goes to the idea */
void report_table_header_cols(strbuf *sb, int bRoof);
void report_table_row_cols(const struct cand *c, const char *zStatus, char mark, int bRoof,
                           strbuf *sb);
/* whether any of the n candidates st->aCand[aIdx[i]] has a roof column
 * other than "-" */
int report_table_has_roof(const struct state *st, const int *aIdx, int n);
/*
 * The mark of c, one character: 'B' banned, 'P' pinned, '*' the best (best:
 * state_best()'s, given so that a table asks once), '!' a suspect held
 * back, '?' an unverified time, '~' reduced precision (the first that
 * applies), ' ' none.  report_mark_legend() says them in words.
 */
char report_mark(const struct state *st, const struct cand *c, const struct cand *best);
const char *report_mark_legend(void);

/*
 * The results of c's last evaluation as lines, what a person reads first
 * first: verdict and reason, its steering (pinned, banned, suspect), timing
 * with its spread, the baseline and speedup, the comparisons; then the
 * correctness report, the compile time, per-kernel resources, compiler
 * diagnostics, the last output of a crash, and last the compiler's
 * command.  "not evaluated yet" when there is none.
 */
void report_results(const struct state *st, const struct cand *c, strbuf *sb);

/* `show ID`: a header (name, origin, parents, idea), the results, then
 * the source with line numbers */
void report_show(const struct state *st, const struct cand *c, strbuf *sb);

/*
 * `diff`: b against a (a NULL: b's first parent).  First the functions
 * that changed, were added or removed (tree-sitter, engine/code/splice.h), then
 * the unified line diff.  0, or -1 + err when b has no parent to compare.
 */
int report_diff(const struct state *st, const struct cand *a, const struct cand *b, strbuf *sb,
                char *err);

/* a status for people: "compile error" for compile_error (static or zStatus) */
const char *report_status_text(const char *zStatus);

/*
 * c's timing spread: its p10 and p90 in ms (both -1 when c has no timing).
 * Returns 1 when c has a timing.
 */
int report_spread(const struct cand *c, double *p10, double *p90);

/*
 * 1 when a and b (both timed) are the same within the noise: their p10-p90
 * intervals overlap; 0 when they do not; -1 when either has no timing.
 */
int report_same_within_noise(const struct cand *a, const struct cand *b);

/*
 * The best candidate: state_best(), the one definition.  *pTie (may be
 * NULL) gets one within its noise that it did not beat in an A/B (then it
 * is an unconfirmed leader); 0 when it is confirmed.  NULL when none ranks.
 */
const struct cand *report_best(const struct state *st, int *pTie);
/* "best 1.8x (#3)", or "leader 1.8x (#3, unconfirmed: #2 within noise, no
 * A/B)", or "best -": what every front end says of the best */
void report_best_text(const struct state *st, char *buf, size_t n);

/* the first seed among c's ancestors (or c itself), or NULL */
const struct cand *report_seed_of(const struct state *st, const struct cand *c);

/* `compare A B`: the metrics side by side, the A/B timing of the two if
 * one was run, then the diff from a to b */
void report_compare(const struct state *st, const struct cand *a, const struct cand *b, strbuf *sb);

/* the short form of a status for narrow columns ("compile_err") */
const char *report_status_short(const char *zStatus);

#endif
