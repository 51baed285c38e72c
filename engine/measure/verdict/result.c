/*
 * result.c - completing a worker's verdict with the task, the source, the
 * device and the baseline, so that every front end journals the same result.
 */
#include "result.h"
#include "verdict.h"

#include <math.h>
#include <string.h>

#include "json.h"
#include "status.h"

double result_num(const cJSON *o, const char *k)
{
	return json_num(o, k, NAN);
}

/* the BLAS baselines of a GEMM task (torchref.py's "libraries": cuBLAS,
 * cuBLASLt's heuristic, cuBLASLt autotuned) into r's library baselines, each
 * its time and the candidate's speedup against it (t: the candidate's time,
 * NAN when it has none), or why it was not timed */
static void add_libraries(cJSON *r, const cJSON *libs, double t)
{
	if (!cJSON_IsObject(libs))
		return;
	cJSON *a = cJSON_CreateArray();
	const cJSON *l;
	cJSON_ArrayForEach(l, libs)
	{
		double m = result_num(l, "median_ms");
		int timed = !isnan(m) && m > 0;
		struct verdict_library b = {l->string ? l->string : "",
		                            json_str(l, "library", l->string), timed ? m : NAN,
		                            timed && !isnan(t) ? m / t : NAN,
		                            timed ? NULL : json_str(l, "error", "not timed")};
		cJSON_AddItemToArray(a, verdict_library_new(&b));
	}
	struct verdict v;
	verdict_decode(r, &v);
	v.libraries = a;
	verdict_encode(r, &v, 0);
	cJSON_Delete(a);
}

void result_library_lines(const cJSON *r, const char *zIndent, strbuf *sb)
{
	struct verdict v;
	struct verdict_library b;
	verdict_decode(r, &v);
	for (int i = 0; verdict_library(&v, i, &b) == 0; i++) {
		sb_addf(sb, "%sbaseline  %s", zIndent, b.zLibrary[0] ? b.zLibrary : "?");
		if (isnan(b.medianMs))
			sb_addf(sb, ": %.300s\n", b.zError ? b.zError : "not timed");
		else if (isnan(b.speedup))
			sb_addf(sb, " %.4g ms\n", b.medianMs);
		else
			sb_addf(sb, " %.4g ms, speedup %.3gx\n", b.medianMs, b.speedup);
	}
}

/*
 * The time a speedup of result r divides (t its median): t where the
 * candidate was timed as the baseline was (rt, the reference's timing);
 * where its runs were timed by their kernels' durations (the profiled
 * runs, harness_profiled.c) and the baseline's by events (a PyTorch
 * reference, whose helper times the model's call by events; a kernel
 * reference's timing that was not profiled), its events' median, so that
 * a ratio is of times taken one way, and never less than t (durations that
 * stood for being longer than the events)
 */
static double speedup_time(const cJSON *r, const cJSON *rt, double t)
{
	const cJSON *tm = cJSON_GetObjectItem(r, "timing");
	const char *m = json_str(tm, "method", ""), *rm = json_str(rt, "method", "");
	double e = result_num(cJSON_GetObjectItem(tm, "profiled"), "events_median_ms");
	if (strcmp(m, "kernel durations") || !strcmp(rm, "kernel durations") || !(e > 0))
		return t;
	return e > t ? e : t;
}

void result_complete_from(cJSON *r, const cJSON *rt, const cJSON *baselines, const cJSON *refData,
                          const char *zRefName, const char *zDevice, const char *zTask,
                          const char *zSource, const char *zBackend)
{
	struct verdict_timing rtm;
	verdict_timing_decode(rt, &rtm);
	double base = rt ? rtm.medianMs : NAN;
	struct verdict v;
	verdict_decode(r, &v);
	double t = v.timing.medianMs;
	int ok = v.status == STATUS_CORRECT && !isnan(t);
	if (refData)
		v.referenceData = refData;
	v.zTask = zTask;
	v.zSource = zSource;
	v.zBackend = zBackend;
	v.zDevice = zDevice ? zDevice : "";
	v.timeMs = ok ? t : NAN;
	v.baselineMs = base;
	v.zBaseline = zRefName ? zRefName : "";
	double ts = ok ? speedup_time(r, rt, t) : NAN;
	v.speedupTimeMs = ok && ts != t ? ts : NAN;
	v.speedup = ok && !isnan(base) && ts > 0 ? base / ts : NAN;
	const cJSON *cm = cJSON_GetObjectItem(baselines, "compile");
	double bc = result_num(cm, "median_ms");
	if (!isnan(bc)) {
		v.baselineCompileMs = bc;
		if (ok && ts > 0)
			v.speedupCompile = bc / ts;
	} else if (cm && cJSON_GetObjectItem(cm, "error")) {
		v.zBaselineCompileError = cJSON_GetStringValue(cJSON_GetObjectItem(cm, "error"));
	}
	/* the keys every verdict has, "" and null where none */
	verdict_encode(r, &v, VERDICT_COMPLETE);
	add_libraries(r, cJSON_GetObjectItem(baselines, "libraries"), ok && ts > 0 ? ts : NAN);
	verdict_decode(r, &v);
	if (!v.correctness) { /* a completed verdict has one, empty where none was checked */
		cJSON *c = cJSON_CreateObject();
		v.correctness = c;
		verdict_encode(r, &v, 0);
		cJSON_Delete(c);
	}
}

