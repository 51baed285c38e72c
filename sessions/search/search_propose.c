/*
 * search_propose.c - the search's proposers: the mechanical ones (sweeps
 * over tunables, function crossover) and the LLM's (the gate over its
 * ideas, implementations, the LLM crossover).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search_priv.h"
#include "compile.h"
#include "funcdiff.h"
#include "policy.h"
#include "splice.h"
#include "sweep.h"
#include "torchext.h"

/* ---- the mechanical proposers ---- */

/* what a crossover child is: "crossover: NAME from #b into #a", with the
 * other functions of b it replaces in a (their calls changed with it) */
static char *cross_what(const struct splice_result *r, const char *zName, int ia, int ib)
{
	strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "crossover: %s from #%d into #%d", zName, ib, ia);
	int with = 0;
	for (size_t k = 0; k < r->n_changes; k++) {
		const struct splice_change *c = &r->changes[k];
		if (c->item == SPLICE_FUNCTION && c->action == SPLICE_REPLACED &&
		    strcmp(c->name, zName))
			sb_addf(&sb, "%s%s", with++ ? ", " : ", with ", c->name);
	}
	return sb_detach(&sb);
}

static int has_source(const struct state *st, const char *z)
{
	return state_cand_by_source(st, z) != NULL;
}

static const char *ext_of(const struct cand *c)
{
	const char *d = strrchr(c->zName, '.');
	return d ? d : ".c";
}

/* add and evaluate a candidate of round R made without an LLM; its id or -1 */
static int add_mechanical(struct search *s, int R, const char *zOrigin, const int *aParent,
                          int nParent, const char *zStem, const char *zSource, const char *zWhat)
{
	const struct state *st = ST(s);
	char err[KL_ERRLEN];
	const struct cand *p = state_cand(st, aParent[0]);
	char *name = xasprintf("%s%d%s", zStem, state_next_id(st), ext_of(p));
	struct ev_candidate c = {.zName = name,
	                         .zOrigin = zOrigin,
	                         .aParent = aParent,
	                         .nParent = nParent,
	                         .zSource = zSource,
	                         .zIdea = zWhat,
	                         .round = R};
	int id = driver_add_cand(s->drv, &c, err);
	free(name);
	if (id < 0 || driver_bench(s->drv, id, err) < 0) {
		char msg[KL_ERRLEN + 64];
		snprintf(msg, sizeof msg, "%s: %s", zOrigin, err);
		note(s, msg, NULL);
		return -1;
	}
	return id;
}

void search_sweep(struct search *s, int R, int parent)
{
	const struct cand *c = state_cand(ST(s), parent);
	int max = (int)OPT(s)->sweep_points;
	if (!c || max <= 0)
		return;
	struct sweep_list l;
	char err[KL_ERRLEN];
	uint64_t seed = (uint64_t)OPT(s)->seed * 1000003u + (uint64_t)parent;
	if (sweep_points(c->zSource, strlen(c->zSource), OPT(s)->sweep, seed, max, &l, err) < 0) {
		char msg[KL_ERRLEN + 64];
		snprintf(msg, sizeof msg, "sweep of #%d: %s", parent, err);
		note(s, msg, NULL);
		sweep_free(&l);
		return;
	}
	int made = 0;
	for (size_t i = 0; i < l.n && search_cand_ok(s); i++) {
		if (has_source(ST(s), l.v[i].zSource))
			continue;
		char *what = xasprintf("sweep %s", l.v[i].zLabel);
		made +=
		    add_mechanical(s, R, "sweep", &parent, 1, "sweep", l.v[i].zSource, what) > 0;
		free(what);
	}
	if (made) {
		char line[200];
		c = state_cand(ST(s), parent);
		snprintf(line, sizeof line, "sweep of #%d %s: %d point%s", parent, c->zName, made,
		         made == 1 ? "" : "s");
		note(s, line, NULL);
	}
	sweep_free(&l);
}

/* why candidates a and b cannot be crossed function by function (a
 * ModelNew's C++ is in Python strings; parents of two forms or languages
 * would make a child of neither) into why: 0 when they can, else -1 */
