/*
 * popview.h - the population as a person looks at it: which candidates
 * pass the filter, in which order.  Pure (no curses, no engine calls): the
 * Population pane draws it and the REPL's `list` prints it.
 *
 * Filter terms (all must match): a status (correct, incorrect,
 * compile_error, crashed, timeout, error, new, evaluating) or `failed`
 * (anything evaluated and not correct); an origin (seed, llm, human, sweep,
 * crossover); or FIELD OP VALUE with FIELD one of id, parent, origin,
 * status, time, speedup, idea, name and OP one of = != < > <= >= ~ (text
 * contains, any case) !~ (does not contain).  A candidate without a time
 * or speedup matches no comparison on it.
 */
#ifndef KL_POPVIEW_H
#define KL_POPVIEW_H

#include <stddef.h>

#include "state.h"
#include "util.h"

enum popview_col {
	POP_ID,
	POP_PARENT,
	POP_ORIGIN,
	POP_STATUS,
	POP_TIME,
	POP_SPEEDUP,
	POP_IDEA,
	POP_NCOL
};

/* one filter term */
struct popview_term {
	int field;   /* a popview_col, or POP_NCOL for the name */
	int op;      /* see popview.c */
	char *zText; /* the value as written */
	double num;  /* its value as a number (numeric fields) */
};

struct popview {
	int col;                    /* sort column */
	int desc;                   /* descending */
	struct popview_term *aTerm; /* the filter; none: every candidate */
	int nTerm;
	char *zFilter; /* the filter as written ("" for none) */
	int *aIdx;     /* indices into st->aCand, in display order */
	int nIdx;
	size_t nIdxAlloc;
	const struct state *stSeen; /* the state aIdx was built from */
	int nEventsSeen;            /* and its event count then */
	int nCandSeen;              /* and its candidate count */
	int dirty;                  /* sort or filter changed since */
};

/* the column names, NULL-ended: id parent origin status time speedup idea */
extern const char *const popview_columns[];

/* a fresh view: sorted by id, no filter */
void popview_init(struct popview *v);
void popview_free(struct popview *v);

/* the column named z, or -1 */
int popview_column(const char *z);

/*
 * Sort by column zCol; zOrder "asc", "desc" or NULL (the column's natural
 * order: speedup descending, the others ascending).  0, or -1 + err naming
 * the column and the known ones.
 */
int popview_set_sort(struct popview *v, const char *zCol, const char *zOrder, char *err);

/* sort by col: the same column again reverses the order */
void popview_cycle_sort(struct popview *v, int col);

/*
 * Filter by the n terms (none, or the one word "all": no filter).  0, or
 * -1 + err naming the term and what was expected (the filter is unchanged).
 */
int popview_set_filter(struct popview *v, char *const *azTerm, int n, char *err);

/* 1 if candidate c passes the filter */
int popview_match(const struct popview *v, const struct cand *c);

/*
 * Rebuild the order if st changed (another state, more events or
 * candidates) or the sort or filter did; cheap otherwise.
 */
void popview_refresh(struct popview *v, const struct state *st);

/* the display row of candidate id, or -1 when filtered out or unknown */
int popview_row(const struct popview *v, const struct state *st, int id);

/* "sorted by speedup, descending; filter: correct" into sb */
void popview_describe(const struct popview *v, strbuf *sb);

#endif