int result_compile_pending(const cJSON *baselines)
{
	return cJSON_IsTrue(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(baselines, "compile"), "pending"));
}

int result_add_compile(cJSON *r, const cJSON *cm, const char *zDevice)
{
	struct verdict v;
	verdict_decode(r, &v);
	if (!cJSON_IsObject(r) || !isnan(v.baselineCompileMs) || v.zBaselineCompileError ||
	    !v.zDevice || !zDevice || strcmp(v.zDevice, zDevice) ||
	    !cJSON_HasObjectItem(r, "baseline"))
		return -1;
	double bc = result_num(cm, "median_ms"),
	       t = !isnan(v.speedupTimeMs) ? v.speedupTimeMs : v.timeMs;
	if (!isnan(bc)) {
		v.baselineCompileMs = bc;
		if (!isnan(t) && t > 0)
			v.speedupCompile = bc / t;
	} else if (cJSON_IsString(cJSON_GetObjectItem(cm, "error"))) {
		v.zBaselineCompileError = cJSON_GetStringValue(cJSON_GetObjectItem(cm, "error"));
	} else {
		return -1;
	}
	verdict_encode(r, &v, 0);
	return 0;
}

/* where a tolerance came from, in words */
static const char *tol_from(const char *z)
{
	if (!z || !strcmp(z, "default"))
		return "kloop's default";
	if (!strcmp(z, "kernelbench"))
		return "KernelBench's";
	if (!strcmp(z, "task.json"))
		return "the task's";
	if (!strcmp(z, "flags"))
		return "--atol/--rtol";
	return z;
}

void result_setup_line(const cJSON *su, strbuf *sb)
{
	const cJSON *wm = cJSON_GetObjectItem(su, "warm");
	if (cJSON_IsObject(wm)) {
		/* a worker kept warm since an earlier eval of the task */
		double age = result_num(wm, "age_s");
		sb_addf(sb,
		        "the worker kept warm was ready after %.2f s (its eval %g of the task; "
		        "its sets and the reference's outputs made %.0f s ago",
		        result_num(su, "seconds"), result_num(wm, "evals"), age);
		double first = result_num(cJSON_GetObjectItem(wm, "first"), "seconds");
		if (!isnan(first))
			sb_addf(sb, " in %.2f s", first);
		sb_addf(sb,
		        "; it waits %g s after each: kloop eval --warm 0 for none, kloop warm "
		        "stop ends it)",
		        result_num(wm, "linger_s"));
		return;
	}
	sb_addf(sb, "the worker was ready after %.2f s", result_num(su, "seconds"));
	double h = result_num(su, "helper"), imp = result_num(su, "import_torch");
	double in = result_num(su, "inputs");
	if (!isnan(in)) {
		/* a kernel reference's */
		sb_addf(sb,
		        ": the inputs drawn and varied in %.2f s, the reference compiled in %.2f s "
		        "and run on every set in %.2f s",
		        in, result_num(su, "reference_compile"), result_num(su, "reference_runs"));
		double rt = result_num(su, "reference_timing");
		if (!isnan(rt))
			sb_addf(sb, ", timed in %.2f s", rt);
		return;
	}
	if (isnan(h))
		return;
	sb_addf(sb, ": PyTorch started in %.2f s", h);
	if (!isnan(imp))
		sb_addf(sb, " (importing torch %.2f s)", imp);
	sb_addf(sb, ", the reference data took %.2f s", result_num(su, "reference_data"));
	double b = result_num(su, "baselines"), tc = result_num(su, "torch_compile");
	if (isnan(b))
		return;
	if (cJSON_IsTrue(cJSON_GetObjectItem(su, "torch_compile_background"))) {
		/* a search: the eager baseline now, torch.compile's while candidates run */
		sb_addf(sb,
		        ", timing the eager baseline %.2f s; torch.compile's compiles in the "
		        "background",
		        b);
		double d = result_num(su, "torch_compile_done");
		if (!isnan(d))
			sb_addf(sb, " (timed %.2f s after the task came)", d);
		return;
	}
	if (cJSON_IsTrue(cJSON_GetObjectItem(su, "baselines_cached")))
		sb_adds(sb, ", the baselines came from the cache");
	else if (!isnan(tc))
		sb_addf(sb,
		        ", timing the baselines %.2f s (torch.compile compiling %.2f s of it); "
		        "they are cached for the next run",
		        b, tc);
	else
		sb_addf(sb, ", timing the baselines %.2f s; they are cached for the next run", b);
	double e = result_num(su, "helper_end");
	if (!isnan(e) && e >= 0.5) /* worth a word only when it is slow */
		sb_addf(sb, "; the helper took %.2f s to end", e);
}

