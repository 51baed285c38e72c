/*
 * hlmatch.c - reads highlights.scm (a subset of tree-sitter's query
 * language) into flat tables indexed by node symbol, and finds the
 * captures in one walk of a tree (tswalk.c) instead of through
 * ts_query_cursor.
 *
 * Alternations are expanded at compile time, so each pattern becomes one
 * or more alternation-free trees of steps.  Every step carrying a capture
 * is a candidate, listed under its node's symbol.  The walk keeps the
 * stack of ancestors (node, symbol, field, child index); at each node the
 * candidates for its symbol are checked by walking up the ancestors
 * against the candidate's chain of parent steps, and the other child
 * patterns of each step on the chain are matched against that ancestor's
 * children in order (greedy leftmost, which finds a match whenever one
 * exists, since each child pattern is matched on its own).  Predicate
 * verdicts are remembered per text for the rest of a walk.
 */
#include "hlmatch.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syntax.h"
#include "tswalk.h"
#include "util.h"

#define NO_STEP UINT32_MAX
/* nesting of child patterns below a step the matcher scans children of */
#define HLM_MAX_DEPTH 16

/* one node of an alternation-free pattern tree */
struct hstep {
	uint16_t sym;     /* the node's public symbol */
	uint16_t field;   /* the field it must hang on, 0 for any */
	uint32_t parent;  /* the parent step, NO_STEP at a pattern's root */
	uint32_t pos;     /* its place among the parent's child patterns */
	uint32_t kid0;    /* first of its child patterns in hlm.aKid */
	uint32_t nkid;    /* child patterns */
	uint32_t cap0;    /* first of its capture ids in hlm.aCap */
	uint32_t ncap;    /* captures on this step */
	uint32_t pred0;   /* first of its predicates (indices in hlm.aPred) in hlm.aStepPred */
	uint32_t npred;   /* predicates testing this step's captures */
	uint32_t pattern; /* the query pattern (tree-sitter's index) */
};

struct hlm {
	struct hstep *aStep;        /* every step of every expanded pattern */
	size_t nStep, aStepAlloc;   /* steps used / allocated */
	uint32_t *aKid;             /* child step indices, contiguous per step */
	size_t nKid, aKidAlloc;     /* entries used / allocated */
	uint32_t *aCap;             /* capture ids of steps, contiguous per step */
	size_t nCap, aCapAlloc;     /* entries used / allocated */
	struct syntax_pred *aPred;  /* predicates of all patterns */
	size_t nPred, aPredAlloc;   /* predicates used / allocated */
	uint32_t *aStepPred;        /* predicate indices, contiguous per step */
	size_t nStepPred, aSPAlloc; /* entries used / allocated */
	char **azCapture;           /* capture names by id */
	size_t nCapture, aCapture;  /* names used / allocated */
	uint32_t nPattern;          /* top-level patterns */
	uint32_t nSym;              /* the grammar's symbol count */
	uint32_t *aCandOff;         /* per symbol: its candidates are aCand[off[s], off[s+1]) */
	uint32_t *aCand;            /* candidate (captured) step indices, grouped by symbol */
	uint8_t *aNeedField;        /* per symbol: some step of that symbol names a field */
};

/* ---- reading the query ---- */

enum { A_NODE, A_STR, A_ALT };

/* a parsed pattern item, before alternations are expanded */
struct ast {
	int kind;           /* A_NODE, A_STR (anonymous node) or A_ALT */
	uint16_t sym;       /* A_NODE / A_STR: the symbol */
	uint16_t field;     /* field prefix, 0 for none */
	struct ast **aKid;  /* A_NODE: child patterns; A_ALT: alternatives */
	size_t nKid, aKidA; /* entries used / allocated */
	uint32_t *aCap;     /* capture ids written after the item */
	size_t nCap, aCapA; /* entries used / allocated */
};

/* the reader's state */
struct rd {
	const TSLanguage *lang;
	const char *zName;  /* the query's name, for messages */
	const char *zBeg;   /* the text */
	const char *zEnd;   /* its end */
	const char *p;      /* where reading is */
	char *err;          /* the caller's message buffer */
	struct hlm *m;      /* what is being built */
	struct ast **aAll;  /* every ast allocated, to free at the end */
	size_t nAll, aAllA; /* entries used / allocated */
};

