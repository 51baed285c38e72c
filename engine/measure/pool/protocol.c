/*
 * protocol.c - every line between the engine and a kloop-worker, encoded
 * and decoded (protocol.h).
 */
#include "protocol.h"

#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "json.h"
#include "util.h"

static const char *const opNames[] = {
    [PROTO_OP_TASK] = "task",     [PROTO_OP_EVAL] = "eval", [PROTO_OP_MEASURED] = "measured",
    [PROTO_OP_CANCEL] = "cancel", [PROTO_OP_QUIT] = "quit",
};

static const char *const evNames[] = {
    [PROTO_EV_HELLO] = "hello",
    [PROTO_EV_TASK_READY] = "task_ready",
    [PROTO_EV_BASELINES] = "baselines",
    [PROTO_EV_PROGRESS] = "progress",
    [PROTO_EV_RESULT] = "result",
    [PROTO_EV_CAND_SIGNAL] = "candidate_signal",
    [PROTO_EV_CAND_EXIT] = "candidate_exit",
    [PROTO_EV_ERROR] = "error",
};

#define N(a) ((int)(sizeof a / sizeof *a))

/* ---- small helpers ---- */

static void put_str(cJSON *o, const char *k, const char *z)
{
	if (z)
		cJSON_AddStringToObject(o, k, z);
}

static void put_pos(cJSON *o, const char *k, double v)
{
	if (v > 0)
		cJSON_AddNumberToObject(o, k, v);
}

static void put_dup(cJSON *o, const char *k, const cJSON *v)
{
	if (v)
		cJSON_AddItemToObject(o, k, cJSON_Duplicate(v, 1));
}

static const char *str(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
}

static cJSON *op(enum proto_op e)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "op", opNames[e]);
	return o;
}

/* ---- requests ---- */

const char *protocol_op_name(const cJSON *msg)
{
	return str(msg, "op");
}

enum proto_op protocol_op(const cJSON *msg)
{
	const char *z = protocol_op_name(msg);
	if (!z)
		return PROTO_OP_NONE;
	for (int i = 0; i < N(opNames); i++)
		if (!strcmp(z, opNames[i]))
			return (enum proto_op)i;
	return PROTO_OP_UNKNOWN;
}

static char *dup_or_null(const char *z)
{
	return z ? xstrdup(z) : NULL;
}

void eval_request_defaults(struct eval_request *rq)
{
	memset(rq, 0, sizeof *rq);
	rq->quickRuns = PROTO_QUICK_RUNS;
	rq->abPairs = HARNESS_AB_PAIRS;
}

struct eval_request eval_request_copy(const struct eval_request *rq)
{
	struct eval_request c = *rq;
	c.zName = dup_or_null(rq->zName);
	c.zSource = rq->zSource ? xstrndup(rq->zSource, rq->nSource) : NULL;
	c.inc.zName = dup_or_null(rq->inc.zName);
	c.inc.zSource = dup_or_null(rq->inc.zSource);
	c.inc.zMethod = dup_or_null(rq->inc.zMethod);
	return c;
}

void eval_request_free(struct eval_request *rq)
{
	free((char *)rq->zName);
	free((char *)rq->zSource);
	free((char *)rq->inc.zName);
	free((char *)rq->inc.zSource);
	free((char *)rq->inc.zMethod);
	memset(rq, 0, sizeof *rq);
}

cJSON *protocol_eval(const struct eval_request *rq)
{
	cJSON *o = op(PROTO_OP_EVAL);
	cJSON_AddNumberToObject(o, "job", rq->job);
	cJSON_AddStringToObject(o, "name", rq->zName);
	char *src = xstrndup(rq->zSource ? rq->zSource : "", rq->nSource);
	cJSON_AddItemToObject(o, "source", cJSON_CreateString(src));
	free(src);
	put_pos(o, "quick_runs", rq->quickRuns);
	put_pos(o, "quick_stop_x", rq->quickStopX);
	put_pos(o, "baseline_ms", rq->baselineMs);
	put_pos(o, "ab_pairs", rq->abPairs);
	if (rq->inc.zSource) {
		cJSON *i = cJSON_AddObjectToObject(o, "incumbent");
		cJSON_AddNumberToObject(i, "id", rq->inc.id);
		cJSON_AddStringToObject(i, "name", rq->inc.zName ? rq->inc.zName : "");
		cJSON_AddStringToObject(i, "source", rq->inc.zSource);
		cJSON_AddNumberToObject(i, "median_ms",
		                        rq->inc.medianMs > 0 ? rq->inc.medianMs : 0);
		put_str(i, "method", rq->inc.zMethod);
		if (rq->abForce)
			cJSON_AddBoolToObject(o, "ab_force", 1);
	}
	return o;
}

