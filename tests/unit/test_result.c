/*
 * test_result.c - a verdict completed with the BLAS baselines of a GEMM task
 * (result_complete_from, result_library_lines): each library's time and the
 * candidate's speedup over it, a library PyTorch could not choose said with
 * its reason, none for a task without them or a candidate without a time;
 * a candidate timed by its kernels' durations against a baseline timed by
 * events: its speedups divide its events' median (never less than its
 * time), against a baseline timed by durations too its time.
 */
#include <cJSON.h>
#include <math.h>
#include <string.h>

#include "check.h"
#include "json.h"
#include "result.h"
#include "util.h"

/* what torchref.py's time_baselines() returns for an fp16 GEMM on a GPU */
static const char *BASELINES =
    "{\"eager\": {\"median_ms\": 0.25},"
    " \"libraries\": {"
    "  \"cublas\": {\"median_ms\": 0.26, \"library\": \"cuBLAS (cublasGemmEx)\"},"
    "  \"cublaslt\": {\"median_ms\": 0.25, \"library\": \"cuBLASLt, its heuristic's choice\"},"
    "  \"cublaslt_autotuned\": {\"error\": \"this PyTorch (2.1.0) has no TunableOp\","
    "   \"library\": \"cuBLASLt autotuned\"}}}";

static cJSON *verdict(const char *zStatus, double ms)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "status", zStatus);
	cJSON *t = cJSON_AddObjectToObject(r, "timing");
	cJSON_AddNumberToObject(t, "median_ms", ms);
	return r;
}

/* a correct verdict timed by zMethod at ms, its profiled runs' events'
 * median beside it, completed against the reference's timing rt */
static cJSON *completed(const char *zMethod, double ms, double eventsMs, const cJSON *rt,
                        const cJSON *bases)
{
	cJSON *r = verdict("correct", ms), *t = cJSON_GetObjectItem(r, "timing");
	cJSON_AddStringToObject(t, "method", zMethod);
	cJSON *p = cJSON_AddObjectToObject(t, "profiled");
	cJSON_AddNumberToObject(p, "events_median_ms", eventsMs);
	result_complete_from(r, rt, bases, NULL, "PyTorch eager", "H200", "softmax", "c.cu",
	                     "cuda");
	return r;
}