static unsigned line_at(const struct rd *r, const char *p)
{
	unsigned line = 1;
	for (const char *q = r->zBeg; q < p && q < r->zEnd; q++)
		line += *q == '\n';
	return line;
}

/* a message "NAME: line L: ..." at p; returns -1 */
static int rd_err(struct rd *r, const char *p, const char *what, const char *arg, int argn)
{
	char found[64];
	snprintf(found, sizeof found, "%.*s", argn, arg ? arg : "");
	kl_err(r->err, "%s: line %u: %s%s%s%s", r->zName, line_at(r, p), what, arg ? " `" : "",
	       arg ? found : "", arg ? "`" : "");
	return -1;
}

static int rd_unsupported(struct rd *r, const char *p, const char *what, const char *tok, int n)
{
	char found[64];
	snprintf(found, sizeof found, "%.*s", n, tok);
	kl_err(r->err, "%s: line %u: %s `%s` is not supported by kloop's highlighter", r->zName,
	       line_at(r, p), what, found);
	return -1;
}

static void skip_space(struct rd *r)
{
	while (r->p < r->zEnd) {
		if (isspace((unsigned char)*r->p))
			r->p++;
		else if (*r->p == ';')
			while (r->p < r->zEnd && *r->p != '\n')
				r->p++;
		else
			break;
	}
}

static int is_ident(int c)
{
	return isalnum(c) || c == '_' || c == '-' || c == '.' || c == '?' || c == '!' || c == '/';
}

/* an identifier at r->p: its length (0 if none) */
static size_t ident_len(const struct rd *r, const char *p)
{
	size_t n = 0;
	while (p + n < r->zEnd && is_ident((unsigned char)p[n]))
		n++;
	return n;
}

static struct ast *ast_new(struct rd *r, int kind)
{
	struct ast *a = xcalloc(1, sizeof *a);
	a->kind = kind;
	xgrow((void **)&r->aAll, &r->aAllA, r->nAll + 1, sizeof *r->aAll);
	r->aAll[r->nAll++] = a;
	return a;
}

static void ast_add_kid(struct ast *a, struct ast *k)
{
	xgrow((void **)&a->aKid, &a->aKidA, a->nKid + 1, sizeof *a->aKid);
	a->aKid[a->nKid++] = k;
}

static void ast_add_cap(struct ast *a, uint32_t cap)
{
	xgrow((void **)&a->aCap, &a->aCapA, a->nCap + 1, sizeof *a->aCap);
	a->aCap[a->nCap++] = cap;
}

/* the id of capture name z[0..n), added in first-appearance order when add, else -1 */
static int64_t capture_id(struct hlm *m, const char *z, size_t n, int add)
{
	for (size_t i = 0; i < m->nCapture; i++)
		if (strlen(m->azCapture[i]) == n && memcmp(m->azCapture[i], z, n) == 0)
			return (int64_t)i;
	if (!add)
		return -1;
	xgrow((void **)&m->azCapture, &m->aCapture, m->nCapture + 1, sizeof *m->azCapture);
	m->azCapture[m->nCapture] = xstrndup(z, n);
	return (int64_t)m->nCapture++;
}

/* a "string" at r->p (tree-sitter's escapes): a fresh copy in *out, length *n */
static int read_string(struct rd *r, char **out, size_t *n)
{
	const char *start = r->p++;
	strbuf sb = STRBUF_INIT;
	while (r->p < r->zEnd && *r->p != '"') {
		char c = *r->p++;
		if (c == '\\' && r->p < r->zEnd) {
			c = *r->p++;
			c = c == 'n'   ? '\n'
			    : c == 'r' ? '\r'
			    : c == 't' ? '\t'
			    : c == '0' ? '\0'
			               : c;
		}
		sb_add(&sb, &c, 1);
	}
	if (r->p >= r->zEnd) {
		sb_free(&sb);
		return rd_err(r, start, "unterminated string", NULL, 0);
	}
	r->p++;
	*n = sb.len;
	if (!sb.buf)
		sb_grow(&sb, 0);
	*out = sb_detach(&sb);
	return 0;
}

