/*
 * funcdiff.c - the function-level diff: both sources are parsed and
 * outlined, functions are paired by qualified name (the k-th overload
 * with the k-th), and each pair is compared by its tokens.
 */
#include "funcdiff.h"

#include <stdlib.h>
#include <string.h>

#include "outline.h"
#include "syntax.h"
#include "util.h"

/* one source, parsed and outlined */
struct side {
	struct syntax_doc *d;
	struct outline o;
};

static int side_load(struct side *s, const char *src, size_t n, const char *what, char *err)
{
	char e2[KL_ERRLEN];
	memset(s, 0, sizeof *s);
	s->d = syntax_parse(src, n, e2);
	if (!s->d)
		return kl_err(err, "%s: %s", what, e2);
	outline_build(s->d, &s->o, NULL);
	return 0;
}

static void side_free(struct side *s)
{
	outline_free(&s->o);
	syntax_free(s->d);
}

/* the k-th function (0-based) of s with this qualified name, or NULL */
static const struct outline_func *nth_named(const struct side *s, const char *qn, size_t k,
                                            size_t *index)
{
	for (size_t i = 0; i < s->o.n_funcs; i++)
		if (!strcmp(s->o.funcs[i].qualname, qn) && k-- == 0) {
			*index = i;
			return &s->o.funcs[i];
		}
	return NULL;
}

/* how many functions before index i of s share its qualified name */
static size_t rank_of(const struct side *s, size_t i)
{
	size_t r = 0;
	for (size_t k = 0; k < i; k++)
		r += !strcmp(s->o.funcs[k].qualname, s->o.funcs[i].qualname);
	return r;
}

/* f's tokens, space-separated, comments left out (caller frees) */
static char *func_tokens(const struct side *s, const struct outline_func *f)
{
	strbuf sb = STRBUF_INIT;
	syntax_tokens(s->d, syntax_node_at(s->d, f->item_start, f->item_end), &sb);
	return sb_detach(&sb);
}

int funcdiff_compare(const char *a, size_t an, const char *b, size_t bn, struct funcdiff *out,
                     char *err)
{
	memset(out, 0, sizeof *out);
	struct side ua, ub;
	if (side_load(&ua, a, an, "the first source", err) < 0)
		return -1;
	if (side_load(&ub, b, bn, "the second source", err) < 0) {
		side_free(&ua);
		return -1;
	}
	size_t alloc = 0;
	char *matched = xcalloc(ub.o.n_funcs ? ub.o.n_funcs : 1, 1);
	for (size_t i = 0; i < ua.o.n_funcs; i++) {
		const struct outline_func *fa = &ua.o.funcs[i];
		size_t j = 0;
		const struct outline_func *fb = nth_named(&ub, fa->qualname, rank_of(&ua, i), &j);
		struct funcdiff_entry e = {0};
		e.name = xstrdup(fa->qualname);
		e.a_line = fa->line;
		e.a_end = fa->end_line;
		if (!fb) {
			e.status = FUNCDIFF_REMOVED;
		} else {
			matched[j] = 1;
			e.b_line = fb->line;
			e.b_end = fb->end_line;
			char *ta = func_tokens(&ua, fa), *tb = func_tokens(&ub, fb);
			e.status = strcmp(ta, tb) ? FUNCDIFF_CHANGED : FUNCDIFF_SAME;
			free(ta);
			free(tb);
			if (e.status == FUNCDIFF_SAME) {
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
		struct funcdiff_entry e = {0};
		e.name = xstrdup(fb->qualname);
		e.status = FUNCDIFF_ADDED;
		e.b_line = fb->line;
		e.b_end = fb->end_line;
		xgrow((void **)&out->v, &alloc, out->n + 1, sizeof *out->v);
		out->v[out->n++] = e;
	}
	free(matched);
	side_free(&ub);
	side_free(&ua);
	return 0;
}

void funcdiff_free(struct funcdiff *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i].name);
	free(d->v);
	memset(d, 0, sizeof *d);
}

const char *funcdiff_status_name(enum funcdiff_status s)
{
	switch (s) {
	case FUNCDIFF_SAME:
		return "same";
	case FUNCDIFF_CHANGED:
		return "changed";
	case FUNCDIFF_ADDED:
		return "added";
	case FUNCDIFF_REMOVED:
		return "removed";
	}
	return "?";
}
