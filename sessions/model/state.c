/*
 * state.c - folding session events into the engine's state: the task and
 * the population, with each candidate's latest result.  The state as JSON
 * is state_json.c's; the one best, state_best.c's.
 */
#include "state.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static void free_ideas(struct state *st);
static void free_search(struct state *st);

void state_init(struct state *st)
{
	memset(st, 0, sizeof *st);
	st->baselineMs = -1;
	search_settings_default(&st->search.set);
}

static void cand_free(struct cand *c)
{
	free(c->zName);
	free(c->zOrigin);
	free(c->zSource);
	free(c->zIdea);
	free(c->zStatus);
	free(c->zReason);
	cJSON_Delete(c->result);
}

void state_free(struct state *st)
{
	free(st->zTask);
	free(st->zTaskDir);
	free(st->zBackend);
	free(st->zShapes);
	for (int i = 0; i < st->nCand; i++)
		cand_free(&st->aCand[i]);
	free(st->aCand);
	free_ideas(st);
	free_search(st);
	for (int i = 0; i < st->nBranch; i++)
		free(st->aBranch[i].zReply);
	free(st->aBranch);
	for (int i = 0; i < st->nBase; i++)
		free(st->aBase[i].zDevice);
	free(st->aBase);
	for (int i = 0; i < st->nReq; i++)
		free(st->aReq[i].zProvider), free(st->aReq[i].zModel);
	free(st->aReq);
	state_init(st);
}

int state_precision_any(const struct state *st)
{
	return !strcmp(st->search.set.precision, "any");
}

enum state_rank state_cand_rank(const struct state *st, const struct cand *c)
{
	if (!c || c->status != STATUS_CORRECT)
		return STATE_RANK_STATUS;
	if (c->reduced && !state_precision_any(st))
		return STATE_RANK_REDUCED;
	const struct state_suspect *x = c->belowFloor ? state_search_suspect(st, c->id) : NULL;
	if (c->belowFloor && !(x && x->cleared))
		return STATE_RANK_SUSPECT;
	if (!(c->speedup > 0))
		return STATE_RANK_NO_SPEEDUP;
	if (c->unverified)
		return STATE_RANK_UNVERIFIED;
	return STATE_RANK_YES;
}

int state_cand_rankable(const struct state *st, const struct cand *c)
{
	return state_cand_rank(st, c) == STATE_RANK_YES;
}

int state_cand_passes(const struct state *st, const struct cand *c)
{
	enum state_rank r = state_cand_rank(st, c);
	return r == STATE_RANK_YES || r == STATE_RANK_NO_SPEEDUP || r == STATE_RANK_UNVERIFIED;
}

/* ---- the session's baseline (issue 39) ---- */

void state_cand_decode(struct cand *c)
{
	verdict_decode(c->result, &c->v);
}

static const char *device_of(const struct cand *c)
{
	return c->v.zDevice ? c->v.zDevice : "";
}

static struct state_baseline *baseline_at(const struct state *st, const char *zDevice)
{
	for (int i = 0; i < st->nBase; i++)
		if (!strcmp(st->aBase[i].zDevice, zDevice))
			return &st->aBase[i];
	return NULL;
}

double state_baseline(const struct state *st, const char *zDevice)
{
	if (!zDevice)
		return st->nBase ? st->aBase[0].ms : st->baselineMs;
	const struct state_baseline *b = baseline_at(st, zDevice);
	return b ? b->ms : -1;
}

void state_cand_speedup(struct state *st, struct cand *c)
{
	double base = state_baseline(st, device_of(c));
	c->speedup = isnan(c->v.speedup) ? -1 : c->v.speedup;
	if (c->status != STATUS_CORRECT || !(c->timeMs > 0) || !(base > 0))
		return;
	/* divided as the result's own speedup is (its events' median where
	 * its kernels' durations and the baseline's events would mix) */
	c->speedup = base / (!isnan(c->v.speedupTimeMs) ? c->v.speedupTimeMs : c->timeMs);
	/* the result says so too: the reference's time its own run measured
	 * is kept beside it where that differs */
	double own = !isnan(c->v.baselineMeasuredMs) ? c->v.baselineMeasuredMs
	             : !isnan(c->v.baselineMs)       ? c->v.baselineMs
	                                             : -1;
	struct verdict v;
	verdict_decode(c->result, &v);
	v.baselineMeasuredMs = own > 0 && fabs(own - base) > 1e-9 * base ? own : NAN;
	v.baselineMs = base;
	v.speedup = c->speedup;
	verdict_encode(c->result, &v, 0);
	state_cand_decode(c);
}