/* after an item: captures; quantifiers are refused */
static int read_suffix(struct rd *r, struct ast *a)
{
	for (;;) {
		skip_space(r);
		if (r->p >= r->zEnd)
			return 0;
		char c = *r->p;
		if (c == '*' || c == '+' || c == '?')
			return rd_unsupported(r, r->p, "quantifier", r->p, 1);
		if (c != '@')
			return 0;
		size_t n = ident_len(r, r->p + 1);
		if (!n)
			return rd_err(r, r->p, "a capture needs a name after", "@", 1);
		ast_add_cap(a, (uint32_t)capture_id(r->m, r->p + 1, n, 1));
		r->p += 1 + n;
	}
}

static int read_item(struct rd *r, struct ast **out, struct syntax_pred **ppreds, size_t *npreds,
                     size_t *apreds, int top);

/* a predicate `(#name args...)`, r->p at '#': appended to the pattern's list */
static int read_pred(struct rd *r, struct syntax_pred **ppreds, size_t *npreds, size_t *apreds)
{
	const char *start = r->p;
	size_t n = ident_len(r, r->p + 1);
	char *op = xstrndup(r->p + 1, n);
	r->p += 1 + n;
	struct syntax_pred p;
	int known = syntax_pred_op(&p, op) == 0;
	int nargs = 0, rc = 0;
	for (;;) {
		skip_space(r);
		if (r->p >= r->zEnd) {
			rc = rd_err(r, start, "unterminated predicate", NULL, 0);
			break;
		}
		if (*r->p == ')') {
			r->p++;
			break;
		}
		if (*r->p == '@') {
			size_t cn = ident_len(r, r->p + 1);
			int64_t id = capture_id(r->m, r->p + 1, cn, 0);
			if (id < 0) {
				rc = rd_err(r, r->p, "unknown capture", r->p, (int)cn + 1);
				break;
			}
			if (known && nargs == 0)
				p.capture = (uint32_t)id;
			else if (known) {
				rc = rd_unsupported(r, start, "predicate comparing two captures",
				                    start, (int)n + 1);
				break;
			}
			r->p += 1 + cn;
		} else if (*r->p == '"') {
			char *s;
			size_t sn;
			if ((rc = read_string(r, &s, &sn)) < 0)
				break;
			if (known && nargs == 0) {
				free(s);
				rc = rd_err(r, start, "a predicate needs a capture first:", op,
				            (int)strlen(op));
				break;
			}
			if (known)
				syntax_pred_add_str(&p, s, sn);
			free(s);
		} else {
			size_t wn = ident_len(r, r->p);
			if (!wn) {
				rc = rd_err(r, r->p, "unexpected", r->p, 1);
				break;
			}
			if (known)
				syntax_pred_add_str(&p, r->p, wn);
			r->p += wn;
		}
		nargs++;
	}
	if (known && rc == 0 && nargs < 2)
		rc = rd_err(r, start, "a predicate needs a capture and a value:", op,
		            (int)strlen(op));
	char why[KL_ERRLEN];
	if (known && rc == 0 && syntax_pred_finish(&p, why) < 0)
		rc = rd_err(r, start, why, NULL, 0);
	free(op);
	if (!known)
		return rc;
	if (rc < 0) {
		syntax_pred_free(&p);
		return rc;
	}
	xgrow((void **)ppreds, apreds, *npreds + 1, sizeof **ppreds);
	(*ppreds)[(*npreds)++] = p;
	return 0;
}

/* the symbol of node type z[0..n), named or anonymous; 0 when unknown */
static uint16_t symbol_of(struct rd *r, const char *z, size_t n, int named)
{
	if ((n == 5 && memcmp(z, "ERROR", 5) == 0) || n == 0)
		return 0;
	return ts_language_symbol_for_name(r->lang, z, (uint32_t)n, named);
}

