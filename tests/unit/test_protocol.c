/*
 * test_protocol.c - the worker protocol (protocol.h) round trip: every
 * message the engine or a kloop-worker encodes is written as the line that
 * crosses the pipe, parsed back and decoded, and each field compared with
 * what was encoded (a field an encoder writes and the decoder drops, the
 * A/B's pairs of an eval request for one, fails here).  What a decoder
 * fills in for a field left out is checked too: the defaults.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "protocol.h"
#include "util.h"

/* msg as the pipe carries it: one line of text, parsed again (caller
 * frees); msg is freed */
static cJSON *wire(cJSON *msg)
{
	char *z = json_text(msg, 0);
	cJSON_Delete(msg);
	CHECK(z && !strchr(z, '\n'), "the message is one line (%.80s)", z ? z : "(none)");
	cJSON *o = cJSON_Parse(z);
	free(z);
	return o;
}

/* z for a message on one line: control characters as \n, \t, ...; cut at
 * 150 characters (four at a time are valid) */
static const char *show(const char *z)
{
	static char buf[4][160];
	static int k;
	if (!z)
		return "(null)";
	char *b = buf[k++ % 4], *p = b;
	for (; *z && p < b + 150; z++)
		if ((unsigned char)*z < ' ')
			p += sprintf(p, "\\x%02x", (unsigned char)*z);
		else
			*p++ = *z;
	*p = 0;
	return b;
}

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* a string field: sent as a, decoded as b */
#define STR_IS(what, a, b) CHECK(same_str(a, b), "%s: %s (sent %s)", what, show(b), show(a))
/* a number field */
#define NUM_IS(what, a, b) CHECK((a) == (b), "%s: %g (sent %g)", what, (double)(b), (double)(a))

/* a JSON field: the same value */
static void json_is(const char *zWhat, const cJSON *a, const cJSON *b)
{
	char *za = a ? json_text(a, 0) : NULL, *zb = b ? json_text(b, 0) : NULL;
	CHECK(a && b && cJSON_Compare(a, b, 1), "%s: %s (sent %s)", zWhat, show(zb), show(za));
	free(za);
	free(zb);
}

