/*
 * archive_wins.c - a session's wins and dead ends: which candidates won,
 * which ideas died, their entries, and adding them (a journal backfilled).
 */
#include "archive_priv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "journal.h"
#include "linediff.h"
#include "result.h"
#include "sha256.h"

#define DIFF_MAX_EDITS 4000 /* lines; a larger change is summarised */
#define REASON_MAX 600
#define LINEAGE_MAX 64

/* a candidate's time and its spread (p10..p90, else median +- 2 rse, else
 * the median alone); 0 when it has no time */
static int interval(const struct cand *c, double *lo, double *hi, double *med)
{
	const struct verdict_timing *t = &c->v.timing;
	double m = t->medianMs;
	if (c->status != STATUS_CORRECT || c->unverified || c->reduced || !(m > 0))
		return 0;
	double p10 = t->p10Ms, p90 = t->p90Ms, rse = t->rse;
	*med = m;
	if (p10 > 0 && p90 >= p10) {
		*lo = p10 < m ? p10 : m;
		*hi = p90 > m ? p90 : m;
	} else if (rse >= 0) {
		*lo = m * (1 - 2 * rse);
		*hi = m * (1 + 2 * rse);
	} else {
		*lo = *hi = m;
	}
	return 1;
}

/* an A/B refuted c's win over its parents: one against a parent (or its
 * machine code) that did not find c faster beyond the noise */
static int ab_refuted(const struct state *st, const struct cand *c)
{
	for (int i = 0; i < c->nParent; i++) {
		const struct cand *p = state_cand(st, c->aParent[i]), *win;
		const struct state_ab *ab = p ? state_ab_between(st, c, p, &win) : NULL;
		if (ab && !ab->failed && win != c)
			return 1;
	}
	return 0;
}

int archive_is_win(const struct state *st, const struct cand *c)
{
	double lo, hi, m;
	/* a time below the device's floor that no person cleared is held back
	 * as a suspect (the rank rule's): never a win to learn from */
	if (c->nParent < 1 || !interval(c, &lo, &hi, &m) ||
	    state_cand_rank(st, c) == STATE_RANK_SUSPECT)
		return 0;
	for (int i = 0; i < c->nParent; i++) {
		const struct cand *p = state_cand(st, c->aParent[i]);
		double plo, phi, pm;
		if (!p || !interval(p, &plo, &phi, &pm) || !(hi < plo))
			return 0;
	}
	return !ab_refuted(st, c);
}

/* the archive's key of c's win in session zSid (caller frees) */
static char *win_ukey(const char *zSid, const struct cand *c)
{
	char hex[65];
	struct sha256 h;
	sha256_init(&h);
	sha256_update(&h, c->zSource, strlen(c->zSource));
	sha256_hex(&h, hex);
	return xasprintf("win:%s:%d:%.16s", zSid, c->id, hex);
}

struct sess {
	const struct state *st;
	const char *zSid;
	const char *zSig;
	const char *zPath; /* the journal, absolute where known */
};

/* the model that wrote c, as its llm_request named it ("provider model";
 * the command provider names none: "command (no model named)"), or NULL
 * (caller frees) */
static char *model_of(const struct state *st, const struct cand *c)
{
	const struct state_request *q = c->request ? state_request(st, c->request) : NULL;
	if (!q || !q->zModel)
		return NULL;
	const char *pv = q->zProvider, *m = q->zModel;
	return *pv && *m ? xasprintf("%s %s", pv, m)
	       : *pv     ? xasprintf("%s (no model named)", pv)
	                 : xstrdup(m);
}

/* the entry for candidate c: a win, or (zFailure) the last attempt of a
 * dead idea */
