/*
 * tunables.c - finds integer constants worth sweeping (the tunables query
 * for #defines, constants, enumerators, template defaults and dim3 sizes;
 * the outline for launch configurations, launch template arguments and
 * __launch_bounds__) and rewrites their literals into a new source.
 */
#include "tunables.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outline.h"

int tunables_parse_int(const char *s, size_t n, long long *value, size_t *lit_start,
                       size_t *lit_end)
{
	size_t i = 0;
	int depth = 0, neg = 0;
#define SKIP_WS                                                                                    \
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))             \
	i++
	SKIP_WS;
	while (i < n && s[i] == '(') {
		depth++;
		i++;
		SKIP_WS;
	}
	size_t ls = i;
	if (i < n && (s[i] == '-' || s[i] == '+')) {
		neg = s[i] == '-';
		i++;
	}
	if (i >= n || !isdigit((unsigned char)s[i]))
		return -1;
	unsigned base = 10;
	if (s[i] == '0' && i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		base = 16;
		i += 2;
	} else if (s[i] == '0' && i + 1 < n && (s[i + 1] == 'b' || s[i + 1] == 'B')) {
		base = 2;
		i += 2;
	} else if (s[i] == '0' && i + 1 < n && isdigit((unsigned char)s[i + 1])) {
		base = 8;
		i++;
	}
	unsigned long long u = 0;
	int digits = 0;
	for (; i < n; i++) {
		int c = (unsigned char)s[i], dv;
		if (c == '\'' && digits && i + 1 < n && isxdigit((unsigned char)s[i + 1]))
			continue;
		if (isdigit(c))
			dv = c - '0';
		else if (base == 16 && isxdigit(c))
			dv = tolower(c) - 'a' + 10;
		else
			break;
		if ((unsigned)dv >= base)
			return -1;
		if (u > (ULLONG_MAX - (unsigned)dv) / base)
			return -1;
		u = u * base + (unsigned)dv;
		digits++;
	}
	if (!digits)
		return -1;
	if (i < n && (s[i] == '.' || (base == 10 && (s[i] == 'e' || s[i] == 'E')) ||
	              (base == 16 && (s[i] == 'p' || s[i] == 'P'))))
		return -1; /* a floating-point literal */
	int nsuf = 0;
	while (i < n && strchr("uUlLzZ", s[i]) && s[i] && nsuf < 3) {
		i++;
		nsuf++;
	}
	if (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.'))
		return -1;
	size_t le = i;
	SKIP_WS;
	while (depth > 0) {
		if (i >= n || s[i] != ')')
			return -1;
		depth--;
		i++;
		SKIP_WS;
	}
	/* a trailing comment, as a #define's value may carry */
	if (i + 1 < n && s[i] == '/' && s[i + 1] == '/') {
		i = n;
	} else if (i + 1 < n && s[i] == '/' && s[i + 1] == '*') {
		const char *e = NULL;
		for (size_t k = i + 2; k + 1 < n; k++)
			if (s[k] == '*' && s[k + 1] == '/') {
				e = s + k + 2;
				break;
			}
		if (!e)
			return -1;
		i = (size_t)(e - s);
		SKIP_WS;
	}
#undef SKIP_WS
	if (i != n)
		return -1;
	if (neg) {
		if (u > (unsigned long long)LLONG_MAX + 1ull)
			return -1;
		*value = u == (unsigned long long)LLONG_MAX + 1ull ? LLONG_MIN : -(long long)u;
	} else {
		if (u > (unsigned long long)LLONG_MAX)
			return -1;
		*value = (long long)u;
	}
	*lit_start = ls;
	*lit_end = le;
	return 0;
}