static int cross_forms(const struct cand *a, const struct cand *b, char *why, size_t n)
{
	const struct cand *c[2] = {a, b};
	enum torchext_form f[2];
	int lang[2];
	for (int i = 0; i < 2; i++) {
		size_t len = strlen(c[i]->zSource);
		f[i] = torchext_form_of(c[i]->zName, c[i]->zSource, len);
		lang[i] = torchext_lang_of(c[i]->zName, c[i]->zSource, len);
		if (f[i] == TORCHEXT_MODELNEW) {
			snprintf(why, n,
			         "#%d is a KernelBench ModelNew module, whose C++ is in Python "
			         "strings: function crossover takes C, C++ and CUDA sources",
			         c[i]->id);
			return -1;
		}
	}
	static const char *const forms[] = {[TORCHEXT_KERNEL] = "a kernel (kl_run)",
	                                    [TORCHEXT_EXTENSION] = "a PyTorch extension",
	                                    [TORCHEXT_MODELNEW] = "a ModelNew module"};
	static const char *const langs[] = {
	    [LANG_C] = "C", [LANG_CPP] = "C++", [LANG_CUDA] = "CUDA"};
	if (f[0] != f[1]) {
		snprintf(why, n, "#%d is %s, #%d %s: function crossover takes parents of one form",
		         a->id, forms[f[0]], b->id, forms[f[1]]);
		return -1;
	}
	if (lang[0] != lang[1] && lang[0] >= LANG_C && lang[1] >= LANG_C) {
		snprintf(why, n,
		         "#%d is %s, #%d %s: function crossover takes parents of one language",
		         a->id, langs[lang[0]], b->id, langs[lang[1]]);
		return -1;
	}
	return 0;
}

/* take functions of b that differ into a: up to CROSSOVER_MAX candidates;
 * a function whose child cannot be made is said, with why */
void search_crossover(struct search *s, int R, int ia, int ib)
{
	const struct state *st = ST(s);
	const struct cand *a = state_cand(st, ia), *b = state_cand(st, ib);
	if (!a || !b || policy_island(st, ia) == policy_island(st, ib))
		return;
	char line[KL_ERRLEN + 200];
	char err[KL_ERRLEN];
	if (cross_forms(a, b, err, sizeof err) < 0) {
		snprintf(line, sizeof line, "crossover of #%d and #%d: not made: %s", ia, ib, err);
		note(s, line, NULL);
		return;
	}
	struct funcdiff d;
	if (funcdiff_compare(a->zSource, strlen(a->zSource), b->zSource, strlen(b->zSource), &d,
	                     err) < 0) {
		snprintf(line, sizeof line, "crossover of #%d and #%d: not made: %s", ia, ib, err);
		note(s, line, NULL);
		funcdiff_free(&d);
		return;
	}
	int made = 0, refused = 0;
	for (size_t i = 0; i < d.n && made < CROSSOVER_MAX && search_cand_ok(s); i++) {
		if (d.v[i].status != FUNCDIFF_CHANGED && d.v[i].status != FUNCDIFF_ADDED)
			continue;
		a = state_cand(ST(s), ia), b = state_cand(ST(s), ib);
		struct splice_result r;
		memset(&r, 0, sizeof r);
		if (splice_crossover(a->zSource, strlen(a->zSource), b->zSource, strlen(b->zSource),
		                     d.v[i].name, &r, err) < 0) {
			if (refused++ < CROSSOVER_MAX) {
				snprintf(line, sizeof line,
				         "crossover of #%d and #%d: %s from #%d not taken: %s", ia,
				         ib, d.v[i].name, ib, err);
				note(s, line, NULL);
			}
		} else if (!has_source(ST(s), r.src)) {
			char *what = cross_what(&r, d.v[i].name, ia, ib);
			int par[2] = {ia, ib};
			made += add_mechanical(s, R, "crossover", par, 2, "cross", r.src, what) > 0;
			free(what);
		}
		splice_result_free(&r);
	}
	funcdiff_free(&d);
	if (made || refused) {
		snprintf(line, sizeof line, "crossover of #%d and #%d: %d candidate%s", ia, ib,
		         made, made == 1 ? "" : "s");
		if (refused)
			snprintf(line + strlen(line), sizeof line - strlen(line),
			         ", %d function%s not taken", refused, refused == 1 ? "" : "s");
		note(s, line, NULL);
	}
}

/* ---- the LLM proposers and the gate ---- */

static int idea_has_cands(const struct state *st, int idea)
{
	for (int i = 0; i < st->nCand; i++)
		if (st->aCand[i].ideaId == idea)
			return 1;
	return 0;
}

static int idea_has_branches(const struct state *st, int idea)
{
	for (int i = 0; i < st->nBranch; i++)
		if (st->aBranch[i].idea == idea)
			return 1;
	return 0;
}