static cJSON *entry_json(const struct sess *s, const struct cand *c, const char *zFailure,
                         int nTried)
{
	const struct state *st = s->st;
	const struct state_idea *d = c->ideaId ? state_idea(st, c->ideaId) : NULL;
	const struct cand *p = c->nParent ? state_cand(st, c->aParent[0]) : NULL;
	cJSON *e = cJSON_CreateObject();
	char *ukey = zFailure ? xasprintf("dead_end:%s:idea:%d", s->zSid, d ? d->id : -c->id)
	                      : win_ukey(s->zSid, c);
	cJSON_AddStringToObject(e, "ukey", ukey);
	free(ukey);
	cJSON_AddStringToObject(e, "kind", zFailure ? "dead_end" : "win");
	cJSON_AddStringToObject(e, "task", st->zTask ? st->zTask : "");
	cJSON_AddStringToObject(e, "signature", s->zSig);
	cJSON_AddStringToObject(e, "backend", st->zBackend ? st->zBackend : "");
	cJSON_AddStringToObject(e, "gpu", c->v.zDevice ? c->v.zDevice : "");
	cJSON_AddStringToObject(e, "idea", d ? d->zTitle : c->zIdea ? c->zIdea : "");
	cJSON_AddStringToObject(e, "idea_description", d ? d->zDescription : "");
	cJSON_AddStringToObject(e, "category", d ? d->zCategory : "other");
	cJSON_AddStringToObject(e, "origin", c->zOrigin);
	if (zFailure) {
		cJSON_AddStringToObject(e, "failure", zFailure);
		char *r = archive_cut(c->zReason, REASON_MAX);
		cJSON_AddStringToObject(e, "reason", r);
		free(r);
		cJSON_AddNumberToObject(e, "tried", nTried);
	}
	cJSON_AddStringToObject(e, "name", c->zName);
	cJSON_AddNumberToObject(e, "candidate", c->id);
	cJSON *ps = cJSON_AddArrayToObject(e, "parents");
	for (int i = 0; i < c->nParent; i++)
		cJSON_AddItemToArray(ps, cJSON_CreateNumber(c->aParent[i]));
	/* the lineage, root first */
	const struct cand *chain[LINEAGE_MAX];
	int n = 0;
	for (const struct cand *x = c; x && n < LINEAGE_MAX;
	     x = x->nParent ? state_cand(st, x->aParent[0]) : NULL) {
		int seen = 0;
		for (int i = 0; i < n; i++)
			seen |= chain[i] == x;
		if (seen)
			break;
		chain[n++] = x;
	}
	cJSON *lin = cJSON_AddArrayToObject(e, "lineage");
	for (int i = n - 1; i >= 0; i--) {
		cJSON *y = cJSON_CreateObject();
		cJSON_AddNumberToObject(y, "id", chain[i]->id);
		cJSON_AddStringToObject(y, "name", chain[i]->zName);
		cJSON_AddStringToObject(y, "origin", chain[i]->zOrigin);
		if (chain[i]->zIdea)
			cJSON_AddStringToObject(y, "idea", chain[i]->zIdea);
		archive_add_num(y, "time_ms", chain[i]->timeMs >= 0 ? chain[i]->timeMs : NAN);
		cJSON_AddItemToArray(lin, y);
	}
	strbuf diff = STRBUF_INIT;
	if (p) {
		sb_addf(&diff, "--- %s (candidate %d)\n+++ %s (candidate %d)\n", p->zName, p->id,
		        c->zName, c->id);
		linediff_unified(p->zSource, c->zSource, 3, DIFF_MAX_EDITS, &diff);
	}
	cJSON_AddStringToObject(e, "diff", diff.buf ? diff.buf : "");
	sb_free(&diff);
	cJSON_AddStringToObject(e, "code", c->zSource);
	double lo, hi, m, plo, phi, pm;
	int has = interval(c, &lo, &hi, &m);
	archive_add_num(e, "time_ms", has ? m : NAN);
	archive_add_num(e, "p10_ms", has ? c->v.timing.p10Ms : NAN);
	archive_add_num(e, "p90_ms", has ? c->v.timing.p90Ms : NAN);
	int phas = p && interval(p, &plo, &phi, &pm);
	archive_add_num(e, "parent_time_ms", phas ? pm : NAN);
	archive_add_num(e, "parent_p10_ms", phas ? p->v.timing.p10Ms : NAN);
	archive_add_num(e, "parent_p90_ms", phas ? p->v.timing.p90Ms : NAN);
	archive_add_num(e, "speedup_parent", has && phas ? pm / m : NAN);
	archive_add_num(e, "speedup", c->speedup >= 0 ? c->speedup : NAN);
	/* the verdict's baselines, where it has them */
	if (c->result)
		cJSON_AddStringToObject(e, "baseline", c->v.zBaseline);
	if (!isnan(c->v.baselineMs))
		cJSON_AddNumberToObject(e, "baseline_ms", c->v.baselineMs);
	if (!isnan(c->v.speedupCompile))
		cJSON_AddNumberToObject(e, "speedup_compile", c->v.speedupCompile);
	if (!isnan(c->v.baselineCompileMs))
		cJSON_AddNumberToObject(e, "baseline_compile_ms", c->v.baselineCompileMs);
	if (c->v.comp.resources)
		cJSON_AddItemToObject(e, "resources", cJSON_Duplicate(c->v.comp.resources, 1));
	char *model = model_of(st, c);
	if (model)
		cJSON_AddStringToObject(e, "model", model);
	else
		cJSON_AddNullToObject(e, "model");
	free(model);
	cJSON_AddStringToObject(e, "session", s->zSid);
	cJSON_AddStringToObject(e, "session_path", s->zPath);
	if (c->lastEval > 0)
		cJSON_AddNumberToObject(e, "event", c->lastEval);
	else
		cJSON_AddNullToObject(e, "event");
	if (d)
		cJSON_AddNumberToObject(e, "idea_id", d->id);
	archive_add_num(e, "ts", c->tsEval > 0 ? c->tsEval : NAN);
	return e;
}