static void test_eval(void)
{
	char err[KL_ERRLEN] = "";
	const char *src = "__global__ void k(){}\n/* \"quoted\" \\ and a tab\t */";
	struct eval_request rq;
	eval_request_defaults(&rq);
	rq.job = 7;
	rq.zName = "cand7.cu";
	rq.zSource = src;
	rq.nSource = strlen(src);
	rq.quickRuns = 9;
	rq.quickStopX = 2.5;
	rq.baselineMs = 1.25;
	rq.abPairs = 33;
	rq.abForce = 1;
	rq.inc.id = 4;
	rq.inc.zName = "cand4.cu";
	rq.inc.zSource = "incumbent source";
	rq.inc.medianMs = 0.75;
	rq.inc.zMethod = "device-wide";
	cJSON *msg = wire(protocol_eval(&rq));
	CHECK(protocol_op(msg) == PROTO_OP_EVAL, "eval: its op (got %s)",
	      show(protocol_op_name(msg)));
	struct eval_request d;
	int rc = protocol_eval_decode(msg, &d, err);
	CHECK(rc == 0, "eval: decoded (%s)", rc ? err : "ok");
	NUM_IS("eval: job", rq.job, d.job);
	STR_IS("eval: name", rq.zName, d.zName);
	STR_IS("eval: source", rq.zSource, d.zSource);
	NUM_IS("eval: the source's length", rq.nSource, d.nSource);
	NUM_IS("eval: quick_runs", rq.quickRuns, d.quickRuns);
	NUM_IS("eval: quick_stop_x", rq.quickStopX, d.quickStopX);
	NUM_IS("eval: baseline_ms", rq.baselineMs, d.baselineMs);
	NUM_IS("eval: ab_pairs", rq.abPairs, d.abPairs);
	NUM_IS("eval: ab_force", rq.abForce, d.abForce);
	NUM_IS("eval: incumbent id", rq.inc.id, d.inc.id);
	STR_IS("eval: incumbent name", rq.inc.zName, d.inc.zName);
	STR_IS("eval: incumbent source", rq.inc.zSource, d.inc.zSource);
	NUM_IS("eval: incumbent median_ms", rq.inc.medianMs, d.inc.medianMs);
	STR_IS("eval: incumbent method", rq.inc.zMethod, d.inc.zMethod);
	/* a copy is the same request, its strings its own */
	struct eval_request cp = eval_request_copy(&d);
	CHECK(cp.zSource != d.zSource && same_str(cp.zSource, src) && cp.abPairs == 33 &&
	          same_str(cp.inc.zMethod, "device-wide") && cp.inc.zSource != d.inc.zSource,
	      "eval_request_copy: the same fields, strings copied (ab_pairs %d, source %.20s)",
	      cp.abPairs, show(cp.zSource));
	eval_request_free(&cp);
	cJSON_Delete(msg);

	/* nothing asked: the defaults, and no incumbent */
	eval_request_defaults(&rq);
	rq.job = 1;
	rq.zName = "a.c";
	rq.zSource = "int x;";
	rq.nSource = 6;
	msg = wire(protocol_eval(&rq));
	rc = protocol_eval_decode(msg, &d, err);
	CHECK(rc == 0 && d.quickRuns == PROTO_QUICK_RUNS && d.abPairs == HARNESS_AB_PAIRS &&
	          d.quickStopX == 0 && d.baselineMs == 0 && !d.abForce && !d.inc.zSource &&
	          d.inc.id == 0,
	      "eval, nothing asked: the defaults (quick_runs %d, ab_pairs %d, quick_stop_x %g, "
	      "baseline_ms %g, ab_force %d, incumbent %s)",
	      d.quickRuns, d.abPairs, d.quickStopX, d.baselineMs, d.abForce, show(d.inc.zSource));
	cJSON_Delete(msg);
	/* ab_force rides with an incumbent only */
	rq.abForce = 1;
	msg = wire(protocol_eval(&rq));
	rc = protocol_eval_decode(msg, &d, err);
	CHECK(rc == 0 && !d.abForce, "eval: ab_force without an incumbent is not sent (got %d)",
	      d.abForce);
	cJSON_Delete(msg);

	/* what is refused, and said */
	msg = cJSON_Parse("{\"op\":\"eval\",\"name\":\"a.c\",\"source\":\"x\"}");
	rc = protocol_eval_decode(msg, &d, err);
	CHECK(rc < 0 && strstr(err, "job, name and source"), "eval without a job: refused (%s)",
	      rc < 0 ? err : "taken");
	cJSON_Delete(msg);
	msg = cJSON_Parse("{\"op\":\"eval\",\"job\":1,\"name\":\"a.c\",\"source\":\"x\","
	                  "\"incumbent\":{\"id\":2,\"name\":\"b.c\"}}");
	rc = protocol_eval_decode(msg, &d, err);
	CHECK(rc < 0 && strstr(err, "incumbent needs name and source"),
	      "an incumbent without its source: refused (%s)", rc < 0 ? err : "taken");
	cJSON_Delete(msg);
}

