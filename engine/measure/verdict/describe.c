/*
 * describe.c - a verdict's facts in words (describe.h).
 */
#include "describe.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "ncu.h"
#include "result.h"
#include "roofline.h"
#include "torchext.h"
#include "util.h"

/* emit one line made with a format */
static void __attribute__((format(printf, 5, 6)))
linef(result_line_fn emit, void *arg, const char *zLabel, int alarm, const char *zFmt, ...)
{
	va_list ap;
	va_start(ap, zFmt);
	strbuf sb = STRBUF_INIT;
	sb_vaddf(&sb, zFmt, ap);
	va_end(ap);
	emit(arg, zLabel, sb.buf, alarm);
	sb_free(&sb);
}

static void compiled(const cJSON *comp, result_line_fn emit, void *arg)
{
	/* what a CUDA candidate was built for, and the device it ran on */
	const char *tg = json_str(comp, "target", ""), *cc = json_str(comp, "device_cc", "");
	if (*tg)
		linef(emit, arg, "target", 0, "%s%s%s%s%s", tg,
		      *cc ? " for a device of compute capability " : "", cc,
		      *json_str(comp, "target_note", "") ? "; " : "",
		      json_str(comp, "target_note", ""));
	const cJSON *res;
	cJSON_ArrayForEach(res, cJSON_GetObjectItem(comp, "resources"))
	{
		linef(emit, arg, "kernel", 0,
		      "%s: %g registers, %g B shared memory, %g B stack, %g B spill stores, %g B "
		      "spill loads",
		      json_str(res, "kernel", ""), result_num(res, "registers"),
		      result_num(res, "shared_bytes"), result_num(res, "stack_bytes"),
		      result_num(res, "spill_stores"), result_num(res, "spill_loads"));
	}
	/* the host's counterpart of the ptxas report */
	const cJSON *vec = cJSON_GetObjectItem(comp, "vectorized"), *v;
	if (cJSON_IsArray(vec) && !cJSON_GetArraySize(vec))
		emit(arg, "vector", "the host compiler vectorised no loop", 0);
	if (cJSON_IsArray(vec))
		cJSON_ArrayForEach(v, vec) linef(emit, arg, "vector", 0, "line %g: %s",
		                                 result_num(v, "line"), json_str(v, "message", ""));
}

static void checked(const struct verdict *v, result_line_fn emit, void *arg)
{
	const cJSON *cor = v->correctness;
	if (cor && cJSON_GetObjectItem(cor, "trials")) {
		double l2 = result_num(cor, "rel_l2_error");
		char l2s[32] = "inf";
		if (!isnan(l2) && l2 >= 0)
			snprintf(l2s, sizeof l2s, "%.3g", l2);
		char nf[160] = "";
		if (result_num(cor, "non_finite") > 0)
			snprintf(
			    nf, sizeof nf,
			    " (%g of them NaN or Inf where the reference is finite; the max abs "
			    "error is over the finite ones)",
			    result_num(cor, "non_finite"));
		linef(emit, arg, "checked", 0,
		      "%g/%g trials passed, max abs error %.3g, relative L2 error %s, %g "
		      "mismatches%s",
		      result_num(cor, "trials_passed"), result_num(cor, "trials"),
		      result_num(cor, "max_abs_error"), l2s, result_num(cor, "mismatches"), nf);
		strbuf tl = STRBUF_INIT;
		result_tolerance_line(cor, &tl);
		if (tl.len)
			emit(arg, "tolerance", tl.buf, 0);
		sb_free(&tl);
	}
	strbuf pl = STRBUF_INIT;
	verdict_precision_line(v, &pl);
	if (pl.len)
		emit(arg, "precision", pl.buf, v->precision.reduced);
	sb_free(&pl);
	char rl[400];
	roofline_line(v->rooflineJson, rl, sizeof rl);
	if (rl[0])
		emit(arg, "roofline", rl, 0);
	if (v->roofline.zSuspect && *v->roofline.zSuspect)
		linef(emit, arg, "suspect", 1,
		      "%s: faster than the device can be; never a parent, the best or a win until "
		      "a person clears it",
		      v->roofline.zSuspect);
	if (v->profile) {
		strbuf sb = STRBUF_INIT;
		ncu_summary(v->profile, &sb);
		linef(emit, arg, "ncu", 0, "Nsight Compute (one run): %s", sb.buf);
		sb_free(&sb);
	}
}

/* a count as it prints where the verdict has none ("nan", as it always did) */
static double cnt(int n)
{
	return n < 0 ? NAN : n;
}

/* how the time was taken (the timing's method), in words: where its runs
 * were timed by their kernels' durations, each kernel's median in launch
 * order; where profiled runs were asked for and did not stand, why */
