/*
 * driver_ask.c - what front ends ask of a driver (struct driver's fields
 * are private to sessions/, driver_priv.h): its state and evaluations, the
 * task it runs, its session, and its workers.
 */
#include "driver.h"

#include <stdio.h>
#include <string.h>

#include "libs.h"
#include "pool.h"
#include "driver_priv.h"
#include "util.h"

/* ---- its state and evaluations ---- */

const struct state *driver_state(const struct driver *drv)
{
	return &drv->ses->st;
}

const struct driver_job *driver_job_of(const struct driver *drv, int id)
{
	for (int i = 0; i < drv->nJob; i++)
		if (drv->aJob[i].cand == id)
			return &drv->aJob[i];
	return NULL;
}

int driver_jobs(const struct driver *drv)
{
	return drv->nJob + driver_profiles(drv);
}

int driver_evals(const struct driver *drv, const struct driver_job **pa)
{
	*pa = drv->aJob;
	return drv->nJob;
}

int driver_finished(const struct driver *drv)
{
	return drv->nFinished;
}

const char *driver_task_error(const struct driver *drv)
{
	return drv->pool ? pool_task_error(drv->pool) : NULL;
}

/* ---- what the driver runs ---- */

const struct task *driver_task(const struct driver *drv)
{
	return drv->task;
}

const char *driver_task_name(const struct driver *drv)
{
	return drv->zTaskName;
}

const char *driver_task_dir(const struct driver *drv)
{
	return drv->zTaskDir;
}

const char *driver_backend(const struct driver *drv)
{
	return drv->zBackend;
}

int driver_seeds(const struct driver *drv, char *const **paz)
{
	const struct task *t = drv->task;
	int cuda = !strcmp(drv->zBackend, "cuda");
	*paz = !t ? NULL : cuda ? t->seeds.azCuda : t->seeds.azHost;
	return !t ? 0 : cuda ? t->seeds.nCuda : t->seeds.nHost;
}

int driver_seed_usable(const struct driver *drv, int i, char *zWhy, size_t nWhy)
{
	const struct task *t = drv->task;
	int cuda = !strcmp(drv->zBackend, "cuda");
	char **needs = !t ? NULL : cuda ? t->seeds.azCudaNeeds : t->seeds.azHostNeeds;
	char **az = !t ? NULL : cuda ? t->seeds.azCuda : t->seeds.azHost;
	if (!needs || !needs[i])
		return 1;
	struct libs L = {0};
	char err[KL_ERRLEN];
	int ok = libs_add(&L, needs[i], NULL, err) == 0;
	libs_free(&L);
	if (!ok && zWhy) {
		const char *b = strrchr(az[i], '/');
		snprintf(zWhy, nWhy,
		         "seed %s left out: it needs CUTLASS, which kloop does not find here (%s)",
		         b ? b + 1 : az[i], err);
	}
	return ok;
}

double driver_bandwidth_gbs(const struct driver *drv)
{
	return pool_bandwidth_gbs(drv->pool);
}

struct loop *driver_loop(const struct driver *drv)
{
	return drv->l;
}

struct session *driver_session(struct driver *drv)
{
	return drv->ses;
}

const char *driver_path(const struct driver *drv)
{
	return drv->ses->zPath;
}

int driver_saved(const struct driver *drv, FILE *f)
{
	return drv ? session_saved(drv->ses, f) : 0;
}

/* ---- the workers ---- */

int driver_workers(const struct driver *drv)
{
	return drv->pool ? pool_size(drv->pool) : 0;
}

int driver_worker(const struct driver *drv, int i, struct pool_info *pi)
{
	*pi = (struct pool_info){0};
	if (i < 0 || i >= driver_workers(drv))
		return 0;
	pool_info(drv->pool, i, pi);
	for (int k = 0; pi->job && k < drv->nJob; k++)
		if (drv->aJob[k].job == pi->job)
			return drv->aJob[k].cand;
	return 0;
}

int driver_baselines_pending(const struct driver *drv)
{
	if (!drv->pool || !pool_baselines_pending(drv->pool))
		return 0;
	int up = 0;
	for (int i = 0; i < pool_size(drv->pool); i++) {
		struct pool_info pi;
		pool_info(drv->pool, i, &pi);
		up |= pi.state == POOL_W_IDLE || pi.state == POOL_W_BUSY;
	}
	return up;
}