/* `( ... )` at r->p: a node pattern or a grouping */
static int read_paren(struct rd *r, struct ast **out, struct syntax_pred **ppreds, size_t *npreds,
                      size_t *apreds, int top)
{
	const char *open = r->p++;
	skip_space(r);
	if (r->p >= r->zEnd)
		return rd_err(r, open, "unbalanced", "(", 1);
	char c = *r->p;
	if (c == '(' || c == '[' || c == '"') {
		/* a grouping: one pattern plus predicates */
		struct ast *inner = NULL;
		for (;;) {
			skip_space(r);
			if (r->p >= r->zEnd)
				return rd_err(r, open, "unbalanced", "(", 1);
			if (*r->p == ')') {
				r->p++;
				break;
			}
			if (r->p[0] == '(' && r->p + 1 < r->zEnd && r->p[1] == '#') {
				r->p++;
				if (read_pred(r, ppreds, npreds, apreds) < 0)
					return -1;
				continue;
			}
			if (inner)
				return rd_unsupported(r, r->p, "grouping of sibling patterns", open,
				                      2);
			if (read_item(r, &inner, ppreds, npreds, apreds, 0) < 0)
				return -1;
		}
		if (!inner)
			return rd_err(r, open, "empty grouping", NULL, 0);
		*out = inner;
		return read_suffix(r, inner);
	}
	size_t n = ident_len(r, r->p);
	if (!n)
		return rd_err(r, r->p, "expected a node type, found", r->p, 1);
	const char *name = r->p;
	if (n == 1 && *name == '_')
		return rd_unsupported(r, name, "wildcard", name, 1);
	if (memchr(name, '/', n))
		return rd_unsupported(r, name, "supertype", name, (int)n);
	if ((n == 5 && memcmp(name, "ERROR", 5) == 0) ||
	    (n == 7 && memcmp(name, "MISSING", 7) == 0))
		return rd_unsupported(r, name, "pattern", name, (int)n);
	uint16_t sym = symbol_of(r, name, n, 1);
	if (!sym)
		return rd_err(r, name, "unknown node type", name, (int)n);
	r->p += n;
	struct ast *a = ast_new(r, A_NODE);
	a->sym = sym;
	for (;;) {
		skip_space(r);
		if (r->p >= r->zEnd)
			return rd_err(r, open, "unbalanced", "(", 1);
		c = *r->p;
		if (c == ')') {
			r->p++;
			break;
		}
		if (c == '(' && r->p + 1 < r->zEnd && r->p[1] == '#') {
			r->p++;
			if (read_pred(r, ppreds, npreds, apreds) < 0)
				return -1;
			continue;
		}
		if (c == '.')
			return rd_unsupported(r, r->p, "anchor", r->p, 1);
		if (c == '!')
			return rd_unsupported(r, r->p, "negated field", r->p,
			                      (int)ident_len(r, r->p));
		uint16_t field = 0;
		size_t fn = ident_len(r, r->p);
		if (fn && r->p + fn < r->zEnd && r->p[fn] == ':') {
			field = ts_language_field_id_for_name(r->lang, r->p, (uint32_t)fn);
			if (!field)
				return rd_err(r, r->p, "unknown field", r->p, (int)fn);
			r->p += fn + 1;
			skip_space(r);
		}
		struct ast *k;
		if (read_item(r, &k, ppreds, npreds, apreds, 0) < 0)
			return -1;
		k->field = field;
		ast_add_kid(a, k);
	}
	(void)top;
	*out = a;
	return read_suffix(r, a);
}

/* one item at r->p: a node pattern, a string, an alternation or a grouping */
static int read_item(struct rd *r, struct ast **out, struct syntax_pred **ppreds, size_t *npreds,
                     size_t *apreds, int top)
{
	skip_space(r);
	const char *at = r->p;
	if (at >= r->zEnd)
		return rd_err(r, at, "unexpected end of the query", NULL, 0);
	if (*at == '(')
		return read_paren(r, out, ppreds, npreds, apreds, top);
	if (*at == '"') {
		char *s;
		size_t n;
		if (read_string(r, &s, &n) < 0)
			return -1;
		uint16_t sym = symbol_of(r, s, n, 0);
		if (!sym) {
			rd_err(r, at, "unknown node type", at, (int)(r->p - at));
			free(s);
			return -1;
		}
		free(s);
		struct ast *a = ast_new(r, A_STR);
		a->sym = sym;
		*out = a;
		return read_suffix(r, a);
	}
	if (*at == '[') {
		r->p++;
		struct ast *a = ast_new(r, A_ALT);
		for (;;) {
			skip_space(r);
			if (r->p >= r->zEnd)
				return rd_err(r, at, "unbalanced", "[", 1);
			if (*r->p == ']') {
				r->p++;
				break;
			}
			struct ast *k;
			if (read_item(r, &k, ppreds, npreds, apreds, 0) < 0)
				return -1;
			ast_add_kid(a, k);
		}
		if (!a->nKid)
			return rd_err(r, at, "empty alternation", NULL, 0);
		*out = a;
		return read_suffix(r, a);
	}
	if (*at == '_')
		return rd_unsupported(r, at, "wildcard", at, 1);
	if (*at == '.')
		return rd_unsupported(r, at, "anchor", at, 1);
	if (*at == '!')
		return rd_unsupported(r, at, "negated field", at, (int)ident_len(r, at));
	size_t n = ident_len(r, at);
	return rd_err(r, at, "unexpected", at, n ? (int)n : 1);
}