const char *tunable_kind_name(enum tunable_kind k)
{
	static const char *const names[] = {
	    [TUNABLE_DEFINE] = "define",
	    [TUNABLE_CONSTEXPR] = "constexpr",
	    [TUNABLE_CONST] = "const",
	    [TUNABLE_ENUM] = "enum",
	    [TUNABLE_TEMPLATE_DEFAULT] = "template_default",
	    [TUNABLE_TEMPLATE_ARG] = "template_arg",
	    [TUNABLE_LAUNCH_GRID] = "launch_grid",
	    [TUNABLE_LAUNCH_BLOCK] = "launch_block",
	    [TUNABLE_LAUNCH_SMEM] = "launch_smem",
	    [TUNABLE_DIM3] = "dim3",
	    [TUNABLE_LAUNCH_BOUNDS] = "launch_bounds",
	};
	if ((unsigned)k < sizeof names / sizeof names[0])
		return names[k];
	return "?";
}

struct finder {
	const struct syntax_doc *d;
	const struct outline *o;
	struct tunable_list *out;
	size_t alloc;
};

static void add(struct finder *f, const char *name, const char *scope, enum tunable_kind kind,
                long long value, uint32_t start, uint32_t end)
{
	xgrow((void **)&f->out->v, &f->alloc, f->out->n + 1, sizeof *f->out->v);
	struct tunable *t = &f->out->v[f->out->n++];
	memset(t, 0, sizeof *t);
	t->name = xstrdup(name);
	t->scope = scope ? xstrdup(scope) : NULL;
	t->kind = kind;
	t->value = value;
	t->start = start;
	t->end = end;
	syntax_position(f->d, start, &t->line, &t->column);
}

/* parse node's text as an integer literal; 0 with the value and range */
static int node_int(const struct syntax_doc *d, TSNode n, long long *v, uint32_t *s, uint32_t *e)
{
	uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
	if (b > d->len || a > b)
		return -1;
	size_t ls, le;
	if (tunables_parse_int(d->src + a, b - a, v, &ls, &le) < 0)
		return -1;
	*s = a + (uint32_t)ls;
	*e = a + (uint32_t)le;
	return 0;
}

/* the function whose definition holds byte b, or NULL */
static const struct outline_func *enclosing(const struct outline *o, uint32_t b)
{
	size_t lo = 0, hi = o->n_funcs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->funcs[mid].def_start <= b)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* members nest in classes, not in each other: check a few before */
	for (size_t k = lo; k > 0 && k + 8 > lo; k--) {
		const struct outline_func *f = &o->funcs[k - 1];
		if (f->def_start <= b && b < f->def_end)
			return f;
	}
	return NULL;
}

/* "ns::" prefix of namespaces around a file-scope node (bounded climb) */
static char *namespace_prefix(const struct syntax_doc *d, TSNode n)
{
	strbuf sb = STRBUF_INIT;
	char *parts[32];
	int np = 0;
	TSNode p = ts_node_parent(n);
	for (int guard = 0; guard < 64 && !ts_node_is_null(p); guard++) {
		if (!strcmp(ts_node_type(p), "namespace_definition") && np < 32) {
			TSNode nm = ts_node_child_by_field_name(p, "name", 4);
			if (!ts_node_is_null(nm))
				parts[np++] = syntax_text(d, nm);
		}
		p = ts_node_parent(p);
	}
	for (int i = np - 1; i >= 0; i--) {
		sb_adds(&sb, parts[i]);
		sb_adds(&sb, "::");
		free(parts[i]);
	}
	return sb_detach(&sb);
}

/* is the declaration's type an integer type? */
static int integer_type(const struct syntax_doc *d, TSNode type)
{
	if (ts_node_is_null(type))
		return 0;
	const char *t = ts_node_type(type);
	if (!strcmp(t, "sized_type_specifier")) {
		char *s = syntax_text(d, type);
		int ok = !strstr(s, "double") && !strstr(s, "float");
		free(s);
		return ok;
	}
	if (!strcmp(t, "auto"))
		return 1;
	if (!strcmp(t, "primitive_type"))
		return !syntax_text_eq(d, type, "float") && !syntax_text_eq(d, type, "double") &&
		       !syntax_text_eq(d, type, "void") && !syntax_text_eq(d, type, "bool");
	return 0;
}

