/*
 * test_verdict.c - the typed verdict (verdict.h): a worker's result, made
 * whole by the engine's own constructor (result_complete_from), decodes
 * field by field into what every front end reads; a verdict without a
 * field says so (NAN, NULL, -1), never a zero that reads as a time; the
 * fold keeps each candidate's decoded verdict true to its result, also
 * after a torch.compile baseline or a profile changed it.
 */
#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "describe.h"
#include "event.h"
#include "result.h"
#include "state.h"
#include "util.h"
#include "verdict.h"

/* a worker's reply for a correct, timed candidate, with an A/B, a
 * precision verdict, a roofline and a compile report */
static cJSON *worker_reply(void)
{
	return cJSON_Parse(
	    "{\"status\": \"correct\", \"reason\": \"\", \"stage\": \"a/b\","
	    " \"code_hash\": \"abc123\","
	    " \"stages\": [{\"stage\": \"compile\", \"seconds\": 0.4},"
	    "              {\"stage\": \"check\", \"seconds\": 0.1},"
	    "              {\"stage\": \"a/b\", \"seconds\": 0.3}],"
	    " \"timing\": {\"median_ms\": 0.5, \"p10_ms\": 0.48, \"p90_ms\": 0.55, \"count\": 40,"
	    "   \"rse\": 0.004, \"converged\": true, \"verified\": false,"
	    "   \"clock_bound\": \"the batch took 0.2 ms a run\", \"method\": \"device-wide\","
	    "   \"throttled\": true, \"throttle_reason\": \"power cap\"},"
	    " \"precision\": {\"verdict\": \"reduced\", \"cause\": \"TF32 inputs\","
	    "   \"matches\": \"TF32 inputs\", \"rel_l2\": 0.0005},"
	    " \"roofline\": {\"fraction\": 0.62, \"suspect\": \"faster than HBM\"},"
	    " \"ab\": {\"incumbent_id\": 3, \"pairs\": 12, \"wins\": 11, \"ratio\": 1.4,"
	    "   \"won\": true, \"rule\": \"10 of 12 pairs\"},"
	    " \"compile\": {\"ok\": true, \"seconds\": 1.25, \"cached\": true,"
	    "   \"command\": \"nvcc -O3 c.cu\", \"log\": \"warning: x\","
	    "   \"resources\": [{\"kernel\": \"k\", \"registers\": 32}]},"
	    " \"worker\": {\"label\": \"gpu0\", \"host\": \"box\", \"device\": \"NVIDIA H200\"}}");
}

