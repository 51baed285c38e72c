/*
 * roofline.c - the floors of a time (roofline.h).
 */
#include "roofline.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

double roofline_flops(const struct task *t)
{
	struct task_matmul mm;
	if (t->flops > 0)
		return t->flops;
	return task_matmul_of(t, &mm) ? 2.0 * (double)mm.M * (double)mm.N * (double)mm.K : 0;
}

double roofline_peak(const struct roofline_dev *d, task_compute c, double *pSheet,
                     double *pMeasured)
{
	int fp32 = c == TASK_FP32 || (unsigned)c >= TASK_NCOMPUTE;
	/* fp32's from the device's attributes, else the table's */
	double sheet =
	    fp32 ? (d->tflops > 0 ? d->tflops : d->pk.datasheet[TASK_FP32]) : d->pk.datasheet[c];
	double meas = fp32 ? d->tflopsMeasured : d->pk.measured[c];
	if (pSheet)
		*pSheet = sheet;
	if (pMeasured)
		*pMeasured = meas;
	return sheet > meas ? sheet : meas;
}

cJSON *roofline_json(const struct task *t, const struct roofline_dev *d, double ms)
{
	double bytes = (double)task_set_bytes(t), flops = roofline_flops(t);
	/* a task of f16 or bf16 inputs that is fp32 only by default (not a
	 * matrix product, no "compute"): its arithmetic may be half2 or tensor
	 * cores, so no floor at the fp32 peak */
	int byDefault = !t->zComputeFrom || !strcmp(t->zComputeFrom, "the default");
	for (int i = 0; byDefault && t->compute == TASK_FP32 && i < t->nIn; i++)
		if (t->aIn[i].dtype == KL_F16 || t->aIn[i].dtype == KL_BF16)
			flops = 0;
	double sheet = 0, meas = 0;
	double bw = d->bwGbs > d->bwMeasuredGbs ? d->bwGbs : d->bwMeasuredGbs;
	double tf = roofline_peak(d, t->compute, &sheet, &meas);
	double memMs = bw > 0 && bytes > 0 ? bytes / (bw * 1e9) * 1e3 : 0;
	double cmpMs = tf > 0 && flops > 0 ? flops / (tf * 1e12) * 1e3 : 0;
	if (!(memMs > 0) && !(cmpMs > 0))
		return NULL;
	const char *type = task_compute_name(t->compute);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "bytes", bytes);
	if (memMs > 0) {
		cJSON_AddNumberToObject(o, "bandwidth_gbs", d->bwGbs);
		if (d->bwMeasuredGbs > 0)
			cJSON_AddNumberToObject(o, "measured_bandwidth_gbs", d->bwMeasuredGbs);
		cJSON_AddNumberToObject(o, "memory_floor_ms", memMs);
	}
	cJSON_AddStringToObject(o, "compute", type);
	if (cmpMs > 0) {
		cJSON_AddStringToObject(o, "compute_unit", peaks_unit_name(t->compute));
		cJSON_AddNumberToObject(o, "flops", flops);
		if (sheet > 0)
			cJSON_AddNumberToObject(o, "peak_tflops", sheet);
		if (meas > 0)
			cJSON_AddNumberToObject(o, "measured_peak_tflops", meas);
		if (meas > 0 && t->compute != TASK_FP32 && d->pk.clockMhz > 0)
			cJSON_AddNumberToObject(o, "clock_mhz", d->pk.clockMhz);
		cJSON_AddNumberToObject(o, "compute_floor_ms", cmpMs);
	}
	int compute = cmpMs > memMs;
	double floorMs = compute ? cmpMs : memMs;
	cJSON_AddNumberToObject(o, "floor_ms", floorMs);
	cJSON_AddStringToObject(o, "bound", compute ? "compute" : "memory");
	if (ms > 0) {
		cJSON_AddNumberToObject(o, "fraction", floorMs / ms);
		char why[300];
		if (ms < memMs) {
			snprintf(
			    why, sizeof why,
			    "%.4g ms is below the %.4g ms that reading its inputs and writing its "
			    "outputs once (%.3g MB) takes at %.0f GB/s",
			    ms, memMs, bytes / 1e6, bw);
			cJSON_AddStringToObject(o, "suspect", why);
		} else if (ms < cmpMs) {
			snprintf(why, sizeof why,
			         "%.4g ms is below the %.4g ms that its %.4g GFLOP take at the %s "
			         "peak, %.1f TFLOP/s (%s)",
			         ms, cmpMs, flops / 1e9, type, tf,
			         t->compute == TASK_FP32
			             ? "tensor cores: reduced precision, or a forged time"
			             : "a lower-precision type than the task's, or a forged time");
			cJSON_AddStringToObject(o, "suspect", why);
		}
	}
	return o;
}