/* const or constexpr among a declaration's qualifiers: 2 constexpr, 1 const */
static int constness(const struct syntax_doc *d, TSNode decl)
{
	int k = 0;
	uint32_t n = ts_node_child_count(decl);
	for (uint32_t i = 0; i < n; i++) {
		TSNode c = ts_node_child(decl, i);
		if (strcmp(ts_node_type(c), "type_qualifier"))
			continue;
		if (syntax_text_eq(d, c, "constexpr"))
			k = 2;
		else if (syntax_text_eq(d, c, "const") && k < 1)
			k = 1;
	}
	return k;
}

static void from_query(struct finder *f, char *err_unused)
{
	(void)err_unused;
	const struct syntax_doc *d = f->d;
	const struct syntax_query *sq = syntax_query_get("tunables", NULL);
	if (!sq)
		return;
	const TSQuery *q = syntax_query_ts(sq);
	TSQueryCursor *qc = ts_query_cursor_new();
	TSQueryMatch m;
	ts_query_cursor_exec(qc, q, syntax_root(d));
	while (ts_query_cursor_next_match(qc, &m)) {
		if (!syntax_query_accept(sq, &m, d))
			continue;
		TSNode name = {0}, value = {0}, whole = {0};
		const char *kind = NULL;
		for (uint16_t i = 0; i < m.capture_count; i++) {
			uint32_t len;
			const char *cn = ts_query_capture_name_for_id(q, m.captures[i].index, &len);
			if (!strcmp(cn, "name"))
				name = m.captures[i].node;
			else if (!strcmp(cn, "value"))
				value = m.captures[i].node;
			else if (!strcmp(cn, "define") || !strcmp(cn, "decl") ||
			         !strcmp(cn, "enum") || !strcmp(cn, "tparam") ||
			         !strcmp(cn, "dim3")) {
				kind = cn;
				whole = m.captures[i].node;
			}
		}
		if (!kind || ts_node_is_null(name) || ts_node_is_null(value))
			continue;
		char *nm = syntax_text(d, name);
		const struct outline_func *fn = enclosing(f->o, ts_node_start_byte(whole));
		long long v;
		uint32_t s, e;
		if (!strcmp(kind, "dim3")) {
			static const char *const axis[3] = {"x", "y", "z"};
			uint32_t nc = ts_node_named_child_count(value), idx = 0;
			for (uint32_t i = 0; i < nc && idx < 3; i++) {
				TSNode a = ts_node_named_child(value, i);
				if (!strcmp(ts_node_type(a), "comment"))
					continue;
				if (!strcmp(ts_node_type(a), "number_literal") &&
				    node_int(d, a, &v, &s, &e) == 0) {
					char *full =
					    fn ? xasprintf("%s.%s.%s", fn->qualname, nm, axis[idx])
					       : xasprintf("%s.%s", nm, axis[idx]);
					add(f, full, fn ? fn->qualname : NULL, TUNABLE_DIM3, v, s,
					    e);
					free(full);
				}
				idx++;
			}
			free(nm);
			continue;
		}
		if (node_int(d, value, &v, &s, &e) < 0) {
			free(nm);
			continue;
		}
		enum tunable_kind k;
		char *full = NULL;
		if (!strcmp(kind, "define")) {
			k = TUNABLE_DEFINE;
			full = xstrdup(nm);
			fn = NULL;
		} else if (!strcmp(kind, "decl")) {
			int c = constness(d, whole);
			if (!c || !integer_type(d, ts_node_child_by_field_name(whole, "type", 4))) {
				free(nm);
				continue;
			}
			k = c == 2 ? TUNABLE_CONSTEXPR : TUNABLE_CONST;
		} else if (!strcmp(kind, "enum")) {
			k = TUNABLE_ENUM;
		} else {
			TSNode decl = ts_node_parent(value);
			if (!integer_type(d, ts_node_child_by_field_name(decl, "type", 4))) {
				free(nm);
				continue;
			}
			k = TUNABLE_TEMPLATE_DEFAULT;
			/* the templated function follows the parameter list */
			TSNode tdecl = ts_node_parent(whole);
			fn = enclosing(f->o,
			               ts_node_end_byte(tdecl) ? ts_node_end_byte(tdecl) - 1 : 0);
			if (fn && fn->item_start != ts_node_start_byte(tdecl))
				fn = NULL;
		}
		if (!full) {
			if (fn)
				full = xasprintf("%s.%s", fn->qualname, nm);
			else {
				char *ns = namespace_prefix(d, whole);
				full = xasprintf("%s%s", ns, nm);
				free(ns);
			}
		}
		add(f, full, fn ? fn->qualname : NULL, k, v, s, e);
		free(full);
		free(nm);
	}
	ts_query_cursor_delete(qc);
}

