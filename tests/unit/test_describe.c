/*
 * test_describe.c - one description of a verdict (result_describe): its
 * facts in order, those that withhold a rank flagged, and the workbench's
 * Results, the LLM's prompt and `kloop eval` (through the same lines)
 * saying each fact in the same words; a compile stopped by its memory
 * limit, with a warning said 300 times, as the Results show it.
 */
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fverdict.h"
#include "describe.h"
#include "event.h"
#include "prompt.h"
#include "report.h"
#include "state.h"
#include "util.h"

#define MAXL 32
struct got {
	int n;
	char label[MAXL][16];
	char text[MAXL][400];
	int alarm[MAXL];
};

static void collect(void *arg, const char *zLabel, const char *zText, int alarm)
{
	struct got *g = arg;
	if (g->n == MAXL)
		return;
	snprintf(g->label[g->n], sizeof g->label[0], "%s", zLabel);
	snprintf(g->text[g->n], sizeof g->text[0], "%s", zText);
	g->alarm[g->n++] = alarm;
}

static int find(const struct got *g, const char *zLabel)
{
	for (int i = 0; i < g->n; i++)
		if (!strcmp(g->label[i], zLabel))
			return i;
	return -1;
}

/* a verdict with every fact, made as the worker makes one (fverdict.h):
 * resources, a check, reduced precision, a roofline with a suspect, an
 * unverified time (9x the reference's), state kept */
static cJSON *every_fact(void)
{
	cJSON *r = fv_make(&(struct fv){.median = 0.0005,
	                                .p10 = 0.0004,
	                                .p90 = 0.0006,
	                                .count = 40,
	                                .rse = 0.01,
	                                .converged = 1,
	                                .unverified = 1,
	                                .zClockBound = "its frames came late",
	                                .base = 0.0045});
	fv_detail(r, "compile",
	          "{\"ok\":true,\"log\":\"\",\"resources\":[{\"kernel\":\"rows\",\"registers\":32,"
	          "\"shared_bytes\":1024,\"stack_bytes\":0,\"spill_stores\":0,\"spill_loads\":0}],"
	          "\"vectorized\":[]}");
	fv_detail(r, "correctness",
	          "{\"trials\":5,\"trials_passed\":5,\"max_abs_error\":1e-7,\"rel_l2_error\":2e-7,"
	          "\"mismatches\":0}");
	fv_detail(r, "precision",
	          "{\"verdict\":\"reduced\",\"rel_l2\":4.7e-4,\"reference_rel_l2\":2.5e-8,"
	          "\"rounding_rel_l2\":1e-8,\"ratio\":18800,\"limit\":8,\"cause\":\"consistent "
	          "with TF32 or f16 inputs\"}");
	fv_detail(r, "roofline",
	          "{\"bytes\":1e6,\"bandwidth_gbs\":1000,\"memory_floor_ms\":0.001,"
	          "\"floor_ms\":0.001,\"bound\":\"memory\",\"fraction\":2,\"suspect\":\"0.0005 ms "
	          "is below the memory floor\"}");
	struct verdict v;
	verdict_decode(r, &v);
	v.zKeptState = "it kept state between calls";
	verdict_encode(r, &v, 0);
	return r;
}

/* the Results of candidate 1 with the verdict r, into t */
static void results_of(const cJSON *r, strbuf *t)
{
	struct state st;
	state_init(&st);
	char err[KL_ERRLEN];
	cJSON *ev = cJSON_Parse("{\"type\":\"candidate_added\",\"id\":1,\"source\":\"x\","
	                        "\"name\":\"a.cu\",\"origin\":\"human\",\"ts\":1}");
	state_apply(&st, ev, err);
	cJSON_Delete(ev);
	ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "type", "eval_finished");
	cJSON_AddNumberToObject(ev, "candidate", 1);
	cJSON_AddNumberToObject(ev, "ts", 2);
	cJSON_AddItemToObject(ev, "result", cJSON_Duplicate(r, 1));
	state_apply(&st, ev, err);
	cJSON_Delete(ev);
	report_results(&st, state_cand(&st, 1), t);
	state_free(&st);
}

