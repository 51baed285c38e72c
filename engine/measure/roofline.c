/*
 * roofline.c - the floors of a time (roofline.h).
 */
#include "roofline.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

double roofline_flops(const struct task *t)
{
	if (t->flops > 0)
		return t->flops;
	if (t->nOut != 1 || t->aOut[0].ndim != 2 || t->nIn < 2)
		return 0;
	/* the two 2-D inputs, in either order, and at most one 1-D bias */
	const struct task_tensor *a = NULL, *b = NULL;
	for (int i = 0; i < t->nIn; i++) {
		const struct task_tensor *x = &t->aIn[i];
		if (x->ndim == 2 && !a)
			a = x;
		else if (x->ndim == 2 && !b)
			b = x;
		else if (x->ndim != 1)
			return 0;
	}
	if (!a || !b)
		return 0;
	double M = (double)t->aOut[0].shape[0], N = (double)t->aOut[0].shape[1];
	for (int k = 0; k < 2; k++) {
		const struct task_tensor *x = k ? b : a, *y = k ? a : b;
		/* x[M,K] with y[K,N] or y[N,K] */
		if (x->shape[0] != t->aOut[0].shape[0])
			continue;
		int64_t K = x->shape[1];
		if ((y->shape[0] == K && y->shape[1] == t->aOut[0].shape[1]) ||
		    (y->shape[1] == K && y->shape[0] == t->aOut[0].shape[1]))
			return 2 * M * N * (double)K;
	}
	return 0;
}

cJSON *roofline_json(const struct task *t, const struct roofline_dev *d, double ms)
{
	double bytes = (double)task_set_bytes(t), flops = roofline_flops(t);
	/* the fp32 peak bounds fp32 and fp64 arithmetic only: f16 and bf16
	 * inputs go through tensor cores, rightly */
	for (int i = 0; i < t->nIn; i++)
		if (t->aIn[i].dtype == KL_F16 || t->aIn[i].dtype == KL_BF16)
			flops = 0;
	double bw = d->bwGbs > d->bwMeasuredGbs ? d->bwGbs : d->bwMeasuredGbs;
	double tf = d->tflops > d->tflopsMeasured ? d->tflops : d->tflopsMeasured;
	double memMs = bw > 0 && bytes > 0 ? bytes / (bw * 1e9) * 1e3 : 0;
	double cmpMs = tf > 0 && flops > 0 ? flops / (tf * 1e12) * 1e3 : 0;
	if (!(memMs > 0) && !(cmpMs > 0))
		return NULL;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "bytes", bytes);
	if (memMs > 0) {
		cJSON_AddNumberToObject(o, "bandwidth_gbs", d->bwGbs);
		if (d->bwMeasuredGbs > 0)
			cJSON_AddNumberToObject(o, "measured_bandwidth_gbs", d->bwMeasuredGbs);
		cJSON_AddNumberToObject(o, "memory_floor_ms", memMs);
	}
	if (cmpMs > 0) {
		cJSON_AddNumberToObject(o, "flops", flops);
		cJSON_AddNumberToObject(o, "peak_tflops", d->tflops);
		if (d->tflopsMeasured > 0)
			cJSON_AddNumberToObject(o, "measured_peak_tflops", d->tflopsMeasured);
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
			snprintf(
			    why, sizeof why,
			    "%.4g ms is below the %.4g ms that its %.4g GFLOP take at the fp32 "
			    "peak, %.1f TFLOP/s (tensor cores: reduced precision, or a forged "
			    "time)",
			    ms, cmpMs, flops / 1e9, tf);
			cJSON_AddStringToObject(o, "suspect", why);
		}
	}
	return o;
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
	if (compute)
		snprintf(
		    buf, n,
		    "%.0f%% of the compute roofline (%.4g GFLOP at %.1f TFLOP/s fp32: %.4g ms)",
		    f->valuedouble * 100,
		    cJSON_GetNumberValue(cJSON_GetObjectItem(roof, "flops")) / 1e9,
		    cJSON_GetNumberValue(cJSON_GetObjectItem(roof, "peak_tflops")),
		    fl->valuedouble);
	else
		snprintf(buf, n, "%.0f%% of the memory roofline (%.3g MB at %.0f GB/s: %.4g ms)",
		         f->valuedouble * 100, bytes / 1e6,
		         cJSON_GetNumberValue(cJSON_GetObjectItem(roof, "bandwidth_gbs")),
		         fl->valuedouble);
}
