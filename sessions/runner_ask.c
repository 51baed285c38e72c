/*
 * runner_ask.c - what front ends ask of a runner (struct runner's fields
 * are private to sessions/, runner_priv.h): its state and evaluations, the
 * task it runs, its session, and its workers.
 */
#include "runner.h"

#include <stdio.h>
#include <string.h>

#include "pool.h"
#include "runner_priv.h"
#include "util.h"

/* ---- its state and evaluations ---- */

const struct state *runner_state(const struct runner *rn)
{
	return &rn->ses->st;
}

const struct runner_job *runner_job_of(const struct runner *rn, int id)
{
	for (int i = 0; i < rn->nJob; i++)
		if (rn->aJob[i].cand == id)
			return &rn->aJob[i];
	return NULL;
}

int runner_jobs(const struct runner *rn)
{
	return rn->nJob + runner_profiles(rn);
}

int runner_evals(const struct runner *rn, const struct runner_job **pa)
{
	*pa = rn->aJob;
	return rn->nJob;
}

int runner_finished(const struct runner *rn)
{
	return rn->nFinished;
}

const char *runner_task_error(const struct runner *rn)
{
	return rn->pool ? pool_task_error(rn->pool) : NULL;
}

/* ---- what the runner runs ---- */

const struct task *runner_task(const struct runner *rn)
{
	return rn->task;
}

const char *runner_task_name(const struct runner *rn)
{
	return rn->zTaskName;
}

const char *runner_task_dir(const struct runner *rn)
{
	return rn->zTaskDir;
}

const char *runner_backend(const struct runner *rn)
{
	return rn->zBackend;
}

int runner_seeds(const struct runner *rn, char *const **paz)
{
	const struct task *t = rn->task;
	int cuda = !strcmp(rn->zBackend, "cuda");
	*paz = !t ? NULL : cuda ? t->seeds.azCuda : t->seeds.azHost;
	return !t ? 0 : cuda ? t->seeds.nCuda : t->seeds.nHost;
}

double runner_bandwidth_gbs(const struct runner *rn)
{
	return pool_bandwidth_gbs(rn->pool);
}

struct loop *runner_loop(const struct runner *rn)
{
	return rn->l;
}

struct session *runner_session(struct runner *rn)
{
	return rn->ses;
}

const char *runner_path(const struct runner *rn)
{
	return rn->ses->zPath;
}

int runner_saved(const struct runner *rn, FILE *f)
{
	return rn ? session_saved(rn->ses, f) : 0;
}

/* ---- the workers ---- */

int runner_workers(const struct runner *rn)
{
	return rn->pool ? pool_size(rn->pool) : 0;
}

int runner_worker(const struct runner *rn, int i, struct pool_info *pi)
{
	*pi = (struct pool_info){0};
	if (i < 0 || i >= runner_workers(rn))
		return 0;
	pool_info(rn->pool, i, pi);
	for (int k = 0; pi->job && k < rn->nJob; k++)
		if (rn->aJob[k].job == pi->job)
			return rn->aJob[k].cand;
	return 0;
}

int runner_baselines_pending(const struct runner *rn)
{
	if (!rn->pool || !pool_baselines_pending(rn->pool))
		return 0;
	int up = 0;
	for (int i = 0; i < pool_size(rn->pool); i++) {
		struct pool_info pi;
		pool_info(rn->pool, i, &pi);
		up |= pi.state == POOL_W_IDLE || pi.state == POOL_W_BUSY;
	}
	return up;
}