void state_set_baseline(struct state *st, const char *zDevice, double ms, int bRemeasure)
{
	if (!(ms > 0))
		return;
	if (!zDevice) { /* an old journal's `baseline`: the session's, every device's */
		for (int i = 0; i < st->nBase; i++) {
			st->aBase[i].ms = ms;
			st->aBase[i].remeasured = bRemeasure;
		}
		if (!baseline_at(st, ""))
			state_set_baseline(st, "", ms, bRemeasure);
	} else {
		struct state_baseline *b = baseline_at(st, zDevice);
		if (b && !bRemeasure)
			return; /* the session began with its own */
		if (!b) {
			xgrow((void **)&st->aBase, &st->nBaseAlloc, (size_t)st->nBase + 1,
			      sizeof *st->aBase);
			b = &st->aBase[st->nBase++];
			b->zDevice = xstrdup(zDevice);
		}
		b->ms = ms;
		b->remeasured = bRemeasure;
	}
	st->baselineMs = st->aBase[0].ms;
	if (!bRemeasure)
		return;
	/* a re-measure: every speedup there against it */
	for (int i = 0; i < st->nCand; i++)
		if (!zDevice || !strcmp(device_of(&st->aCand[i]), zDevice))
			state_cand_speedup(st, &st->aCand[i]);
}

struct cand *state_cand(const struct state *st, int id)
{
	/* no candidate has an id above the largest; ids are usually 1..n in
	 * order, so try that slot first */
	if (id < 1 || id > st->maxId)
		return NULL;
	if (id <= st->nCand && st->aCand[id - 1].id == id)
		return &st->aCand[id - 1];
	for (int i = 0; i < st->nCand; i++)
		if (st->aCand[i].id == id)
			return &st->aCand[i];
	return NULL;
}

const struct cand *state_cand_by_source(const struct state *st, const char *zSource)
{
	for (int i = 0; zSource && i < st->nCand; i++)
		if (st->aCand[i].zSource && !strcmp(st->aCand[i].zSource, zSource))
			return &st->aCand[i];
	return NULL;
}

int state_next_id(const struct state *st)
{
	return st->maxId + 1;
}

/* ---- ideas and LLM traffic ---- */

static const char *const idea_names[IDEA_STATUS_COUNT] = {
    [IDEA_PENDING] = "pending",
    [IDEA_ACCEPTED] = "accepted",
    [IDEA_REJECTED] = "rejected",
};

const char *idea_status_name(enum idea_status s)
{
	return (unsigned)s < IDEA_STATUS_COUNT ? idea_names[s] : idea_names[IDEA_PENDING];
}

int idea_decided(enum idea_status s)
{
	return s == IDEA_ACCEPTED || s == IDEA_REJECTED;
}

char *idea_text_norm(const char *zText)
{
	char *out = xmalloc(strlen(zText) + 1), *q = out;
	int gap = 0;
	for (const unsigned char *p = (const unsigned char *)zText; *p; p++) {
		/* letters and digits stay (in lower case), as does any byte of a
		 * multi-byte character; the rest separates words */
		if (*p >= 0x80 || isalnum(*p)) {
			if (gap && q > out)
				*q++ = ' ';
			*q++ = (char)tolower(*p);
			gap = 0;
		} else {
			gap = 1;
		}
	}
	*q = 0;
	return out;
}

/* a and b are the same when normalised, and not empty */
static int same_text(const char *a, const char *b)
{
	if (!a || !b)
		return 0;
	char *x = idea_text_norm(a), *y = idea_text_norm(b);
	int same = *x && !strcmp(x, y);
	free(x);
	free(y);
	return same;
}