static void from_launches(struct finder *f)
{
	const struct syntax_doc *d = f->d;
	const struct outline *o = f->o;
	static const enum tunable_kind cfg_kind[3] = {TUNABLE_LAUNCH_GRID, TUNABLE_LAUNCH_BLOCK,
	                                              TUNABLE_LAUNCH_SMEM};
	static const char *const cfg_name[3] = {"grid", "block", "smem"};
	for (size_t i = 0; i < o->n_launches; i++) {
		const struct outline_launch *l = &o->launches[i];
		int nth = 1;
		for (size_t k = 0; k < i; k++)
			nth += !strcmp(o->launches[k].kernel, l->kernel);
		char *base = nth > 1 ? xasprintf("%s#%d", l->kernel, nth) : xstrdup(l->kernel);
		long long v;
		size_t ls, le;
		for (int c = 0; c < 3 && c < (int)l->n_config; c++) {
			uint32_t a = l->config_start[c], b = l->config_end[c];
			if (b > d->len || a >= b)
				continue;
			if (tunables_parse_int(d->src + a, b - a, &v, &ls, &le) < 0)
				continue;
			if (c == 2 && v == 0)
				continue;
			char *nm = xasprintf("%s.%s", base, cfg_name[c]);
			add(f, nm, l->kernel, cfg_kind[c], v, a + (uint32_t)ls, a + (uint32_t)le);
			free(nm);
		}
		if (l->targs_end > l->targs_start) {
			TSNode ta = syntax_node_at(d, l->targs_start, l->targs_end);
			if (!ts_node_is_null(ta) &&
			    !strcmp(ts_node_type(ta), "template_argument_list")) {
				uint32_t nc = ts_node_named_child_count(ta), idx = 0;
				for (uint32_t k = 0; k < nc; k++) {
					TSNode a = ts_node_named_child(ta, k);
					if (!strcmp(ts_node_type(a), "comment"))
						continue;
					uint32_t s, e;
					if (!strcmp(ts_node_type(a), "number_literal") &&
					    node_int(d, a, &v, &s, &e) == 0) {
						char *nm = xasprintf("%s.t%u", base, idx);
						add(f, nm, l->kernel, TUNABLE_TEMPLATE_ARG, v, s,
						    e);
						free(nm);
					}
					idx++;
				}
			}
		}
		free(base);
	}
}

static void from_launch_bounds(struct finder *f)
{
	const struct syntax_doc *d = f->d;
	static const char *const names[3] = {"max_threads", "min_blocks", "max_blocks_cluster"};
	for (size_t i = 0; i < f->o->n_funcs; i++) {
		const struct outline_func *fn = &f->o->funcs[i];
		if (!fn->launch_bounds)
			continue;
		TSNode def = syntax_node_at(d, fn->def_start, fn->def_end);
		if (ts_node_is_null(def) || strcmp(ts_node_type(def), "function_definition"))
			continue;
		uint32_t nc = ts_node_child_count(def);
		for (uint32_t k = 0; k < nc; k++) {
			TSNode lb = ts_node_child(def, k);
			if (strcmp(ts_node_type(lb), "launch_bounds"))
				continue;
			uint32_t na = ts_node_named_child_count(lb), idx = 0;
			for (uint32_t a = 0; a < na && idx < 3; a++) {
				TSNode e = ts_node_named_child(lb, a);
				if (!strcmp(ts_node_type(e), "comment"))
					continue;
				long long v;
				uint32_t s, en;
				if (!strcmp(ts_node_type(e), "number_literal") &&
				    node_int(d, e, &v, &s, &en) == 0) {
					char *nm = xasprintf("%s.%s", fn->qualname, names[idx]);
					add(f, nm, fn->qualname, TUNABLE_LAUNCH_BOUNDS, v, s, en);
					free(nm);
				}
				idx++;
			}
			break;
		}
	}
}