void result_tolerance_line(const cJSON *cor, strbuf *sb)
{
	const cJSON *t = cJSON_GetObjectItem(cor, "tolerance");
	if (!cJSON_IsObject(t))
		return;
	const cJSON *fr = cJSON_GetObjectItem(cor, "tol_fraction");
	double frac = cJSON_IsNumber(fr) ? fr->valuedouble : INFINITY;
	sb_addf(sb, "max err %.3g; worst element at ", result_num(cor, "max_abs_error"));
	if (isinf(frac))
		sb_adds(sb, "inf (non-finite)");
	else if (frac < 0.01 && frac > 0)
		sb_addf(sb, "%.1e", frac);
	else
		sb_addf(sb, "%.3g", frac);
	const char *dt = cJSON_GetStringValue(cJSON_GetObjectItem(t, "dtype"));
	sb_addf(sb, " of tolerance (%s atol %g + rtol %g*|ref|, %s%s)", dt ? dt : "?",
	        result_num(t, "atol"), result_num(t, "rtol"),
	        tol_from(cJSON_GetStringValue(cJSON_GetObjectItem(t, "from"))),
	        frac > 1 ? "; outside" : "");
	const cJSON *l2 = cJSON_GetObjectItem(cor, "rel_l2_error");
	double bound = result_num(t, "rel_l2");
	if (!cJSON_IsNumber(l2))
		sb_adds(sb, "; relative L2 not finite");
	else if (isnan(bound))
		sb_addf(sb, "; relative L2 %.3g (not judged)", l2->valuedouble);
	else
		sb_addf(sb, "; relative L2 %.3g = %.3g of its bound %g", l2->valuedouble,
		        bound > 0 ? l2->valuedouble / bound : (l2->valuedouble > 0 ? INFINITY : 0),
		        bound);
}

void verdict_precision_line(const struct verdict *vd, strbuf *sb)
{
	const cJSON *p = vd->precisionJson;
	const char *v = vd->precision.zClass;
	if (!v)
		return;
	if (!strcmp(v, "unknown")) {
		sb_addf(sb, "unknown: %s", vd->precision.zWhy);
		return;
	}
	int reduced = !strcmp(v, "reduced");
	double e = result_num(p, "rel_l2"), eRef = result_num(p, "reference_rel_l2"),
	       eRound = result_num(p, "rounding_rel_l2"), ratio = result_num(p, "ratio");
	int exact = !(eRef > eRound); /* the reference's error is the rounding's */
	sb_addf(sb, "%s: relative L2 error %.2g against float64", reduced ? "reduced precision" : v,
	        e);
	const char *matches = vd->precision.zMatches;
	if (reduced && matches)
		sb_addf(sb, ", %.2gx %s (%.2g; nearer what %s makes)", ratio,
		        exact ? "what rounding the exact result makes"
		              : "the reference's own error",
		        exact ? eRound : eRef, matches);
	else if (reduced)
		sb_addf(sb, ", %.2gx %s (%.2g; the limit is %gx)", ratio,
		        exact ? "what rounding the exact result makes"
		              : "the reference's own error",
		        exact ? eRound : eRef, result_num(p, "limit"));
	else
		sb_addf(sb, " (%s %.2g",
		        exact ? "rounding the exact result makes" : "the reference's own",
		        exact ? eRound : eRef);
	double e10 = result_num(cJSON_GetObjectItem(p, "emulated"), "tf32_f16_inputs");
	if (!reduced && e10 > 0)
		sb_addf(sb, "; TF32 or f16 inputs would make %.2g", e10);
	double eAcc = result_num(cJSON_GetObjectItem(p, "emulated"), "f16_accumulation");
	if (!reduced && eAcc > 0)
		sb_addf(sb, "; f16 accumulation would make %.2g", eAcc);
	int nRun = cJSON_GetArraySize(cJSON_GetObjectItem(p, "checked_runs"));
	if (!reduced && nRun)
		sb_addf(sb, "; faithful in the %d checked timed run%s too", nRun,
		        nRun == 1 ? "" : "s");
	if (!reduced)
		sb_adds(sb, ")");
	const char *cause = vd->precision.zCause;
	if (cause)
		sb_addf(sb, ": %s", cause);
	const char *unjudged =
	    cJSON_GetStringValue(cJSON_GetObjectItem(p, "checked_runs_unjudged"));
	if (unjudged)
		sb_addf(sb, "; %s", unjudged);
}