static void test_task(void)
{
	char err[KL_ERRLEN] = "";
	cJSON *files = cJSON_CreateObject();
	cJSON_AddStringToObject(files, "task.json", "{\"name\": \"softmax\"}");
	cJSON_AddStringToObject(files, "reference.c", "void kl_run(void){}");
	struct proto_task t = {
	    .zDir = "/tmp/softmax",
	    .files = files,
	    .zShapes = "small",
	    .zReference = "torch",
	    .zLibs = "cublas",
	    .nTrials = 3,
	    .budgetS = 0.5,
	    .runTimeoutS = 9,
	    .atol = 1e-3,
	    .rtol = 2e-3,
	    .size = 2,
	    .timeReference = 1,
	    .deferCompile = 1,
	};
	cJSON *msg = wire(protocol_task(&t));
	CHECK(protocol_op(msg) == PROTO_OP_TASK, "task: its op (got %s)",
	      show(protocol_op_name(msg)));
	struct proto_task d;
	int rc = protocol_task_decode(msg, &d, err);
	CHECK(rc == 0, "task: decoded (%s)", rc ? err : "ok");
	STR_IS("task: dir", t.zDir, d.zDir);
	json_is("task: files", t.files, d.files);
	STR_IS("task: shapes", t.zShapes, d.zShapes);
	STR_IS("task: reference", t.zReference, d.zReference);
	STR_IS("task: libs", t.zLibs, d.zLibs);
	NUM_IS("task: trials", t.nTrials, d.nTrials);
	NUM_IS("task: budget_s", t.budgetS, d.budgetS);
	NUM_IS("task: run_timeout_s", t.runTimeoutS, d.runTimeoutS);
	NUM_IS("task: atol", t.atol, d.atol);
	NUM_IS("task: rtol", t.rtol, d.rtol);
	NUM_IS("task: size", t.size, d.size);
	NUM_IS("task: time_reference", t.timeReference, d.timeReference);
	NUM_IS("task: defer_compile", t.deferCompile, d.deferCompile);
	CHECK(d.rse == -1 && !d.bSeed, "task: rse and seed are never sent (rse %g, seed given %d)",
	      d.rse, d.bSeed);
	cJSON_Delete(msg);
	cJSON_Delete(files);

	/* the defaults: what is not sent comes back as "the task's" */
	struct proto_task t0 = {.zDir = "d", .nTrials = -1, .budgetS = -1, .atol = -1, .rtol = -1};
	msg = wire(protocol_task(&t0));
	rc = protocol_task_decode(msg, &d, err);
	CHECK(rc == 0 && d.nTrials == -1 && d.budgetS == -1 && d.atol == -1 && d.rtol == -1 &&
	          d.size == 0 && !d.files && !d.zShapes && !d.zReference && !d.zLibs &&
	          !d.timeReference && !d.deferCompile,
	      "task, nothing asked: the defaults (trials %d, budget_s %g, atol %g, rtol %g, size "
	      "%g, files %p)",
	      d.nTrials, d.budgetS, d.atol, d.rtol, d.size, (const void *)d.files);
	cJSON_Delete(msg);
	/* rse and seed: read where a line carries them */
	msg = cJSON_Parse("{\"op\":\"task\",\"dir\":\"d\",\"rse\":0.02,\"seed\":42}");
	rc = protocol_task_decode(msg, &d, err);
	CHECK(rc == 0 && d.rse == 0.02 && d.bSeed && d.seed == 42,
	      "task with rse and seed: read (rse %g, seed given %d, seed %llu)", d.rse, d.bSeed,
	      d.seed);
	cJSON_Delete(msg);
	msg = cJSON_Parse("{\"op\":\"task\"}");
	rc = protocol_task_decode(msg, &d, err);
	CHECK(rc < 0 && strstr(err, "without \"dir\""), "a task without a dir: refused (%s)",
	      rc < 0 ? err : "taken");
	cJSON_Delete(msg);
}

