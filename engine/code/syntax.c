/*
 * syntax.c - one tree-sitter parser for C, C++ and CUDA (the CUDA grammar):
 * a source parsed into one tree, error location, token normalisation, and
 * the embedded queries with their text predicates.  Only tree-sitter's
 * public API (tree_sitter/api.h) is used.
 */
#include "syntax.h"

#include <pthread.h>
#include <regex.h>
#include <signal.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const TSLanguage *tree_sitter_cuda(void);

static TSParser *the_parser;

const TSLanguage *syntax_language(void)
{
	return tree_sitter_cuda();
}

static TSParser *parser(void)
{
	if (!the_parser) {
		the_parser = ts_parser_new();
		if (!ts_parser_set_language(the_parser, syntax_language()))
			die("the CUDA grammar's ABI %u does not fit tree-sitter %d..%d",
			    ts_language_abi_version(syntax_language()),
			    TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION,
			    TREE_SITTER_LANGUAGE_VERSION);
	}
	return the_parser;
}

static int refuse(const char *src, size_t n, char *err)
{
	if (n > SYNTAX_MAX_BYTES)
		return kl_err(err, "source is %zu bytes, over the limit of %u bytes", n,
		              SYNTAX_MAX_BYTES);
	const char *nul = memchr(src, 0, n);
	if (nul)
		return kl_err(err,
		              "source holds a NUL byte at offset %zu: binary data, not source text",
		              (size_t)(nul - src));
	return 0;
}

struct syntax_doc *syntax_parse(const char *src, size_t n, char *err)
{
	if (!src)
		n = 0;
	if (n && refuse(src, n, err) < 0)
		return NULL;
	struct syntax_doc *d = xcalloc(1, sizeof *d);
	d->src = xstrndup(n ? src : "", n);
	d->len = n;
	d->tree = ts_parser_parse_string(parser(), NULL, d->src, (uint32_t)d->len);
	if (!d->tree) {
		ts_parser_reset(parser());
		syntax_free(d);
		kl_err(err, "the parser gave up on this source");
		return NULL;
	}
	return d;
}

void syntax_free(struct syntax_doc *d)
{
	if (!d)
		return;
	if (d->tree)
		ts_tree_delete(d->tree);
	free(d->src);
	free(d);
}

TSNode syntax_root(const struct syntax_doc *d)
{
	return ts_tree_root_node(d->tree);
}

TSNode syntax_node_at(const struct syntax_doc *d, uint32_t s, uint32_t e)
{
	return ts_node_descendant_for_byte_range(syntax_root(d), s, e);
}

/* advance *pt over bytes [p, p + n) */
static void advance_point(TSPoint *pt, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\n') {
			pt->row++;
			pt->column = 0;
		} else {
			pt->column++;
		}
	}
}

char *syntax_text(const struct syntax_doc *d, TSNode node)
{
	uint32_t s = ts_node_start_byte(node), e = ts_node_end_byte(node);
	if (e > d->len)
		e = (uint32_t)d->len;
	if (s > e)
		s = e;
	return xstrndup(d->src + s, e - s);
}

int syntax_text_eq(const struct syntax_doc *d, TSNode node, const char *s)
{
	uint32_t a = ts_node_start_byte(node), b = ts_node_end_byte(node);
	size_t n = strlen(s);
	return b >= a && b <= d->len && b - a == n && memcmp(d->src + a, s, n) == 0;
}

/* characters (UTF-8 lead bytes) in p[0..n) */
static unsigned count_chars(const char *p, size_t n)
{
	unsigned c = 0;
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)p[i] & 0xC0) != 0x80)
			c++;
	return c;
}

void syntax_position(const struct syntax_doc *d, uint32_t byte, unsigned *line, unsigned *column)
{
	if (byte > d->len)
		byte = (uint32_t)d->len;
	/* start from the smallest node holding the byte, then count the rest */
	TSNode n = syntax_node_at(d, byte, byte);
	uint32_t from = 0;
	TSPoint pt = {0, 0};
	if (!ts_node_is_null(n) && ts_node_start_byte(n) <= byte) {
		from = ts_node_start_byte(n);
		pt = ts_node_start_point(n);
	}
	advance_point(&pt, d->src + from, byte - from);
	uint32_t line_start = byte - pt.column;
	*line = pt.row + 1;
	*column = count_chars(d->src + line_start, byte - line_start) + 1;
}