/* ---- expanding alternations and laying out the steps ---- */

/* a shallow copy of a (kids and captures arrays copied, kids shared) */
static struct ast *ast_copy(struct rd *r, const struct ast *a)
{
	struct ast *c = ast_new(r, a->kind);
	c->sym = a->sym;
	c->field = a->field;
	for (size_t i = 0; i < a->nKid; i++)
		ast_add_kid(c, a->aKid[i]);
	for (size_t i = 0; i < a->nCap; i++)
		ast_add_cap(c, a->aCap[i]);
	return c;
}

/* the alternation-free trees a stands for, into *out (a fresh array of *n) */
static void expand(struct rd *r, struct ast *a, struct ast ***out, size_t *n)
{
	struct ast **res = NULL;
	size_t nres = 0, ares = 0;
	if (a->kind == A_ALT) {
		for (size_t i = 0; i < a->nKid; i++) {
			struct ast **e;
			size_t ne;
			expand(r, a->aKid[i], &e, &ne);
			for (size_t j = 0; j < ne; j++) {
				struct ast *c = ast_copy(r, e[j]);
				if (a->field)
					c->field = a->field;
				for (size_t k = 0; k < a->nCap; k++)
					ast_add_cap(c, a->aCap[k]);
				xgrow((void **)&res, &ares, nres + 1, sizeof *res);
				res[nres++] = c;
			}
			free(e);
		}
	} else {
		struct ast *base = ast_copy(r, a);
		base->nKid = 0;
		xgrow((void **)&res, &ares, 1, sizeof *res);
		res[nres++] = base;
		for (size_t i = 0; i < a->nKid; i++) {
			struct ast **e;
			size_t ne;
			expand(r, a->aKid[i], &e, &ne);
			struct ast **next = NULL;
			size_t nnext = 0, anext = 0;
			for (size_t j = 0; j < nres; j++)
				for (size_t k = 0; k < ne; k++) {
					struct ast *c = ast_copy(r, res[j]);
					ast_add_kid(c, e[k]);
					xgrow((void **)&next, &anext, nnext + 1, sizeof *next);
					next[nnext++] = c;
				}
			free(e);
			free(res);
			res = next;
			nres = nnext;
		}
	}
	*out = res;
	*n = nres;
}

/* lay out the alternation-free tree a as steps; returns its step index */
static uint32_t emit(struct hlm *m, const struct ast *a, uint32_t parent, uint32_t pos,
                     uint32_t pattern, const struct syntax_pred *preds, size_t npreds, size_t pred0)
{
	uint32_t si = (uint32_t)m->nStep;
	xgrow((void **)&m->aStep, &m->aStepAlloc, m->nStep + 1, sizeof *m->aStep);
	m->nStep++;
	struct hstep s = {
	    .sym = a->sym, .field = a->field, .parent = parent, .pos = pos, .pattern = pattern};
	s.cap0 = (uint32_t)m->nCap;
	s.ncap = (uint32_t)a->nCap;
	for (size_t i = 0; i < a->nCap; i++) {
		xgrow((void **)&m->aCap, &m->aCapAlloc, m->nCap + 1, sizeof *m->aCap);
		m->aCap[m->nCap++] = a->aCap[i];
	}
	s.pred0 = (uint32_t)m->nStepPred;
	for (size_t k = 0; k < npreds; k++) {
		int tested = 0;
		for (size_t i = 0; i < a->nCap; i++)
			tested |= preds[k].capture == a->aCap[i];
		if (!tested)
			continue;
		xgrow((void **)&m->aStepPred, &m->aSPAlloc, m->nStepPred + 1, sizeof *m->aStepPred);
		m->aStepPred[m->nStepPred++] = (uint32_t)(pred0 + k);
		s.npred++;
	}
	s.kid0 = (uint32_t)m->nKid;
	s.nkid = (uint32_t)a->nKid;
	xgrow((void **)&m->aKid, &m->aKidAlloc, m->nKid + a->nKid, sizeof *m->aKid);
	m->nKid += a->nKid;
	m->aStep[si] = s;
	for (size_t i = 0; i < a->nKid; i++) {
		uint32_t k = emit(m, a->aKid[i], si, (uint32_t)i, pattern, preds, npreds, pred0);
		m->aKid[s.kid0 + i] = k;
	}
	return si;
}