int protocol_eval_decode(const cJSON *msg, struct eval_request *rq, char *err)
{
	eval_request_defaults(rq);
	rq->job = json_int(msg, "job", -1);
	const cJSON *src = cJSON_GetObjectItem(msg, "source");
	rq->zName = str(msg, "name");
	if (rq->job < 0 || !cJSON_IsString(src) || !rq->zName)
		return kl_err(err, "eval request needs job, name and source");
	rq->zSource = src->valuestring;
	rq->nSource = strlen(src->valuestring);
	rq->quickRuns = json_int(msg, "quick_runs", PROTO_QUICK_RUNS);
	rq->quickStopX = json_num(msg, "quick_stop_x", 0);
	rq->baselineMs = json_num(msg, "baseline_ms", 0);
	rq->abPairs = json_int(msg, "ab_pairs", HARNESS_AB_PAIRS);
	rq->abForce = cJSON_IsTrue(cJSON_GetObjectItem(msg, "ab_force"));
	const cJSON *inc = cJSON_GetObjectItem(msg, "incumbent");
	if (inc) {
		rq->inc.id = json_int(inc, "id", -1);
		rq->inc.zName = str(inc, "name");
		rq->inc.zSource = str(inc, "source");
		rq->inc.medianMs = json_num(inc, "median_ms", 0);
		rq->inc.zMethod = str(inc, "method");
		if (!rq->inc.zSource || !rq->inc.zName)
			return kl_err(err, "eval request: incumbent needs name and source");
	}
	return 0;
}

cJSON *protocol_task(const struct proto_task *t)
{
	cJSON *o = op(PROTO_OP_TASK);
	cJSON_AddStringToObject(o, "dir", t->zDir);
	put_dup(o, "files", t->files);
	put_str(o, "shapes", t->zShapes);
	put_str(o, "reference", t->zReference);
	put_pos(o, "trials", t->nTrials);
	put_pos(o, "budget_s", t->budgetS);
	cJSON_AddNumberToObject(o, "run_timeout_s", t->runTimeoutS);
	if (t->atol >= 0)
		cJSON_AddNumberToObject(o, "atol", t->atol);
	if (t->rtol >= 0)
		cJSON_AddNumberToObject(o, "rtol", t->rtol);
	put_pos(o, "size", t->size);
	put_str(o, "libs", t->zLibs);
	cJSON_AddBoolToObject(o, "time_reference", t->timeReference);
	if (t->deferCompile)
		cJSON_AddBoolToObject(o, "defer_compile", 1);
	return o;
}

int protocol_task_decode(const cJSON *msg, struct proto_task *t, char *err)
{
	memset(t, 0, sizeof *t);
	t->zDir = str(msg, "dir");
	t->files = cJSON_GetObjectItem(msg, "files");
	t->zShapes = str(msg, "shapes");
	t->zReference = str(msg, "reference");
	t->zLibs = str(msg, "libs");
	t->nTrials = json_int(msg, "trials", -1);
	t->budgetS = json_num(msg, "budget_s", -1);
	t->rse = json_num(msg, "rse", -1);
	t->bSeed = cJSON_IsNumber(cJSON_GetObjectItem(msg, "seed"));
	double seed = json_num(msg, "seed", 0);
	t->seed = seed > 0 && seed < 18446744073709551616.0 ? (unsigned long long)seed : 0;
	t->runTimeoutS = json_num(msg, "run_timeout_s", 0);
	t->atol = json_num(msg, "atol", -1);
	t->rtol = json_num(msg, "rtol", -1);
	t->size = json_num(msg, "size", 0);
	t->timeReference = cJSON_IsTrue(cJSON_GetObjectItem(msg, "time_reference"));
	t->deferCompile = cJSON_IsTrue(cJSON_GetObjectItem(msg, "defer_compile"));
	return t->zDir ? 0 : kl_err(err, "task request without \"dir\"");
}

