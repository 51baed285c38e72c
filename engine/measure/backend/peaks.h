/*
 * peaks.h - what a device's arithmetic can do per compute type (issue 36):
 * the datasheet's dense TFLOP/s, looked up by the device's name, and the
 * TFLOP/s a short cuBLASLt run measured on it (large square matrix
 * products, kld_peaks() in libkloop-cuda.so), with the SM clock it ran at.
 * The measurement is cached on disk per device (its name, UUID, compute
 * capability and driver), so a worker measures a device once and a warm
 * evaluation pays nothing for it.  The roofline (roofline.h) floors a
 * task's FLOPs at the peak of the task's compute type (task.h).
 */
#ifndef KL_PEAKS_H
#define KL_PEAKS_H

#include <cJSON.h>
#include <stddef.h>

#include "backend.h"
#include "task.h"

/* the cache file's format; a file of another is measured again */
#define PEAKS_FORMAT 1

struct peaks {
	double datasheet[TASK_NCOMPUTE]; /* dense TFLOP/s (int8: TOP/s); 0: unknown */
	double measured[TASK_NCOMPUTE];  /* cuBLASLt's (fp32: none, the FMA kernel measures
	                                    it at every start); 0: not measured or absent */
	double clockMhz;                 /* the SM clock just after the run; 0: unknown */
	const char *zClockFrom;          /* "nvml", "the device's peak clock" (static) */
	const char *zDatasheet;          /* the datasheet row matched (static), NULL: none */
	double seconds;                  /* what measuring took */
	int cached;                      /* read from the cache, not measured now */
};

/* the datasheet's dense peaks of the device named zDevice (the first row
 * whose name is a word of it, case-insensitive: "NVIDIA H100 80GB HBM3" is
 * the H100 SXM, "NVIDIA H100 PCIe" the PCIe one) into p->datasheet and
 * p->zDatasheet; 1, or 0 (all left 0) where no row matches */
int peaks_datasheet(const char *zDevice, struct peaks *p);

/* the cache key of a device: "name|uuid|cc|driver" into buf */
void peaks_key(const struct backend *b, char *buf, size_t n);

/* the cache file of key zKey under the cache root zCacheDir:
 * DIR/device/peaks-SHA256.json (caller frees) */
char *peaks_cache_path(const char *zCacheDir, const char *zKey);

/* write p's measured peaks and clock for zKey to zPath (atomically, its
 * directory made); 0 or -1 + err */
int peaks_save(const char *zPath, const char *zKey, const struct peaks *p, char *err);

/* read zPath's peaks for zKey into p (measured, clock, seconds; cached set):
 * 1, 0 where there is no file, or -1 + err naming the file and what is
 * wrong with it (not JSON, another format or device, a peak that is not a
 * positive number), p's measured peaks then left 0 */
int peaks_load(const char *zPath, const char *zKey, struct peaks *p, char *err);

/*
 * The peaks of b's device into p: the datasheet's, and the measured ones
 * from the cache under zCacheDir, else (or with force) measured with
 * b->peaks and cached.  A corrupt cache is ignored and measured again, and
 * a measurement that fails leaves the datasheet's alone; either says why
 * in zWarn ("" when all went well).  Without b->peaks (the host): the
 * datasheet's only.
 */
void peaks_get(struct backend *b, const char *zCacheDir, int force, struct peaks *p, char *zWarn,
               size_t nWarn);

/* {"datasheet": NAME?, "clock_mhz"?, "clock_from"?, "cached", "seconds",
 * "types": {"fp16": {"datasheet_tflops"?, "measured_tflops"?}, ...}} */
cJSON *peaks_json(const struct peaks *p);

/* "tensor-core" or "FMA" (fp32): what runs compute type c */
const char *peaks_unit_name(task_compute c);

#endif
