/*
 * splice.c - function-level edits on syntax trees: a source is read into
 * top-level items (functions from the outline, #includes, #defines and
 * other declarations), a donor's items are merged into a target's by name,
 * and the edited source is checked to still parse.
 */
#include "splice.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outline.h"
#include "syntax.h"
#include "util.h"

/* ---- sets of names ---- */

struct names {
	char **v;
	size_t n, alloc;
};

static int names_has(const struct names *s, const char *x)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], x))
			return 1;
	return 0;
}

static int names_add_n(struct names *s, const char *x, size_t n)
{
	for (size_t i = 0; i < s->n; i++)
		if (strlen(s->v[i]) == n && !memcmp(s->v[i], x, n))
			return 0;
	xgrow((void **)&s->v, &s->alloc, s->n + 1, sizeof *s->v);
	s->v[s->n++] = xstrndup(x, n);
	return 1;
}

static void names_free(struct names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof *s);
}

/* the words of a preprocessor argument (raw text the grammar does not parse) */
static void words_of(const char *p, size_t n, struct names *out)
{
	for (size_t i = 0; i < n;) {
		if (isalpha((unsigned char)p[i]) || p[i] == '_') {
			size_t j = i + 1;
			while (j < n && (isalnum((unsigned char)p[j]) || p[j] == '_'))
				j++;
			names_add_n(out, p + i, j - i);
			i = j;
		} else if (isdigit((unsigned char)p[i])) {
			while (i < n &&
			       (isalnum((unsigned char)p[i]) || p[i] == '_' || p[i] == '.'))
				i++;
		} else {
			i++;
		}
	}
}

/* the names (identifiers, type names, macro words) used in node's subtree */
static void names_used(const struct syntax_doc *d, TSNode node, struct names *out)
{
	TSTreeCursor c = ts_tree_cursor_new(node);
	uint32_t depth = 0;
	for (;;) {
		TSNode n = ts_tree_cursor_current_node(&c);
		const char *t = ts_node_type(n);
		uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
		if (b > d->len)
			b = (uint32_t)d->len;
		if (a > b)
			a = b;
		if (!strcmp(t, "identifier") || !strcmp(t, "type_identifier") ||
		    !strcmp(t, "namespace_identifier")) {
			names_add_n(out, d->src + a, b - a);
		} else if (!strcmp(t, "preproc_arg")) {
			words_of(d->src + a, b - a, out);
		} else if (strcmp(t, "comment") && strcmp(t, "string_literal") &&
		           ts_tree_cursor_goto_first_child(&c)) {
			depth++;
			continue;
		}
		if (!syntax_cursor_next(&c, &depth))
			goto done;
	}
done:
	ts_tree_cursor_delete(&c);
}

/* ---- a source read into items ---- */

struct item {
	enum splice_item kind;
	char *key;      /* what matches across sources: qualified name, macro name, path */
	char *name;     /* shown in the changes */
	uint32_t start; /* the item's bytes */
	uint32_t end;
	uint32_t cstart;               /* start with the comments attached above it */
	const struct outline_func *fn; /* functions: the outline entry */
	int proto;                     /* a declaration of a function (no body) */
	TSNode node;
};

struct unit {
	struct syntax_doc *d;
	struct outline o;
	struct item *items;
	size_t n, alloc;
	uint32_t decl_at;    /* where new declarations go: before the first function */
	uint32_t include_at; /* where new #includes go: after the last one */
	size_t nerrors;      /* syntax errors of the source */
};

static TSNode field(TSNode n, const char *name)
{
	return ts_node_child_by_field_name(n, name, (uint32_t)strlen(name));
}

static int is(TSNode n, const char *type)
{
	return !ts_node_is_null(n) && !strcmp(ts_node_type(n), type);
}

/* the start of the comments directly above node (no blank line between) */
static uint32_t comments_above(const struct syntax_doc *d, TSNode node)
{
	uint32_t start = ts_node_start_byte(node);
	TSNode prev = ts_node_prev_sibling(node);
	for (int guard = 0; guard < 64 && is(prev, "comment"); guard++) {
		uint32_t pe = ts_node_end_byte(prev);
		int newlines = 0;
		for (uint32_t i = pe; i < start && i < d->len; i++) {
			if (d->src[i] == '\n')
				newlines++;
			else if (d->src[i] != ' ' && d->src[i] != '\t' && d->src[i] != '\r')
				newlines = 99;
		}
		if (newlines > 1)
			break;
		/* a comment ending a line of code belongs to that code */
		TSPoint ps = ts_node_start_point(prev);
		uint32_t pstart = ts_node_start_byte(prev);
		int own_line = 1;
		for (uint32_t i = pstart - ps.column; i < pstart; i++)
			if (d->src[i] != ' ' && d->src[i] != '\t')
				own_line = 0;
		if (!own_line)
			break;
		start = pstart;
		prev = ts_node_prev_sibling(prev);
	}
	return start;
}

static void add_item(struct unit *u, enum splice_item kind, char *key, char *name, TSNode node,
                     uint32_t start, uint32_t end)
{
	xgrow((void **)&u->items, &u->alloc, u->n + 1, sizeof *u->items);
	struct item *it = &u->items[u->n++];
	memset(it, 0, sizeof *it);
	it->kind = kind;
	it->key = key;
	it->name = name;
	it->node = node;
	it->start = start;
	it->end = end;
	it->cstart = comments_above(u->d, node);
}

static char *tokens_of(const struct syntax_doc *d, TSNode n)
{
	strbuf sb = STRBUF_INIT;
	syntax_tokens(d, n, &sb);
	return sb_detach(&sb);
}