const struct state_idea *state_idea_same(const struct state *st, int parent, const char *zTitle,
                                         const char *zDescription)
{
	for (int i = 0; parent > 0 && i < st->nIdea; i++) {
		const struct state_idea *d = &st->aIdea[i];
		if (d->parent != parent ||
		    (!same_text(d->zTitle, zTitle) && !same_text(d->zDescription, zDescription)))
			continue;
		/* a duplicate stands for the idea it repeats */
		const struct state_idea *o = d->duplicateOf ? state_idea(st, d->duplicateOf) : NULL;
		return o ? o : d;
	}
	return NULL;
}

/* idea d is accepted, has no candidate, and every branch of it has its
 * reply (at least one): it made nothing */
static int made_nothing(const struct state *st, const struct state_idea *d)
{
	int n = 0;
	for (int i = 0; i < st->nCand; i++)
		if (st->aCand[i].ideaId == d->id)
			return 0;
	for (int i = 0; i < st->nBranch; i++) {
		if (st->aBranch[i].idea != d->id)
			continue;
		if (!st->aBranch[i].answered)
			return 0;
		n++;
	}
	return n > 0;
}

const char *state_idea_word(const struct state *st, const struct state_idea *d)
{
	if (d->status == IDEA_REJECTED)
		return d->duplicateOf ? "duplicate" : "rejected";
	if (d->status != IDEA_ACCEPTED)
		return idea_status_name(d->status);
	for (int i = 0; i < st->nCand; i++)
		if (st->aCand[i].ideaId == d->id)
			return "implemented";
	return made_nothing(st, d) ? "nothing new" : "accepted";
}

struct idea_why state_idea_why(const struct state *st, const struct state_idea *d)
{
	struct idea_why w = {""};
	char *buf = w.z;
	size_t n = sizeof w.z;
	if (d->status == IDEA_REJECTED && d->duplicateOf) {
		const struct state_idea *o = state_idea(st, d->duplicateOf);
		snprintf(buf, n, "the same as idea %d for #%d", d->duplicateOf, o ? o->parent : 0);
		return w;
	}
	if (d->status != IDEA_ACCEPTED || !made_nothing(st, d))
		return w;
	/* the candidates its replies' code repeats, else why none came */
	int failed = 1, seen[8], nSeen = 0;
	size_t k = 0;
	for (int i = 0; i < st->nBranch; i++) {
		const struct state_branch *b = &st->aBranch[i];
		if (b->idea != d->id)
			continue;
		failed &= b->failed;
		int again = 0;
		for (int j = 0; j < nSeen; j++)
			again |= seen[j] == b->sameAs;
		if (!b->sameAs || again || nSeen == 8 || k + 40 >= n)
			continue;
		seen[nSeen++] = b->sameAs;
		k += (size_t)snprintf(buf + k, n - k, "%s#%d",
		                      k ? ", " : "no new code: the same as ", b->sameAs);
	}
	if (!k)
		snprintf(buf, n, "%s", failed ? "no reply from the LLM" : "no usable code");
	return w;
}

static void free_ideas(struct state *st)
{
	for (int i = 0; i < st->nIdea; i++) {
		struct state_idea *d = &st->aIdea[i];
		free(d->zTitle);
		free(d->zDescription);
		free(d->zCategory);
		free(d->zOrigin);
	}
	free(st->aIdea);
}

const struct state_request *state_request(const struct state *st, int request)
{
	for (int i = st->nReq - 1; i >= 0; i--)
		if (st->aReq[i].request == request)
			return &st->aReq[i];
	return NULL;
}

struct state_idea *state_idea(const struct state *st, int id)
{
	for (int i = 0; i < st->nIdea; i++)
		if (st->aIdea[i].id == id)
			return &st->aIdea[i];
	return NULL;
}

struct state_branch *state_branch_of(const struct state *st, int idea, int branch)
{
	for (int i = st->nBranch - 1; i >= 0; i--)
		if (st->aBranch[i].idea == idea && st->aBranch[i].branch == branch)
			return &st->aBranch[i];
	return NULL;
}

