/*
 * popview.c - filtering and sorting the population for display: parse
 * filter terms, match candidates, keep an index array in display order.
 */
#include "popview.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { OP_EQ, OP_NE, OP_LT, OP_GT, OP_LE, OP_GE, OP_HAS, OP_HASNT };

const char *const popview_columns[] = {"id",   "parent",  "origin", "status",
                                       "time", "speedup", "idea",   NULL};

static const char *const origins[] = {"seed", "llm", "human", "sweep", "crossover", NULL};

void popview_init(struct popview *v)
{
	memset(v, 0, sizeof *v);
	v->col = POP_ID;
	v->zFilter = xstrdup("");
	v->dirty = 1;
}

static void free_terms(struct popview_term *a, int n)
{
	for (int i = 0; i < n; i++)
		free(a[i].zText);
	free(a);
}

void popview_free(struct popview *v)
{
	free_terms(v->aTerm, v->nTerm);
	free(v->zFilter);
	free(v->aIdx);
	memset(v, 0, sizeof *v);
}

int popview_column(const char *z)
{
	for (int i = 0; popview_columns[i]; i++)
		if (!strcmp(popview_columns[i], z))
			return i;
	return -1;
}

int popview_set_sort(struct popview *v, const char *zCol, const char *zOrder, char *err)
{
	int col = popview_column(zCol);
	if (col < 0)
		return kl_err(err,
		              "sort: unknown column '%s' (known: id, parent, origin, status, time, "
		              "speedup, idea)",
		              zCol);
	v->col = col;
	v->desc = zOrder ? !strcmp(zOrder, "desc") : col == POP_SPEEDUP;
	v->dirty = 1;
	return 0;
}

void popview_cycle_sort(struct popview *v, int col)
{
	if (v->col == col)
		v->desc = !v->desc;
	else
		v->col = col, v->desc = col == POP_SPEEDUP;
	v->dirty = 1;
}

static int in_list(const char *const *l, const char *z)
{
	for (int i = 0; l[i]; i++)
		if (!strcmp(l[i], z))
			return 1;
	return 0;
}

/* z is a candidate status's name (status.h's table) */
static int is_status_name(const char *z)
{
	for (int s = 0; s < STATUS_COUNT; s++)
		if (!strcmp(z, status_name((enum status)s)))
			return 1;
	return 0;
}

static int numeric(int field)
{
	return field == POP_ID || field == POP_PARENT || field == POP_TIME || field == POP_SPEEDUP;
}

/* parse one term into t; 0 or -1 + err */
static int parse_term(const char *z, struct popview_term *t, char *err)
{
	memset(t, 0, sizeof *t);
	if (is_status_name(z) || !strcmp(z, "failed")) {
		t->field = POP_STATUS, t->op = OP_EQ, t->zText = xstrdup(z);
		return 0;
	}
	if (in_list(origins, z)) {
		t->field = POP_ORIGIN, t->op = OP_EQ, t->zText = xstrdup(z);
		return 0;
	}
	size_t k = strcspn(z, "=!<>~");
	if (!z[k])
		return kl_err(
		    err,
		    "filter: '%s' is neither a status (correct, incorrect, compile_error, "
		    "crashed, timeout, error, new, evaluating, failed), an origin (seed, llm, "
		    "human, sweep, crossover) nor FIELD OP VALUE (e.g. speedup>1.5)",
		    z);
	char *field = xstrndup(z, k);
	const char *o = z + k;
	static const struct {
		const char *z;
		int op;
	} ops[] = {{"!=", OP_NE}, {"<=", OP_LE}, {">=", OP_GE}, {"!~", OP_HASNT},
	           {"=", OP_EQ},  {"<", OP_LT},  {">", OP_GT},  {"~", OP_HAS}};
	size_t i, nOps = sizeof ops / sizeof *ops;
	for (i = 0; i < nOps; i++)
		if (!strncmp(o, ops[i].z, strlen(ops[i].z)))
			break;
	if (i == nOps) {
		kl_err(err, "filter: '%s': expected one of = != < > <= >= ~ !~ after '%s'", z,
		       field);
		free(field);
		return -1;
	}
	const char *val = o + strlen(ops[i].z);
	t->op = ops[i].op;
	t->field = !strcmp(field, "name") ? POP_NCOL : popview_column(field);
	if (t->field < 0) {
		kl_err(
		    err,
		    "filter: unknown field '%s' (known: id, parent, origin, status, time, speedup, "
		    "idea, name)",
		    field);
		free(field);
		return -1;
	}
	if (!*val) {
		kl_err(err, "filter: '%s': no value after the operator", z);
		free(field);
		return -1;
	}
	if (numeric(t->field) && t->op != OP_HAS && t->op != OP_HASNT) {
		if (num_parse(val, &t->num) < 0) {
			kl_err(err, "filter: '%s': %s takes a number, got '%s'", z, field, val);
			free(field);
			return -1;
		}
	} else if (!numeric(t->field) &&
	           (t->op == OP_LT || t->op == OP_GT || t->op == OP_LE || t->op == OP_GE)) {
		kl_err(err, "filter: '%s': %s is text; use = != ~ or !~", z, field);
		free(field);
		return -1;
	}
	free(field);
	t->zText = xstrdup(val);
	return 0;
}