static void test_small_requests(void)
{
	char err[KL_ERRLEN] = "";
	const char *code = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	cJSON *tm = cJSON_Parse("{\"median_ms\":1.5,\"p10_ms\":1.4,\"p90_ms\":1.6}");
	cJSON *msg = wire(protocol_measured("H200", code, "seed.cu", tm));
	const char *dev = NULL, *c = NULL, *lab = NULL;
	const cJSON *t = NULL;
	int rc = protocol_measured_decode(msg, &dev, &c, &lab, &t, err);
	CHECK(protocol_op(msg) == PROTO_OP_MEASURED && rc == 0, "measured: its op, decoded (%s)",
	      rc ? err : "ok");
	STR_IS("measured: device", "H200", dev);
	STR_IS("measured: code_hash", code, c);
	STR_IS("measured: label", "seed.cu", lab);
	json_is("measured: timing", tm, t);
	cJSON_Delete(msg);
	msg = wire(protocol_measured("H200", "abc", "seed.cu", tm));
	rc = protocol_measured_decode(msg, &dev, &c, &lab, &t, err);
	CHECK(rc < 0 && strstr(err, "64-digit code_hash"),
	      "measured with a short code hash: refused (%s)", rc < 0 ? err : "taken");
	cJSON_Delete(msg);
	cJSON_Delete(tm);

	msg = wire(protocol_cancel(12));
	CHECK(protocol_op(msg) == PROTO_OP_CANCEL && protocol_cancel_job(msg) == 12,
	      "cancel: its op and job (got %s, %d)", show(protocol_op_name(msg)),
	      protocol_cancel_job(msg));
	cJSON_Delete(msg);

	/* quit has no encoder (a worker exits when its stdin closes): read */
	static const struct {
		const char *zLine;
		enum proto_op op;
	} ops[] = {
	    {"{\"op\":\"quit\"}", PROTO_OP_QUIT},
	    {"{\"op\":\"dance\"}", PROTO_OP_UNKNOWN},
	    {"{\"ev\":\"hello\"}", PROTO_OP_NONE},
	    {"{\"op\":3}", PROTO_OP_NONE},
	};
	for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
		msg = cJSON_Parse(ops[i].zLine);
		CHECK(protocol_op(msg) == ops[i].op, "%s: op %d (got %d)", ops[i].zLine, ops[i].op,
		      protocol_op(msg));
		cJSON_Delete(msg);
	}
}

static void test_hello(void)
{
	struct proto_hello h = {
	    .zBackend = "cuda",
	    .zDevice = "NVIDIA H200",
	    .zArch = "sm_90",
	    .zVersion = "0.9",
	    .zUuid = "GPU-1234",
	    .zHost = "node7",
	    .pid = 4321,
	    .bandwidthGbs = 4800,
	    .measuredBandwidthGbs = 4100,
	    .peakTflops = 66.9,
	    .measuredPeakTflops = 60.5,
	    .zSandboxWarning = "no bubblewrap",
	    .zSandbox = "none",
	    .zSpareRunner = "one ahead",
	    .nSpares = 2,
	};
	cJSON *msg = wire(protocol_hello(&h));
	int job;
	CHECK(protocol_event_of(msg, &job) == PROTO_EV_HELLO && job == -1,
	      "hello: its event, no job (got %d)", job);
	struct proto_hello d;
	protocol_hello_decode(msg, &d);
	STR_IS("hello: backend", h.zBackend, d.zBackend);
	STR_IS("hello: device", h.zDevice, d.zDevice);
	STR_IS("hello: arch", h.zArch, d.zArch);
	STR_IS("hello: version", h.zVersion, d.zVersion);
	STR_IS("hello: uuid", h.zUuid, d.zUuid);
	STR_IS("hello: host", h.zHost, d.zHost);
	NUM_IS("hello: pid", h.pid, d.pid);
	NUM_IS("hello: bandwidth_gbs", h.bandwidthGbs, d.bandwidthGbs);
	NUM_IS("hello: measured_bandwidth_gbs", h.measuredBandwidthGbs, d.measuredBandwidthGbs);
	NUM_IS("hello: peak_tflops", h.peakTflops, d.peakTflops);
	NUM_IS("hello: measured_peak_tflops", h.measuredPeakTflops, d.measuredPeakTflops);
	STR_IS("hello: sandbox_warning", h.zSandboxWarning, d.zSandboxWarning);
	STR_IS("hello: sandbox", h.zSandbox, d.zSandbox);
	STR_IS("hello: spare_runner", h.zSpareRunner, d.zSpareRunner);
	NUM_IS("hello: spares", h.nSpares, d.nSpares);
	cJSON_Delete(msg);
	/* what is not said comes back as not said */
	struct proto_hello h0 = {.pid = 1};
	msg = wire(protocol_hello(&h0));
	protocol_hello_decode(msg, &d);
	CHECK(!d.zBackend && !d.zDevice && !d.zUuid && d.bandwidthGbs == 0 && d.nSpares == 0 &&
	          !d.zSandbox,
	      "hello, nothing said: nothing decoded (backend %s, bandwidth %g, spares %d)",
	      show(d.zBackend), d.bandwidthGbs, d.nSpares);
	cJSON_Delete(msg);
}