/* length of the valid UTF-8 sequence at p (n bytes left), 0 if invalid */
static int utf8_len(const unsigned char *p, size_t n)
{
	unsigned c = p[0];
	int len = c < 0x80             ? 1
	          : (c & 0xE0) == 0xC0 ? 2
	          : (c & 0xF0) == 0xE0 ? 3
	          : (c & 0xF8) == 0xF0 ? 4
	                               : 0;
	if (!len || (size_t)len > n || c == 0xC0 || c == 0xC1 || c >= 0xF5)
		return 0;
	for (int k = 1; k < len; k++)
		if ((p[k] & 0xC0) != 0x80)
			return 0;
	if (len == 3 && ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] >= 0xA0)))
		return 0; /* overlong, or a UTF-16 surrogate */
	if (len == 4 && ((c == 0xF0 && p[1] < 0x90) || (c == 0xF4 && p[1] >= 0x90)))
		return 0;
	return len;
}

char *syntax_utf8(const char *s)
{
	strbuf sb = STRBUF_INIT;
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		int len = utf8_len((const unsigned char *)s + i, n - i);
		if (len) {
			sb_add(&sb, s + i, (size_t)len);
			i += (size_t)len;
		} else {
			sb_add(&sb, "\xEF\xBF\xBD", 3);
			i++;
		}
	}
	if (!sb.buf)
		sb_grow(&sb, 0);
	return sb_detach(&sb);
}