void search_gate(struct search *s, int round)
{
	const struct state *st = ST(s);
	if (strcmp(OPT(s)->gate, "auto"))
		return;
	char err[KL_ERRLEN], line[400];
	for (int i = 0; i < st->nIdea; i++) {
		const struct state_idea *d = &ST(s)->aIdea[i];
		if (d->round != round || d->status != IDEA_PENDING || strcmp(d->zOrigin, "llm"))
			continue;
		const char *why = NULL;
		if (state_search_cat_banned(st, d->zCategory))
			why = "its category is banned";
		else if (ST(s)->search.nPreferCat &&
		         !state_search_cat_preferred(st, d->zCategory)) {
			/* another idea for the same parent in a preferred category wins */
			for (int k = 0; k < st->nIdea && !why; k++) {
				const struct state_idea *o = &st->aIdea[k];
				/* (a duplicate is no idea of its own: it wins nothing) */
				if (o->round == round && o->parent == d->parent &&
				    !o->duplicateOf && state_search_cat_preferred(st, o->zCategory))
					why = "another idea for this parent is in a preferred "
					      "category";
			}
		}
		int id = d->id, rc = -1;
		struct pipeline *p = driver_llm(s->drv, err);
		if (p && why) {
			rc = pipeline_idea_reject(p, id, why, err);
			snprintf(line, sizeof line, "gate: idea %d rejected [%s] %s: %s", id,
			         d->zCategory, d->zTitle, why);
		} else if (p) {
			rc = pipeline_idea_accept(p, id, err);
			snprintf(line, sizeof line, "gate: idea %d accepted [%s] %s (for #%d)", id,
			         d->zCategory, d->zTitle, d->parent);
		}
		if (rc == 0)
			note(s, line, session_last(SES(s)));
		st = ST(s);
	}
}

static int first_parent(const struct state *st, int round)
{
	for (int i = 0; i < st->search.nRound; i++)
		if (st->search.aRound[i].round == round && st->search.aRound[i].nParent)
			return st->search.aRound[i].aParent[0];
	return 0;
}

void search_implement(struct search *s, int round)
{
	char err[KL_ERRLEN], line[400];
	for (int i = 0; i < ST(s)->nIdea && search_llm_ok(s); i++) {
		const struct state_idea *d = &ST(s)->aIdea[i];
		/* an idea whose branches were journaled before a restart goes on
		 * branch by branch (drive_round), each from where it was cut */
		if (d->status != IDEA_ACCEPTED || set_has(&s->impl, d->id) ||
		    !strcmp(d->zOrigin, "search") ||
		    (d->round != round && strcmp(d->zOrigin, "human")) ||
		    idea_has_cands(ST(s), d->id) || idea_has_branches(ST(s), d->id))
			continue;
		int parent = d->parent && state_cand(ST(s), d->parent) ? d->parent
		                                                       : first_parent(ST(s), round);
		if (!parent)
			continue;
		set_add(&s->impl, d->id);
		int id = d->id, b = (int)OPT(s)->branches;
		snprintf(line, sizeof line, "implementing idea %d on #%d in %d branch%s: %s", id,
		         parent, b, b == 1 ? "" : "es", d->zTitle);
		struct pipeline *p = driver_llm(s->drv, err);
		if (!p || pipeline_implement(p, id, parent, 0, b, round, err) < 0)
			snprintf(line, sizeof line, "idea %d: %.300s", id, err);
		note(s, line, NULL);
	}
}

/* the crossover prompt on two parents of different islands: an idea of
 * the search's own (origin "search"), accepted, implemented as a crossover */
void search_llm_crossover(struct search *s, int round, int a, int b)
{
	const struct state *st = ST(s);
	if (policy_island(st, a) == policy_island(st, b))
		return;
	for (int i = 0; i < st->nIdea; i++)
		if (st->aIdea[i].round == round && !strcmp(st->aIdea[i].zOrigin, "search"))
			return; /* asked before a restart */
	char err[KL_ERRLEN], title[120], line[300];
	int id = state_next_idea_id(st);
	snprintf(title, sizeof title, "Combine #%d and #%d", a, b);
	struct ev_idea d = {
	    .zTitle = title,
	    .zDescription = "Take what makes each parent fast and make one candidate of both.",
	    .zCategory = "other",
	    .zOrigin = "search",
	    .parent = a,
	};
	struct pipeline *p;
	if (search_emitted(s, ev_idea_proposed(SES(s), &d, err), NULL, err) < 0 ||
	    !(p = driver_llm(s->drv, err)) || pipeline_idea_accept(p, id, err) < 0)
		return;
	set_add(&s->impl, id);
	int nb = (int)OPT(s)->branches;
	snprintf(line, sizeof line, "LLM crossover of #%d and #%d in %d branch%s (idea %d)", a, b,
	         nb, nb == 1 ? "" : "es", id);
	if (pipeline_implement(p, id, a, b, nb, round, err) < 0)
		snprintf(line, sizeof line, "LLM crossover of #%d and #%d: %.200s", a, b, err);
	note(s, line, NULL);
}

int search_ideas_exist(const struct state *st, int round, int parent)
{
	for (int i = 0; i < st->nIdea; i++)
		if (st->aIdea[i].round == round && st->aIdea[i].parent == parent &&
		    !strcmp(st->aIdea[i].zOrigin, "llm"))
			return 1;
	return 0;
}