/* per symbol: the captured steps (candidates) and whether a field is ever asked */
static void index_candidates(struct hlm *m)
{
	m->aCandOff = xcalloc((size_t)m->nSym + 2, sizeof *m->aCandOff);
	m->aNeedField = xcalloc((size_t)m->nSym + 1, 1);
	for (size_t i = 0; i < m->nStep; i++) {
		const struct hstep *s = &m->aStep[i];
		if (s->ncap)
			m->aCandOff[s->sym + 1]++;
		if (s->field)
			m->aNeedField[s->sym] = 1;
	}
	for (uint32_t s = 0; s < m->nSym; s++)
		m->aCandOff[s + 1] += m->aCandOff[s];
	m->aCandOff[m->nSym + 1] = m->aCandOff[m->nSym];
	m->aCand = xmalloc((m->aCandOff[m->nSym] + 1) * sizeof *m->aCand);
	uint32_t *fill = xmalloc(((size_t)m->nSym + 1) * sizeof *fill);
	memcpy(fill, m->aCandOff, ((size_t)m->nSym + 1) * sizeof *fill);
	for (size_t i = 0; i < m->nStep; i++)
		if (m->aStep[i].ncap)
			m->aCand[fill[m->aStep[i].sym]++] = (uint32_t)i;
	free(fill);
}

/* the deepest chain of child patterns below a (1 for a leaf) */
static size_t ast_depth(const struct ast *a)
{
	size_t d = 0;
	for (size_t i = 0; i < a->nKid; i++) {
		size_t k = ast_depth(a->aKid[i]);
		if (k > d)
			d = k;
	}
	return d + 1;
}

struct hlm *hlm_compile(const TSLanguage *lang, const char *name, const char *scm, size_t len,
                        char *err)
{
	struct hlm *m = xcalloc(1, sizeof *m);
	m->nSym = ts_language_symbol_count(lang);
	struct rd r = {.lang = lang,
	               .zName = name,
	               .zBeg = scm,
	               .zEnd = scm + len,
	               .p = scm,
	               .err = err,
	               .m = m};
	int rc = 0;
	for (;;) {
		skip_space(&r);
		if (r.p >= r.zEnd)
			break;
		const char *at = r.p;
		struct ast *a;
		struct syntax_pred *preds = NULL;
		size_t npreds = 0, apreds = 0;
		if (read_item(&r, &a, &preds, &npreds, &apreds, 1) < 0) {
			for (size_t i = 0; i < npreds; i++)
				syntax_pred_free(&preds[i]);
			free(preds);
			rc = -1;
			break;
		}
		if (a->field) {
			rc = rd_unsupported(&r, at, "field at the top of a pattern", at, 8);
			free(preds);
			break;
		}
		if (ast_depth(a) > HLM_MAX_DEPTH) {
			rc = rd_err(&r, at, "pattern nested too deeply", NULL, 0);
			for (size_t i = 0; i < npreds; i++)
				syntax_pred_free(&preds[i]);
			free(preds);
			break;
		}
		size_t pred0 = m->nPred;
		for (size_t i = 0; i < npreds; i++) {
			xgrow((void **)&m->aPred, &m->aPredAlloc, m->nPred + 1, sizeof *m->aPred);
			m->aPred[m->nPred++] = preds[i];
		}
		struct ast **e;
		size_t ne;
		expand(&r, a, &e, &ne);
		for (size_t i = 0; i < ne; i++)
			emit(m, e[i], NO_STEP, 0, m->nPattern, preds, npreds, pred0);
		free(e);
		free(preds);
		m->nPattern++;
	}
	for (size_t i = 0; i < r.nAll; i++) {
		free(r.aAll[i]->aKid);
		free(r.aAll[i]->aCap);
		free(r.aAll[i]);
	}
	free(r.aAll);
	if (rc < 0) {
		hlm_free(m);
		return NULL;
	}
	index_candidates(m);
	return m;
}