int state_next_idea_id(const struct state *st)
{
	int m = 0;
	for (int i = 0; i < st->nIdea; i++)
		if (st->aIdea[i].id > m)
			m = st->aIdea[i].id;
	return m + 1;
}

int state_next_request_id(const struct state *st)
{
	return st->llm.lastRequest + 1;
}

/* ---- the search's folded state (its events fold in event_search.c) ---- */

static const char *const search_names[SEARCH_STATE_COUNT] = {
    [SEARCH_NONE] = "",           [SEARCH_RUNNING] = "running",   [SEARCH_PAUSED] = "paused",
    [SEARCH_STOPPED] = "stopped", [SEARCH_FINISHED] = "finished",
};

const char *search_state_name(enum search_state s)
{
	return (unsigned)s < SEARCH_STATE_COUNT ? search_names[s] : search_names[SEARCH_NONE];
}

int search_state_live(enum search_state s)
{
	return s == SEARCH_RUNNING || s == SEARCH_PAUSED;
}

int search_state_ended(enum search_state s)
{
	return s == SEARCH_STOPPED || s == SEARCH_FINISHED;
}

static void free_search(struct state *st)
{
	struct state_search *s = &st->search;
	free(s->zWhy);
	cJSON_Delete(s->settings);
	for (int i = 0; i < s->nRound; i++) {
		for (int k = 0; k < s->aRound[i].nParent; k++)
			free(s->aRound[i].azReason[k]);
		free(s->aRound[i].zPolicy);
	}
	free(s->aRound);
	free(s->aBanned);
	for (int i = 0; i < s->nBanCat; i++)
		free(s->azBanCat[i]);
	free(s->azBanCat);
	for (int i = 0; i < s->nPreferCat; i++)
		free(s->azPreferCat[i]);
	free(s->azPreferCat);
	for (int i = 0; i < s->nSuspect; i++)
		free(s->aSuspect[i].zWhy);
	free(s->aSuspect);
	free(s->aAb);
}

const struct state_ab *state_ab(const struct state *st, int cand, int incumbent)
{
	for (int i = st->search.nAb - 1; i >= 0; i--)
		if (st->search.aAb[i].cand == cand && st->search.aAb[i].incumbent == incumbent)
			return &st->search.aAb[i];
	return NULL;
}

const struct state_suspect *state_search_suspect(const struct state *st, int id)
{
	for (int i = 0; i < st->search.nSuspect; i++)
		if (st->search.aSuspect[i].cand == id)
			return &st->search.aSuspect[i];
	return NULL;
}

int state_search_excluded(const struct state *st, int id)
{
	for (int i = 0; i < st->search.nBanned; i++)
		if (st->search.aBanned[i] == id)
			return 1;
	const struct state_suspect *x = state_search_suspect(st, id);
	return x && !x->cleared;
}

static int has_word(char **a, int n, const char *z)
{
	for (int i = 0; i < n; i++)
		if (z && !strcmp(a[i], z))
			return 1;
	return 0;
}

int state_search_cat_banned(const struct state *st, const char *zCat)
{
	return has_word(st->search.azBanCat, st->search.nBanCat, zCat);
}

int state_search_cat_preferred(const struct state *st, const char *zCat)
{
	return has_word(st->search.azPreferCat, st->search.nPreferCat, zCat);
}

void state_llm_tokens_text(const struct state_llm *u, const struct state_llm *before, char *buf,
                           size_t n)
{
	struct state_llm none = {0};
	const struct state_llm *b = before ? before : &none;
	int nResp = u->nResponses - b->nResponses, nCounted = u->nCounted - b->nCounted;
	if (nResp > 0 && nCounted == 0)
		snprintf(buf, n, "tokens not counted (the provider reports none)");
	else if (nCounted < nResp)
		snprintf(buf, n,
		         "%ld input and %ld output tokens (of %d of %d replies; the others "
		         "not counted)",
		         u->inTokens - b->inTokens, u->outTokens - b->outTokens, nCounted, nResp);
	else
		snprintf(buf, n, "%ld input and %ld output tokens", u->inTokens - b->inTokens,
		         u->outTokens - b->outTokens);
}