static int by_start(const void *a, const void *b)
{
	const struct tunable *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->kind > y->kind) - (x->kind < y->kind);
}

int tunables_find(const struct syntax_doc *d, struct tunable_list *out, char *err)
{
	memset(out, 0, sizeof *out);
	if (!syntax_query_get("tunables", err))
		return -1;
	struct outline o;
	outline_build(d, &o, err);
	struct finder f = {d, &o, out, 0};
	from_query(&f, err);
	from_launches(&f);
	from_launch_bounds(&f);
	outline_free(&o);
	if (out->n > 1)
		qsort(out->v, out->n, sizeof *out->v, by_start);
	/* drop a second find of the same literal, then make names unique */
	size_t w = 0;
	for (size_t i = 0; i < out->n; i++) {
		if (w && out->v[w - 1].start == out->v[i].start) {
			free(out->v[i].name);
			free(out->v[i].scope);
			continue;
		}
		out->v[w++] = out->v[i];
	}
	out->n = w;
	for (size_t i = 0; i < out->n; i++) {
		int nth = 1;
		for (size_t k = 0; k < i; k++) {
			const char *a = out->v[k].name, *b = out->v[i].name;
			size_t bl = strlen(b);
			if (!strncmp(a, b, bl) && (a[bl] == 0 || a[bl] == '#'))
				nth++;
		}
		if (nth > 1) {
			char *nm = xasprintf("%s#%d", out->v[i].name, nth);
			free(out->v[i].name);
			out->v[i].name = nm;
		}
	}
	return 0;
}

void tunables_free(struct tunable_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].scope);
	}
	free(l->v);
	memset(l, 0, sizeof *l);
}

const struct tunable *tunables_get(const struct tunable_list *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return &l->v[i];
	return NULL;
}

/* format v the way the literal old[0..n) is written (base, suffix) */
static char *format_like(const char *old, size_t n, long long v)
{
	size_t i = 0;
	if (i < n && (old[i] == '-' || old[i] == '+'))
		i++;
	size_t se = n;
	while (se > i && strchr("uUlLzZ", old[se - 1]))
		se--;
	const char *suffix = old + se;
	size_t nsuf = n - se;
	int hex = se - i > 2 && old[i] == '0' && (old[i + 1] == 'x' || old[i + 1] == 'X');
	int oct = !hex && se - i > 1 && old[i] == '0' && isdigit((unsigned char)old[i + 1]);
	int upper = 0;
	for (size_t k = i + 2; hex && k < se; k++)
		if (isupper((unsigned char)old[k]))
			upper = 1;
	if (v < 0)
		return xasprintf("%lld%.*s", v, (int)nsuf, suffix);
	if (hex)
		return xasprintf(upper ? "0%c%llX%.*s" : "0%c%llx%.*s", old[i + 1],
		                 (unsigned long long)v, (int)nsuf, suffix);
	if (oct && v > 0)
		return xasprintf("0%llo%.*s", (unsigned long long)v, (int)nsuf, suffix);
	return xasprintf("%lld%.*s", v, (int)nsuf, suffix);
}

struct edit {
	uint32_t start, end;
	char *text;
};

static int edit_cmp(const void *a, const void *b)
{
	const struct edit *x = a, *y = b;
	return (x->start < y->start) - (x->start > y->start); /* descending */
}

