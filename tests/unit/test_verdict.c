/*
 * test_verdict.c - the typed verdict (verdict.h): a worker's result, made
 * whole by the engine's own constructor (result_complete_from), decodes
 * field by field into what every front end reads; a verdict without a
 * field says so (NAN, NULL, -1), never a zero that reads as a time; the
 * fold keeps each candidate's decoded verdict true to its result, also
 * after a torch.compile baseline or a profile changed it.  The encoder
 * (verdict_encode) is its inverse: every typed field written comes back
 * decoded as it was, a field made none goes, and the keys it does not type
 * (a newer kloop's) stay as they were.
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
	    " \"compile\": {\"ok\": true, \"seconds\": 1.25, \"cached\": true, \"device_only\": "
	    "true,"
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
	CHECK(v.comp.present && v.comp.ok && v.comp.cached && v.comp.deviceOnly &&
	          v.comp.seconds == 1.25 && !strcmp(v.comp.zCommand, "nvcc -O3 c.cu") &&
	          cJSON_GetArraySize(v.comp.resources) == 1,
	      "the compile: ok, cached, its device code only, 1.25 s, its command and one "
	      "kernel's resources");
	struct verdict_compile vc = {.present = 1, .sideBySide = 1};
	const char *side = verdict_compile_how(&vc);
	vc.deviceOnly = 1;
	const char *kept = verdict_compile_how(&vc);
	vc.prefixKept = 1;
	const char *keptPre = verdict_compile_how(&vc);
	vc.noLink = 1;
	const char *noLinkPre = verdict_compile_how(&vc);
	vc.prefixKept = 0;
	const char *noLink = verdict_compile_how(&vc);
	vc.cached = 1;
	CHECK(strstr(side, "side by side") && strstr(kept, "the host object kept") &&
	          !strstr(kept, "#include") &&
	          strstr(keptPre, "the host object and its #includes' "
	                          "preprocessing kept") &&
	          strstr(noLink, "no link") && !strstr(noLink, "#include") &&
	          strstr(noLinkPre, "#includes' preprocessing kept") &&
	          strstr(noLinkPre, "no link") && !strcmp(verdict_compile_how(&vc), " (cached)"),
	      "how it compiled, in words: whole with nvcc's halves side by side (%s), device "
	      "code only into the kept host object (%s; %s), or into the kept shared object (%s; "
	      "%s), or cached",
	      side, kept, keptPre, noLink, noLinkPre);
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

static int same_s(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static int same_n(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

static int same_j(const cJSON *a, const cJSON *b)
{
	return a == b || (a && b && cJSON_Compare(a, b, 1));
}

/* the first typed field in which a and b differ, or NULL: every field of
 * struct verdict, its timing and the detail objects' typed views (the
 * timing's JSON aside: its typed fields are what the encoder writes) */
static const char *differs(const struct verdict *a, const struct verdict *b)
{
#define S(f)                                                                                       \
	if (!same_s(a->f, b->f))                                                                   \
		return #f;
#define N(f)                                                                                       \
	if (!same_n(a->f, b->f))                                                                   \
		return #f;
#define I(f)                                                                                       \
	if (a->f != b->f)                                                                          \
		return #f;
#define J(f)                                                                                       \
	if (!same_j(a->f, b->f))                                                                   \
		return #f;
	I(status) S(zStatus) S(zReason) S(zStage) S(zTask) S(zSource) S(zBackend) S(zDevice);
	S(zWorker) S(zWorkerDevice) S(zWorkerHost) S(zCodeHash);
	N(timeMs) N(speedup) N(baselineMs) N(baselineMeasuredMs) S(zBaseline);
	N(baselineCompileMs) N(speedupCompile) S(zBaselineCompileError);
	S(zNotTimed) I(sameCodeAs) S(zKeptState) S(zStderrTail) S(zRerunAbandoned);
	I(timing.present) N(timing.medianMs) N(timing.p10Ms) N(timing.p90Ms) I(timing.count);
	N(timing.rse) I(timing.converged) I(timing.unverified) S(timing.zClockBound);
	S(timing.zBound) S(timing.zMethod) S(timing.zClockNote) I(timing.throttled);
	I(timing.throttleRead);
	S(timing.zThrottleReason) I(timing.stopped) S(timing.zStopped);
	N(timing.smClockMhzAfter);
	S(precision.zClass) I(precision.reduced) S(precision.zCause) S(precision.zWhy);
	S(precision.zMatches);
	I(roofline.present) N(roofline.fraction) S(roofline.zSuspect);
	I(ab.present) I(ab.incumbent) I(ab.pairs) I(ab.wins) N(ab.ratio) I(ab.won);
	S(ab.zError) S(ab.zRule);
	I(comp.present)
	N(comp.seconds)
	I(comp.cached) I(comp.deviceOnly) I(comp.noLink) I(comp.sideBySide) I(comp.prefixKept);
	I(comp.ok);
	S(comp.zCommand) S(comp.zLog);
	J(comp.resources);
	N(refData.seconds) I(refData.trials) S(refData.zNote) J(refData.setup);
	J(compile) J(correctness) J(precisionJson) J(rooflineJson) J(referenceData) J(profile);
	J(form) J(stages) J(abJson);
#undef S
#undef N
#undef I
#undef J
	return NULL;
}