/* a compile stopped by its memory limit after a warning said 300 times (a
 * verdict kept before the worker folded its log): the Results say the
 * limit, and the warning once with its count */
static void memory_limit_results(void)
{
	strbuf log = STRBUF_INIT;
	for (int i = 0; i < 300; i++)
		sb_addf(&log,
		        "cute/layout.hpp(%d): warning #20013-D: calling a constexpr __host__ "
		        "function from a __host__ __device__ function is not allowed\\n"
		        "      return sq(a);\\n             ^\\n\\n",
		        12 + i);
	sb_adds(&log, "nvcc error   : 'cicc' died due to signal 9 (Kill signal)\\n");
	char *j = xasprintf(
	    "{\"status\":\"compile_error\",\"reason\":\"the compile reached its memory limit of "
	    "8192 MiB (KLOOP_COMPILE_MEM_MB)\",\"compile\":{\"ok\":false,\"seconds\":40,"
	    "\"log\":\"%s\"}}",
	    log.buf);
	strbuf t = STRBUF_INIT;
	cJSON *r = cJSON_Parse(j);
	results_of(r, &t);
	cJSON_Delete(r);
	int ok = t.buf &&
	         strstr(t.buf, "          the compile reached its memory limit of 8192 MiB "
	                       "(KLOOP_COMPILE_MEM_MB)\n") &&
	         strstr(t.buf, "diagnostics\n  warning #20013-D: calling a constexpr __host__ "
	                       "function from a __host__ __device__ function is not allowed (300 "
	                       "times; first at cute/layout.hpp(12))\n") &&
	         strstr(t.buf, "  nvcc error   : 'cicc' died due to signal 9") &&
	         !strstr(t.buf, "more lines not shown");
	CHECK(ok, "Results: the memory limit as the reason, the warning said 300 times once%s%s",
	      ok ? "" : ":\n",
	      ok      ? ""
	      : t.buf ? t.buf
	              : "(nothing)");
	sb_free(&t);
	sb_free(&log);
	free(j);
}