/* a top-level declaration's key and display name, or -1 to ignore it */
static int decl_key(const struct syntax_doc *d, TSNode n, char **key, char **name, int *proto)
{
	const char *t = ts_node_type(n);
	*proto = 0;
	TSNode nm = {0};
	if (!strcmp(t, "declaration") || !strcmp(t, "type_definition")) {
		TSNode decl = field(n, "declarator");
		for (int guard = 0; guard < 32 && !ts_node_is_null(decl); guard++) {
			if (is(decl, "function_declarator"))
				*proto = 1;
			if (is(decl, "identifier") || is(decl, "type_identifier") ||
			    is(decl, "qualified_identifier") || is(decl, "field_identifier")) {
				nm = decl;
				break;
			}
			TSNode next = field(decl, "declarator");
			if (ts_node_is_null(next))
				next = ts_node_named_child(decl, 0);
			if (ts_node_eq(next, decl))
				break;
			decl = next;
		}
		if (ts_node_is_null(nm)) {
			/* `struct S {...};` parses as a declaration of the type alone */
			TSNode ty = field(n, "type");
			if (!ts_node_is_null(ty) && !ts_node_is_null(field(ty, "body")))
				nm = field(ty, "name");
		}
	} else if (!strcmp(t, "struct_specifier") || !strcmp(t, "class_specifier") ||
	           !strcmp(t, "union_specifier") || !strcmp(t, "enum_specifier") ||
	           !strcmp(t, "alias_declaration") || !strcmp(t, "concept_definition")) {
		nm = field(n, "name");
	} else if (!strcmp(t, "template_declaration")) {
		uint32_t k = ts_node_named_child_count(n);
		for (uint32_t i = 0; i < k; i++) {
			TSNode c = ts_node_named_child(n, i);
			if (is(c, "class_specifier") || is(c, "struct_specifier") ||
			    is(c, "alias_declaration") || is(c, "concept_definition"))
				nm = field(c, "name");
			else if (is(c, "declaration"))
				return decl_key(d, c, key, name, proto);
		}
	} else if (strcmp(t, "using_declaration") && strcmp(t, "static_assert_declaration") &&
	           strcmp(t, "namespace_alias_definition")) {
		return -1;
	}
	if (!ts_node_is_null(nm)) {
		*name = syntax_text(d, nm);
		*key = xasprintf("%s%s", *proto ? "proto:" : "", *name);
	} else {
		*key = tokens_of(d, n);
		*name = xstrdup(*key);
	}
	return 0;
}

static void unit_free(struct unit *u)
{
	for (size_t i = 0; i < u->n; i++) {
		free(u->items[i].key);
		free(u->items[i].name);
	}
	free(u->items);
	outline_free(&u->o);
	syntax_free(u->d);
	memset(u, 0, sizeof *u);
}

static int unit_load(struct unit *u, const char *src, size_t n, const char *what, char *err)
{
	memset(u, 0, sizeof *u);
	char e2[KL_ERRLEN];
	u->d = syntax_parse(src, n, e2);
	if (!u->d)
		return kl_err(err, "%s: %s", what, e2);
	outline_build(u->d, &u->o, NULL);
	u->nerrors = syntax_errors(u->d, NULL, 0);

	/* functions, wherever the outline found them (not class members) */
	for (size_t i = 0; i < u->o.n_funcs; i++) {
		const struct outline_func *f = &u->o.funcs[i];
		if (f->member)
			continue;
		TSNode node = syntax_node_at(u->d, f->item_start, f->item_end);
		add_item(u, SPLICE_FUNCTION, xstrdup(f->qualname), xstrdup(f->qualname), node,
		         f->item_start, f->item_end);
		u->items[u->n - 1].fn = f;
	}

	/* the other top-level items, and where new ones go */
	uint32_t first_func_root = UINT32_MAX, last_include = UINT32_MAX;
	uint32_t lead_comments_end = 0;
	int seen_code = 0;
	/* the top-level items of every segment, in order */
	for (size_t sk = 0; sk < u->d->nseg; sk++) {
		TSNode root = syntax_seg_root(u->d, sk);
		TSTreeCursor c = ts_tree_cursor_new(root);
		if (ts_tree_cursor_goto_first_child(&c)) {
			do {
				TSNode k = ts_tree_cursor_current_node(&c);
				const char *t = ts_node_type(k);
				uint32_t ks = ts_node_start_byte(k), ke = ts_node_end_byte(k);
				if (!strcmp(t, "comment")) {
					if (!seen_code)
						lead_comments_end = ke;
					continue;
				}
				seen_code = 1;
				if (first_func_root == UINT32_MAX) {
					for (size_t i = 0; i < u->o.n_funcs; i++)
						if (u->o.funcs[i].item_start >= ks &&
						    u->o.funcs[i].item_end <= ke) {
							first_func_root = comments_above(u->d, k);
							break;
						}
				}
				if (!strcmp(t, "preproc_include")) {
					TSNode p = field(k, "path");
					if (ts_node_is_null(p))
						continue;
					char *path = syntax_text(u->d, p);
					add_item(u, SPLICE_INCLUDE, path, xstrdup(path), k, ks, ke);
					last_include = ke;
				} else if (!strcmp(t, "preproc_def") ||
				           !strcmp(t, "preproc_function_def")) {
					TSNode nm = field(k, "name");
					if (ts_node_is_null(nm))
						continue;
					char *name = syntax_text(u->d, nm);
					add_item(u, SPLICE_MACRO, name, xstrdup(name), k, ks, ke);
				} else {
					char *key, *name;
					int proto;
					if (decl_key(u->d, k, &key, &name, &proto) < 0)
						continue;
					/* `struct S {...}` is followed by its own `;` at top level
					 */
					uint32_t end = ke;
					TSTreeCursor peek = ts_tree_cursor_copy(&c);
					if (ts_tree_cursor_goto_next_sibling(&peek)) {
						TSNode nx = ts_tree_cursor_current_node(&peek);
						if (is(nx, ";"))
							end = ts_node_end_byte(nx);
					}
					ts_tree_cursor_delete(&peek);
					add_item(u, SPLICE_DECL, key, name, k, ks, end);
					u->items[u->n - 1].proto = proto;
				}
			} while (ts_tree_cursor_goto_next_sibling(&c));
		}
		ts_tree_cursor_delete(&c);
	}
	u->decl_at = first_func_root != UINT32_MAX ? first_func_root : (uint32_t)u->d->len;
	u->include_at = last_include != UINT32_MAX ? last_include : lead_comments_end;
	if (u->include_at > u->decl_at)
		u->include_at = u->decl_at;
	return 0;
}