/* a printable one-line excerpt of at most max bytes of p[0..n) into out */
static void excerpt(char *out, size_t outsz, const char *p, size_t n, size_t max)
{
	size_t o = 0;
	for (size_t i = 0; i < n && i < max && o + 5 < outsz;) {
		unsigned char c = (unsigned char)p[i];
		if (c == '\n' || c == '\r')
			break;
		if (c < 0x80) {
			out[o++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
			i++;
			continue;
		}
		int len = utf8_len((const unsigned char *)p + i, n - i);
		if (!len) {
			out[o++] = '?';
			i++;
			continue;
		}
		memcpy(out + o, p + i, (size_t)len);
		o += (size_t)len;
		i += (size_t)len;
	}
	out[o] = 0;
}

static void fill_error(const struct syntax_doc *d, TSNode n, struct syntax_error *e)
{
	uint32_t b = ts_node_start_byte(n);
	TSPoint pt = ts_node_start_point(n);
	if (ts_node_is_missing(n)) {
		/* what is missing belongs right after the token before it */
		TSNode prev = ts_node_prev_sibling(n);
		if (!ts_node_is_null(prev) && ts_node_end_byte(prev) <= b) {
			b = ts_node_end_byte(prev);
			pt = ts_node_end_point(prev);
		}
	}
	if (b > d->len)
		b = (uint32_t)d->len;
	e->byte = b;
	e->line = pt.row + 1;
	uint32_t ls = b >= pt.column ? b - pt.column : 0;
	e->column = count_chars(d->src + ls, b - ls) + 1;
	if (ts_node_is_missing(n)) {
		const char *t = ts_node_type(n);
		if (ts_node_is_named(n))
			snprintf(e->msg, sizeof e->msg, "missing %s", t);
		else
			snprintf(e->msg, sizeof e->msg, "missing `%.40s`", t);
		return;
	}
	char ex[100];
	uint32_t end = ts_node_end_byte(n);
	if (end > d->len)
		end = (uint32_t)d->len;
	/* skip leading blanks so the excerpt shows the offending text */
	while (b < end && (d->src[b] == ' ' || d->src[b] == '\t' || d->src[b] == '\n'))
		b++;
	if (b >= end)
		snprintf(e->msg, sizeof e->msg, "syntax error at end of input");
	else {
		excerpt(ex, sizeof ex, d->src + b, end - b, 40);
		snprintf(e->msg, sizeof e->msg, "syntax error near `%s`", ex);
	}
}

/*
 * Walk one tree in source order, visiting only subtrees that hold an error,
 * and record the outermost ERROR and MISSING nodes; *pFound counts them all.
 * Returns 1 when max was reached.
 */
static int walk_errors(const struct syntax_doc *d, TSNode root, struct syntax_error *out,
                       size_t max, size_t *pFound)
{
	if (!ts_node_has_error(root))
		return 0;
	int full = 0;
	TSTreeCursor c = ts_tree_cursor_new(root);
	for (;;) {
		TSNode n = ts_tree_cursor_current_node(&c);
		int is_err = ts_node_is_error(n) || ts_node_is_missing(n);
		if (is_err) {
			if (*pFound < max)
				fill_error(d, n, &out[*pFound]);
			(*pFound)++;
			if (max && *pFound >= max) {
				full = 1;
				break;
			}
		} else if (ts_node_has_error(n) && ts_tree_cursor_goto_first_child(&c)) {
			continue;
		}
		while (!ts_tree_cursor_goto_next_sibling(&c)) {
			if (!ts_tree_cursor_goto_parent(&c))
				goto done;
		}
	}
done:
	ts_tree_cursor_delete(&c);
	return full;
}

/*
 * A copy of src with every #pragma line (and its continuation lines) blanked
 * to spaces, newlines kept, so byte offsets and line numbers stay the same;
 * NULL when src has no #pragma line.  The grammar takes a #pragma for a
 * preprocessor line that ends a statement, so valid CUDA such as an unbraced
 * `for (...)` with `#pragma unroll` before its inner loop parses with a
 * MISSING `;`: the compiler reads the pragma as no statement at all.
 */
static char *blank_pragmas(const char *src, size_t n)
{
	char *z = NULL;
	size_t i = 0;
	while (i < n) {
		size_t ls = i, k = i;
		while (k < n && (src[k] == ' ' || src[k] == '\t'))
			k++;
		size_t e = k;
		while (e < n && src[e] != '\n')
			e++;
		int pragma = 0;
		if (k < n && src[k] == '#') {
			size_t q = k + 1;
			while (q < n && (src[q] == ' ' || src[q] == '\t'))
				q++;
			pragma = q + 6 <= n && !memcmp(src + q, "pragma", 6) &&
			         (q + 6 == n ||
			          !(isalnum((unsigned char)src[q + 6]) || src[q + 6] == '_'));
		}
		if (pragma) {
			if (!z)
				z = xstrndup(src, n);
			for (;;) { /* this line and its continuations */
				for (size_t q = ls; q < e; q++)
					z[q] = ' ';
				int cont = e > ls && src[e - 1] == '\\';
				if (!cont || e >= n)
					break;
				ls = e + 1;
				e = ls;
				while (e < n && src[e] != '\n')
					e++;
			}
		}
		i = e + 1;
	}
	return z;
}

/*
 * The syntax errors of the document: its tree in source order;
 * when there are some and the source has #pragma lines, those of the source
 * with its pragmas blanked instead (see blank_pragmas).
 */
static size_t collect_errors(const struct syntax_doc *d, struct syntax_error *out, size_t max)
{
	size_t found = 0;
	walk_errors(d, syntax_root(d), out, max, &found);
	if (!found)
		return 0;
	char *z = blank_pragmas(d->src, d->len);
	if (!z)
		return found;
	TSTree *t = ts_parser_parse_string(parser(), NULL, z, (uint32_t)d->len);
	free(z);
	if (!t)
		return found;
	found = 0;
	walk_errors(d, ts_tree_root_node(t), out, max, &found);
	ts_tree_delete(t);
	return found;
}

int syntax_is_clean(const struct syntax_doc *d)
{
	/* the root's error flag is also set by invalid bytes inside a token,
	 * which leave no ERROR node: count the nodes instead */
	return collect_errors(d, NULL, 0) == 0;
}

int syntax_first_error(const struct syntax_doc *d, struct syntax_error *e)
{
	return collect_errors(d, e, 1) > 0;
}

size_t syntax_errors(const struct syntax_doc *d, struct syntax_error *out, size_t max)
{
	return collect_errors(d, out, max);
}

int syntax_check(const char *src, size_t n, char *err)
{
	struct syntax_doc *d = syntax_parse(src, n, err);
	if (!d)
		return -1;
	struct syntax_error e;
	int bad = syntax_first_error(d, &e);
	syntax_free(d);
	if (bad)
		return kl_err(err, "line %u, column %u: %s", e.line, e.column, e.msg);
	return 0;
}

void syntax_tokens(const struct syntax_doc *d, TSNode node, strbuf *sb)
{
	syntax_tokens_before(d, node, UINT32_MAX, sb);
}

void syntax_tokens_before(const struct syntax_doc *d, TSNode node, uint32_t limit, strbuf *sb)
{
	TSTreeCursor c = ts_tree_cursor_new(node);
	int first = 1;
	uint32_t depth = 0;
	for (;;) {
		TSNode n = ts_tree_cursor_current_node(&c);
		if (strcmp(ts_node_type(n), "comment") == 0) {
			/* skip */
		} else if (ts_tree_cursor_goto_first_child(&c)) {
			depth++;
			continue;
		} else {
			uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
			if (b > d->len)
				b = (uint32_t)d->len;
			if (a >= limit)
				goto done;
			if (b > a) {
				if (!first)
					sb_add(sb, " ", 1);
				sb_add(sb, d->src + a, b - a);
				first = 0;
			}
		}
		if (!syntax_cursor_next(&c, &depth))
			goto done;
	}
done:
	ts_tree_cursor_delete(&c);
	if (!sb->buf)
		sb_grow(sb, 0);
}

/* ---- queries and their predicates ---- */

/* a text predicate of a query pattern, tested on a captured node's text */
struct pred {
	enum {
		PRED_EQ,
		PRED_ANY_OF,
		PRED_MATCH,
		PRED_MATCH_SRC
	} op;              /* #eq?, #any-of?, #match?
	                        (compiled or not yet) */
	int negate;        /* the not- form */
	uint32_t capture;  /* the capture tested */
	int other_capture; /* #eq? @a @b: the id of @b, else -1 */
	char **strs;       /* literal strings (one for #eq?, many for #any-of?), owned */
	size_t nstrs;      /* entries in strs */
	regex_t re;        /* #match?: the compiled POSIX extended expression */
};

struct syntax_query {
	char *name;
	TSQuery *q;
	struct pred **preds; /* per pattern: its predicates */
	size_t *npreds;
	uint32_t npatterns;
};

static struct syntax_query **queries;
static size_t n_queries, a_queries;
/* the names being compiled now (by the warming thread or a caller) */
#define MAX_COMPILING 8
static const char *compiling[MAX_COMPILING];
static int n_compiling;
/* held while queries or compiling are read or changed, never while a query
 * compiles: a lookup of a compiled query does not wait for another one */
static pthread_mutex_t queries_lock = PTHREAD_MUTEX_INITIALIZER;
/* signalled when a compile ends */
static pthread_cond_t queries_done = PTHREAD_COND_INITIALIZER;
static pthread_t warm_thread;
static int warm_started;

static void pred_free(struct pred *p)
{
	for (size_t i = 0; i < p->nstrs; i++)
		free(p->strs[i]);
	free(p->strs);
	if (p->op == PRED_MATCH)
		regfree(&p->re);
	p->strs = NULL;
	p->nstrs = 0;
	p->op = PRED_EQ;
}

static int pred_op(struct pred *p, const char *name)
{
	memset(p, 0, sizeof *p);
	p->other_capture = -1;
	if (strncmp(name, "not-", 4) == 0) {
		p->negate = 1;
		name += 4;
	}
	if (strcmp(name, "eq?") == 0)
		p->op = PRED_EQ;
	else if (strcmp(name, "any-of?") == 0)
		p->op = PRED_ANY_OF;
	else if (strcmp(name, "match?") == 0)
		p->op = PRED_MATCH_SRC;
	else
		return -1;
	return 0;
}

static void pred_add_str(struct pred *p, const char *s, size_t len)
{
	p->strs = xrealloc(p->strs, (p->nstrs + 1) * sizeof *p->strs);
	p->strs[p->nstrs++] = xstrndup(s, len);
}

static int pred_finish(struct pred *p, char *err)
{
	if (p->op != PRED_MATCH_SRC)
		return 0;
	p->op = PRED_EQ; /* nothing compiled to free yet */
	if (p->nstrs != 1)
		return kl_err(err, "#match? needs one pattern");
	if (regcomp(&p->re, p->strs[0], REG_EXTENDED | REG_NOSUB) != 0)
		return kl_err(err, "bad regular expression \"%s\"", p->strs[0]);
	p->op = PRED_MATCH;
	return 0;
}

static void query_free(struct syntax_query *sq)
{
	for (uint32_t i = 0; i < sq->npatterns; i++) {
		for (size_t k = 0; k < sq->npreds[i]; k++)
			pred_free(&sq->preds[i][k]);
		free(sq->preds[i]);
	}
	free(sq->preds);
	free(sq->npreds);
	if (sq->q)
		ts_query_delete(sq->q);
	free(sq->name);
	free(sq);
}

static const char *query_error_name(TSQueryError t)
{
	switch (t) {
	case TSQueryErrorSyntax:
		return "syntax error";
	case TSQueryErrorNodeType:
		return "unknown node type";
	case TSQueryErrorField:
		return "unknown field";
	case TSQueryErrorCapture:
		return "unknown capture";
	case TSQueryErrorStructure:
		return "impossible pattern";
	case TSQueryErrorLanguage:
		return "language mismatch";
	default:
		return "error";
	}
}

/* read the predicates of pattern i; 0 or -1 with err */
static int load_preds(struct syntax_query *sq, uint32_t i, char *err)
{
	uint32_t nsteps = 0;
	const TSQueryPredicateStep *st = ts_query_predicates_for_pattern(sq->q, i, &nsteps);
	size_t alloc = 0;
	for (uint32_t k = 0; k < nsteps;) {
		uint32_t end = k;
		while (end < nsteps && st[end].type != TSQueryPredicateStepTypeDone)
			end++;
		if (end == k || st[k].type != TSQueryPredicateStepTypeString) {
			k = end + 1;
			continue;
		}
		uint32_t len;
		const char *op = ts_query_string_value_for_id(sq->q, st[k].value_id, &len);
		struct pred p;
		if (pred_op(&p, op) < 0) {
			k = end + 1; /* a directive kloop does not use (#set! etc.) */
			continue;
		}
		if (end - k < 3 || st[k + 1].type != TSQueryPredicateStepTypeCapture)
			return kl_err(err, "%s.scm: pattern %u: #%s needs a capture and a value",
			              sq->name, i, op);
		p.capture = st[k + 1].value_id;
		for (uint32_t a = k + 2; a < end; a++) {
			if (st[a].type == TSQueryPredicateStepTypeCapture) {
				p.other_capture = (int)st[a].value_id;
				continue;
			}
			const char *s = ts_query_string_value_for_id(sq->q, st[a].value_id, &len);
			pred_add_str(&p, s, len);
		}
		char why[KL_ERRLEN];
		if (pred_finish(&p, why) < 0) {
			pred_free(&p);
			return kl_err(err, "%s.scm: pattern %u: %s", sq->name, i, why);
		}
		xgrow((void **)&sq->preds[i], &alloc, sq->npreds[i] + 1, sizeof(struct pred));
		sq->preds[i][sq->npreds[i]++] = p;
		k = end + 1;
	}
	return 0;
}

/* the embedded query NAME, or NULL with err "NAME.scm: no such query ..." */
static const struct syntax_query_src *query_src(const char *name, char *err)
{
	const struct syntax_query_src *qs = syntax_query_srcs;
	while (qs->name && strcmp(qs->name, name) != 0)
		qs++;
	if (!qs->name) {
		kl_err(err, "%s.scm: no such query built into kloop", name);
		return NULL;
	}
	return qs;
}

/* the compiled query NAME, or NULL (queries_lock held) */
static const struct syntax_query *query_find(const char *name)
{
	for (size_t i = 0; i < n_queries; i++)
		if (strcmp(queries[i]->name, name) == 0)
			return queries[i];
	return NULL;
}

/* the slot of NAME in compiling[], or -1 (queries_lock held) */
static int compiling_at(const char *name)
{
	for (int i = 0; i < n_compiling; i++)
		if (strcmp(compiling[i], name) == 0)
			return i;
	return -1;
}

/* compile the embedded query NAME (no lock held); NULL with err */
static struct syntax_query *query_compile(const char *name, char *err)
{
	const struct syntax_query_src *qs = query_src(name, err);
	if (!qs)
		return NULL;
	uint32_t off = 0;
	TSQueryError qe = TSQueryErrorNone;
	TSQuery *q = ts_query_new(syntax_language(), qs->text, (uint32_t)qs->len, &off, &qe);
	if (!q) {
		unsigned line = 1;
		for (uint32_t i = 0; i < off && i < qs->len; i++)
			line += qs->text[i] == '\n';
		kl_err(err, "grammars/queries/%s.scm: line %u: %s", name, line,
		       query_error_name(qe));
		return NULL;
	}
	struct syntax_query *sq = xcalloc(1, sizeof *sq);
	sq->name = xstrdup(name);
	sq->q = q;
	sq->npatterns = ts_query_pattern_count(q);
	sq->preds = xcalloc(sq->npatterns ? sq->npatterns : 1, sizeof *sq->preds);
	sq->npreds = xcalloc(sq->npatterns ? sq->npatterns : 1, sizeof *sq->npreds);
	for (uint32_t i = 0; i < sq->npatterns; i++) {
		if (load_preds(sq, i, err) < 0) {
			query_free(sq);
			return NULL;
		}
	}
	return sq;
}

/* compile NAME, which this thread has marked in compiling[], and add it; the
 * waiting threads are woken (queries_lock not held) */
static const struct syntax_query *compile_marked(const char *name, int marked, char *err)
{
	struct syntax_query *sq = query_compile(name, err);
	pthread_mutex_lock(&queries_lock);
	if (marked) {
		int at = compiling_at(name);
		compiling[at] = compiling[--n_compiling];
	}
	if (sq) {
		xgrow((void **)&queries, &a_queries, n_queries + 1, sizeof *queries);
		queries[n_queries++] = sq;
	}
	pthread_cond_broadcast(&queries_done);
	pthread_mutex_unlock(&queries_lock);
	return sq;
}

const struct syntax_query *syntax_query_get(const char *name, char *err)
{
	pthread_mutex_lock(&queries_lock);
	const struct syntax_query *found;
	/* one being compiled elsewhere is waited for, not compiled twice */
	while (!(found = query_find(name)) && compiling_at(name) >= 0)
		pthread_cond_wait(&queries_done, &queries_lock);
	if (found) {
		pthread_mutex_unlock(&queries_lock);
		return found;
	}
	int marked = n_compiling < MAX_COMPILING;
	if (marked)
		compiling[n_compiling++] = name;
	pthread_mutex_unlock(&queries_lock);
	return compile_marked(name, marked, err);
}

int syntax_query_busy(const char *name)
{
	pthread_mutex_lock(&queries_lock);
	int busy = !query_find(name) && compiling_at(name) >= 0;
	pthread_mutex_unlock(&queries_lock);
	return busy;
}

/* what the warming thread calls when the highlight query is there */
static void (*warm_ready)(void *);
static void *warm_arg;

static void *warm_main(void *arg)
{
	(void)arg;
	/* the highlight query first (marked by syntax_query_warm()): the code
	 * pane's first paint wants it */
	compile_marked("highlights", 1, NULL);
	if (warm_ready)
		warm_ready(warm_arg);
	for (const struct syntax_query_src *qs = syntax_query_srcs; qs->name; qs++)
		syntax_query_get(qs->name, NULL);
	return NULL;
}

void syntax_query_warm(void (*ready)(void *arg), void *arg)
{
	if (warm_started)
		return;
	/* marked before the thread runs: from now on a caller waits for it, or
	 * sees it busy, rather than compiling it a second time */
	pthread_mutex_lock(&queries_lock);
	int todo = !query_find("highlights") && compiling_at("highlights") < 0 &&
	           n_compiling < MAX_COMPILING;
	if (todo)
		compiling[n_compiling++] = "highlights";
	pthread_mutex_unlock(&queries_lock);
	if (!todo)
		return;
	warm_ready = ready;
	warm_arg = arg;
	/* the thread takes no signals: the loop's handlers stay on the main thread */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	warm_started = pthread_create(&warm_thread, NULL, warm_main, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!warm_started) {
		/* no thread: each query compiles on its first use */
		pthread_mutex_lock(&queries_lock);
		compiling[compiling_at("highlights")] = compiling[--n_compiling];
		pthread_cond_broadcast(&queries_done);
		pthread_mutex_unlock(&queries_lock);
	}
}

const TSQuery *syntax_query_ts(const struct syntax_query *q)
{
	return q->q;
}

static int pred_text_ok(const struct pred *p, const char *t, size_t len, const char *o, size_t olen)
{
	switch (p->op) {
	case PRED_EQ:
		if (p->other_capture >= 0)
			return o && olen == len && memcmp(o, t, len) == 0;
		return p->nstrs && strlen(p->strs[0]) == len && memcmp(p->strs[0], t, len) == 0;
	case PRED_ANY_OF:
		for (size_t i = 0; i < p->nstrs; i++)
			if (strlen(p->strs[i]) == len && memcmp(p->strs[i], t, len) == 0)
				return 1;
		return 0;
	case PRED_MATCH: {
		char small[256];
		char *s = len < sizeof small ? small : xmalloc(len + 1);
		memcpy(s, t, len);
		s[len] = 0;
		int ok = regexec(&p->re, s, 0, NULL, 0) == 0;
		if (s != small)
			free(s);
		return ok;
	}
	case PRED_MATCH_SRC:
		return 0;
	}
	return 0;
}

/* the text of n in d, clipped to the source */
static const char *node_text(const struct syntax_doc *d, TSNode n, size_t *len)
{
	uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
	if (b > d->len)
		b = (uint32_t)d->len;
	if (a > b)
		a = b;
	*len = b - a;
	return d->src + a;
}

/* does node's text satisfy p (ignoring negation)? */
static int pred_test(const struct pred *p, const struct syntax_doc *d, TSNode n,
                     const TSQueryMatch *m)
{
	size_t len, olen = 0;
	const char *t = node_text(d, n, &len), *o = NULL;
	if (p->other_capture >= 0) {
		for (uint16_t i = 0; i < m->capture_count && !o; i++) {
			if (m->captures[i].index != (uint32_t)p->other_capture)
				continue;
			TSNode on = m->captures[i].node;
			if (ts_node_end_byte(on) > d->len ||
			    ts_node_start_byte(on) > ts_node_end_byte(on))
				return 0;
			o = node_text(d, on, &olen);
		}
	}
	return pred_text_ok(p, t, len, o, olen);
}

int syntax_query_accept(const struct syntax_query *q, const TSQueryMatch *m,
                        const struct syntax_doc *d)
{
	if (m->pattern_index >= q->npatterns)
		return 1;
	const struct pred *ps = q->preds[m->pattern_index];
	for (size_t k = 0; k < q->npreds[m->pattern_index]; k++) {
		const struct pred *p = &ps[k];
		for (uint16_t i = 0; i < m->capture_count; i++) {
			if (m->captures[i].index != p->capture)
				continue;
			if (pred_test(p, d, m->captures[i].node, m) == p->negate)
				return 0;
		}
	}
	return 1;
}

void syntax_shutdown(void)
{
	if (warm_started)
		pthread_join(warm_thread, NULL);
	warm_started = 0;
	for (size_t i = 0; i < n_queries; i++)
		query_free(queries[i]);
	free(queries);
	queries = NULL;
	n_queries = a_queries = 0;
	if (the_parser)
		ts_parser_delete(the_parser);
	the_parser = NULL;
}

int syntax_cursor_next(TSTreeCursor *c, uint32_t *pDepth)
{
	for (;;) {
		if (*pDepth == 0)
			return 0;
		if (ts_tree_cursor_goto_next_sibling(c))
			return 1;
		ts_tree_cursor_goto_parent(c);
		(*pDepth)--;
	}
}
