/*
 * unit.c - a source read into its top-level items for splice.c: functions
 * (from the outline, with the comments above them), #includes, #defines
 * and other declarations, each keyed by name; and the names a subtree uses.
 */
#include "unit.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ---- sets of names ---- */

int unit_names_has(const struct unit_names *s, const char *x)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], x))
			return 1;
	return 0;
}

static int names_add_n(struct unit_names *s, const char *x, size_t n)
{
	for (size_t i = 0; i < s->n; i++)
		if (strlen(s->v[i]) == n && !memcmp(s->v[i], x, n))
			return 0;
	xgrow((void **)&s->v, &s->alloc, s->n + 1, sizeof *s->v);
	s->v[s->n++] = xstrndup(x, n);
	return 1;
}

void unit_names_free(struct unit_names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof *s);
}

/* the words of a preprocessor argument (raw text the grammar does not parse) */
static void words_of(const char *p, size_t n, struct unit_names *out)
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
void unit_names_used(const struct syntax_doc *d, TSNode node, struct unit_names *out)
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
	struct unit_item *it = &u->items[u->n++];
	memset(it, 0, sizeof *it);
	it->kind = kind;
	it->key = key;
	it->name = name;
	it->node = node;
	it->start = start;
	it->end = end;
	it->cstart = comments_above(u->d, node);
}

char *unit_tokens(const struct syntax_doc *d, TSNode n)
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
		*key = unit_tokens(d, n);
		*name = xstrdup(*key);
	}
	return 0;
}

void unit_free(struct unit *u)
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

int unit_load(struct unit *u, const char *src, size_t n, const char *what, char *err)
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
	/* the top-level items, in order */
	TSNode root = syntax_root(u->d);
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
	u->decl_at = first_func_root != UINT32_MAX ? first_func_root : (uint32_t)u->d->len;
	u->include_at = last_include != UINT32_MAX ? last_include : lead_comments_end;
	if (u->include_at > u->decl_at)
		u->include_at = u->decl_at;
	return 0;
}

/* the item of u with this kind and key, or NULL */
const struct unit_item *unit_lookup(const struct unit *u, enum splice_item kind, const char *key)
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

/* ---- what an item shows its users, and an extension's registrations ---- */

/* a declaration of a type (struct, class, union, enum, typedef, alias),
 * not of a variable or a constant */
static int declares_type(TSNode n)
{
	const char *t = ts_node_type(n);
	if (!strcmp(t, "template_declaration")) {
		uint32_t k = ts_node_named_child_count(n);
		return k > 0 && declares_type(ts_node_named_child(n, k - 1));
	}
	if (!strcmp(t, "declaration"))
		return ts_node_is_null(field(n, "declarator"));
	return !strcmp(t, "struct_specifier") || !strcmp(t, "class_specifier") ||
	       !strcmp(t, "union_specifier") || !strcmp(t, "enum_specifier") ||
	       !strcmp(t, "type_definition") || !strcmp(t, "alias_declaration");
}

char *unit_interface(const struct unit *u, const struct unit_item *it)
{
	strbuf sb = STRBUF_INIT;
	if (it->kind == SPLICE_FUNCTION && it->fn) {
		syntax_tokens_before(u->d, it->node, it->fn->body_start, &sb);
	} else if (it->kind == SPLICE_MACRO && is(it->node, "preproc_function_def")) {
		syntax_tokens(u->d, field(it->node, "parameters"), &sb);
	} else if (it->kind == SPLICE_DECL && (it->proto || declares_type(it->node))) {
		syntax_tokens(u->d, it->node, &sb);
	} else {
		return NULL;
	}
	if (!sb.buf)
		sb_grow(&sb, 0);
	return sb_detach(&sb);
}

int unit_registration(const struct unit_item *it)
{
	static const char *const blocks[] = {"PYBIND11_MODULE", "TORCH_LIBRARY",
	                                     "TORCH_LIBRARY_IMPL", "TORCH_LIBRARY_FRAGMENT"};
	if (it->kind != SPLICE_FUNCTION)
		return -1;
	for (int i = 0; i < (int)(sizeof blocks / sizeof *blocks); i++)
		if (!strcmp(it->key, blocks[i]))
			return i;
	return -1;
}

const char *unit_base_name(const char *s)
{
	const char *p = s, *q;
	while ((q = strstr(p, "::")))
		p = q + 2;
	return p;
}

/* the function argument a of m.def / m.impl names (&f, f, TORCH_FN(f),
 * ns::f): its last component into out */
static void bound_name(const struct syntax_doc *d, TSNode a, struct unit_names *out)
{
	for (int guard = 0; guard < 8 && !ts_node_is_null(a); guard++) {
		if (is(a, "pointer_expression") || is(a, "parenthesized_expression")) {
			a = is(a, "pointer_expression") ? field(a, "argument")
			                                : ts_node_named_child(a, 0);
		} else if (is(a, "call_expression")) {
			char *fn = syntax_text(d, field(a, "function"));
			int torch_fn = !strcmp(fn, "TORCH_FN");
			free(fn);
			if (!torch_fn)
				return;
			a = ts_node_named_child(field(a, "arguments"), 0);
		} else if (is(a, "identifier") || is(a, "qualified_identifier")) {
			char *s = syntax_text(d, a);
			const char *p = unit_base_name(s);
			names_add_n(out, p, strlen(p));
			free(s);
			return;
		} else {
			return; /* a lambda, a cast: no name to look for */
		}
	}
}

void unit_bound(const struct unit *u, const struct unit_item *it, struct unit_names *out)
{
	TSTreeCursor c = ts_tree_cursor_new(it->node);
	uint32_t depth = 0;
	for (;;) {
		TSNode n = ts_tree_cursor_current_node(&c);
		if (is(n, "call_expression")) {
			TSNode f = field(n, "function");
			TSNode verb = is(f, "field_expression") ? field(f, "field") : (TSNode){0};
			char *v = ts_node_is_null(verb) ? NULL : syntax_text(u->d, verb);
			if (v && (!strcmp(v, "def") || !strcmp(v, "impl")))
				bound_name(u->d, ts_node_named_child(field(n, "arguments"), 1),
				           out);
			free(v);
		}
		if (ts_tree_cursor_goto_first_child(&c)) {
			depth++;
			continue;
		}
		if (!syntax_cursor_next(&c, &depth))
			break;
	}
	ts_tree_cursor_delete(&c);
}