void hlm_free(struct hlm *m)
{
	if (!m)
		return;
	free(m->aStep);
	free(m->aKid);
	free(m->aCap);
	for (size_t i = 0; i < m->nPred; i++)
		syntax_pred_free(&m->aPred[i]);
	free(m->aPred);
	free(m->aStepPred);
	for (size_t i = 0; i < m->nCapture; i++)
		free(m->azCapture[i]);
	free(m->azCapture);
	free(m->aCandOff);
	free(m->aCand);
	free(m->aNeedField);
	free(m);
}

const char *hlm_capture_name(const struct hlm *m, uint32_t capture)
{
	return capture < m->nCapture ? m->azCapture[capture] : NULL;
}

uint32_t hlm_capture_count(const struct hlm *m)
{
	return (uint32_t)m->nCapture;
}

uint32_t hlm_pattern_count(const struct hlm *m)
{
	return m->nPattern;
}

/* ---- matching ---- */

/* an ancestor of the walk's current node (or the node itself) */
struct frame {
	TSNode node;    /* the node */
	uint16_t sym;   /* its symbol */
	uint16_t field; /* the field it hangs on, when some step of its symbol asks for one */
	uint32_t index; /* its index among its parent's visible children */
};

/*
 * The predicates' verdicts on texts already seen in this run, by step and
 * text (direct-mapped): an identifier's #match? is worked out once per
 * name, not once per occurrence.
 */
#define MEMO_SLOTS 4096
struct memo {
	uint32_t step; /* the step whose predicates were tested, + 1; 0 when empty */
	uint32_t off;  /* the text: src[off, off + len) */
	uint32_t len;
	int ok; /* their verdict */
};

/* one hlm_run's state; m stays read-only */
struct run {
	struct memo *aMemo; /* MEMO_SLOTS verdicts, made on first use */
	const struct hlm *m;
	const char *src;                      /* the source text */
	size_t len;                           /* its length */
	struct frame *aFrame;                 /* the stack of ancestors, root first */
	size_t nFrame, aFrameA;               /* entries used / allocated */
	TSTreeCursor aScratch[HLM_MAX_DEPTH]; /* cursors for scanning children, by nesting */
	int nScratch;                         /* cursors made so far */
};

/* do n's text and the predicates of step s agree? */
static int preds_ok(struct run *r, const struct hstep *s, TSNode n)
{
	if (!s->npred)
		return 1;
	uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
	if (b > r->len)
		b = (uint32_t)r->len;
	if (a > b)
		a = b;
	const char *t = r->src + a;
	uint32_t step = (uint32_t)(s - r->m->aStep) + 1, h = 2166136261u ^ step;
	for (uint32_t i = 0; i < b - a; i++)
		h = (h ^ (unsigned char)t[i]) * 16777619u;
	if (!r->aMemo)
		r->aMemo = xcalloc(MEMO_SLOTS, sizeof *r->aMemo);
	struct memo *mo = &r->aMemo[h & (MEMO_SLOTS - 1)];
	if (mo->step == step && mo->len == b - a && !memcmp(r->src + mo->off, t, b - a))
		return mo->ok;
	int ok = 1;
	for (uint32_t i = 0; i < s->npred && ok; i++) {
		const struct syntax_pred *p = &r->m->aPred[r->m->aStepPred[s->pred0 + i]];
		if (syntax_pred_test(p, t, b - a, NULL, 0) == p->negate)
			ok = 0;
	}
	*mo = (struct memo){step, a, b - a, ok};
	return ok;
}

static TSTreeCursor *scratch(struct run *r, int level, TSNode n)
{
	if (level >= r->nScratch) {
		r->aScratch[level] = ts_tree_cursor_new(n);
		r->nScratch = level + 1;
	} else {
		ts_tree_cursor_reset(&r->aScratch[level], n);
	}
	return &r->aScratch[level];
}

static int match_kids(struct run *r, TSNode parent, const struct hstep *s, int level,
                      uint32_t chain_pos, uint32_t chain_idx);

/* does node n (hanging on field `field`) match step s with all its child patterns? */
static int match_sub(struct run *r, TSNode n, uint16_t field, const struct hstep *s, int level)
{
	if (ts_node_symbol(n) != s->sym || (s->field && s->field != field))
		return 0;
	if (!preds_ok(r, s, n))
		return 0;
	return !s->nkid || match_kids(r, n, s, level, NO_STEP, 0);
}