int popview_set_filter(struct popview *v, char *const *azTerm, int n, char *err)
{
	if (n == 1 && !strcmp(azTerm[0], "all"))
		n = 0;
	struct popview_term *a = n ? xcalloc((size_t)n, sizeof *a) : NULL;
	for (int i = 0; i < n; i++)
		if (parse_term(azTerm[i], &a[i], err) < 0) {
			free_terms(a, i);
			return -1;
		}
	free_terms(v->aTerm, v->nTerm);
	v->aTerm = a;
	v->nTerm = n;
	strbuf sb = STRBUF_INIT;
	for (int i = 0; i < n; i++)
		sb_addf(&sb, "%s%s", i ? " " : "", azTerm[i]);
	free(v->zFilter);
	v->zFilter = sb.buf ? sb_detach(&sb) : xstrdup("");
	v->dirty = 1;
	return 0;
}

static double num_of(const struct cand *c, int field)
{
	switch (field) {
	case POP_ID:
		return c->id;
	case POP_PARENT:
		return c->nParent ? c->aParent[0] : NAN;
	case POP_TIME:
		return c->timeMs >= 0 ? c->timeMs : NAN;
	case POP_SPEEDUP:
		return c->speedup >= 0 ? c->speedup : NAN;
	}
	return NAN;
}

static const char *text_of(const struct cand *c, int field)
{
	switch (field) {
	case POP_ORIGIN:
		return c->zOrigin;
	case POP_STATUS:
		return c->zStatus;
	case POP_IDEA:
		return c->zIdea ? c->zIdea : "";
	case POP_NCOL:
		return c->zName;
	}
	return "";
}

static int term_match(const struct popview_term *t, const struct cand *c)
{
	if (t->field == POP_STATUS && t->op == OP_EQ && !strcmp(t->zText, "failed"))
		return status_failed(c->status);
	if (numeric(t->field) && t->op != OP_HAS && t->op != OP_HASNT) {
		double x = num_of(c, t->field);
		if (isnan(x))
			return 0;
		switch (t->op) {
		case OP_EQ:
			return x == t->num;
		case OP_NE:
			return x != t->num;
		case OP_LT:
			return x < t->num;
		case OP_GT:
			return x > t->num;
		case OP_LE:
			return x <= t->num;
		default:
			return x >= t->num;
		}
	}
	char nb[32];
	const char *s = text_of(c, t->field);
	if (numeric(t->field)) {
		double x = num_of(c, t->field);
		snprintf(nb, sizeof nb, "%g", x);
		s = isnan(x) ? "" : nb;
	}
	switch (t->op) {
	case OP_EQ:
		return !strcmp(s, t->zText);
	case OP_NE:
		return strcmp(s, t->zText) != 0;
	case OP_HAS:
		return strcasestr(s, t->zText) != NULL;
	default:
		return strcasestr(s, t->zText) == NULL;
	}
}

int popview_match(const struct popview *v, const struct cand *c)
{
	for (int i = 0; i < v->nTerm; i++)
		if (!term_match(&v->aTerm[i], c))
			return 0;
	return 1;
}

/* qsort has no context argument: the view being sorted */
static const struct popview *sort_v;
static const struct state *sort_st;

static int cmp(const void *pa, const void *pb)
{
	const struct cand *a = &sort_st->aCand[*(const int *)pa];
	const struct cand *b = &sort_st->aCand[*(const int *)pb];
	int col = sort_v->col, r = 0;
	if (col == POP_ID || col == POP_PARENT || col == POP_TIME || col == POP_SPEEDUP) {
		double x = num_of(a, col), y = num_of(b, col);
		/* candidates without the value go last, whatever the order */
		if (isnan(x) != isnan(y))
			return isnan(x) ? 1 : -1;
		if (!isnan(x))
			r = x < y ? -1 : x > y ? 1 : 0;
	} else {
		const char *x = text_of(a, col), *y = text_of(b, col);
		if (!*x != !*y)
			return !*x ? 1 : -1;
		r = strcmp(x, y);
	}
	if (sort_v->desc)
		r = -r;
	if (!r)
		r = a->id < b->id ? -1 : a->id > b->id;
	return r;
}

void popview_refresh(struct popview *v, const struct state *st)
{
	if (!v->dirty && v->stSeen == st && v->nEventsSeen == st->nEvents &&
	    v->nCandSeen == st->nCand)
		return;
	xgrow((void **)&v->aIdx, &v->nIdxAlloc, (size_t)st->nCand + 1, sizeof *v->aIdx);
	v->nIdx = 0;
	for (int i = 0; i < st->nCand; i++)
		if (popview_match(v, &st->aCand[i]))
			v->aIdx[v->nIdx++] = i;
	sort_v = v;
	sort_st = st;
	qsort(v->aIdx, (size_t)v->nIdx, sizeof *v->aIdx, cmp);
	v->stSeen = st;
	v->nEventsSeen = st->nEvents;
	v->nCandSeen = st->nCand;
	v->dirty = 0;
}

int popview_row(const struct popview *v, const struct state *st, int id)
{
	for (int i = 0; i < v->nIdx; i++)
		if (st->aCand[v->aIdx[i]].id == id)
			return i;
	return -1;
}

void popview_describe(const struct popview *v, strbuf *sb)
{
	sb_addf(sb, "sorted by %s, %s", popview_columns[v->col],
	        v->desc ? "descending" : "ascending");
	if (v->nTerm)
		sb_addf(sb, "; filter: %s", v->zFilter);
}