/* v written into an empty result and read back: the field it lost, or
 * NULL; twice, with its timing's JSON and with its typed fields alone (what
 * the encoder writes of a timing, not what a copy carries) */
static const char *round_trip(const struct verdict *v)
{
	static char lost[64];
	for (int alone = 0; alone < 2; alone++) {
		struct verdict w = *v, back;
		if (alone)
			w.timingJson = NULL;
		cJSON *r = cJSON_CreateObject();
		verdict_encode(r, &w, 0);
		verdict_decode(r, &back);
		const char *z = differs(&w, &back);
		snprintf(lost, sizeof lost, "%s%s", z ? z : "", alone ? " (typed alone)" : "");
		cJSON_Delete(r);
		if (z)
			return lost;
	}
	return NULL;
}

/* a verdict the engine completed, with every typed field given a value
 * none of them has by default: encoded into an empty result, every one
 * comes back (a field the encoder drops fails here, by name) */
static void encode_round_trip(void)
{
	cJSON *r = worker_reply();
	cJSON *rt = cJSON_CreateObject();
	cJSON_AddNumberToObject(rt, "median_ms", 2.0);
	cJSON *bases = cJSON_Parse("{\"compile\": {\"median_ms\": 1.5}}");
	cJSON *refData = cJSON_Parse("{\"seconds\": 0.8, \"trials\": 2, \"note\": \"drawn\","
	                             " \"setup\": {\"seconds\": 3}}");
	result_complete_from(r, rt, bases, refData, "PyTorch eager", "NVIDIA H200", "softmax",
	                     "c.cu", "cuda");
	struct verdict v;
	verdict_decode(r, &v);
	const char *z = round_trip(&v);
	CHECK(!z, "a completed verdict, encoded and decoded again, is the same (lost: %s)",
	      z ? z : "nothing");
	v.baselineMeasuredMs = 2.5;
	v.zBaselineCompileError = "torch.compile failed";
	v.zNotTimed = "same machine code as #4, not timed again";
	v.sameCodeAs = 4;
	v.zKeptState = "it keeps state";
	v.zStderrTail = "segfault at 0x0";
	v.zRerunAbandoned = "the session ended twice";
	v.timing.zBound = "cpu";
	v.timing.zClockNote = "kloop's own clock";
	v.timing.stopped = 1;
	v.timing.zStopped = "stopped after the quick timing";
	v.timing.smClockMhzAfter = 1755;
	v.timing.rse = 0.25;
	z = round_trip(&v);
	CHECK(!z, "every typed field set, encoded and decoded again, is the same (lost: %s)",
	      z ? z : "nothing");
	/* an A/B's typed fields, every one set, come back from its encoder */
	struct verdict_ab a = {.incumbent = 3,
	                       .pairs = 12,
	                       .wins = 11,
	                       .ratio = 1.4,
	                       .won = 1,
	                       .zError = "the incumbent crashed",
	                       .zRule = "sign test"},
	                  ab2;
	cJSON *abo = cJSON_CreateObject();
	verdict_ab_encode(abo, &a, 0);
	verdict_ab_decode(abo, &ab2);
	CHECK(ab2.present && ab2.incumbent == 3 && ab2.pairs == 12 && ab2.wins == 11 &&
	          ab2.ratio == 1.4 && ab2.won && !strcmp(ab2.zError, "the incumbent crashed") &&
	          !strcmp(ab2.zRule, "sign test"),
	      "an A/B encoded and decoded again is the same");
	cJSON_Delete(abo);
	/* each field, set alone on a verdict of nothing, comes back */
	struct verdict e;
	verdict_decode(NULL, &e);
	e.status = STATUS_TIMEOUT;
	e.zStatus = "stale";
	cJSON *o = cJSON_CreateObject();
	verdict_encode(o, &e, 0);
	struct verdict back;
	verdict_decode(o, &back);
	CHECK(back.status == STATUS_TIMEOUT && !strcmp(back.zStatus, "timeout"),
	      "a status set in the struct is written by its name (%s)", back.zStatus);
	cJSON_Delete(o);
	cJSON_Delete(r);
	cJSON_Delete(rt);
	cJSON_Delete(bases);
	cJSON_Delete(refData);
}

