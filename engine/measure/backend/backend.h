/*
 * backend.h - what the harness needs from a place that runs candidates:
 * memory, copies, fills, cache flushing, a timer around one run, and error
 * checks.  The host backend runs on the CPU; the cuda backend on a GPU.
 */
#ifndef KL_BACKEND_H
#define KL_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "compare.h"
#include "task.h"

/* a buffer that the candidate's process maps too: a memfd on the host, a CUDA
 * IPC handle on the GPU (fd -1) */
struct kl_share {
	int fd;                   /* memfd, or -1 */
	size_t n;                 /* bytes */
	unsigned char handle[64]; /* cudaIpcMemHandle_t */
};

struct backend {
	const char *zName;    /* "host" or "cuda" */
	char zDevice[256];    /* human-readable device, e.g. "NVIDIA H100 80GB HBM3" */
	char zArch[32];       /* the device's own architecture ("sm_90"), "" on host; the
	                         target candidates are built for is the worker's
	                         (cuda_target.h: sm_90a on it by default) */
	int ccMajor, ccMinor; /* its compute capability (9.0), 0.0 on host */
	int cc;               /* the same as 10 x major + minor (90); 0 on host */
	int driver;           /* the CUDA driver's version (13000); 0 on host */
	char zUuid[96];       /* the GPU's UUID (NVML), "" where unknown or on host */
	double bandwidthGbs;  /* the device memory's peak bandwidth in GB/s (2 x memory clock x
	                         bus width), 0 where unknown or on host */
	double tflops;        /* the fp32 peak in TFLOP/s (SMs x lanes x 2 x clock), 0 where
	                         unknown or on host */
	double clockPeakMhz;  /* the SM's peak clock in MHz, which the datasheets' peaks
	                         are at; 0 where unknown or on host */
	void *stream;         /* what kl_run receives as `stream` */
	int fatal;            /* set when the device context is unusable (sticky error) */
	int roShared;         /* open_shared maps a buffer read-only where asked: the candidate's
	                         process cannot write its inputs (a write faults) */
	void *priv;           /* backend state */