static void method_line(const struct verdict *v, result_line_fn emit, void *arg)
{
	const struct verdict_timing *tm = &v->timing;
	const char *m = tm->zMethod ? tm->zMethod : "";
	const cJSON *t = v->timingJson, *p = cJSON_GetObjectItem(t, "profiled");
	int host = v->zBackend && !strcmp(v->zBackend, "host");
	strbuf sb = STRBUF_INIT;
	if (!strcmp(m, "kernel durations")) {
		sb_addf(&sb,
		        "its kernels' durations (gpu__time_duration, Nsight Compute's metric, by "
		        "CUPTI's Range Profiler): %g profiled runs, %g checked",
		        result_num(p, "runs"), result_num(p, "checked"));
		const cJSON *pk = cJSON_GetObjectItem(p, "per_kernel"), *k;
		const cJSON *a = cJSON_GetObjectItem(pk, "median_ms");
		if (cJSON_GetArraySize(a) > 1) {
			sb_addf(&sb, "; kernel by kernel, in launch order:");
			int i = 0;
			cJSON_ArrayForEach(k, a)
			{
				double d = cJSON_IsNumber(k) ? k->valuedouble : -1;
				if (d >= 1)
					sb_addf(&sb, "%s %.4g ms", i ? "," : "", d);
				else if (d >= 0)
					sb_addf(&sb, "%s %.3g us", i ? "," : "", d * 1e3);
				else
					sb_addf(&sb, "%s ?", i ? "," : "");
				i++;
			}
			if (result_num(pk, "of_kernels") > i)
				sb_addf(&sb, " (the first %d of %g)", i,
				        result_num(pk, "of_kernels"));
		}
	} else if (!strcmp(m, "device-wide")) {
		sb_addf(&sb, "from an idle device to a device-wide synchronize (its work is not "
		             "all on its stream)");
	} else if (*m && host) {
		sb_addf(&sb, "the runner's monotonic clock around each call");
	} else if (*m) {
		sb_addf(&sb, "CUDA events around each run on its stream");
		if (result_num(t, "runs_by_kernels") > 0)
			sb_addf(&sb,
			        ", the GPU's busy time by CUPTI's activity records in %g of them",
			        result_num(t, "runs_by_kernels"));
	}
	const char *why = json_str(p, "why_not", "");
	if (sb.len && *why)
		sb_addf(&sb, "; its profiled runs did not stand: %s", why);
	if (sb.len)
		emit(arg, "method", sb.buf, 0);
	sb_free(&sb);
}

static void timed(const struct verdict *v, result_line_fn emit, void *arg)
{
	const struct verdict_timing *tm = &v->timing;
	if (!tm->present)
		return;
	linef(emit, arg, "time", 0, "median %.4g ms (p10 %.4g, p90 %.4g; %g runs, rse %.2f%%%s)",
	      tm->medianMs, tm->p10Ms, tm->p90Ms, cnt(tm->count), tm->rse * 100,
	      tm->converged ? "" : ", not converged within the budget");
	method_line(v, emit, arg);
	if (v->zNotTimed && *v->zNotTimed)
		emit(arg, "timing", v->zNotTimed, 0);
	if (tm->zClockNote && *tm->zClockNote)
		emit(arg, "clock", tm->zClockNote, 0);
	if (tm->unverified)
		linef(emit, arg, "unverified", 1,
		      "%s: this time is shown, never a parent, the best or a win",
		      tm->zClockBound ? tm->zClockBound : "kloop's clock could not bound it");
	else if (tm->zBound && !strcmp(tm->zBound, "cpu"))
		emit(arg, "bound", "by its CPU time (the machine too busy for kloop's clock)", 0);
}

void verdict_describe(const struct verdict *v, unsigned mask, result_line_fn emit, void *arg)
{
	/* an extension or a ModelNew: its form, and the outputs it copied */
	char form[1200];
	if ((mask & RD_COMPILE) && torchext_note_line(v->form, form, sizeof form) == 0)
		emit(arg, "form", form, 0);
	if (mask & RD_COMPILE)
		compiled(v->compile, emit, arg);
	if (mask & RD_CHECKS)
		checked(v, emit, arg);
	if (mask & RD_TIME)
		timed(v, emit, arg);
	if ((mask & RD_WARN) && v->timing.throttled)
		linef(emit, arg, "warning", 0, "the GPU was throttling during the measurement: %s",
		      v->timing.zThrottleReason ? v->timing.zThrottleReason : "");
	if ((mask & RD_WARN) && v->zKeptState)
		emit(arg, "warning", v->zKeptState, 0);
}

void result_describe(const cJSON *r, unsigned mask, result_line_fn emit, void *arg)
{
	if (!r)
		return;
	struct verdict v;
	verdict_decode(r, &v);
	verdict_describe(&v, mask, emit, arg);
}
