/*
 * result.c - completing a worker's verdict with the task, the source, the
 * device and the baseline, so that every front end journals the same result.
 */
#include "result.h"

#include <math.h>
#include <string.h>

double result_num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

void result_complete(cJSON *r, struct worker *w, const char *zTask, const char *zSource,
		     const char *zBackend)
{
	const cJSON *rt = worker_reference_timing(w);
	double base = rt ? result_num(rt, "median_ms") : NAN;
	double t = result_num(cJSON_GetObjectItem(r, "timing"), "median_ms");
	const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(r, "status"));
	int ok = st && !strcmp(st, "correct");
	cJSON_DeleteItemFromObject(r, "worker_exiting");
	cJSON_AddStringToObject(r, "task", zTask);
	cJSON_AddStringToObject(r, "source", zSource);
	cJSON_AddStringToObject(r, "backend", zBackend);
	cJSON_AddStringToObject(r, "device", worker_device(w) ? worker_device(w) : "");
	if (ok && !isnan(t))
		cJSON_AddNumberToObject(r, "time_ms", t);
	else
		cJSON_AddNullToObject(r, "time_ms");
	if (!isnan(base))
		cJSON_AddNumberToObject(r, "baseline_ms", base);
	else
		cJSON_AddNullToObject(r, "baseline_ms");
	cJSON_AddStringToObject(r, "baseline", worker_reference_name(w) ? worker_reference_name(w) : "");
	if (ok && !isnan(t) && !isnan(base) && t > 0)
		cJSON_AddNumberToObject(r, "speedup", base / t);
	else
		cJSON_AddNullToObject(r, "speedup");
	const cJSON *cm = cJSON_GetObjectItem(worker_baselines(w), "compile");
	double bc = result_num(cm, "median_ms");
	if (!isnan(bc)) {
		cJSON_AddNumberToObject(r, "baseline_compile_ms", bc);
		if (ok && !isnan(t) && t > 0)
			cJSON_AddNumberToObject(r, "speedup_compile", bc / t);
	} else if (cm && cJSON_GetObjectItem(cm, "error")) {
		cJSON_AddStringToObject(r, "baseline_compile_error",
					cJSON_GetStringValue(cJSON_GetObjectItem(cm, "error")));
	}
	if (!cJSON_GetObjectItem(r, "reason"))
		cJSON_AddStringToObject(r, "reason", "");
	if (!cJSON_GetObjectItem(r, "correctness"))
		cJSON_AddItemToObject(r, "correctness", cJSON_CreateObject());
}
