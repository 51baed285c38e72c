/*
 * verdict.c - a verdict's JSON decoded into its struct (verdict.h): the
 * one place its keys are read by name.
 */
#include "verdict.h"

#include <math.h>
#include <string.h>

#include "json.h"

static const char *str_or(const cJSON *o, const char *k, const char *zDefault)
{
	const char *z = cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
	return z ? z : zDefault;
}

static double num(const cJSON *o, const char *k)
{
	return json_num(o, k, NAN);
}

static int count(const cJSON *o, const char *k)
{
	const cJSON *n = cJSON_GetObjectItem(o, k);
	return cJSON_IsNumber(n) ? n->valueint : -1;
}

void verdict_timing_decode(const cJSON *tm, struct verdict_timing *t)
{
	t->present = cJSON_IsObject(tm);
	t->medianMs = num(tm, "median_ms");
	t->p10Ms = num(tm, "p10_ms");
	t->p90Ms = num(tm, "p90_ms");
	t->count = count(tm, "count");
	t->rse = num(tm, "rse");
	t->converged = cJSON_IsTrue(cJSON_GetObjectItem(tm, "converged"));
	t->unverified = cJSON_IsFalse(cJSON_GetObjectItem(tm, "verified"));
	t->zClockBound = str_or(tm, "clock_bound", NULL);
	t->zBound = str_or(tm, "bound", NULL);
	t->zMethod = str_or(tm, "method", NULL);
	t->zClockNote = str_or(tm, "clock_note", NULL);
	t->throttled = cJSON_IsTrue(cJSON_GetObjectItem(tm, "throttled"));
	t->zThrottleReason = str_or(tm, "throttle_reason", NULL);
	t->stopped = cJSON_GetObjectItem(tm, "stopped") != NULL;
	t->zStopped = str_or(tm, "stopped", "");
	t->smClockMhzAfter = num(tm, "sm_clock_mhz_after");
}

static void ab(const cJSON *o, struct verdict_ab *a)
{
	a->present = o != NULL;
	a->incumbent = count(o, "incumbent_id");
	a->pairs = count(o, "pairs");
	a->wins = count(o, "wins");
	a->ratio = num(o, "ratio");
	a->won = cJSON_IsTrue(cJSON_GetObjectItem(o, "won"));
	a->zError = str_or(o, "error", NULL);
	a->zRule = str_or(o, "rule", "");
}

void verdict_decode(const cJSON *r, struct verdict *v)
{
	memset(v, 0, sizeof *v);
	v->zStatus = str_or(r, "status", "");
	v->status = r ? status_from_name(v->zStatus) : STATUS_NEW;
	v->zReason = str_or(r, "reason", "");
	v->zStage = str_or(r, "stage", NULL);
	v->zTask = str_or(r, "task", "");
	v->zSource = str_or(r, "source", "");
	v->zBackend = str_or(r, "backend", "");
	v->zDevice = str_or(r, "device", NULL);
	const cJSON *wk = cJSON_GetObjectItem(r, "worker");
	v->zWorker = str_or(wk, "label", NULL);
	v->zWorkerDevice = str_or(wk, "device", NULL);
	v->zWorkerHost = str_or(wk, "host", NULL);
	v->zCodeHash = str_or(r, "code_hash", NULL);
	v->timeMs = num(r, "time_ms");
	v->speedup = num(r, "speedup");
	v->baselineMs = num(r, "baseline_ms");
	v->baselineMeasuredMs = num(r, "baseline_measured_ms");
	v->zBaseline = str_or(r, "baseline", "");
	v->baselineCompileMs = num(r, "baseline_compile_ms");
	v->speedupCompile = num(r, "speedup_compile");
	v->zBaselineCompileError = str_or(r, "baseline_compile_error", NULL);
	v->zNotTimed = str_or(r, "not_timed", NULL);
	v->sameCodeAs = count(r, "same_code_as");
	if (v->sameCodeAs < 0)
		v->sameCodeAs = 0;
	v->zKeptState = str_or(r, "kept_state", NULL);
	if (v->zKeptState && !*v->zKeptState)
		v->zKeptState = NULL;
	v->zStderrTail = str_or(r, "stderr_tail", NULL);
	v->zRerunAbandoned = str_or(r, "rerun_abandoned", NULL);
	v->timingJson = cJSON_GetObjectItem(r, "timing");
	verdict_timing_decode(v->timingJson, &v->timing);
	const cJSON *p = cJSON_GetObjectItem(r, "precision");
	v->precisionJson = p;
	v->precision.zClass = str_or(p, "verdict", NULL);
	v->precision.reduced = v->precision.zClass && !strcmp(v->precision.zClass, "reduced");
	v->precision.zCause = str_or(p, "cause", NULL);
	v->precision.zWhy = str_or(p, "why", NULL);
	v->precision.zMatches = str_or(p, "matches", NULL);
	const cJSON *roof = cJSON_GetObjectItem(r, "roofline");
	v->rooflineJson = roof;
	v->roofline.present = cJSON_IsObject(roof);
	v->roofline.fraction = num(roof, "fraction");
	v->roofline.zSuspect = str_or(roof, "suspect", NULL);
	v->abJson = cJSON_GetObjectItem(r, "ab");
	ab(v->abJson, &v->ab);
	v->compile = cJSON_GetObjectItem(r, "compile");
	v->comp.present = v->compile != NULL;
	v->comp.seconds = num(v->compile, "seconds");
	v->comp.cached = cJSON_IsTrue(cJSON_GetObjectItem(v->compile, "cached"));
	v->comp.ok = cJSON_IsTrue(cJSON_GetObjectItem(v->compile, "ok"));
	v->comp.zCommand = str_or(v->compile, "command", "");
	v->comp.zLog = str_or(v->compile, "log", "");
	v->comp.resources = cJSON_GetObjectItem(v->compile, "resources");
	v->correctness = cJSON_GetObjectItem(r, "correctness");
	v->referenceData = cJSON_GetObjectItem(r, "reference_data");
	v->refData.seconds = num(v->referenceData, "seconds");
	v->refData.trials = count(v->referenceData, "trials");
	v->refData.zNote = str_or(v->referenceData, "note", NULL);
	v->refData.setup = cJSON_GetObjectItem(v->referenceData, "setup");
	v->profile = cJSON_GetObjectItem(r, "profile");
	v->form = cJSON_GetObjectItem(r, "candidate_form");
	v->stages = cJSON_GetObjectItem(r, "stages");
}

const char *verdict_stage(const struct verdict *v, int i)
{
	const cJSON *s = cJSON_GetArrayItem(v->stages, i);
	return s ? str_or(s, "stage", "") : NULL;
}

int verdict_timed(const struct verdict *v)
{
	return v->status == STATUS_CORRECT && v->timing.present && !isnan(v->timing.medianMs);
}
