/*
 * roofline.h - how far a time is from what the device can do (issue 25):
 * the least time moving the task's bytes takes (every input read and every
 * output written once) at the memory's bandwidth, and its FLOPs at the fp32
 * peak, each from the datasheet (the device's attributes) and as measured
 * on it; a time below the floor is a suspect wherever it is shown.
 */
#ifndef KL_ROOFLINE_H
#define KL_ROOFLINE_H

#include <cJSON.h>
#include <stddef.h>

#include "task.h"

/* what a device can do: 0 where unknown */
struct roofline_dev {
	double bwGbs;          /* the memory's peak bandwidth, GB/s (datasheet: clock x bus) */
	double bwMeasuredGbs;  /* a device-to-device copy's, measured */
	double tflops;         /* fp32 peak, TFLOP/s (SMs x lanes x 2 x clock) */
	double tflopsMeasured; /* an FMA kernel's, measured */
};

/* the FLOPs of task t: its "flops", else 2 M N K for a task shaped as a
 * matrix product (two 2-D inputs A[M,K] B[K,N], one output [M,N], or B as
 * nn.Linear holds it, [N,K], with an optional bias[N]); 0 when unknown */
double roofline_flops(const struct task *t);

/*
 * The roofline of a time of ms for task t on d: {"bytes", "bandwidth_gbs",
 * "measured_bandwidth_gbs"?, "memory_floor_ms" (at the higher of the two
 * bandwidths), "flops"?, "peak_tflops"?, "compute_floor_ms"? (fp32 and fp64
 * tasks: f16 and bf16 inputs go through tensor cores), "floor_ms" (the
 * larger floor), "bound" ("memory" or "compute"), "fraction" (floor_ms / ms:
 * 1 is the device's limit), "suspect"? (why, when ms is below the floor)},
 * or NULL when no floor is known (caller frees).
 */
cJSON *roofline_json(const struct task *t, const struct roofline_dev *d, double ms);

/* "64% of the memory roofline (268 MB at 4800 GB/s: 0.056 ms)" for a
 * result's "roofline" into buf ("" when it has none) */
void roofline_line(const cJSON *roof, char *buf, size_t n);

#endif