/*
 * Match the child patterns of step s against parent's children, in order,
 * each to a distinct child.  When chain_pos is not NO_STEP, child pattern
 * chain_pos is already matched by the child at index chain_idx: the
 * patterns before it must match children before chain_idx, those after it
 * children after.  Greedy leftmost: each child pattern is matched on its
 * own, so taking the first child that fits never loses a match.
 */
static int match_kids(struct run *r, TSNode parent, const struct hstep *s, int level,
                      uint32_t chain_pos, uint32_t chain_idx)
{
	if (level >= HLM_MAX_DEPTH)
		return 0;
	TSTreeCursor *c = scratch(r, level, parent);
	if (!ts_tree_cursor_goto_first_child(c))
		return 0;
	uint32_t k = 0, idx = 0;
	do {
		if (chain_pos != NO_STEP && idx == chain_idx) {
			if (k != chain_pos)
				return 0;
			k++;
		} else if (k != chain_pos) {
			const struct hstep *ks = &r->m->aStep[r->m->aKid[s->kid0 + k]];
			TSNode n = ts_tree_cursor_current_node(c);
			uint16_t field = ks->field ? ts_tree_cursor_current_field_id(c) : 0;
			if (match_sub(r, n, field, ks, level + 1))
				k++;
		}
		if (k == s->nkid)
			return 1;
		idx++;
	} while (ts_tree_cursor_goto_next_sibling(c));
	return 0;
}

/* does captured step s match at the top frame d, up through its ancestors? */
static int match_candidate(struct run *r, size_t d, const struct hstep *s)
{
	const struct frame *f = &r->aFrame[d];
	if (s->field && f->field != s->field)
		return 0;
	if (!preds_ok(r, s, f->node))
		return 0;
	if (s->nkid && !match_kids(r, f->node, s, 0, NO_STEP, 0))
		return 0;
	while (s->parent != NO_STEP) {
		const struct hstep *ps = &r->m->aStep[s->parent];
		if (d == 0)
			return 0;
		const struct frame *a = &r->aFrame[d - 1];
		if (a->sym != ps->sym || (ps->field && a->field != ps->field))
			return 0;
		if (!preds_ok(r, ps, a->node))
			return 0;
		if (ps->nkid > 1 && !match_kids(r, a->node, ps, 0, s->pos, r->aFrame[d].index))
			return 0;
		s = ps;
		d--;
	}
	return 1;
}

/* the walk reached the node in the top frame: report its captures */
static void visit(struct run *r, const struct tswalk *w, TSSymbol sym, hlm_capture_fn cb, void *ctx)
{
	size_t d = r->nFrame - 1;
	struct frame *f = &r->aFrame[d];
	const struct hlm *m = r->m;
	f->sym = sym;
	f->field = 0;
	if (f->sym >= m->nSym)
		return;
	if (m->aNeedField[f->sym] && d > 0)
		f->field = tswalk_field(w);
	for (uint32_t i = m->aCandOff[f->sym]; i < m->aCandOff[f->sym + 1]; i++) {
		const struct hstep *s = &m->aStep[m->aCand[i]];
		if (!match_candidate(r, d, s))
			continue;
		for (uint32_t k = 0; k < s->ncap; k++)
			cb(ctx, f->node, s->pattern, m->aCap[s->cap0 + k]);
	}
}

static void push(struct run *r, TSNode n, uint32_t index)
{
	if (r->nFrame == r->aFrameA)
		xgrow((void **)&r->aFrame, &r->aFrameA, r->nFrame + 1, sizeof *r->aFrame);
	r->aFrame[r->nFrame++] = (struct frame){.node = n, .index = index};
}

void hlm_run(const struct hlm *m, TSNode root, const char *src, size_t len, uint32_t start,
             uint32_t end, hlm_capture_fn cb, void *ctx)
{
	if (start >= end || ts_node_is_null(root))
		return;
	struct run r = {.m = m, .src = src, .len = len};
	/* pre-order: the frames below a node's depth hold its ancestors */
	struct tswalk *w = tswalk_new(root, start, end);
	struct tswalk_node n;
	while (tswalk_next(w, &n)) {
		r.nFrame = n.depth;
		push(&r, n.node, n.index);
		visit(&r, w, n.sym, cb, ctx);
	}
	tswalk_free(w);
	for (int i = 0; i < r.nScratch; i++)
		ts_tree_cursor_delete(&r.aScratch[i]);
	free(r.aFrame);
	free(r.aMemo);
}