int main(void)
{
	cJSON *bases = cJSON_Parse(BASELINES), *rt = cJSON_GetObjectItem(bases, "eager");
	cJSON *r = verdict("correct", 0.2);
	result_complete_from(r, rt, bases, NULL, "PyTorch eager", "H200", "hgemm", "c.cu", "cuda");
	const cJSON *lb = cJSON_GetObjectItem(r, "library_baselines");
	CHECK(cJSON_GetArraySize(lb) == 3, "each library is in the verdict (%d)",
	      cJSON_GetArraySize(lb));
	const cJSON *l0 = cJSON_GetArrayItem(lb, 0), *l2 = cJSON_GetArrayItem(lb, 2);
	CHECK(!strcmp(json_str(l0, "key", ""), "cublas") &&
	          fabs(json_num(l0, "speedup", 0) - 1.3) < 1e-9,
	      "the speedup over cuBLAS is its time over the candidate's (0.26 / 0.2 = %g)",
	      json_num(l0, "speedup", 0));
	CHECK(json_num(l2, "median_ms", -1) < 0 && strstr(json_str(l2, "error", ""), "TunableOp"),
	      "a library PyTorch could not time carries the reason, no time");
	strbuf sb = STRBUF_INIT;
	result_library_lines(r, "  ", &sb);
	CHECK(strstr(sb.buf, "  baseline  cuBLAS (cublasGemmEx) 0.26 ms, speedup 1.3x\n") &&
	          strstr(sb.buf, "  baseline  cuBLASLt, its heuristic's choice 0.25 ms, "
	                         "speedup 1.25x\n") &&
	          strstr(sb.buf, "  baseline  cuBLASLt autotuned: this PyTorch (2.1.0) has no "
	                         "TunableOp\n"),
	      "one line a library, as kloop eval and the Results print it:\n%s", sb.buf);
	sb_free(&sb);
	cJSON_Delete(r);

	/* an incorrect candidate has no speedup over any of them */
	r = verdict("incorrect", 0.1);
	result_complete_from(r, rt, bases, NULL, "PyTorch eager", "H200", "hgemm", "c.cu", "cuda");
	l0 = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "library_baselines"), 0);
	CHECK(json_num(l0, "median_ms", 0) == 0.26 && !cJSON_GetObjectItem(l0, "speedup"),
	      "an incorrect candidate gets the libraries' times and no speedup over them");
	cJSON_Delete(r);

	/* a task that reaches no GEMM has no "libraries": nothing is added */
	cJSON_DeleteItemFromObject(bases, "libraries");
	r = verdict("correct", 0.2);
	result_complete_from(r, rt, bases, NULL, "PyTorch eager", "H200", "softmax", "c.cu",
	                     "cuda");
	sb = (strbuf)STRBUF_INIT;
	result_library_lines(r, "", &sb);
	CHECK(!cJSON_GetObjectItem(r, "library_baselines") && sb.len == 0,
	      "a task without BLAS baselines gets none, and no line");
	sb_free(&sb);
	cJSON_Delete(r);

	/* times taken one way in every ratio: a candidate whose profiled runs
	 * stood (5 us of kernels, 6.6 us of events) against PyTorch's eager
	 * baseline, events around the model's call */
	cJSON *eager = cJSON_Parse("{\"median_ms\": 0.0132}");
	r = completed("kernel durations", 0.0050, 0.0066, eager, bases);
	CHECK(json_num(r, "time_ms", 0) == 0.0050 && json_num(r, "speedup_time_ms", 0) == 0.0066 &&
	          fabs(json_num(r, "speedup", 0) - 2.0) < 1e-9,
	      "kernel durations against events: the time is the kernels' (%g ms), the speedup "
	      "divides the events' median (%g ms): %gx, not %gx",
	      json_num(r, "time_ms", 0), json_num(r, "speedup_time_ms", 0),
	      json_num(r, "speedup", 0), 0.0132 / 0.0050);
	cJSON_Delete(r);
	/* the speedup divides the time itself: durations that stood for being
	 * longer than the events (the longer), durations on both sides (a
	 * kernel reference profiled too), events on both sides (a timing of
	 * 0.07 ms or more) */
	cJSON *ref = cJSON_Parse("{\"median_ms\": 0.0100, \"method\": \"kernel durations\"}");
	static const struct {
		const char *zMethod, *zWhat;
		double ms, eventsMs;
		int kernelRef;
		double want;
	} own[] = {
	    {"kernel durations", "kernels longer than the events: the longer time", 0.0080, 0.0066,
	     0, 0.0132 / 0.008},
	    {"kernel durations", "durations against durations", 0.0050, 0.0066, 1, 2.0},
	    {"stream", "events against events", 0.0066, 0.0066, 0, 2.0},
	};
	for (size_t i = 0; i < sizeof own / sizeof *own; i++) {
		r = completed(own[i].zMethod, own[i].ms, own[i].eventsMs,
		              own[i].kernelRef ? ref : eager, bases);
		CHECK(!cJSON_GetObjectItem(r, "speedup_time_ms") &&
		          fabs(json_num(r, "speedup", 0) - own[i].want) < 1e-9,
		      "%s: the speedup divides the time (%gx, want %gx; speedup_time_ms %g)",
		      own[i].zWhat, json_num(r, "speedup", 0), own[i].want,
		      json_num(r, "speedup_time_ms", -1));
		cJSON_Delete(r);
	}
	cJSON_Delete(ref);
	cJSON_Delete(eager);
	cJSON_Delete(bases);
	return check_done();
}