	/* memory on the device (n bytes); NULL + err on failure */
	void *(*alloc)(struct backend *b, size_t n, char *err);
	void (*release)(struct backend *b, void *p);
	/* memory shared with the candidate's process: n bytes, described in *sh;
	 * NULL + err.  release_shared frees it (and closes sh's fd). */
	void *(*alloc_shared)(struct backend *b, size_t n, struct kl_share *sh, char *err);
	void (*release_shared)(struct backend *b, void *p, struct kl_share *sh);
	/* in the candidate's process: map a buffer shared by the trusted side,
	 * read-only when ro and the backend can; NULL + err */
	void *(*open_shared)(struct backend *b, const struct kl_share *sh, int ro, char *err);
	/* copies between host memory and device memory; 0 or -1 + err */
	int (*upload)(struct backend *b, void *dst, const void *src, size_t n, char *err);
	int (*download)(struct backend *b, void *dst, const void *src, size_t n, char *err);
	/* copy n bytes within device memory; 0 or -1 + err */
	int (*copy)(struct backend *b, void *dst, const void *src, size_t n, char *err);
	/* compare n elements of out with ref (device memory) under tol into r
	 * (compare.h; firstExpected/firstActual filled); 0 or -1 + err */
	int (*compare)(struct backend *b, const void *out, const void *ref, kl_dtype d, int64_t n,
	               const struct task_tol *tol, struct compare_report *r, char *err);
	/* the sums of a precision verdict (compare.h, compare_error64) of n
	 * elements of out (dtype d) against ref, n float64 values (both device
	 * memory) into a[CMP_NSUM]; 0 or -1 + err */
	int (*error64)(struct backend *b, const void *out, kl_dtype d, const void *ref, int64_t n,
	               double *a, char *err);
	/* how many of n elements of es bytes differ between x and y (device
	 * memory), and the first one's index (-1 if none); 0 or -1 + err */
	int (*diff)(struct backend *b, const void *x, const void *y, int64_t n, int es,
	            int64_t *pCount, int64_t *pFirst, char *err);
	/* fill tensor t's elements at p (device memory) from t's distribution,
	 * reproducibly for seed; 0 or -1 + err */
	int (*random)(struct backend *b, void *p, const struct task_tensor *t, uint64_t seed,
	              char *err);
	/* optional: vary tensor t's elements at p (device memory) in place by the
	 * flags, as rng_vary does on the host (rng.h: the same plan and
	 * outliers, the device's own normals), without their round trip
	 * through the host; 0 or -1 + err */
	int (*vary)(struct backend *b, void *p, const struct task_tensor *t, int flags,
	            uint64_t seed, char *err);
	/* dst = a mix of a and b (device memory, n elements of es bytes), element
	 * by element as rng_mix() takes them for seed; 0 or -1 + err */
	int (*mix)(struct backend *b, void *dst, const void *a, const void *src2, int64_t n, int es,
	           uint64_t seed, char *err);
	/* round n elements of dtype d at p (device memory, in place) as
	 * compare_round_mantissa() does on the host; 0 or -1 + err */
	int (*round)(struct backend *b, void *p, kl_dtype d, int64_t n, int bits, int bTruncate,
	             char *err);
	/* set n bytes of device memory to the byte value; 0 or -1 + err */
	int (*fill)(struct backend *b, void *dst, int byte, size_t n, char *err);
	/* evict the caches (called outside the timed region); 0 or -1 + err */
	int (*flush)(struct backend *b, char *err);
	/* optional: queue an empty kernel on the stream (calibrating launches) */
	int (*launch_empty)(struct backend *b, char *err);
	/* optional: evict n bytes at device address p from the caches (the host
	 * backend flushes the candidate's own buffers line by line) */
	void (*evict)(struct backend *b, const void *p, size_t n);
	/* mark the start of a timed run, then its end.  stop yields two times in
	 * milliseconds: *pStream, until the work on `stream` ended (an event
	 * recorded right after kl_run returned), and *pDevice, until a
	 * device-wide synchronize returned (all streams; includes the latency of
	 * the synchronize itself).  On the host both are the wall time. */
	int (*timer_start)(struct backend *b, char *err);
	int (*timer_stop)(struct backend *b, double *pStream, double *pDevice, char *err);
	/* wait for the device and report any error the run left; 0 or -1 + err
	 * (sets b->fatal when the context cannot be used again) */
	int (*sync)(struct backend *b, char *err);
	/* reset per-candidate device state (e.g. the persisting L2 window) */
	int (*reset)(struct backend *b, char *err);
	/* optional: SM clock in MHz now, or -1 */
	int (*clock_mhz)(struct backend *b);
	/* optional (a GPU runner where CUPTI loads, issue 39): open a window of
	 * the device's activity records right before a timed run's timer_start
	 * (its flush queued before is left out of it); 0, or -1 when none */
	int (*kernels_begin)(struct backend *b);
	/* close it after timer_stop: the time the GPU was busy with the run's
	 * kernels, copies and sets (the union of their intervals), ms, and how
	 * many there were into *pN; -1 when there is no such time (none
	 * recorded, too many, CUPTI off) */
	double (*kernels_end)(struct backend *b, int *pN);
	/* optional (a GPU runner where CUPTI's Range Profiler starts: by
	 * default, unless KLOOP_CUPTI is 0 or 1; cupti_range.cu): open a window in which every
	 * launch is profiled for its gpu__time_duration, before a profiled run's flush is queued;
	 * 0, or -1 with why in zProfWhy */
	int (*prof_begin)(struct backend *b);
	/* close it once the device synchronized: the sum of its launches'
	 * durations but the first skip ones (kloop's flush), ms, and how many
	 * into *pN, the first nMax of them each its own into aKernelMs (in
	 * launch order); -1 when there is none (ranges dropped, none left) */
	double (*prof_end)(struct backend *b, int skip, int *pN, double *aKernelMs, int nMax);
	/* why prof_begin is NULL where the runner asked for it, or why its
	 * last window did not open, or "" */
	char zProfWhy[240];
	/* optional: 1 with a description in buf when the device is throttling
	 * (power or thermal) now, 0 when not, -1 when unknown */
	int (*throttled)(struct backend *b, char *buf, size_t n);
	/* optional: a handle another process can open to reach the allocation at
	 * p (from alloc): the cuda backend's cudaIpcMemHandle_t as 128 hex digits
	 * into hex (129 bytes at least); 0 or -1 + err */
	int (*share_handle)(struct backend *b, void *p, char *hex, char *err);
	/* optional: measure what the device does: *pBw GB/s (a device-to-device
	 * copy), *pTflops fp32 TFLOP/s (an FMA kernel); 0 or -1 + err */
	int (*measure)(struct backend *b, double *pBw, double *pTflops, char *err);
	/* optional: measure the dense peaks of the compute types the device has
	 * (task.h; large square matrix products through cuBLASLt, a few hundred
	 * ms) into aTflops[TASK_NCOMPUTE] (0 where it has none; fp32 left 0: the
	 * FMA kernel of measure() is its), the SM clock they ran at into
	 * *pClockMhz and where that clock was read into *pzClockFrom ("nvml",
	 * or "the device's peak clock" without NVML); 0 or -1 + err (peaks.h) */
	int (*peaks)(struct backend *b, double *aTflops, double *pClockMhz,
	             const char **pzClockFrom, char *err);
	/* optional: device memory free and in all, in bytes; 0 or -1 */
	int (*mem_info)(struct backend *b, size_t *pFree, size_t *pTotal);
	void (*destroy)(struct backend *b);
};

/* the CPU backend; NULL + err on failure */
struct backend *backend_host_new(char *err);
/* the GPU backend on device ordinal dev; NULL + err (e.g. no GPU) */
struct backend *backend_cuda_new(int dev, char *err);
/* a runner's backend: without NVML (the device's name, clocks and throttle
 * reasons are the trusted side's; its start costs a runner 7 to 10 ms on an
 * H100); call before backend_cuda_new */
void backend_cuda_for_runner(void);
/* 1 if a CUDA device is usable here (loads the runtime to find out) */
int backend_cuda_available(void);

#endif