/* the encoder writes only what changed: a newer kloop's keys, the untyped
 * ones and the keys' order stay; a field made none goes (time_ms, speedup
 * and baseline_ms: null, as a completed verdict says them) */
static void encode_keeps(void)
{
	cJSON *r = worker_reply();
	cJSON_AddItemToObject(r, "from_a_newer_kloop", cJSON_Parse("{\"x\": [1, 2]}"));
	cJSON *rt = cJSON_CreateObject();
	cJSON_AddNumberToObject(rt, "median_ms", 2.0);
	result_complete_from(r, rt, NULL, NULL, "ref", "H200", "softmax", "c.cu", "cuda");
	char *z0 = cJSON_PrintUnformatted(r);
	struct verdict v;
	verdict_decode(r, &v);
	verdict_encode(r, &v, 0);
	char *z1 = cJSON_PrintUnformatted(r);
	CHECK(!strcmp(z0, z1), "a verdict encoded unchanged leaves its JSON as it was: %s", z1);
	free(z1);
	verdict_decode(r, &v);
	v.zReason = "a reason";
	v.zNotTimed = "same machine code as #2, not timed again";
	v.sameCodeAs = 2;
	v.timeMs = NAN;
	v.zCodeHash = NULL;
	v.timing.count = 41;
	verdict_encode(r, &v, 0);
	struct verdict back;
	verdict_decode(r, &back);
	const char *lost = differs(&v, &back);
	CHECK(!lost, "the fields changed are what decodes (differs: %s)", lost ? lost : "none");
	const cJSON *nk = cJSON_GetObjectItem(r, "from_a_newer_kloop");
	CHECK(nk && cJSON_GetArraySize(cJSON_GetObjectItem(nk, "x")) == 2,
	      "a newer kloop's key survives the encoder");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(r, "time_ms")) &&
	          !cJSON_GetObjectItem(r, "code_hash") &&
	          cJSON_GetObjectItem(r, "same_code_as")->valueint == 2,
	      "a time made none is null, a hash made none is gone, a copy says whose");
	z1 = cJSON_PrintUnformatted(r);
	CHECK(strstr(z1, "\"status\":\"correct\",\"reason\":\"a reason\",\"stage\":\"a/b\""),
	      "a key written again keeps its place: %.80s", z1);
	free(z0);
	free(z1);
	/* a failure the engine completed: null time, speedup and baseline,
	 * "" for what it lacks, as the journal has always said them */
	cJSON *f = verdict_new(STATUS_CRASHED, "killed by SIGSEGV");
	result_complete_from(f, NULL, NULL, NULL, NULL, NULL, "softmax", "c.cu", "cuda");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(f, "time_ms")) &&
	          cJSON_IsNull(cJSON_GetObjectItem(f, "speedup")) &&
	          cJSON_IsNull(cJSON_GetObjectItem(f, "baseline_ms")) &&
	          !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "baseline")), "") &&
	          !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "device")), ""),
	      "a completed failure has its time, speedup and baseline as null");
	verdict_decode(f, &v);
	lost = round_trip(&v);
	CHECK(v.status == STATUS_CRASHED && !strcmp(v.zReason, "killed by SIGSEGV") && !lost,
	      "verdict_new's failure round-trips (lost: %s)", lost ? lost : "nothing");
	cJSON *cm = cJSON_Parse("{\"error\": \"no GPU\"}");
	CHECK(result_add_compile(f, cm, "") == 0, "torch.compile's error, given later, is taken");
	verdict_decode(f, &v);
	lost = round_trip(&v);
	CHECK(v.zBaselineCompileError && !strcmp(v.zBaselineCompileError, "no GPU") && !lost,
	      "and encoded: it decodes and round-trips (lost: %s)", lost ? lost : "nothing");
	cJSON_Delete(cm);
	cJSON_Delete(f);
	cJSON_Delete(r);
	cJSON_Delete(rt);
}

int main(void)
{
	decode_whole();
	decode_missing();
	fold();
	encode_round_trip();
	encode_keeps();
	return check_done();
}