/* the item of u with this kind and key, or NULL */
static const struct item *unit_lookup(const struct unit *u, enum splice_item kind, const char *key)
{
	if (kind == SPLICE_FUNCTION) {
		const struct outline_func *f = outline_find(&u->o, key);
		if (!f)
			return NULL;
		for (size_t i = 0; i < u->n; i++)
			if (u->items[i].fn == f)
				return &u->items[i];
		return NULL;
	}
	for (size_t i = 0; i < u->n; i++)
		if (u->items[i].kind == kind && !strcmp(u->items[i].key, key))
			return &u->items[i];
	return NULL;
}

/* ---- merging a donor's items into a target ---- */

enum mode {
	MERGE_REPLACE, /* replace what has the same name, add the rest */
	MERGE_ADD,     /* only add what the target lacks */
};

struct donor {
	const struct unit *u;
	const struct item *it;
	enum mode mode;
	const struct item *target; /* forced target (splice_replace), or NULL */
};

struct edit {
	uint32_t start, end; /* bytes of the target replaced (start == end: insertion) */
	char *text;
	size_t seq; /* order among insertions at the same place */
	const struct donor *from;
	const struct item *target; /* the replaced item */
};

static int edit_cmp(const void *a, const void *b)
{
	const struct edit *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	int xi = x->start == x->end, yi = y->start == y->end;
	if (xi != yi)
		return xi ? -1 : 1; /* insertions before a replacement starting there */
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static void add_change(struct splice_result *r, size_t *alloc, enum splice_item item,
                       enum splice_action action, const char *name)
{
	xgrow((void **)&r->changes, alloc, r->n_changes + 1, sizeof *r->changes);
	r->changes[r->n_changes++] = (struct splice_change){item, action, xstrdup(name)};
}

/* the last component of a qualified name */
static const char *base_name(const char *s)
{
	const char *p = s, *q;
	while ((q = strstr(p, "::")))
		p = q + 2;
	return p;
}

/* the text a donor item brings: its comments, then the item */
static char *donor_text(const struct donor *dn, int with_comments, const struct item *target)
{
	const struct syntax_doc *d = dn->u->d;
	const struct item *it = dn->it;
	uint32_t cs = with_comments ? it->cstart : it->start;
	strbuf sb = STRBUF_INIT;
	if (it->kind == SPLICE_FUNCTION) {
		const struct outline_func *df = it->fn;
		const struct outline_func *tf = target ? target->fn : NULL;
		sb_add(&sb, d->src + cs, it->start - cs);
		if (tf && tf->extern_c && !tf->wrapped_extern_c && df->wrapped_extern_c) {
			/* the target sits in an extern "C" { } block already */
			sb_add(&sb, d->src + df->def_start, df->def_end - df->def_start);
		} else {
			int want_c = (tf ? tf->wrapped_extern_c : 0) ||
			             (!tf && df->extern_c && !df->wrapped_extern_c);
			if (want_c && !df->wrapped_extern_c)
				sb_adds(&sb, "extern \"C\" ");
			sb_add(&sb, d->src + it->start, it->end - it->start);
		}
	} else {
		sb_add(&sb, d->src + cs, it->end - cs);
	}
	/* no trailing newline: callers add the separators */
	while (sb.len && (sb.buf[sb.len - 1] == '\n' || sb.buf[sb.len - 1] == ' ' ||
	                  sb.buf[sb.len - 1] == '\t' || sb.buf[sb.len - 1] == '\r'))
		sb.buf[--sb.len] = 0;
	if (!sb.buf)
		sb_grow(&sb, 0);
	return sb_detach(&sb);
}

static int same_tokens(const struct unit *a, const struct item *x, const struct unit *b,
                       const struct item *y)
{
	char *s = tokens_of(a->d, x->node), *t = tokens_of(b->d, y->node);
	int same = !strcmp(s, t);
	free(s);
	free(t);
	return same;
}

/* does text use `name` as an identifier? */
static int text_uses(const struct syntax_doc *d, TSNode node, const char *name)
{
	struct names s = {0};
	names_used(d, node, &s);
	int has = names_has(&s, name);
	names_free(&s);
	return has;
}

/*
 * Merge donors[0..nd) into target t; fills res.  Returns 0 or -1 + err.
 */
static int merge(const struct unit *t, const struct donor *donors, size_t nd,
                 struct splice_result *res, char *err)
{
	memset(res, 0, sizeof *res);
	size_t achanges = 0, aedits = 0, nedits = 0;
	struct edit *edits = NULL;
	/* added functions, whose places are settled after the loop */
	size_t *added = xcalloc(nd ? nd : 1, sizeof *added), nadded = 0;

	for (size_t i = 0; i < nd; i++) {
		const struct donor *dn = &donors[i];
		const struct item *it = dn->it;
		const struct item *tgt = dn->target;
		if (it->kind == SPLICE_FUNCTION && !strcmp(base_name(it->key), "main") && !tgt) {
			add_change(res, &achanges, it->kind, SPLICE_SKIPPED, it->name);
			continue;
		}
		if (!tgt) {
			if (it->kind == SPLICE_DECL && it->proto) {
				/* a prototype: needless when the function or its prototype exists
				 */
				if (unit_lookup(t, SPLICE_FUNCTION, it->name) ||
				    unit_lookup(t, SPLICE_DECL, it->key)) {
					add_change(res, &achanges, it->kind, SPLICE_UNCHANGED,
					           it->name);
					continue;
				}
			}
			tgt = unit_lookup(t, it->kind, it->key);
		}
		/* an explicit replacement applies unless byte for byte the same;
		 * otherwise the same tokens (layout, comments aside) change nothing */
		int same = 0;
		if (tgt && dn->target)
			same = it->end - it->cstart == tgt->end - tgt->cstart &&
			       !memcmp(dn->u->d->src + it->cstart, t->d->src + tgt->cstart,
			               it->end - it->cstart);
		else if (tgt)
			same = same_tokens(dn->u, it, t, tgt);
		if (tgt && (dn->mode == MERGE_ADD || same)) {
			/* the item was already replaced by an earlier donor: last one wins */
			int replaced_before = 0;
			for (size_t k = 0; k < nedits; k++)
				if (edits[k].target == tgt)
					replaced_before = 1;
			if (!replaced_before)
				add_change(res, &achanges, it->kind, SPLICE_UNCHANGED, it->name);
			continue;
		}
		if (tgt) {
			int with_comments = it->cstart < it->start;
			uint32_t s = with_comments ? tgt->cstart : tgt->start;
			char *text = donor_text(dn, with_comments, tgt);
			/* keep the target's trailing newline (preprocessor lines have one) */
			if (tgt->end > tgt->start && t->d->src[tgt->end - 1] == '\n') {
				char *x = xasprintf("%s\n", text);
				free(text);
				text = x;
			}
			size_t k;
			for (k = 0; k < nedits && edits[k].target != tgt; k++)
				;
			if (k < nedits) {
				free(edits[k].text);
			} else {
				xgrow((void **)&edits, &aedits, nedits + 1, sizeof *edits);
				k = nedits++;
				add_change(res, &achanges, it->kind, SPLICE_REPLACED, it->name);
			}
			edits[k] = (struct edit){s, tgt->end, text, i, dn, tgt};
			continue;
		}
		/* a new item */
		char *text = donor_text(dn, 1, NULL);
		uint32_t at;
		char *chunk;
		if (it->kind == SPLICE_FUNCTION) {
			added[nadded++] = nedits;
			at = (uint32_t)t->d->len; /* settled below */
			chunk = text;
		} else if (it->kind == SPLICE_INCLUDE) {
			at = t->include_at;
			int line_start = at == 0 || t->d->src[at - 1] == '\n';
			chunk = line_start ? xasprintf("%s\n", text) : xasprintf("\n%s", text);
			free(text);
		} else {
			at = t->decl_at;
			int line_start = at == 0 || t->d->src[at - 1] == '\n';
			chunk = xasprintf("%s%s\n%s", line_start ? "" : "\n", text,
			                  it->kind == SPLICE_DECL ? "\n" : "");
			free(text);
		}
		xgrow((void **)&edits, &aedits, nedits + 1, sizeof *edits);
		edits[nedits++] = (struct edit){at, at, chunk, i, dn, NULL};
		add_change(res, &achanges, it->kind, SPLICE_ADDED, it->name);
	}

	/*
	 * New functions go before the first function that uses them: one of
	 * the target's, one that replaces a target function, or another new
	 * one (settled by iterating; places only move up).
	 */
	for (size_t a = 0; a < nadded; a++) {
		struct edit *e = &edits[added[a]];
		const char *nm = base_name(e->from->it->key);
		uint32_t best = (uint32_t)t->d->len;
		for (size_t k = 0; k < t->n; k++) {
			const struct item *ti = &t->items[k];
			if (ti->kind != SPLICE_FUNCTION || ti->cstart >= best)
				continue;
			const struct edit *rep = NULL;
			for (size_t r = 0; r < nedits; r++)
				if (edits[r].target == ti)
					rep = &edits[r];
			int uses = rep ? text_uses(rep->from->u->d, rep->from->it->node, nm)
			               : text_uses(t->d, ti->node, nm);
			if (uses)
				best = rep ? rep->start : ti->cstart;
		}
		e->start = e->end = best;
	}
	for (int changed = 1, rounds = 0; changed && rounds < 64; rounds++) {
		changed = 0;
		for (size_t a = 0; a < nadded; a++) {
			struct edit *e = &edits[added[a]];
			const char *nm = base_name(e->from->it->key);
			for (size_t b = 0; b < nadded; b++) {
				struct edit *h = &edits[added[b]];
				if (a == b || h->start >= e->start)
					continue;
				if (text_uses(h->from->u->d, h->from->it->node, nm)) {
					e->start = e->end = h->start;
					changed = 1;
				}
			}
		}
	}
	for (size_t a = 0; a < nadded; a++) {
		struct edit *e = &edits[added[a]];
		char *text = e->text;
		if (e->start >= t->d->len) {
			int nl = t->d->len && t->d->src[t->d->len - 1] != '\n';
			e->text =
			    xasprintf("%s%s%s\n", nl ? "\n" : "", t->d->len ? "\n" : "", text);
		} else {
			e->text = xasprintf("%s\n\n", text);
		}
		free(text);
	}
	/* a function used by another new one goes first at the same place */
	for (size_t a = 0; a < nadded; a++)
		for (size_t b = 0; b < nadded; b++) {
			struct edit *e = &edits[added[a]], *h = &edits[added[b]];
			if (a != b && e->start == h->start && e->seq > h->seq &&
			    text_uses(h->from->u->d, h->from->it->node,
			              base_name(e->from->it->key)) &&
			    !text_uses(e->from->u->d, e->from->it->node,
			               base_name(h->from->it->key))) {
				size_t s = e->seq;
				e->seq = h->seq;
				h->seq = s;
			}
		}
	free(added);

	if (nedits > 1)
		qsort(edits, nedits, sizeof *edits, edit_cmp);
	strbuf sb = STRBUF_INIT;
	uint32_t pos = 0;
	for (size_t i = 0; i < nedits; i++) {
		if (edits[i].start < pos)
			continue; /* cannot happen: items do not overlap */
		sb_add(&sb, t->d->src + pos, edits[i].start - pos);
		sb_adds(&sb, edits[i].text);
		pos = edits[i].end;
	}
	sb_add(&sb, t->d->src + pos, t->d->len - pos);
	for (size_t i = 0; i < nedits; i++)
		free(edits[i].text);
	free(edits);

	/* the result must parse as well as the target did */
	char e2[KL_ERRLEN];
	struct syntax_doc *nd2 = syntax_parse(sb.buf, sb.len, e2);
	if (!nd2) {
		kl_err(err, "the spliced source is refused: %s", e2);
		goto fail;
	}
	size_t after = syntax_errors(nd2, NULL, 0);
	if (after > t->nerrors) {
		struct syntax_error se;
		syntax_first_error(nd2, &se);
		kl_err(err, "the spliced source does not parse: line %u, column %u: %s", se.line,
		       se.column, se.msg);
		syntax_free(nd2);
		goto fail;
	}
	syntax_free(nd2);
	res->len = sb.len;
	res->src = sb_detach(&sb);
	return 0;
fail:
	sb_free(&sb);
	splice_result_free(res);
	return -1;
}

/* ---- the public operations ---- */

static void list_functions(const struct unit *u, strbuf *sb)
{
	size_t shown = 0;
	for (size_t i = 0; i < u->o.n_funcs && shown < 12; i++, shown++)
		sb_addf(sb, "%s%s", shown ? ", " : "", u->o.funcs[i].qualname);
	if (u->o.n_funcs > 12)
		sb_adds(sb, ", ...");
	if (!u->o.n_funcs)
		sb_adds(sb, "none");
}

/* why name finds nothing in u (not there, or ambiguous) into err */
static int not_found(const struct unit *u, const char *name, const char *where, char *err)
{
	strbuf sb = STRBUF_INIT;
	size_t hits = 0;
	for (size_t i = 0; i < u->o.n_funcs; i++)
		if (!strcmp(base_name(u->o.funcs[i].qualname), base_name(name))) {
			sb_addf(&sb, "%s%s", hits ? ", " : "", u->o.funcs[i].qualname);
			hits++;
		}
	if (hits > 1)
		kl_err(err, "`%s` is ambiguous in %s: %s", name, where, sb.buf);
	else {
		sb_reset(&sb);
		list_functions(u, &sb);
		kl_err(err, "no function named `%s` in %s (it defines: %s)", name, where, sb.buf);
	}
	sb_free(&sb);
	return -1;
}

int splice_find(const char *src, size_t n, const char *name, struct splice_span *out, char *err)
{
	memset(out, 0, sizeof *out);
	struct unit u;
	if (unit_load(&u, src, n, "the source", err) < 0)
		return -1;
	const struct outline_func *f = outline_find(&u.o, name);
	if (!f) {
		not_found(&u, name, "the source", err);
		unit_free(&u);
		return -1;
	}
	out->start = f->item_start;
	out->end = f->item_end;
	out->line = f->line;
	out->end_line = f->end_line;
	out->text = xstrndup(u.d->src + f->item_start, f->item_end - f->item_start);
	out->qualname = xstrdup(f->qualname);
	unit_free(&u);
	return 0;
}

void splice_span_free(struct splice_span *s)
{
	free(s->text);
	free(s->qualname);
	memset(s, 0, sizeof *s);
}

void splice_result_free(struct splice_result *r)
{
	free(r->src);
	for (size_t i = 0; i < r->n_changes; i++)
		free(r->changes[i].name);
	free(r->changes);
	memset(r, 0, sizeof *r);
}

/* 0 when the snippet parses cleanly, else -1 with err naming where */
static int must_parse(const struct unit *u, const char *what, unsigned line_offset, char *err)
{
	struct syntax_error e;
	if (!syntax_first_error(u->d, &e))
		return 0;
	if (line_offset)
		return kl_err(
		    err, "%s does not parse: reply line %u (line %u of the block), column %u: %s",
		    what, e.line + line_offset, e.line, e.column, e.msg);
	return kl_err(err, "%s does not parse: line %u, column %u: %s", what, e.line, e.column,
	              e.msg);
}

int splice_replace(const char *src, size_t n, const char *name, const char *text, size_t tn,
                   struct splice_result *res, char *err)
{
	memset(res, 0, sizeof *res);
	struct unit t, r;
	if (unit_load(&t, src, n, "the source", err) < 0)
		return -1;
	const struct outline_func *tf = outline_find(&t.o, name);
	if (!tf) {
		not_found(&t, name, "the source", err);
		unit_free(&t);
		return -1;
	}
	if (unit_load(&r, text, tn, "the replacement text", err) < 0) {
		unit_free(&t);
		return -1;
	}
	int rc = -1;
	if (must_parse(&r, "the replacement text", 0, err) < 0)
		goto out;
	const struct item *ri = NULL;
	size_t nfuncs = 0;
	strbuf others = STRBUF_INIT;
	for (size_t i = 0; i < r.n; i++) {
		if (r.items[i].kind != SPLICE_FUNCTION)
			continue;
		nfuncs++;
		if (!ri && !strcmp(base_name(r.items[i].key), base_name(tf->qualname)))
			ri = &r.items[i];
		else
			sb_addf(&others, "%s%s", others.len ? ", " : "", r.items[i].key);
	}
	if (!ri) {
		if (nfuncs)
			kl_err(err, "the replacement text defines %s, not `%s`", others.buf, name);
		else
			kl_err(err, "the replacement text defines no function");
		sb_free(&others);
		goto out;
	}
	if (nfuncs > 1) {
		kl_err(err,
		       "the replacement text defines other functions too (%s): "
		       "replace one function at a time, or splice a reply",
		       others.buf);
		sb_free(&others);
		goto out;
	}
	sb_free(&others);
	const struct item *ti = NULL;
	for (size_t i = 0; i < t.n; i++)
		if (t.items[i].fn == tf)
			ti = &t.items[i];
	if (!ti) {
		/* a class member: not an item, but its bytes can still be replaced */
		kl_err(err, "`%s` is defined inside a class: replace the class instead", name);
		goto out;
	}
	struct donor dn = {&r, ri, MERGE_REPLACE, ti};
	rc = merge(&t, &dn, 1, res, err);
out:
	unit_free(&r);
	unit_free(&t);
	return rc;
}

/* is this info-string word C, C++ or CUDA (or none at all)? */
static int code_lang(const char *lang)
{
	static const char *const ok[] = {"",     "c",    "h",      "cpp",      "c++",      "cxx",
	                                 "cc",   "hpp",  "hxx",    "hh",       "cu",       "cuh",
	                                 "cuda", "nvcc", "cuda-c", "cuda-cpp", "cuda-c++", NULL};
	for (int i = 0; ok[i]; i++)
		if (!strcmp(lang, ok[i]))
			return 1;
	return 0;
}

size_t splice_code_blocks(const char *reply, size_t n, struct splice_block **out)
{
	struct splice_block *v = NULL;
	size_t nv = 0, alloc = 0;
	unsigned line = 1;
	int open = 0;
	char fch = 0;
	size_t fcount = 0;
	struct splice_block cur = {0};
	for (size_t i = 0; i < n;) {
		size_t ls = i;
		size_t le = i;
		while (le < n && reply[le] != '\n')
			le++;
		size_t next = le < n ? le + 1 : n;
		/* a fence: up to 3 spaces, then 3 or more ` or ~ */
		size_t p = ls, sp = 0;
		while (p < le && reply[p] == ' ' && sp < 3) {
			p++;
			sp++;
		}
		size_t k = p;
		char ch = p < le ? reply[p] : 0;
		while (k < le && reply[k] == ch && (ch == '`' || ch == '~'))
			k++;
		size_t run = (ch == '`' || ch == '~') ? k - p : 0;
		if (!open && run >= 3) {
			open = 1;
			fch = ch;
			fcount = run;
			memset(&cur, 0, sizeof cur);
			cur.line = line;
			cur.start = next;
			/* the info string's first word */
			while (k < le && (reply[k] == ' ' || reply[k] == '{' || reply[k] == '.'))
				k++;
			size_t w = 0;
			while (k < le && w + 1 < sizeof cur.lang &&
			       !isspace((unsigned char)reply[k]) && reply[k] != '}' &&
			       reply[k] != '`')
				cur.lang[w++] = (char)tolower((unsigned char)reply[k++]);
			cur.lang[w] = 0;
			cur.is_code = code_lang(cur.lang);
		} else if (open && ch == fch && run >= fcount) {
			size_t q = k;
			while (q < le && (reply[q] == ' ' || reply[q] == '\t' || reply[q] == '\r'))
				q++;
			if (q == le) {
				open = 0;
				cur.end = ls;
				xgrow((void **)&v, &alloc, nv + 1, sizeof *v);
				v[nv++] = cur;
			}
		}
		line++;
		i = next;
	}
	if (open) {
		cur.end = n;
		if (cur.start > n)
			cur.start = n;
		xgrow((void **)&v, &alloc, nv + 1, sizeof *v);
		v[nv++] = cur;
	}
	*out = v;
	return nv;
}

/* a comment that stands for code left out ("// ... rest unchanged") */
static int elided_comment(const char *p, size_t n)
{
	char buf[200];
	size_t m = n < sizeof buf - 1 ? n : sizeof buf - 1;
	for (size_t i = 0; i < m; i++)
		buf[i] = (char)tolower((unsigned char)p[i]);
	buf[m] = 0;
	char *s = buf;
	while (*s == '/' || *s == '*' || *s == ' ' || *s == '\t')
		s++;
	if (!strncmp(s, "...", 3) && (s[3] == 0 || s[3] == ' ' || s[3] == '*' || s[3] == '\n'))
		return 1;
	if (!strstr(buf, "..."))
		return 0;
	static const char *const words[] = {"unchanged", "rest of",   "same as", "existing",
	                                    "omitted",   "as before", "remains", NULL};
	for (int i = 0; words[i]; i++)
		if (strstr(buf, words[i]))
			return 1;
	return 0;
}

/* a function of a reply whose body leaves code out, or NULL */
static const struct item *elided(const struct unit *u)
{
	for (size_t i = 0; i < u->n; i++) {
		const struct item *it = &u->items[i];
		if (it->kind != SPLICE_FUNCTION)
			continue;
		TSTreeCursor c = ts_tree_cursor_new(it->node);
		int hit = 0;
		uint32_t depth = 0;
		for (;;) {
			TSNode n = ts_tree_cursor_current_node(&c);
			if (!strcmp(ts_node_type(n), "comment")) {
				uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
				if (b <= u->d->len && a < b &&
				    elided_comment(u->d->src + a, b - a)) {
					hit = 1;
					break;
				}
			} else if (ts_tree_cursor_goto_first_child(&c)) {
				depth++;
				continue;
			}
			if (!syntax_cursor_next(&c, &depth))
				break;
		}
		ts_tree_cursor_delete(&c);
		if (hit)
			return it;
	}
	return NULL;
}

int splice_reply(const char *src, size_t n, const char *reply, size_t rn, struct splice_result *res,
                 char *err)
{
	memset(res, 0, sizeof *res);
	struct splice_block *blocks;
	size_t nb = splice_code_blocks(reply, rn, &blocks);
	struct unit t;
	if (unit_load(&t, src, n, "the candidate", err) < 0) {
		free(blocks);
		return -1;
	}
	struct unit *units = xcalloc(nb ? nb : 1, sizeof *units);
	size_t nunits = 0;
	struct donor *donors = NULL;
	size_t ndonors = 0, adonors = 0;
	int rc = -1;
	char what[64];

	if (nb == 0) {
		/* no fences: the whole reply, if it is code */
		struct unit u;
		if (unit_load(&u, reply, rn, "the reply", NULL) == 0) {
			int funcs = 0;
			for (size_t i = 0; i < u.n; i++)
				funcs += u.items[i].kind == SPLICE_FUNCTION;
			if (syntax_is_clean(u.d) && funcs) {
				units[nunits++] = u;
			} else {
				unit_free(&u);
			}
		}
		if (!nunits) {
			kl_err(err, "the reply holds no code: no fenced block (```cuda ... ```) "
			            "and its text is not a C, C++ or CUDA definition");
			goto out;
		}
	} else {
		strbuf langs = STRBUF_INIT;
		for (size_t b = 0; b < nb; b++) {
			if (!blocks[b].is_code) {
				if (!strstr(langs.buf ? langs.buf : "", blocks[b].lang))
					sb_addf(&langs, "%s%s", langs.len ? ", " : "",
					        blocks[b].lang);
				continue;
			}
			struct unit u;
			snprintf(what, sizeof what, "code block %zu", b + 1);
			if (unit_load(&u, reply + blocks[b].start, blocks[b].end - blocks[b].start,
			              what, err) < 0) {
				sb_free(&langs);
				goto out;
			}
			if (must_parse(&u, what, blocks[b].line, err) < 0) {
				unit_free(&u);
				sb_free(&langs);
				goto out;
			}
			const struct item *el = elided(&u);
			if (el) {
				kl_err(
				    err,
				    "%s (reply line %u): `%s` leaves code out (a comment such as "
				    "`// ... unchanged`): the reply must give whole functions",
				    what, blocks[b].line, el->name);
				unit_free(&u);
				sb_free(&langs);
				goto out;
			}
			units[nunits++] = u;
		}
		if (!nunits) {
			kl_err(err, "the reply's code blocks are not C, C++ or CUDA (%s)",
			       langs.buf ? langs.buf : "");
			sb_free(&langs);
			goto out;
		}
		sb_free(&langs);
	}
	for (size_t k = 0; k < nunits; k++)
		for (size_t i = 0; i < units[k].n; i++) {
			xgrow((void **)&donors, &adonors, ndonors + 1, sizeof *donors);
			donors[ndonors++] =
			    (struct donor){&units[k], &units[k].items[i], MERGE_REPLACE, NULL};
		}
	if (!ndonors) {
		kl_err(err, "the reply's code defines no function, macro or declaration to splice");
		goto out;
	}
	rc = merge(&t, donors, ndonors, res, err);
out:
	for (size_t k = 0; k < nunits; k++)
		unit_free(&units[k]);
	free(units);
	free(donors);
	free(blocks);
	unit_free(&t);
	return rc;
}

int splice_crossover(const char *a, size_t an, const char *b, size_t bn, const char *name,
                     struct splice_result *res, char *err)
{
	memset(res, 0, sizeof *res);
	struct unit ua, ub;
	if (unit_load(&ua, a, an, "the first parent", err) < 0)
		return -1;
	if (unit_load(&ub, b, bn, "the second parent", err) < 0) {
		unit_free(&ua);
		return -1;
	}
	int rc = -1;
	struct donor *donors = NULL;
	size_t ndonors = 0;
	char *take = NULL;
	const struct item *f = unit_lookup(&ub, SPLICE_FUNCTION, name);
	if (!f) {
		not_found(&ub, name, "the second parent", err);
		goto out;
	}
	/* what f needs from b that a lacks, to a fixed point */
	take = xcalloc(ub.n, 1);
	take[f - ub.items] = 1;
	struct names used = {0};
	names_used(ub.d, f->node, &used);
	for (int grew = 1; grew;) {
		grew = 0;
		for (size_t i = 0; i < ub.n; i++) {
			const struct item *it = &ub.items[i];
			if (take[i])
				continue;
			int want = 0;
			if (it->kind == SPLICE_INCLUDE)
				want = !unit_lookup(&ua, it->kind, it->key);
			else if (it->kind == SPLICE_FUNCTION)
				want = names_has(&used, base_name(it->key)) &&
				       !unit_lookup(&ua, it->kind, it->key);
			else
				want = names_has(&used, it->name) &&
				       !unit_lookup(&ua, it->kind, it->key) &&
				       !(it->proto && unit_lookup(&ua, SPLICE_FUNCTION, it->name));
			if (!want)
				continue;
			take[i] = 1;
			grew = 1;
			names_used(ub.d, it->node, &used);
		}
	}
	names_free(&used);
	donors = xcalloc(ub.n, sizeof *donors);
	for (size_t i = 0; i < ub.n; i++)
		if (take[i])
			donors[ndonors++] = (struct donor){
			    &ub, &ub.items[i], &ub.items[i] == f ? MERGE_REPLACE : MERGE_ADD, NULL};
	/* items in source order, so that what f uses comes before it */
	for (size_t i = 1; i < ndonors; i++)
		for (size_t k = i; k > 0 && donors[k - 1].it->start > donors[k].it->start; k--) {
			struct donor tmp = donors[k];
			donors[k] = donors[k - 1];
			donors[k - 1] = tmp;
		}
	rc = merge(&ua, donors, ndonors, res, err);
out:
	free(take);
	free(donors);
	unit_free(&ub);
	unit_free(&ua);
	return rc;
}

const char *splice_action_name(enum splice_action a)
{
	switch (a) {
	case SPLICE_REPLACED:
		return "replaced";
	case SPLICE_ADDED:
		return "added";
	case SPLICE_UNCHANGED:
		return "unchanged";
	case SPLICE_SKIPPED:
		return "skipped";
	}
	return "?";
}

const char *splice_diff_status_name(enum splice_diff_status s)
{
	switch (s) {
	case SPLICE_DIFF_SAME:
		return "same";
	case SPLICE_DIFF_CHANGED:
		return "changed";
	case SPLICE_DIFF_ADDED:
		return "added";
	case SPLICE_DIFF_REMOVED:
		return "removed";
	}
	return "?";
}

/* the k-th function (0-based) of u with this qualified name, or NULL */
static const struct outline_func *nth_named(const struct unit *u, const char *qn, size_t k,
                                            size_t *index)
{
	for (size_t i = 0; i < u->o.n_funcs; i++)
		if (!strcmp(u->o.funcs[i].qualname, qn) && k-- == 0) {
			*index = i;
			return &u->o.funcs[i];
		}
	return NULL;
}

/* how many functions before index i of u share its qualified name */
static size_t rank_of(const struct unit *u, size_t i)
{
	size_t r = 0;
	for (size_t k = 0; k < i; k++)
		r += !strcmp(u->o.funcs[k].qualname, u->o.funcs[i].qualname);
	return r;
}

static char *func_tokens(const struct unit *u, const struct outline_func *f)
{
	TSNode n = syntax_node_at(u->d, f->item_start, f->item_end);
	return tokens_of(u->d, n);
}

int splice_diff(const char *a, size_t an, const char *b, size_t bn, struct splice_diff *out,
                char *err)
{
	memset(out, 0, sizeof *out);
	struct unit ua, ub;
	if (unit_load(&ua, a, an, "the first source", err) < 0)
		return -1;
	if (unit_load(&ub, b, bn, "the second source", err) < 0) {
		unit_free(&ua);
		return -1;
	}
	size_t alloc = 0;
	char *matched = xcalloc(ub.o.n_funcs ? ub.o.n_funcs : 1, 1);
	for (size_t i = 0; i < ua.o.n_funcs; i++) {
		const struct outline_func *fa = &ua.o.funcs[i];
		size_t j = 0;
		const struct outline_func *fb = nth_named(&ub, fa->qualname, rank_of(&ua, i), &j);
		struct splice_diff_entry e = {0};
		e.name = xstrdup(fa->qualname);
		e.a_line = fa->line;
		e.a_end = fa->end_line;
		if (!fb) {
			e.status = SPLICE_DIFF_REMOVED;
		} else {
			matched[j] = 1;
			e.b_line = fb->line;
			e.b_end = fb->end_line;
			char *ta = func_tokens(&ua, fa), *tb = func_tokens(&ub, fb);
			e.status = strcmp(ta, tb) ? SPLICE_DIFF_CHANGED : SPLICE_DIFF_SAME;
			free(ta);
			free(tb);
			if (e.status == SPLICE_DIFF_SAME) {
				size_t la = fa->item_end - fa->item_start,
				       lb = fb->item_end - fb->item_start;
				e.layout_only = la != lb || memcmp(ua.d->src + fa->item_start,
				                                   ub.d->src + fb->item_start, la);
			}
		}
		xgrow((void **)&out->v, &alloc, out->n + 1, sizeof *out->v);
		out->v[out->n++] = e;
	}
	for (size_t j = 0; j < ub.o.n_funcs; j++) {
		if (matched[j])
			continue;
		const struct outline_func *fb = &ub.o.funcs[j];
		struct splice_diff_entry e = {0};
		e.name = xstrdup(fb->qualname);
		e.status = SPLICE_DIFF_ADDED;
		e.b_line = fb->line;
		e.b_end = fb->end_line;
		xgrow((void **)&out->v, &alloc, out->n + 1, sizeof *out->v);
		out->v[out->n++] = e;
	}
	free(matched);
	unit_free(&ub);
	unit_free(&ua);
	return 0;
}

void splice_diff_free(struct splice_diff *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i].name);
	free(d->v);
	memset(d, 0, sizeof *d);
}
