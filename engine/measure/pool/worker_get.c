/*
 * worker_get.c - what a worker says of itself: its jobs, its task's state,
 * its reference and device as its hello and task_ready said (worker.h).
 */
#include "worker_priv.h"

int worker_pending(const struct worker *w)
{
	int n = 0;
	for (struct wjob *j = w->jobs; j; j = j->next)
		n++;
	return n;
}

int worker_ready(const struct worker *w)
{
	return w->ready;
}

const cJSON *worker_reference_timing(const struct worker *w)
{
	return w->refTiming;
}

const cJSON *worker_reference_data(const struct worker *w)
{
	return w->refData;
}

const cJSON *worker_baselines(const struct worker *w)
{
	return w->baselines;
}

const char *worker_reference_name(const struct worker *w)
{
	return w->zRefName;
}

double worker_bandwidth_gbs(const struct worker *w)
{
	return w->bandwidthGbs;
}

const char *worker_device(const struct worker *w)
{
	return w->zDevice;
}

const char *worker_task_error(const struct worker *w)
{
	return w->zTaskError;
}

const char *worker_sandbox_warning(const struct worker *w)
{
	return w->zSandboxWarning;
}

const char *worker_host(const struct worker *w)
{
	return w->zHost;
}

const char *worker_uuid(const struct worker *w)
{
	return w->zUuid;
}

int worker_pid(const struct worker *w)
{
	return w->pid;
}

int worker_disabled(const struct worker *w)
{
	return w->disabled;
}

int worker_starts(const struct worker *w)
{
	return w->starts;
}