/* the ordinal of candidate id's latest eval_finished in st (0: none) */
static int eval_index(const struct state *st, int id)
{
	const struct cand *c = state_cand(st, id);
	return c ? c->lastEval : 0;
}

void archive_track_free(struct archive_track *t)
{
	free(t->zJournal);
	free(t->zSid);
	free(t->zSig);
	free(t->zAbs);
	free(t->aWon);
	for (size_t i = 0; i < t->nDead; i++)
		free(t->azDead[i]);
	free(t->azDead);
	memset(t, 0, sizeof *t);
}

int archive_track_init(struct archive_track *t, const struct state *st, const char *zJournal)
{
	if (!st->zTask)
		return -1;
	t->zJournal = xstrdup(zJournal);
	t->zSid = archive_session_id(st, zJournal);
	t->zSig = archive_state_signature(st);
	char *real = realpath(zJournal, NULL);
	t->zAbs = real ? real : xstrdup(zJournal);
	return 0;
}

/* what an idea's candidates came to (one pass over the population) */
struct idea_sum {
	const struct cand *last; /* its latest candidate */
	int n;                   /* candidates */
	int correct;             /* one of them is correct */
	int open;                /* one is won, new or being evaluated: not a dead end */
};

/* the sums by idea id (0..max) for the ideas marked in aMark (indexed the
 * same way); a fresh array */
static struct idea_sum *idea_sums(const struct state *st, int max, const unsigned char *aMark)
{
	struct idea_sum *v = xcalloc((size_t)max + 1, sizeof *v);
	for (int i = 0; i < st->nCand; i++) {
		const struct cand *c = &st->aCand[i];
		if (c->ideaId < 1 || c->ideaId > max || !aMark[c->ideaId])
			continue;
		struct idea_sum *x = &v[c->ideaId];
		x->open |= !status_finished(c->status) || archive_is_win(st, c);
		x->n++;
		x->correct |= c->status == STATUS_CORRECT;
		if (!x->last || c->id > x->last->id)
			x->last = c;
	}
	return v;
}

/* the failure class of an idea, or NULL when it won, has nothing evaluated
 * or is still being tried */
static const char *dead_class(const struct idea_sum *x)
{
	/* a last evaluation the user cancelled says nothing about the idea */
	if (x->open || !x->last || x->last->status == STATUS_CANCELLED)
		return NULL;
	return x->correct ? "slower" : x->last->zStatus;
}

/* add what t's session (folded in st) holds that t has not archived, in
 * one transaction */
