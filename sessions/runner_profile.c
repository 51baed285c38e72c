/*
 * runner_profile.c - Nsight Compute in the background: a candidate
 * profiled by the engine's ncu_run (ncu around a worker of its own, ncu.h),
 * journaled and its summary told to the front end when it ends.
 */
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "ncu.h"
#include "runner_priv.h"
#include "util.h"

/* ---- Nsight Compute in the background ---- */

struct profile_run {
	struct runner *rn;
	int cand;
	struct ncu_run *run; /* ncu around a worker of its own (ncu.h) */
	struct profile_run *next;
};

int runner_profiles(const struct runner *rn)
{
	int n = 0;
	for (struct profile_run *q = rn->profiles; q; q = q->next)
		n++;
	return n;
}

static void profile_end(struct profile_run *p)
{
	struct profile_run **pp = &p->rn->profiles;
	while (*pp && *pp != p)
		pp = &(*pp)->next;
	if (*pp)
		*pp = p->next;
	ncu_run_free(p->run);
	free(p);
}

static void profile_done(const cJSON *prof, const char *zSummary, const char *zError, void *arg)
{
	struct profile_run *p = arg;
	struct runner *rn = p->rn;
	char err[KL_ERRLEN];
	if (prof) {
		char *line = xasprintf("candidate %d: ncu %s", p->cand, zSummary);
		if (ev_profile(rn->ses, p->cand, prof, err) < 0)
			note_simple(rn, RUNNER_MESSAGE, p->cand, err);
		else
			note_simple(rn, RUNNER_MESSAGE, p->cand, line);
		free(line);
	} else {
		char *m = xasprintf("profile of candidate %d failed: %s", p->cand, zError);
		note_simple(rn, RUNNER_MESSAGE, p->cand, m);
		free(m);
	}
	profile_end(p);
	note_simple(rn, RUNNER_CHANGED, 0, NULL);
}

int runner_profile(struct runner *rn, int id, char *err)
{
	const struct cand *c = state_cand(&rn->ses->st, id);
	if (!c)
		return kl_err(err, "no candidate %d", id);
	for (struct profile_run *q = rn->profiles; q; q = q->next)
		if (q->cand == id)
			return kl_err(err, "candidate %d is being profiled already", id);
	struct profile_run *p = xcalloc(1, sizeof *p);
	p->rn = rn;
	p->cand = id;
	struct ncu_spec spec = {
	    .wc = &rn->wc,
	    .zName = c->zName && *c->zName ? c->zName : "candidate.cu",
	    .zSource = c->zSource,
	};
	if (!(p->run = ncu_run_start(rn->l, &spec, profile_done, p, err))) {
		free(p);
		return -1;
	}
	p->next = rn->profiles;
	rn->profiles = p;
	return 0;
}

void runner_profiles_end(struct runner *rn)
{
	while (rn->profiles)
		profile_end(rn->profiles);
}