static void decode_whole(void)
{
	cJSON *r = worker_reply();
	cJSON *rt = cJSON_CreateObject();
	cJSON_AddNumberToObject(rt, "median_ms", 2.0);
	cJSON *bases = cJSON_Parse("{\"compile\": {\"median_ms\": 1.5}}");
	result_complete_from(r, rt, bases, NULL, "PyTorch eager", "NVIDIA H200", "softmax", "c.cu",
	                     "cuda");
	struct verdict v;
	verdict_decode(r, &v);
	CHECK(v.status == STATUS_CORRECT && !strcmp(v.zStatus, "correct") && !*v.zReason,
	      "status and reason (%s)", v.zStatus);
	CHECK(!strcmp(v.zTask, "softmax") && !strcmp(v.zSource, "c.cu") &&
	          !strcmp(v.zBackend, "cuda") && !strcmp(v.zDevice, "NVIDIA H200"),
	      "task, source, backend and device, as the engine completed them");
	CHECK(v.timeMs == 0.5 && v.baselineMs == 2.0 && fabs(v.speedup - 4.0) < 1e-12 &&
	          !strcmp(v.zBaseline, "PyTorch eager"),
	      "time, baseline and speedup (%g ms, %g ms, %gx)", v.timeMs, v.baselineMs, v.speedup);
	CHECK(v.baselineCompileMs == 1.5 && fabs(v.speedupCompile - 3.0) < 1e-12 &&
	          !v.zBaselineCompileError,
	      "torch.compile's baseline and the speedup over it (%g)", v.speedupCompile);
	CHECK(v.timing.present && v.timing.medianMs == 0.5 && v.timing.p10Ms == 0.48 &&
	          v.timing.p90Ms == 0.55 && v.timing.count == 40 && v.timing.converged,
	      "the timing: median, p10, p90, runs, converged");
	CHECK(v.timing.unverified && strstr(v.timing.zClockBound, "0.2 ms") &&
	          !strcmp(v.timing.zMethod, "device-wide") && v.timing.throttled &&
	          !strcmp(v.timing.zThrottleReason, "power cap"),
	      "unverified with why, the method, a throttled GPU with why");
	CHECK(v.precision.reduced && !strcmp(v.precision.zCause, "TF32 inputs") &&
	          !strcmp(v.precision.zMatches, "TF32 inputs"),
	      "reduced precision with its cause");
	CHECK(v.roofline.present && v.roofline.fraction == 0.62 &&
	          !strcmp(v.roofline.zSuspect, "faster than HBM"),
	      "the roofline's fraction and a suspect time");
	CHECK(v.ab.present && v.ab.incumbent == 3 && v.ab.pairs == 12 && v.ab.wins == 11 &&
	          v.ab.ratio == 1.4 && v.ab.won && !strcmp(v.ab.zRule, "10 of 12 pairs"),
	      "the A/B: against #3, 11 of 12 pairs, 1.4x, won");
	CHECK(v.comp.present && v.comp.ok && v.comp.cached && v.comp.seconds == 1.25 &&
	          !strcmp(v.comp.zCommand, "nvcc -O3 c.cu") &&
	          cJSON_GetArraySize(v.comp.resources) == 1,
	      "the compile: ok, cached, 1.25 s, its command and one kernel's resources");
	CHECK(!strcmp(v.zWorker, "gpu0") && !strcmp(v.zWorkerHost, "box") &&
	          !strcmp(v.zWorkerDevice, "NVIDIA H200") && !strcmp(v.zCodeHash, "abc123"),
	      "the pool's worker and the machine code's hash");
	CHECK(!strcmp(v.zStage, "a/b") && !strcmp(verdict_stage(&v, 0), "compile") &&
	          !strcmp(verdict_stage(&v, 2), "a/b") && !verdict_stage(&v, 3),
	      "the stage it ended at and the stages it went through");
	CHECK(verdict_timed(&v), "a correct verdict with a median is timed");
	cJSON_Delete(r);
	cJSON_Delete(rt);
	cJSON_Delete(bases);
}

static void decode_missing(void)
{
	struct verdict v;
	verdict_decode(NULL, &v);
	CHECK(v.status == STATUS_NEW && !*v.zStatus && !*v.zReason,
	      "no result: a new candidate's verdict, with empty words");
	cJSON *r = cJSON_Parse("{\"status\": \"incorrect\", \"reason\": \"output y differs\"}");
	cJSON *rt = cJSON_CreateObject();
	cJSON_AddNumberToObject(rt, "median_ms", 2.0);
	result_complete_from(r, rt, NULL, NULL, "ref.c", "", "softmax", "c.c", "host");
	verdict_decode(r, &v);
	CHECK(v.status == STATUS_INCORRECT && !strcmp(v.zReason, "output y differs"),
	      "an incorrect verdict and its reason");
	CHECK(isnan(v.timeMs) && isnan(v.speedup) && v.baselineMs == 2.0,
	      "no time and no speedup (NAN, not 0), the baseline still said");
	CHECK(!v.timing.present && isnan(v.timing.p10Ms) && v.timing.count < 0 &&
	          !v.timing.unverified && !verdict_timed(&v),
	      "no timing: NAN percentiles, no count, not unverified, not timed");
	CHECK(!v.precision.zClass && !v.precision.reduced && !v.roofline.present &&
	          isnan(v.roofline.fraction) && !v.roofline.zSuspect,
	      "no precision verdict, no roofline");
	CHECK(!v.ab.present && v.ab.incumbent < 0 && v.ab.pairs < 0 && !v.sameCodeAs &&
	          !v.zNotTimed && !v.zWorker && !v.comp.present && !*v.comp.zCommand,
	      "no A/B, not a copy, no worker, no compile");
	cJSON_Delete(r);
	cJSON_Delete(rt);
}

