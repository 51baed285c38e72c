/*
 * splice.c - function-level edits on syntax trees: sources read into
 * top-level items (unit.c), a donor's items merged into a target's by name
 * (replace, an LLM reply's fenced blocks, crossover), and the edited
 * source checked to still parse and to keep its form (splice_form.c).
 */
#include "splice.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fence.h"
#include "outline.h"
#include "splice_priv.h"
#include "syntax.h"
#include "unit.h"
#include "util.h"

/* ---- merging a donor's items into a target ---- */

enum mode {
	MERGE_REPLACE, /* replace what has the same name, add the rest */
	MERGE_ADD,     /* only add what the target lacks */
};

struct donor {
	const struct unit *u;
	const struct unit_item *it;
	enum mode mode;
	const struct unit_item *target; /* forced target (splice_replace), or NULL */
};

struct edit {
	uint32_t start, end; /* bytes of the target replaced (start == end: insertion) */
	char *text;
	size_t seq; /* order among insertions at the same place */
	const struct donor *from;
	const struct unit_item *target; /* the replaced item */
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

/* the text a donor item brings: its comments, then the item */
static char *donor_text(const struct donor *dn, int with_comments, const struct unit_item *target)
{
	const struct syntax_doc *d = dn->u->d;
	const struct unit_item *it = dn->it;
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

static int same_tokens(const struct unit *a, const struct unit_item *x, const struct unit *b,
                       const struct unit_item *y)
{
	char *s = unit_tokens(a->d, x->node), *t = unit_tokens(b->d, y->node);
	int same = !strcmp(s, t);
	free(s);
	free(t);
	return same;
}

/* does text use `name` as an identifier? */
static int text_uses(const struct syntax_doc *d, TSNode node, const char *name)
{
	struct unit_names s = {0};
	unit_names_used(d, node, &s);
	int has = unit_names_has(&s, name);
	unit_names_free(&s);
	return has;
}

/* a merge being planned: the edits to the target and the changes said */
struct plan {
	const struct unit *t;
	struct splice_result *res;
	size_t achanges;
	struct edit *edits;
	size_t nedits, aedits;
	size_t *added; /* the edits that add a function (placed once all are known) */
	size_t nadded;
};

static struct edit *plan_edit(struct plan *p)
{
	xgrow((void **)&p->edits, &p->aedits, p->nedits + 1, sizeof *p->edits);
	return &p->edits[p->nedits++];
}

/* the target item donor dn's item would replace (NULL: it is new), or
 * NULL with *pSkip set where it brings nothing (a main() of its own, a
 * prototype of what the target has) */
static const struct unit_item *plan_target(struct plan *p, const struct donor *dn, int *pSkip)
{
	const struct unit *t = p->t;
	const struct unit_item *it = dn->it;
	*pSkip = 0;
	if (dn->target)
		return dn->target;
	if (it->kind == SPLICE_FUNCTION && !strcmp(unit_base_name(it->key), "main")) {
		add_change(p->res, &p->achanges, it->kind, SPLICE_SKIPPED, it->name);
		return *pSkip = 1, NULL;
	}
	/* a prototype: needless when the function or its prototype exists */
	if (it->kind == SPLICE_DECL && it->proto &&
	    (unit_lookup(t, SPLICE_FUNCTION, it->name) || unit_lookup(t, SPLICE_DECL, it->key))) {
		add_change(p->res, &p->achanges, it->kind, SPLICE_UNCHANGED, it->name);
		return *pSkip = 1, NULL;
	}
	return unit_lookup(t, it->kind, it->key);
}

/* donor i's item replaces target item tgt (a later donor's replacement of
 * the same item wins) */
static void plan_replace(struct plan *p, size_t i, const struct donor *dn,
                         const struct unit_item *tgt)
{
	const struct unit_item *it = dn->it;
	int with_comments = it->cstart < it->start;
	uint32_t s = with_comments ? tgt->cstart : tgt->start;
	char *text = donor_text(dn, with_comments, tgt);
	/* keep the target's trailing newline (preprocessor lines have one) */
	if (tgt->end > tgt->start && p->t->d->src[tgt->end - 1] == '\n') {
		char *x = xasprintf("%s\n", text);
		free(text);
		text = x;
	}
	size_t k;
	for (k = 0; k < p->nedits && p->edits[k].target != tgt; k++)
		;
	struct edit *e;
	if (k < p->nedits) {
		e = &p->edits[k];
		free(e->text);
	} else {
		e = plan_edit(p);
		add_change(p->res, &p->achanges, it->kind, SPLICE_REPLACED, it->name);
	}
	*e = (struct edit){s, tgt->end, text, i, dn, tgt};
}

/* donor i's item is new to the target: an include goes with the
 * includes, a declaration with the declarations, a function where it is
 * first used (plan_place_added) */
static void plan_add(struct plan *p, size_t i, const struct donor *dn)
{
	const struct unit *t = p->t;
	const struct unit_item *it = dn->it;
	char *text = donor_text(dn, 1, NULL);
	uint32_t at;
	char *chunk;
	if (it->kind == SPLICE_FUNCTION) {
		p->added[p->nadded++] = p->nedits;
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
	*plan_edit(p) = (struct edit){at, at, chunk, i, dn, NULL};
	add_change(p->res, &p->achanges, it->kind, SPLICE_ADDED, it->name);
}

/* donor i: skipped, unchanged, a replacement or an addition */
static void plan_donor(struct plan *p, size_t i, const struct donor *dn)
{
	const struct unit *t = p->t;
	const struct unit_item *it = dn->it;
	int skip;
	const struct unit_item *tgt = plan_target(p, dn, &skip);
	if (skip)
		return;
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
		for (size_t k = 0; k < p->nedits; k++)
			replaced_before |= p->edits[k].target == tgt;
		if (!replaced_before)
			add_change(p->res, &p->achanges, it->kind, SPLICE_UNCHANGED, it->name);
	} else if (tgt) {
		plan_replace(p, i, dn, tgt);
	} else {
		plan_add(p, i, dn);
	}
}

/* the first place new function nm may go: before the first of the
 * target's functions (or its replacement) that uses it; the end else */
static uint32_t first_use(const struct plan *p, const char *nm)
{
	const struct unit *t = p->t;
	uint32_t best = (uint32_t)t->d->len;
	for (size_t k = 0; k < t->n; k++) {
		const struct unit_item *ti = &t->items[k];
		if (ti->kind != SPLICE_FUNCTION || ti->cstart >= best)
			continue;
		const struct edit *rep = NULL;
		for (size_t r = 0; r < p->nedits; r++)
			if (p->edits[r].target == ti)
				rep = &p->edits[r];
		int uses = rep ? text_uses(rep->from->u->d, rep->from->it->node, nm)
		               : text_uses(t->d, ti->node, nm);
		if (uses)
			best = rep ? rep->start : ti->cstart;
	}
	return best;
}

/*
 * New functions go before the first function that uses them: one of the
 * target's, one that replaces a target function, or another new one
 * (settled by iterating; places only move up); at one place, a function
 * used by another goes first.
 */
static void plan_place_added(struct plan *p)
{
	const struct unit *t = p->t;
	struct edit *edits = p->edits;
	size_t nadded = p->nadded, *added = p->added;
	for (size_t a = 0; a < nadded; a++) {
		struct edit *e = &edits[added[a]];
		e->start = e->end = first_use(p, unit_base_name(e->from->it->key));
	}
	for (int changed = 1, rounds = 0; changed && rounds < 64; rounds++) {
		changed = 0;
		for (size_t a = 0; a < nadded; a++) {
			struct edit *e = &edits[added[a]];
			const char *nm = unit_base_name(e->from->it->key);
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
	for (size_t a = 0; a < nadded; a++)
		for (size_t b = 0; b < nadded; b++) {
			struct edit *e = &edits[added[a]], *h = &edits[added[b]];
			if (a != b && e->start == h->start && e->seq > h->seq &&
			    text_uses(h->from->u->d, h->from->it->node,
			              unit_base_name(e->from->it->key)) &&
			    !text_uses(e->from->u->d, e->from->it->node,
			               unit_base_name(h->from->it->key))) {
				size_t s = e->seq;
				e->seq = h->seq;
				h->seq = s;
			}
		}
}

/* the target with the plan's edits applied, into sb; the edits freed */
static void plan_apply(struct plan *p, strbuf *sb)
{
	const struct unit *t = p->t;
	if (p->nedits > 1)
		qsort(p->edits, p->nedits, sizeof *p->edits, edit_cmp);
	uint32_t pos = 0;
	for (size_t i = 0; i < p->nedits; i++) {
		if (p->edits[i].start < pos)
			continue; /* cannot happen: items do not overlap */
		sb_add(sb, t->d->src + pos, p->edits[i].start - pos);
		sb_adds(sb, p->edits[i].text);
		pos = p->edits[i].end;
	}
	sb_add(sb, t->d->src + pos, t->d->len - pos);
	for (size_t i = 0; i < p->nedits; i++)
		free(p->edits[i].text);
	free(p->edits);
	free(p->added);
}

/* the merged source parses as well as the target did: 0, or -1 + err */
static int parses_as_well(const struct unit *t, const strbuf *sb, char *err)
{
	char e2[KL_ERRLEN];
	struct syntax_doc *nd2 = syntax_parse(sb->buf, sb->len, e2);
	if (!nd2)
		return kl_err(err, "the spliced source is refused: %s", e2);
	size_t after = syntax_errors(nd2, NULL, 0);
	if (after > t->nerrors) {
		struct syntax_error se;
		syntax_first_error(nd2, &se);
		kl_err(err, "the spliced source does not parse: line %u, column %u: %s", se.line,
		       se.column, se.msg);
		syntax_free(nd2);
		return -1;
	}
	syntax_free(nd2);
	return 0;
}

/*
 * Merge donors[0..nd) into target t; fills res.  Returns 0 or -1 + err.
 */
static int merge(const struct unit *t, const struct donor *donors, size_t nd,
                 struct splice_result *res, char *err)
{
	memset(res, 0, sizeof *res);
	struct plan p = {.t = t, .res = res, .added = xcalloc(nd ? nd : 1, sizeof(size_t))};
	for (size_t i = 0; i < nd; i++)
		plan_donor(&p, i, &donors[i]);
	plan_place_added(&p);
	strbuf sb = STRBUF_INIT;
	plan_apply(&p, &sb);
	if (parses_as_well(t, &sb, err) < 0 || splice_keeps_form(t, sb.buf, sb.len, err) < 0) {
		sb_free(&sb);
		splice_result_free(res);
		return -1;
	}
	res->len = sb.len;
	res->src = sb_detach(&sb);
	return 0;
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
		if (!strcmp(unit_base_name(u->o.funcs[i].qualname), unit_base_name(name))) {
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
	const struct unit_item *ri = NULL;
	size_t nfuncs = 0;
	strbuf others = STRBUF_INIT;
	for (size_t i = 0; i < r.n; i++) {
		if (r.items[i].kind != SPLICE_FUNCTION)
			continue;
		nfuncs++;
		if (!ri && !strcmp(unit_base_name(r.items[i].key), unit_base_name(tf->qualname)))
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
	const struct unit_item *ti = NULL;
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
static const struct unit_item *elided(const struct unit *u)
{
	for (size_t i = 0; i < u->n; i++) {
		const struct unit_item *it = &u->items[i];
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
	struct fence_block *blocks;
	size_t nb = fence_blocks(reply, rn, &blocks);
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
			const struct unit_item *el = elided(&u);
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

/* a's item x and b's namesake y differ in what they show their users
 * (unit_interface: a signature, a macro's parameters, a type) */
static int interface_differs(const struct unit *ua, const struct unit_item *x,
                             const struct unit *ub, const struct unit_item *y)
{
	char *p = unit_interface(ua, x), *q = unit_interface(ub, y);
	int differs = (p || q) && (!p || !q || strcmp(p, q));
	free(p);
	free(q);
	return differs;
}

/* a crossover's plan: which of b's items come (take), and which of those
 * replace their namesake in a (repl) */
struct cross {
	const struct unit *a, *b;
	char *take, *repl;
	struct unit_names used; /* what the items taken use */
};

static void cross_take(struct cross *x, size_t i, int repl)
{
	x->take[i] = 1;
	x->repl[i] |= (char)repl;
	unit_names_used(x->b->d, x->b->items[i].node, &x->used);
}

/* b's items the taken ones use: what a lacks, and what a has written
 * otherwise for its users (a function's signature, a type); 1 when one
 * more was taken */
static int cross_needs(struct cross *x)
{
	int grew = 0;
	for (size_t i = 0; i < x->b->n; i++) {
		const struct unit_item *it = &x->b->items[i];
		if (x->take[i])
			continue;
		if (it->kind == SPLICE_INCLUDE) {
			if (!unit_lookup(x->a, it->kind, it->key))
				cross_take(x, i, 0), grew = 1;
			continue;
		}
		const char *nm = it->kind == SPLICE_FUNCTION ? unit_base_name(it->key) : it->name;
		if (!unit_names_has(&x->used, nm))
			continue;
		const struct unit_item *ta = unit_lookup(x->a, it->kind, it->key);
		if (!ta && it->kind == SPLICE_DECL && it->proto &&
		    unit_lookup(x->a, SPLICE_FUNCTION, it->name))
			continue; /* a prototype of a function a has: its definition decides */
		if (!ta)
			cross_take(x, i, 0), grew = 1;
		else if (interface_differs(x->a, ta, x->b, it))
			cross_take(x, i, 1), grew = 1;
	}
	return grew;
}

/* a's items that use what the plan replaces with another interface come
 * from b too (their namesakes there); 1 when one more was taken, 0 when
 * none is needed, -1 + err when b has no namesake to take */
static int cross_users(struct cross *x, char *err)
{
	struct unit_names changed = {0};
	for (size_t i = 0; i < x->b->n; i++) {
		const struct unit_item *it = &x->b->items[i];
		const struct unit_item *ta =
		    x->take[i] ? unit_lookup(x->a, it->kind, it->key) : NULL;
		if (ta && interface_differs(x->a, ta, x->b, it)) {
			const char *nm =
			    it->kind == SPLICE_FUNCTION ? unit_base_name(it->key) : it->name;
			if (!unit_names_has(&changed, nm)) {
				xgrow((void **)&changed.v, &changed.alloc, changed.n + 1,
				      sizeof *changed.v);
				changed.v[changed.n++] = xstrdup(nm);
			}
		}
	}
	int rc = 0;
	for (size_t j = 0; j < x->a->n && changed.n && rc >= 0; j++) {
		const struct unit_item *ja = &x->a->items[j];
		if (ja->kind == SPLICE_INCLUDE)
			continue;
		const struct unit_item *jb = unit_lookup(x->b, ja->kind, ja->key);
		if (jb && x->take[jb - x->b->items])
			continue; /* replaced already */
		struct unit_names u = {0};
		unit_names_used(x->a->d, ja->node, &u);
		const char *hit = NULL;
		for (size_t k = 0; k < changed.n && !hit; k++)
			if (unit_names_has(&u, changed.v[k]))
				hit = changed.v[k];
		unit_names_free(&u);
		if (!hit)
			continue;
		if (jb) {
			cross_take(x, (size_t)(jb - x->b->items), 1);
			rc = 1;
		} else {
			rc =
			    kl_err(err,
			           "`%s` of the first parent uses `%s`, which the second parent "
			           "declares otherwise, and the second parent has no `%s` to bring "
			           "along: the child would not compile",
			           ja->name, hit, ja->name);
		}
	}
	unit_names_free(&changed);
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
	struct cross x = {&ua, &ub, NULL, NULL, {0}};
	const struct unit_item *f = unit_lookup(&ub, SPLICE_FUNCTION, name);
	if (!f) {
		not_found(&ub, name, "the second parent", err);
		goto out;
	}
	/* f, what it needs from b, and a's users of what changes, to a fixed point */
	x.take = xcalloc(ub.n, 1);
	x.repl = xcalloc(ub.n, 1);
	cross_take(&x, (size_t)(f - ub.items), 1);
	for (int grew = 1; grew;) {
		while (cross_needs(&x))
			;
		if ((grew = cross_users(&x, err)) < 0)
			goto out;
	}
	donors = xcalloc(ub.n, sizeof *donors);
	for (size_t i = 0; i < ub.n; i++)
		if (x.take[i])
			donors[ndonors++] = (struct donor){
			    &ub, &ub.items[i], x.repl[i] ? MERGE_REPLACE : MERGE_ADD, NULL};
	/* items in source order, so that what f uses comes before it */
	for (size_t i = 1; i < ndonors; i++)
		for (size_t k = i; k > 0 && donors[k - 1].it->start > donors[k].it->start; k--) {
			struct donor tmp = donors[k];
			donors[k] = donors[k - 1];
			donors[k - 1] = tmp;
		}
	rc = merge(&ua, donors, ndonors, res, err);
out:
	unit_names_free(&x.used);
	free(x.take);
	free(x.repl);
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