int roofline_at_clock(cJSON *roof, const struct roofline_dev *d, double runMhz)
{
	const char *bound = cJSON_GetStringValue(cJSON_GetObjectItem(roof, "bound"));
	double fr = json_num(roof, "fraction", 0);
	if (!bound || strcmp(bound, "compute") || !(runMhz > 0) || !(fr > 0))
		return 1;
	double sheet = json_num(roof, "peak_tflops", 0),
	       meas = json_num(roof, "measured_peak_tflops", 0);
	double ref = sheet >= meas ? d->clockPeakMhz : d->pk.clockMhz;
	if (!(ref > 0) || runMhz >= 0.95 * ref)
		return 1;
	cJSON_AddNumberToObject(roof, "timing_clock_mhz", runMhz);
	cJSON_AddNumberToObject(roof, "peak_clock_mhz", ref);
	cJSON_AddNumberToObject(roof, "fraction_at_clock", fr * ref / runMhz);
	return 0;
}

void roofline_line(const cJSON *roof, char *buf, size_t n)
{
	buf[0] = 0;
	const cJSON *f = cJSON_GetObjectItem(roof, "fraction");
	const cJSON *fl = cJSON_GetObjectItem(roof, "floor_ms");
	if (!cJSON_IsNumber(f) || !cJSON_IsNumber(fl))
		return;
	const char *bound = cJSON_GetStringValue(cJSON_GetObjectItem(roof, "bound"));
	int compute = bound && !strcmp(bound, "compute");
	double bytes = cJSON_GetNumberValue(cJSON_GetObjectItem(roof, "bytes"));
	if (compute) {
		const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(roof, "compute"));
		const char *unit = cJSON_GetStringValue(cJSON_GetObjectItem(roof, "compute_unit"));
		double sheet = json_num(roof, "peak_tflops", 0);
		double meas = json_num(roof, "measured_peak_tflops", 0);
		double mhz = json_num(roof, "clock_mhz", 0);
		int isInt = type && !strcmp(type, "int8");
		char peak[160], clk[40] = "";
		if (mhz > 0)
			snprintf(clk, sizeof clk, " at %.0f MHz", mhz);
		const char *u = isInt ? "TOP/s" : "TFLOP/s";
		if (sheet > 0 && meas > sheet)
			snprintf(peak, sizeof peak, "%.4g %s measured%s; the datasheet's %.4g",
			         meas, u, clk, sheet);
		else if (sheet > 0 && meas > 0)
			snprintf(peak, sizeof peak, "%.4g %s, the datasheet's; %.4g measured%s",
			         sheet, u, meas, clk);
		else
			snprintf(peak, sizeof peak, "%.4g %s %s%s", sheet > meas ? sheet : meas, u,
			         sheet > 0 ? "datasheet" : "measured", sheet > 0 ? "" : clk);
		char fell[160] = "";
		double run = json_num(roof, "timing_clock_mhz", 0);
		if (run > 0)
			snprintf(
			    fell, sizeof fell,
			    "; the SM clock fell to %.0f MHz during the timing (the peak is at "
			    "%.0f MHz): %.0f%% at that clock",
			    run, json_num(roof, "peak_clock_mhz", 0),
			    json_num(roof, "fraction_at_clock", 0) * 100);
		snprintf(buf, n, "%.0f%% of the %s %s roofline (%.4g %s at %s: %.4g ms)%s",
		         f->valuedouble * 100, type ? type : "fp32", unit ? unit : "FMA",
		         json_num(roof, "flops", 0) / 1e9, isInt ? "GOP" : "GFLOP", peak,
		         fl->valuedouble, fell);
	} else {
		/* the compute floor that does not bind, where there is one */
		char other[120] = "";
		double cmp = json_num(roof, "compute_floor_ms", 0);
		if (cmp > 0)
			snprintf(other, sizeof other, "; the %s %s floor %.4g ms",
			         json_str(roof, "compute", "fp32"),
			         json_str(roof, "compute_unit", "FMA"), cmp);
		snprintf(buf, n, "%.0f%% of the memory roofline (%.3g MB at %.0f GB/s: %.4g ms%s)",
		         f->valuedouble * 100, bytes / 1e6,
		         cJSON_GetNumberValue(cJSON_GetObjectItem(roof, "bandwidth_gbs")),
		         fl->valuedouble, other);
	}
}