/* an event into the state, checked */
static void apply(struct state *st, const char *zJson)
{
	char err[KL_ERRLEN] = "";
	cJSON *ev = cJSON_Parse(zJson);
	int rc = ev ? state_apply(st, ev, err) : -1;
	CHECK(rc == 0, "event applied: %.60s (%s)", zJson, rc ? err : "ok");
	cJSON_Delete(ev);
}

static void fold(void)
{
	struct state st;
	state_init(&st);
	apply(&st, "{\"type\": \"session_started\", \"ts\": 1, \"task\": \"softmax\","
	           " \"backend\": \"cuda\"}");
	apply(&st, "{\"type\": \"candidate_added\", \"ts\": 1, \"id\": 1, \"name\": \"a.cu\","
	           " \"origin\": \"seed\", \"source\": \"x\"}");
	const struct cand *c = state_cand(&st, 1);
	CHECK(c && c->v.status == STATUS_NEW && c->v.zStatus && isnan(c->v.timing.medianMs),
	      "a candidate not yet evaluated has a decoded, empty verdict");
	apply(&st, "{\"type\": \"eval_finished\", \"ts\": 2, \"candidate\": 1, \"result\":"
	           " {\"status\": \"correct\", \"reason\": \"\", \"device\": \"H200\","
	           "  \"time_ms\": 0.5, \"baseline_ms\": 1.0, \"speedup\": 2.0,"
	           "  \"baseline\": \"ref\", \"timing\": {\"median_ms\": 0.5, \"p10_ms\": 0.45,"
	           "  \"p90_ms\": 0.6}, \"not_timed\": \"same machine code as #9\","
	           "  \"same_code_as\": 9}}");
	c = state_cand(&st, 1);
	CHECK(c->v.status == STATUS_CORRECT && c->timeMs == 0.5 && c->speedup == 2.0 &&
	          c->v.timing.p10Ms == 0.45 && c->v.sameCodeAs == 9 && c->v.zNotTimed,
	      "the fold decodes the verdict: time %g, speedup %g, p10 %g, a copy of #%d", c->timeMs,
	      c->speedup, c->v.timing.p10Ms, c->v.sameCodeAs);
	apply(&st, "{\"type\": \"compile_baseline\", \"ts\": 3, \"device\": \"H200\","
	           " \"compile\": {\"median_ms\": 0.75}}");
	c = state_cand(&st, 1);
	CHECK(c->v.baselineCompileMs == 0.75 && fabs(c->v.speedupCompile - 1.5) < 1e-12,
	      "torch.compile's baseline, come later, is in the decoded verdict too (%gx)",
	      c->v.speedupCompile);
	apply(&st, "{\"type\": \"profile\", \"ts\": 4, \"candidate\": 1,"
	           " \"profile\": {\"kernels\": []}}");
	c = state_cand(&st, 1);
	CHECK(c->v.profile && c->v.timing.medianMs == 0.5 && c->v.baselineCompileMs == 0.75,
	      "a profile joins the decoded verdict and keeps the rest");
	cJSON *j = state_cand_json(c);
	char *z = cJSON_PrintUnformatted(j);
	CHECK(strstr(z, "\"not_timed\":\"same machine code as #9\"") &&
	          strstr(z, "\"same_code_as\":9") && strstr(z, "\"speedup_compile\":1.5"),
	      "the candidate's JSON says it is a copy and its torch.compile speedup: %s", z);
	free(z);
	cJSON_Delete(j);
	state_free(&st);
}

int main(void)
{
	decode_whole();
	decode_missing();
	fold();
	return check_done();
}