cJSON *protocol_measured(const char *zDevice, const char *zCode, const char *zLabel,
                         const cJSON *timing)
{
	cJSON *o = op(PROTO_OP_MEASURED);
	cJSON_AddStringToObject(o, "device", zDevice);
	cJSON_AddStringToObject(o, "code_hash", zCode);
	cJSON_AddStringToObject(o, "label", zLabel);
	cJSON_AddItemToObject(o, "timing", cJSON_Duplicate(timing, 1));
	return o;
}

int protocol_measured_decode(const cJSON *msg, const char **pzDevice, const char **pzCode,
                             const char **pzLabel, const cJSON **pTiming, char *err)
{
	*pzDevice = str(msg, "device");
	*pzCode = str(msg, "code_hash");
	*pzLabel = str(msg, "label");
	*pTiming = cJSON_GetObjectItem(msg, "timing");
	if (!*pzDevice || !*pzCode || strlen(*pzCode) != 64 || !*pzLabel ||
	    !cJSON_IsObject(*pTiming))
		return kl_err(
		    err, "measured request needs device, label, timing and a 64-digit code_hash");
	return 0;
}

cJSON *protocol_cancel(int job)
{
	cJSON *o = op(PROTO_OP_CANCEL);
	cJSON_AddNumberToObject(o, "job", job);
	return o;
}

int protocol_cancel_job(const cJSON *msg)
{
	return json_int(msg, "job", -1);
}

/* ---- events ---- */

cJSON *protocol_event(enum proto_ev e, int job)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "ev", evNames[e]);
	if (job >= 0)
		cJSON_AddNumberToObject(o, "job", job);
	return o;
}

enum proto_ev protocol_event_of(const cJSON *msg, int *pJob)
{
	const cJSON *jid = cJSON_GetObjectItem(msg, "job");
	*pJob = cJSON_IsNumber(jid) ? jid->valueint : -1;
	const char *z = str(msg, "ev");
	if (!z)
		return PROTO_EV_NONE;
	for (int i = 0; i < N(evNames); i++)
		if (!strcmp(z, evNames[i]))
			return (enum proto_ev)i;
	return PROTO_EV_UNKNOWN;
}

cJSON *protocol_hello(const struct proto_hello *h)
{
	cJSON *o = protocol_event(PROTO_EV_HELLO, -1);
	put_str(o, "backend", h->zBackend);
	put_str(o, "device", h->zDevice);
	put_str(o, "arch", h->zArch);
	cJSON_AddNumberToObject(o, "pid", h->pid);
	put_str(o, "version", h->zVersion);
	put_str(o, "uuid", h->zUuid);
	put_pos(o, "bandwidth_gbs", h->bandwidthGbs);
	put_pos(o, "measured_bandwidth_gbs", h->measuredBandwidthGbs);
	put_pos(o, "peak_tflops", h->peakTflops);
	put_pos(o, "measured_peak_tflops", h->measuredPeakTflops);
	put_str(o, "host", h->zHost);
	put_str(o, "sandbox_warning", h->zSandboxWarning);
	put_str(o, "sandbox", h->zSandbox);
	put_str(o, "spare_runner", h->zSpareRunner);
	if (h->nSpares > 0)
		cJSON_AddNumberToObject(o, "spares", h->nSpares);
	return o;
}

void protocol_hello_decode(const cJSON *msg, struct proto_hello *h)
{
	memset(h, 0, sizeof *h);
	h->zBackend = str(msg, "backend");
	h->zDevice = str(msg, "device");
	h->zArch = str(msg, "arch");
	h->pid = json_int(msg, "pid", 0);
	h->zVersion = str(msg, "version");
	h->zUuid = str(msg, "uuid");
	h->bandwidthGbs = json_num(msg, "bandwidth_gbs", 0);
	h->measuredBandwidthGbs = json_num(msg, "measured_bandwidth_gbs", 0);
	h->peakTflops = json_num(msg, "peak_tflops", 0);
	h->measuredPeakTflops = json_num(msg, "measured_peak_tflops", 0);
	h->zHost = str(msg, "host");
	h->zSandboxWarning = str(msg, "sandbox_warning");
	h->zSandbox = str(msg, "sandbox");
	h->zSpareRunner = str(msg, "spare_runner");
	h->nSpares = json_int(msg, "spares", 0);
}

cJSON *protocol_progress(int job, const char *zStage, int k)
{
	cJSON *o = protocol_event(PROTO_EV_PROGRESS, job);
	cJSON_AddStringToObject(o, "stage", zStage);
	if (k >= 0)
		cJSON_AddNumberToObject(o, "k", k);
	return o;
}