static void test_job_events(void)
{
	int job, k, fatal;
	cJSON *msg = wire(protocol_progress(5, "timing", 17));
	enum proto_ev e = protocol_event_of(msg, &job);
	const char *st = protocol_progress_decode(msg, &k);
	CHECK(e == PROTO_EV_PROGRESS && job == 5 && same_str(st, "timing") && k == 17,
	      "progress: job 5, stage timing, k 17 (got %d, job %d, %s, %d)", e, job, show(st), k);
	cJSON_Delete(msg);
	msg = wire(protocol_progress(5, "compiling", -1));
	st = protocol_progress_decode(msg, &k);
	CHECK(same_str(st, "compiling") && k == -1, "progress without k: -1 (got %s, %d)", show(st),
	      k);
	cJSON_Delete(msg);
	msg = wire(protocol_compiled(6, 1, 1, 2.5));
	e = protocol_event_of(msg, &job);
	st = protocol_progress_decode(msg, &k);
	CHECK(e == PROTO_EV_PROGRESS && job == 6 && same_str(st, "compiled") && k == -1,
	      "compiled: a progress of job 6 at stage compiled (got %d, job %d, %s, %d)", e, job,
	      show(st), k);
	cJSON_Delete(msg);

	msg = wire(protocol_error(8, "out of memory", 1));
	const char *m = protocol_error_decode(msg, &fatal);
	e = protocol_event_of(msg, &job);
	CHECK(e == PROTO_EV_ERROR && job == 8 && same_str(m, "out of memory") && fatal == 1,
	      "error: job 8, its message, fatal (got %d, job %d, %s, fatal %d)", e, job, show(m),
	      fatal);
	cJSON_Delete(msg);
	msg = wire(protocol_error(-1, "bad line", 0));
	m = protocol_error_decode(msg, &fatal);
	e = protocol_event_of(msg, &job);
	CHECK(job == -1 && fatal == 0 && same_str(m, "bad line"),
	      "error of no job, not fatal (got job %d, fatal %d, %s)", job, fatal, show(m));
	cJSON_Delete(msg);

	/* a result: the envelope and the result format's own keys */
	cJSON *r = cJSON_Parse("{\"status\":\"correct\",\"reason\":\"\",\"timing\":{\"median_ms\":"
	                       "1.5,\"verified\":true},\"ab\":{\"pairs\":20,\"wins\":17}}");
	msg = protocol_event(PROTO_EV_RESULT, 9);
	const cJSON *it;
	cJSON_ArrayForEach(it, r) cJSON_AddItemToObject(msg, it->string, cJSON_Duplicate(it, 1));
	msg = wire(msg);
	e = protocol_event_of(msg, &job);
	cJSON *back = protocol_result_of(msg);
	CHECK(e == PROTO_EV_RESULT && job == 9, "result: its event, job 9 (got %d, job %d)", e,
	      job);
	json_is("result: the result without the envelope", r, back);
	cJSON_Delete(back);
	cJSON_Delete(msg);
	cJSON_Delete(r);

	/* candidate_signal / candidate_exit: read only (no encoder) */
	msg =
	    cJSON_Parse("{\"ev\":\"candidate_signal\",\"job\":3,\"signal\":11,\"name\":\"a.cu\"}");
	const char *nm;
	int code;
	e = protocol_event_of(msg, &job);
	protocol_cand_ended_decode(msg, &code, &nm);
	CHECK(e == PROTO_EV_CAND_SIGNAL && job == 3 && code == 11 && same_str(nm, "a.cu"),
	      "candidate_signal: job 3, signal 11, a.cu (got %d, job %d, %d, %s)", e, job, code,
	      show(nm));
	cJSON_Delete(msg);
	msg = cJSON_Parse("{\"ev\":\"candidate_exit\",\"status\":2,\"name\":\"b.cu\"}");
	e = protocol_event_of(msg, &job);
	protocol_cand_ended_decode(msg, &code, &nm);
	CHECK(e == PROTO_EV_CAND_EXIT && job == -1 && code == 2 && same_str(nm, "b.cu"),
	      "candidate_exit: status 2, b.cu (got %d, job %d, %d, %s)", e, job, code, show(nm));
	cJSON_Delete(msg);
	msg = cJSON_Parse("{\"ev\":\"sing\"}");
	CHECK(protocol_event_of(msg, &job) == PROTO_EV_UNKNOWN, "another ev: unknown");
	cJSON_Delete(msg);
	msg = cJSON_Parse("{\"op\":\"eval\"}");
	CHECK(protocol_event_of(msg, &job) == PROTO_EV_NONE, "a request is no event");
	cJSON_Delete(msg);
}

