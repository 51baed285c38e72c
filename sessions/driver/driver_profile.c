/*
 * driver_profile.c - Nsight Compute in the background: a candidate
 * profiled by the engine's ncu_run (ncu around a worker of its own, ncu.h),
 * journaled and its summary told to the front end when it ends.
 */
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "ncu.h"
#include "driver_priv.h"
#include "util.h"

/* ---- Nsight Compute in the background ---- */

struct profile_run {
	struct driver *drv;
	int cand;
	struct ncu_run *run; /* ncu around a worker of its own (ncu.h) */
	struct profile_run *next;
};

int driver_profiles(const struct driver *drv)
{
	int n = 0;
	for (struct profile_run *q = drv->profiles; q; q = q->next)
		n++;
	return n;
}

static void profile_end(struct profile_run *p)
{
	struct profile_run **pp = &p->drv->profiles;
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
	struct driver *drv = p->drv;
	char err[KL_ERRLEN];
	if (prof) {
		char *line = xasprintf("candidate %d: ncu %s", p->cand, zSummary);
		if (ev_profile(drv->ses, p->cand, prof, err) < 0)
			note_simple(drv, DRIVER_MESSAGE, p->cand, err);
		else
			note_simple(drv, DRIVER_MESSAGE, p->cand, line);
		free(line);
	} else {
		char *m = xasprintf("profile of candidate %d failed: %s", p->cand, zError);
		note_simple(drv, DRIVER_MESSAGE, p->cand, m);
		free(m);
	}
	profile_end(p);
	note_simple(drv, DRIVER_CHANGED, 0, NULL);
}

int driver_profile(struct driver *drv, int id, char *err)
{
	const struct cand *c = state_cand(&drv->ses->st, id);
	if (!c)
		return kl_err(err, "no candidate %d", id);
	for (struct profile_run *q = drv->profiles; q; q = q->next)
		if (q->cand == id)
			return kl_err(err, "candidate %d is being profiled already", id);
	struct profile_run *p = xcalloc(1, sizeof *p);
	p->drv = drv;
	p->cand = id;
	struct ncu_spec spec = {
	    .wc = &drv->wc,
	    .zName = c->zName && *c->zName ? c->zName : "candidate.cu",
	    .zSource = c->zSource,
	};
	if (!(p->run = ncu_run_start(drv->l, &spec, profile_done, p, err))) {
		free(p);
		return -1;
	}
	p->next = drv->profiles;
	drv->profiles = p;
	return 0;
}

void driver_profiles_end(struct driver *drv)
{
	while (drv->profiles)
		profile_end(drv->profiles);
}