int archive_add_session(struct archive *a, struct archive_track *t, const struct state *st,
                        struct archive_counts *pOut, char *err)
{
	struct sess s = {st, t->zSid, t->zSig, t->zAbs};
	struct archive_counts cnt = {0};
	cJSON *todo = cJSON_CreateArray(); /* [entry, bReplace] pairs */
	int *aNewWin = NULL, nNewWin = 0;
	cJSON *refuted = cJSON_CreateArray(); /* ukeys of wins an A/B refuted since */
	/* only what the events since the last call can have changed: a
	 * candidate evaluated since, or one whose parent was; and their ideas */
	int maxIdea = 0;
	for (int i = 0; i < st->nIdea; i++)
		if (st->aIdea[i].id > maxIdea)
			maxIdea = st->aIdea[i].id;
	unsigned char *aIdeaMark = xcalloc((size_t)maxIdea + 1, 1);
	for (int i = 0; i < st->nCand; i++) {
		const struct cand *c = &st->aCand[i];
		int fresh = c->lastEval > t->evSeen;
		for (int k = 0; k < c->nParent && !fresh; k++)
			fresh = eval_index(st, c->aParent[k]) > t->evSeen;
		if (!fresh)
			continue;
		if (c->ideaId >= 1 && c->ideaId <= maxIdea)
			aIdeaMark[c->ideaId] = 1;
		if (!archive_is_win(st, c)) {
			/* filed before an A/B refuted it (an A/B asked for later):
			 * no longer a win that later prompts learn from */
			if (ab_refuted(st, c)) {
				char *k = win_ukey(t->zSid, c);
				cJSON_AddItemToArray(refuted, cJSON_CreateString(k));
				free(k);
			}
			if ((size_t)c->id < t->nWon)
				t->aWon[c->id] = 0;
			continue;
		}
		cnt.nWins++;
		if ((size_t)c->id < t->nWon && t->aWon[c->id])
			continue;
		cJSON_AddItemToArray(todo, entry_json(&s, c, NULL, 0));
		aNewWin = xrealloc(aNewWin, sizeof *aNewWin * (size_t)(nNewWin + 1));
		aNewWin[nNewWin++] = c->id;
	}
	int nWinJobs = nNewWin;
	int *aNewDead = NULL;
	const char **azNewDead = NULL;
	int nNewDead = 0;
	struct idea_sum *sums = idea_sums(st, maxIdea, aIdeaMark);
	for (int i = 0; i < st->nIdea; i++) {
		const struct state_idea *d = &st->aIdea[i];
		const struct idea_sum *x = &sums[d->id];
		const char *cls = d->id >= 1 && aIdeaMark[d->id] ? dead_class(x) : NULL;
		if (!cls)
			continue;
		const struct cand *last = x->last;
		int n = x->n;
		cnt.nDeadEnds++;
		if ((size_t)d->id < t->nDead && t->azDead[d->id] && !strcmp(t->azDead[d->id], cls))
			continue;
		cJSON_AddItemToArray(todo, entry_json(&s, last, cls, n));
		aNewDead = xrealloc(aNewDead, sizeof *aNewDead * (size_t)(nNewDead + 1));
		azNewDead = xrealloc(azNewDead, sizeof *azNewDead * (size_t)(nNewDead + 1));
		aNewDead[nNewDead] = d->id;
		azNewDead[nNewDead++] = cls;
	}
	free(sums);
	free(aIdeaMark);
	int rc = 0;
	if (cJSON_GetArraySize(todo) > 0 || cJSON_GetArraySize(refuted) > 0) {
		rc = archive_exec(a, "BEGIN IMMEDIATE", err);
		int k = 0;
		const cJSON *e;
		cJSON_ArrayForEach(e, todo)
		{
			if (rc == 0)
				rc = archive_put_entry(a, e, 1, k >= nWinJobs, &cnt.nAdded, err);
			k++;
		}
		cJSON_ArrayForEach(e, refuted)
		{
			if (rc == 0)
				rc = archive_drop_win(a, e->valuestring, err);
		}
		if (rc == 0)
			rc = archive_exec(a, "COMMIT", err);
		if (rc < 0)
			sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
	}
	if (rc == 0) {
		t->evSeen = st->nEvents;
		for (int i = 0; i < nNewWin; i++) {
			size_t id = (size_t)aNewWin[i];
			if (id >= t->nWon) {
				size_t n = t->nWon;
				xgrow((void **)&t->aWon, &t->nWon, id + 1, 1);
				memset(t->aWon + n, 0, t->nWon - n);
			}
			t->aWon[id] = 1;
		}
		for (int i = 0; i < nNewDead; i++) {
			size_t id = (size_t)aNewDead[i];
			if (id >= t->nDead) {
				size_t n = t->nDead;
				xgrow((void **)&t->azDead, &t->nDead, id + 1, sizeof *t->azDead);
				memset(t->azDead + n, 0, (t->nDead - n) * sizeof *t->azDead);
			}
			free(t->azDead[id]);
			t->azDead[id] = xstrdup(azNewDead[i]);
		}
	}
	free(aNewWin);
	free(aNewDead);
	free(azNewDead);
	cJSON_Delete(todo);
	cJSON_Delete(refuted);
	if (pOut)
		*pOut = cnt;
	return rc;
}

static void fold_event(const cJSON *ev, const char *zLine, size_t nLine, int line, void *arg)
{
	(void)zLine, (void)nLine, (void)line;
	char err[KL_ERRLEN];
	state_apply(arg, ev, err); /* a contradicting event is skipped, as session_open does */
}

int archive_add_journal(struct archive *a, const char *zJournal, struct archive_counts *pOut,
                        char *err)
{
	struct state st;
	state_init(&st);
	int rc = journal_read(zJournal, fold_event, NULL, &st, err);
	struct archive_track t = {0};
	if (rc >= 0 && archive_track_init(&t, &st, zJournal) < 0)
		rc = kl_err(err, "%s: not a kloop session journal (no session_started event)",
		            zJournal);
	if (rc >= 0)
		rc = archive_add_session(a, &t, &st, pOut, err);
	archive_track_free(&t);
	state_free(&st);
	return rc < 0 ? -1 : 0;
}