static void test_ready(void)
{
	cJSON *rt = cJSON_Parse("{\"median_ms\":4.0,\"p10_ms\":3.9,\"p90_ms\":4.1}");
	cJSON *bl = cJSON_Parse("{\"eager\":{\"median_ms\":3.5},\"compile\":{\"pending\":true}}");
	cJSON *su = cJSON_Parse("{\"seconds\":2.5,\"inputs\":0.3}");
	cJSON *sz = cJSON_Parse("{\"x\":[4096,8192]}");
	struct proto_ready r = {
	    .refTiming = rt,
	    .baselines = bl,
	    .setup = su,
	    .sizes = sz,
	    .zReference = "reference.py",
	    .zPrecision = "float64",
	    .zTask = "softmax",
	    .zNote = "the inputs were drawn once",
	    .zSmallShapes = "small",
	    .zSmallNote = "no small shapes",
	    .nTrials = 3,
	    .refSeconds = 0.87,
	};
	cJSON *msg = wire(protocol_ready(&r));
	int job;
	CHECK(protocol_event_of(msg, &job) == PROTO_EV_TASK_READY && job == -1,
	      "task_ready: its event, no job (got job %d)", job);
	struct proto_ready d;
	protocol_ready_decode(msg, &d);
	json_is("task_ready: reference_timing", rt, d.refTiming);
	json_is("task_ready: baselines", bl, d.baselines);
	json_is("task_ready: setup", su, d.setup);
	json_is("task_ready: sizes", sz, d.sizes);
	STR_IS("task_ready: reference", r.zReference, d.zReference);
	STR_IS("task_ready: precision", r.zPrecision, d.zPrecision);
	STR_IS("task_ready: task", r.zTask, d.zTask);
	STR_IS("task_ready: note", r.zNote, d.zNote);
	STR_IS("task_ready: small_shapes", r.zSmallShapes, d.zSmallShapes);
	STR_IS("task_ready: small_shapes_note", r.zSmallNote, d.zSmallNote);
	NUM_IS("task_ready: trials", r.nTrials, d.nTrials);
	NUM_IS("task_ready: reference_seconds", r.refSeconds, d.refSeconds);
	cJSON_Delete(msg);
	struct proto_ready r0 = {.nTrials = -1, .refSeconds = -1};
	msg = wire(protocol_ready(&r0));
	protocol_ready_decode(msg, &d);
	CHECK(d.nTrials == -1 && d.refSeconds == -1 && !d.refTiming && !d.zReference && !d.setup,
	      "task_ready, nothing said: not said (trials %d, reference_seconds %g, timing %p)",
	      d.nTrials, d.refSeconds, (const void *)d.refTiming);
	cJSON_Delete(msg);

	msg = wire(protocol_baselines(bl, 12.5, 3.25));
	double sec;
	const cJSON *b = protocol_baselines_decode(msg, &sec);
	CHECK(protocol_event_of(msg, &job) == PROTO_EV_BASELINES, "baselines: its event");
	json_is("baselines: the baselines", bl, b);
	NUM_IS("baselines: seconds", 12.5, sec);
	cJSON_Delete(msg);
	cJSON_Delete(rt);
	cJSON_Delete(bl);
	cJSON_Delete(su);
	cJSON_Delete(sz);
}

int main(void)
{
	test_eval();
	test_task();
	test_small_requests();
	test_hello();
	test_job_events();
	test_ready();
	return check_done();
}
