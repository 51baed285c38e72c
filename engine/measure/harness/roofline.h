/*
 * roofline.h - how far a time is from what the device can do (issue 25):
 * the least time moving the task's bytes takes (every input read and every
 * output written once) at the memory's bandwidth, and its FLOPs at the fp32
 * peak, each from the datasheet (the device's attributes) and as measured
 * on it; a time below the floor is a suspect wherever it is shown.  The
 * FLOPs' floor is the peak of the task's compute type (task.h: fp32 on
 * CUDA cores, tf32, fp16, bf16, fp8 and int8 on tensor cores; peaks.h).
 */
#ifndef KL_ROOFLINE_H
#define KL_ROOFLINE_H

#include <cJSON.h>
#include <stddef.h>

#include "peaks.h"
#include "task.h"

/* what a device can do: 0 where unknown */
struct roofline_dev {
	double bwGbs;          /* the memory's peak bandwidth, GB/s (datasheet: clock x bus) */
	double bwMeasuredGbs;  /* a device-to-device copy's, measured */
	double tflops;         /* fp32 peak, TFLOP/s (SMs x lanes x 2 x clock) */
	double tflopsMeasured; /* an FMA kernel's, measured */
	struct peaks pk;       /* the other compute types' (datasheet, cuBLASLt), and the
	                          clock they were measured at */
	double clockPeakMhz;   /* the SM's peak clock, which the datasheets' peaks are at
	                          (0: unknown) */
};

/* the peak the floor of compute type c takes on d, TFLOP/s: the higher of
 * the datasheet's and the measured one (0: unknown), with each of them
 * into *pSheet and *pMeasured (may be NULL) */
double roofline_peak(const struct roofline_dev *d, task_compute c, double *pSheet,
                     double *pMeasured);

/* the FLOPs of task t: its "flops", else 2 M N K for a task shaped as a
 * matrix product (two 2-D inputs A[M,K] B[K,N], one output [M,N], or B as
 * nn.Linear holds it, [N,K], with an optional bias[N]); 0 when unknown */
double roofline_flops(const struct task *t);

/*
 * The roofline of a time of ms for task t on d: {"bytes", "bandwidth_gbs",
 * "measured_bandwidth_gbs"?, "memory_floor_ms" (at the higher of the two
 * bandwidths), "compute" (t's compute type), "flops"?, "peak_tflops"?
 * (that type's, the datasheet's), "measured_peak_tflops"?, "clock_mhz"?
 * (the SM clock the measured one ran at), "compute_floor_ms"? (at the
 * higher of the two peaks; none for a task of f16 or bf16 inputs whose
 * type is fp32 only by default, nor where the type's peak is unknown),
 * "floor_ms" (the larger floor), "bound" ("memory" or "compute"),
 * "fraction" (floor_ms / ms: 1 is the device's limit), "suspect"? (why,
 * when ms is below the floor)}, or NULL when no floor is known (caller
 * frees).
 */
cJSON *roofline_json(const struct task *t, const struct roofline_dev *d, double ms);

/*
 * At the measured clock (issue 39): a compute-bound roofline roof whose
 * timing's SM clock (runMhz, read as the timing ended; <= 0: unknown) fell
 * more than 5% below the clock its binding peak is at (the datasheet's:
 * the device's peak clock; a measured one's: the clock it ran at) gets
 * "timing_clock_mhz", "peak_clock_mhz" and "fraction_at_clock" (its
 * fraction of the floor the device has at that clock).  0 when it did, 1
 * when not (or nothing to compare).
 */
int roofline_at_clock(cJSON *roof, const struct roofline_dev *d, double runMhz);

/* "64% of the memory roofline (268 MB at 4800 GB/s: 0.056 ms)", or "69%
 * of the fp16 tensor-core roofline (137.4 GFLOP at 989 TFLOP/s, the
 * datasheet's; 781 measured at 1980 MHz: 0.1389 ms)" for a result's
 * "roofline" into buf ("" when it has none) */
void roofline_line(const cJSON *roof, char *buf, size_t n);

#endif