int main(void)
{
	memory_limit_results();
	cJSON *r = every_fact();
	struct got g = {0};
	result_describe(r, RD_ALL, collect, &g);
	const char *order[] = {"kernel",  "vector", "checked",    "precision", "roofline",
	                       "suspect", "time",   "unverified", "warning"};
	int at = -1, inOrder = 1;
	for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
		int k = find(&g, order[i]);
		inOrder &= k > at;
		at = k;
	}
	CHECK(inOrder,
	      "every fact, in order: resources, check, precision, roofline, time, warnings");
	CHECK(
	    g.alarm[find(&g, "precision")] && g.alarm[find(&g, "suspect")] &&
	        g.alarm[find(&g, "unverified")] && !g.alarm[find(&g, "time")] &&
	        !g.alarm[find(&g, "checked")],
	    "reduced precision, a suspect and an unverified time withhold a rank; the rest do not");
	CHECK(strstr(g.text[find(&g, "unverified")], "its frames came late"),
	      "the unverified line says why (%s)", g.text[find(&g, "unverified")]);
	CHECK(!strcmp(g.text[find(&g, "vector")], "the host compiler vectorised no loop"),
	      "an empty vectorisation report says no loop was vectorised");

	/* the prompt says each fact as "label: text" */
	strbuf p = STRBUF_INIT;
	prompt_results(r, &p);
	int all = 1;
	for (int i = 0; i < g.n; i++) {
		char line[440];
		snprintf(line, sizeof line, "%s: %s\n", g.label[i], g.text[i]);
		all &= strstr(p.buf, line) != NULL;
	}
	CHECK(all, "the LLM's prompt has every fact in the same words");

	/* the workbench's Results: the same text after the label's column,
	 * capitals where a rank is withheld */
	strbuf t = STRBUF_INIT;
	results_of(r, &t);
	all = 1;
	for (int i = 0; i < g.n; i++) {
		char label[16], line[440];
		snprintf(label, sizeof label, "%s", g.label[i]);
		for (char *q = label; g.alarm[i] && *q; q++)
			*q = (char)(*q - 'a' + 'A');
		snprintf(line, sizeof line, "%-9s %s", label, g.text[i]);
		all &= strstr(t.buf, line) != NULL;
	}
	CHECK(all, "the workbench's Results have every fact in the same words");
	CHECK(strstr(t.buf, "\nPRECISION reduced precision: ") &&
	          strstr(t.buf, "\nUNVERIFIED its frames came late") &&
	          strstr(t.buf, "\nSUSPECT   0.0005 ms"),
	      "... with what withholds a rank in capitals");
	CHECK(
	    strstr(t.buf, "(never a parent, the best or a win: the precision policy is faithful)"),
	    "... and reduced precision says what the session's policy makes of it");
	sb_free(&t);
	sb_free(&p);
	cJSON_Delete(r);

	/* the checked timed runs' precision (issue 25): a faithful verdict says
	 * how many it covered, and checked runs that could not be judged say so */
	r = cJSON_Parse(
	    "{\"status\":\"correct\",\"precision\":{\"verdict\":\"faithful\",\"rel_l2\":"
	    "3e-8,\"reference_rel_l2\":2.5e-8,\"rounding_rel_l2\":2.5e-8,\"ratio\":1.2,"
	    "\"limit\":8,\"checked_runs\":[{\"run\":3,\"verdict\":\"faithful\"},{\"run\":"
	    "9,\"verdict\":\"faithful\"}],\"checked_runs_unjudged\":\"1 checked timed run not "
	    "judged: no checking set's float64 outputs fit in memory\"}}");
	g.n = 0;
	result_describe(r, RD_ALL, collect, &g);
	int ip = find(&g, "precision");
	CHECK(ip >= 0 && strstr(g.text[ip], "; faithful in the 2 checked timed runs too)") &&
	          strstr(g.text[ip], "); 1 checked timed run not judged: no checking set's") &&
	          !g.alarm[ip],
	      "a faithful verdict names the checked timed runs it covers, and those it could "
	      "not judge (%s)",
	      ip >= 0 ? g.text[ip] : "no precision line");
	cJSON_Delete(r);

	/* a CUDA candidate's target, with the device's compute capability and a note */
	r = cJSON_Parse("{\"status\":\"correct\",\"compile\":{\"ok\":true,\"target\":"
	                "\"sm_90\",\"device_cc\":\"9.0\",\"target_note\":\"KLOOP_CUDA_ARCH=sm_90 "
	                "leaves out sm_90a's own instructions\"}}");
	g.n = 0;
	result_describe(r, RD_ALL, collect, &g);
	int it = find(&g, "target");
	CHECK(it == 0 &&
	          !strcmp(g.text[it], "sm_90 for a device of compute capability 9.0; "
	                              "KLOOP_CUDA_ARCH=sm_90 leaves out sm_90a's own instructions"),
	      "the compile's facts open with the target, the device and the note (%s)",
	      it >= 0 ? g.text[it] : "no target line");
	cJSON_Delete(r);

	/* a result with nothing measured describes nothing */
	r = cJSON_Parse("{\"status\":\"compile_error\"}");
	g.n = 0;
	result_describe(r, RD_ALL, collect, &g);
	CHECK(g.n == 0, "a compile error has no measured facts (%d lines)", g.n);
	result_describe(NULL, RD_ALL, collect, &g);
	CHECK(g.n == 0, "nor does no result");
	cJSON_Delete(r);
	return check_done();
}