char *tunables_rewrite(const char *src, size_t n, const struct tunable_set *sets, size_t nsets,
                       size_t *out_len, char *err)
{
	struct syntax_doc *d = syntax_parse(src, n, err);
	if (!d)
		return NULL;
	struct tunable_list l;
	char *result = NULL;
	struct edit *edits = xcalloc(nsets ? nsets : 1, sizeof *edits);
	size_t nedits = 0;
	if (tunables_find(d, &l, err) < 0)
		goto out;
	for (size_t i = 0; i < nsets; i++) {
		const struct tunable *t = sets[i].name ? tunables_get(&l, sets[i].name) : NULL;
		if (!t) {
			strbuf known = STRBUF_INIT;
			for (size_t k = 0; k < l.n && k < 12; k++)
				sb_addf(&known, "%s%s", k ? ", " : "", l.v[k].name);
			if (l.n > 12)
				sb_adds(&known, ", ...");
			kl_err(err, "no tunable named `%s` (the source has %s%s)",
			       sets[i].name ? sets[i].name : "(null)", l.n ? "" : "none",
			       known.buf ? known.buf : "");
			sb_free(&known);
			goto out;
		}
		const char *lit = d->src + t->start;
		size_t litn = t->end - t->start;
		int is_unsigned = memchr(lit, 'u', litn) || memchr(lit, 'U', litn);
		int must_be_positive = t->kind == TUNABLE_LAUNCH_GRID ||
		                       t->kind == TUNABLE_LAUNCH_BLOCK || t->kind == TUNABLE_DIM3 ||
		                       t->kind == TUNABLE_LAUNCH_BOUNDS;
		if (sets[i].value < 0 &&
		    (is_unsigned || must_be_positive || t->kind == TUNABLE_LAUNCH_SMEM)) {
			kl_err(err, "%s: %lld does not fit: the %s value must not be negative",
			       t->name, sets[i].value, tunable_kind_name(t->kind));
			goto out;
		}
		if (must_be_positive && sets[i].value == 0) {
			kl_err(err, "%s: 0 does not fit: the %s value must be positive", t->name,
			       tunable_kind_name(t->kind));
			goto out;
		}
		size_t k;
		for (k = 0; k < nedits && edits[k].start != t->start; k++)
			;
		if (k == nedits)
			nedits++;
		else
			free(edits[k].text);
		edits[k] = (struct edit){t->start, t->end, format_like(lit, litn, sets[i].value)};
	}
	if (nedits > 1)
		qsort(edits, nedits, sizeof *edits, edit_cmp);
	strbuf sb = STRBUF_INIT;
	sb_add(&sb, d->src, d->len);
	for (size_t i = 0; i < nedits; i++) {
		/* descending starts: earlier edits do not move later ones */
		size_t tl = strlen(edits[i].text);
		strbuf nb = STRBUF_INIT;
		sb_add(&nb, sb.buf, edits[i].start);
		sb_add(&nb, edits[i].text, tl);
		sb_add(&nb, sb.buf + edits[i].end, sb.len - edits[i].end);
		sb_free(&sb);
		sb = nb;
	}
	size_t before = syntax_errors(d, NULL, 0);
	struct syntax_doc *nd = syntax_parse(sb.buf, sb.len, err);
	if (!nd) {
		sb_free(&sb);
		goto out;
	}
	size_t after = syntax_errors(nd, NULL, 0);
	if (after > before) {
		struct syntax_error e;
		syntax_first_error(nd, &e);
		kl_err(err, "the rewritten source does not parse: line %u, column %u: %s", e.line,
		       e.column, e.msg);
		syntax_free(nd);
		sb_free(&sb);
		goto out;
	}
	syntax_free(nd);
	*out_len = sb.len;
	result = sb_detach(&sb);
out:
	for (size_t i = 0; i < nedits; i++)
		free(edits[i].text);
	free(edits);
	tunables_free(&l);
	syntax_free(d);
	return result;
}

cJSON *tunables_json(const struct tunable_list *l)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < l->n; i++) {
		const struct tunable *t = &l->v[i];
		cJSON *j = cJSON_CreateObject();
		char *u = syntax_utf8(t->name);
		cJSON_AddStringToObject(j, "name", u);
		free(u);
		cJSON_AddNumberToObject(j, "value", (double)t->value);
		cJSON_AddStringToObject(j, "kind", tunable_kind_name(t->kind));
		cJSON_AddNumberToObject(j, "line", t->line);
		cJSON_AddNumberToObject(j, "column", t->column);
		if (t->scope) {
			u = syntax_utf8(t->scope);
			cJSON_AddStringToObject(j, "scope", u);
			free(u);
		} else
			cJSON_AddNullToObject(j, "scope");
		cJSON_AddItemToArray(a, j);
	}
	return a;
}