cJSON *protocol_compiled(int job, int ok, int cached, double seconds)
{
	cJSON *o = protocol_event(PROTO_EV_PROGRESS, job);
	cJSON_AddStringToObject(o, "stage", "compiled");
	cJSON_AddBoolToObject(o, "ok", ok);
	cJSON_AddBoolToObject(o, "cached", cached);
	cJSON_AddNumberToObject(o, "seconds", seconds);
	return o;
}

const char *protocol_progress_decode(const cJSON *msg, int *pK)
{
	const cJSON *k = cJSON_GetObjectItem(msg, "k");
	*pK = cJSON_IsNumber(k) ? k->valueint : -1;
	return str(msg, "stage");
}

cJSON *protocol_error(int job, const char *zMsg, int fatal)
{
	cJSON *o = protocol_event(PROTO_EV_ERROR, job);
	cJSON_AddStringToObject(o, "message", zMsg);
	cJSON_AddBoolToObject(o, "fatal", fatal);
	return o;
}

const char *protocol_error_decode(const cJSON *msg, int *pFatal)
{
	*pFatal = cJSON_IsTrue(cJSON_GetObjectItem(msg, "fatal"));
	return str(msg, "message");
}

void protocol_cand_ended_decode(const cJSON *msg, int *pCode, const char **pzName)
{
	const cJSON *st = cJSON_GetObjectItem(msg, "status");
	if (!st)
		st = cJSON_GetObjectItem(msg, "signal");
	*pCode = cJSON_IsNumber(st) ? st->valueint : -1;
	*pzName = str(msg, "name");
}

cJSON *protocol_ready(const struct proto_ready *r)
{
	cJSON *o = protocol_event(PROTO_EV_TASK_READY, -1);
	put_str(o, "precision", r->zPrecision);
	put_dup(o, "reference_timing", r->refTiming);
	put_dup(o, "baselines", r->baselines);
	put_str(o, "reference", r->zReference);
	put_str(o, "task", r->zTask);
	if (r->nTrials >= 0)
		cJSON_AddNumberToObject(o, "trials", r->nTrials);
	if (r->refSeconds >= 0)
		cJSON_AddNumberToObject(o, "reference_seconds", r->refSeconds);
	put_str(o, "note", r->zNote);
	put_str(o, "small_shapes", r->zSmallShapes);
	put_str(o, "small_shapes_note", r->zSmallNote);
	put_dup(o, "sizes", r->sizes);
	put_dup(o, "setup", r->setup);
	return o;
}

void protocol_ready_decode(const cJSON *msg, struct proto_ready *r)
{
	memset(r, 0, sizeof *r);
	r->zPrecision = str(msg, "precision");
	r->refTiming = cJSON_GetObjectItem(msg, "reference_timing");
	r->baselines = cJSON_GetObjectItem(msg, "baselines");
	r->zReference = str(msg, "reference");
	r->zTask = str(msg, "task");
	r->nTrials = json_int(msg, "trials", -1);
	r->refSeconds = json_num(msg, "reference_seconds", -1);
	r->zNote = str(msg, "note");
	r->zSmallShapes = str(msg, "small_shapes");
	r->zSmallNote = str(msg, "small_shapes_note");
	r->sizes = cJSON_GetObjectItem(msg, "sizes");
	r->setup = cJSON_GetObjectItem(msg, "setup");
}

cJSON *protocol_baselines(const cJSON *baselines, double seconds, double timingS)
{
	cJSON *o = protocol_event(PROTO_EV_BASELINES, -1);
	cJSON_AddItemToObject(o, "baselines", cJSON_Duplicate(baselines, 1));
	cJSON_AddNumberToObject(o, "seconds", seconds);
	cJSON_AddNumberToObject(o, "timing_seconds", timingS);
	return o;
}

const cJSON *protocol_baselines_decode(const cJSON *msg, double *pSeconds)
{
	*pSeconds = json_num(msg, "seconds", -1);
	return cJSON_GetObjectItem(msg, "baselines");
}

cJSON *protocol_result_of(const cJSON *msg)
{
	cJSON *r = cJSON_Duplicate(msg, 1);
	cJSON_DeleteItemFromObject(r, "ev");
	cJSON_DeleteItemFromObject(r, "job");
	return r;
}
