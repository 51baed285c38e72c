/*
 * backend_cuda.c - the GPU backend.  The CUDA runtime (libcudart, the same
 * shared library candidates are linked against) and NVML are loaded at run
 * time, so kloop builds and runs where there is no GPU.  Timing: CUDA events
 * on the candidate's stream, then a device-wide synchronize and a second end
 * event that sees work on every stream (engine/measure/harness/harness_time.c
 * decides which time counts); the L2 flushed with a buffer twice its size
 * and persisting lines reset before every timed run.  The buffers shared
 * with the runner: backend_cuda_share.c; the runtime's entry points (which
 * load_runtime() resolves), its errors and device memory: backend_cuda_rt.c
 * (backend_cuda_priv.h).
 */
#include "backend_cuda_priv.h"

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rng.h"
#include "util.h"

#define R backend_cuda_rt /* every call names it */

/* NVML, optional */
static struct {
	int (*init)(void);
	int (*byPci)(const char *, nvmlDevice_t *);
	int (*clock)(nvmlDevice_t, int, unsigned *);
	int (*reasons)(nvmlDevice_t, unsigned long long *);
	int (*name)(nvmlDevice_t, char *, unsigned);
	int (*uuid)(nvmlDevice_t, char *, unsigned);
	int ok;
} N;

/* kloop's own kernels (engine/device_kernels.cu, built into libkloop-cuda.so) */
struct kld_report {
	double num, den;
	unsigned long long maxAbsBits, mismatches, nonFinite, nanSeen, firstBad, tolFracBits;
	unsigned long long refNaN;
};
static struct {
	int (*compare)(const void *, const void *, int, long long, double, double,
	               struct kld_report *, cudaStream_t);
	int (*diff)(const void *, const void *, long long, int, unsigned long long *, cudaStream_t);
	int (*random)(void *, int, long long, int, double, double, unsigned long long,
	              cudaStream_t);
	int (*mix)(void *, const void *, const void *, long long, int, unsigned long long,
	           cudaStream_t);
	int (*round)(void *, int, long long, int, int, cudaStream_t);
	int (*empty)(cudaStream_t);
	int (*error64)(const void *, int, const void *, long long, double *, cudaStream_t);
	int (*fma)(int, int, float *, cudaStream_t);
	int (*read)(const void *, long long, void *, cudaStream_t);
	int (*peaks)(int, double *, void *, char *, int); /* peaks.cu */
	int (*cuptiStart)(char *, int);                   /* cupti.cu */
	int (*cuptiBegin)(void);
	int (*cuptiEnd)(double *, int *);
	int (*varyStats)(const void *, int, long long, void *, double *, double *, double *,
	                 cudaStream_t);
	int (*varyApply)(void *, int, long long, int, double, double, unsigned long long, void *,
	                 double *, cudaStream_t);
	int (*varyScatter)(void *, int, const long long *, const double *, long long, cudaStream_t);
	int (*profStart)(int, char *, int); /* cupti_range.cu */
	int (*profBegin)(void);
	const char *(*profWhy)(void);
	int (*profEnd)(int, double *, int *);
	int (*profRanges)(double *, int);
	int ok;
} K;

enum {
	ATTR_SM_COUNT = 16,
	ATTR_CLOCK_KHZ = 13, /* cudaDevAttrClockRate: the SM's peak clock */
	ATTR_CC_MAJOR = 75,
	ATTR_CC_MINOR = 76,
	ATTR_L2_SIZE = 38,
	ATTR_MEM_CLOCK_KHZ = 36, /* cudaDevAttrMemoryClockRate */
	ATTR_MEM_BUS_BITS = 37,  /* cudaDevAttrGlobalMemoryBusWidth */
	H2D = 1,
	D2H = 2,
	LIMIT_PERSISTING_L2 = 0x06,
	STREAM_BLOCKING = 0,
	STREAM_NON_BLOCKING = 1,
};

static int forRunner;

/*
 * kloop's stream in a runner is a blocking one: work a candidate puts on
 * the legacy default stream (`<<<grid, block>>>` with no stream, a
 * synchronous cudaMemcpy, PyTorch's current stream where kloop's is not
 * made it) waits for what kloop's stream was given before it, and kloop's
 * stream waits for it: an extension that runs at::softmax on the current
 * stream and its own kernel on the default one, correct in PyTorch (whose
 * current stream is the default one), is ordered as it is there, and its
 * time is inside kloop's events.  With a non-blocking stream its kernel
 * read what at::softmax had not yet written (an H200, 2026-11-30: honest
 * extensions incorrect in one eval of two).  A stream the candidate makes
 * itself is not ordered (own_stream.cu: timed device-wide).  The worker's
 * stream stays non-blocking: its synchronous copies must not wait for it.
 */
static unsigned stream_flags(void)
{
	return forRunner ? STREAM_BLOCKING : STREAM_NON_BLOCKING;
}

void backend_cuda_for_runner(void)
{
	forRunner = 1;
}

static int load_runtime(char *err)
{
	if (R.dl)
		return 0;
	const char *env = getenv("KLOOP_CUDART");
	const char *names[] = {env,
	                       "libcudart.so.13",
	                       "/usr/local/cuda/lib64/libcudart.so.13",
	                       "/usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.13",
	                       "libcudart.so.12",
	                       "/usr/local/cuda/lib64/libcudart.so.12",
	                       "libcudart.so",
	                       "/usr/local/cuda/lib64/libcudart.so"};
	for (size_t i = 0; i < sizeof names / sizeof *names && !R.dl; i++)
		if (names[i] && *names[i])
			R.dl = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
	if (!R.dl)
		return kl_err(
		    err,
		    "the CUDA runtime (libcudart.so) could not be loaded: %s (set KLOOP_CUDART)",
		    dlerror());
#define LOAD(ret, name, args)                                                                      \
	*(void **)&R.name = dlsym(R.dl, #name);                                                    \
	if (!R.name)                                                                               \
		return kl_err(err, "the CUDA runtime lacks %s", #name);
	CUDA_FUNCS(LOAD)
#undef LOAD
	*(void **)&R.cudaMemcpyAsync = dlsym(R.dl, "cudaMemcpyAsync");
	if (!R.cudaMemcpyAsync)
		return kl_err(err, "the CUDA runtime lacks cudaMemcpyAsync");
	const char *kenv = getenv("KLOOP_CUDA_KERNELS");
	char *kp = kenv && *kenv ? xstrdup(kenv) : path_join(exe_dir(), "libkloop-cuda.so");
	void *kd = dlopen(kp, RTLD_NOW | RTLD_LOCAL);
	free(kp);
	if (kd) {
		*(void **)&K.compare = dlsym(kd, "kld_compare");
		*(void **)&K.diff = dlsym(kd, "kld_diff");
		*(void **)&K.random = dlsym(kd, "kld_random");
		*(void **)&K.mix = dlsym(kd, "kld_mix");
		*(void **)&K.round = dlsym(kd, "kld_round");
		*(void **)&K.empty = dlsym(kd, "kld_empty");
		*(void **)&K.read = dlsym(kd, "kld_read");
		*(void **)&K.error64 = dlsym(kd, "kld_error64");
		*(void **)&K.fma = dlsym(kd, "kld_fma");
		*(void **)&K.peaks = dlsym(kd, "kld_peaks");
		*(void **)&K.cuptiStart = dlsym(kd, "kld_cupti_start");
		*(void **)&K.cuptiBegin = dlsym(kd, "kld_cupti_begin");
		*(void **)&K.cuptiEnd = dlsym(kd, "kld_cupti_end");
		*(void **)&K.varyStats = dlsym(kd, "kld_vary_stats");
		*(void **)&K.varyApply = dlsym(kd, "kld_vary_apply");
		*(void **)&K.varyScatter = dlsym(kd, "kld_vary_scatter");
		*(void **)&K.profStart = dlsym(kd, "kld_prof_start");
		*(void **)&K.profBegin = dlsym(kd, "kld_prof_begin");
		*(void **)&K.profWhy = dlsym(kd, "kld_prof_why");
		*(void **)&K.profEnd = dlsym(kd, "kld_prof_end");
		*(void **)&K.profRanges = dlsym(kd, "kld_prof_ranges");
		K.ok = K.compare && K.diff && K.random && K.empty && K.read && K.error64;
	}
	void *nv = forRunner ? NULL : dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (nv) {
		*(void **)&N.init = dlsym(nv, "nvmlInit_v2");
		*(void **)&N.byPci = dlsym(nv, "nvmlDeviceGetHandleByPciBusId_v2");
		*(void **)&N.clock = dlsym(nv, "nvmlDeviceGetClockInfo");
		*(void **)&N.reasons = dlsym(nv, "nvmlDeviceGetCurrentClocksEventReasons");
		if (!N.reasons)
			*(void **)&N.reasons =
			    dlsym(nv, "nvmlDeviceGetCurrentClocksThrottleReasons");
		*(void **)&N.name = dlsym(nv, "nvmlDeviceGetName");
		*(void **)&N.uuid = dlsym(nv, "nvmlDeviceGetUUID");
		N.ok = N.init && N.byPci && N.clock && N.init() == 0;
	}
	return 0;
}

int backend_cuda_available(void)
{
	char err[KL_ERRLEN];
	int n = 0;
	if (load_runtime(err) < 0)
		return 0;
	return R.cudaGetDeviceCount(&n) == 0 && n > 0;
}

/* cudaIpcMemHandle_t: 64 opaque bytes, as hex */
static int c_share_handle(struct backend *b, void *p, char *hex, char *err)
{
	cudaIpcMemHandle_t h;
	cudaError_t e = R.cudaIpcGetMemHandle(&h, p);
	(void)b;
	if (e) {
		R.cudaGetLastError();
		return backend_cuda_err("cudaIpcGetMemHandle", e, err);
	}
	for (int i = 0; i < 64; i++)
		snprintf(hex + 2 * i, 3, "%02x", (unsigned char)h.reserved[i]);
	return 0;
}

static int c_mem_info(struct backend *b, size_t *pFree, size_t *pTotal)
{
	(void)b;
	return R.cudaMemGetInfo(pFree, pTotal) ? -1 : 0;
}

/* ms between c->e0 and c->e1 around fn's work on the stream; -1 on failure */
static double events_ms(struct backend *b)
{
	struct cuda *c = b->priv;
	float ms = 0;
	if (R.cudaEventRecord(c->e1, b->stream) || R.cudaEventSynchronize(c->e1) ||
	    R.cudaEventElapsedTime(&ms, c->e0, c->e1))
		return -1;
	return ms;
}

/* what this device does, measured: a device-to-device copy of 256 MiB (read
 * and written: twice its bytes moved) and the FMA kernel over every SM, each
 * the best of 5 */
static int c_measure(struct backend *b, double *pBw, double *pTflops, char *err)
{
	struct cuda *c = b->priv;
	size_t n = 256u << 20;
	void *x = NULL, *y = NULL;
	cudaError_t e;
	*pBw = *pTflops = 0;
	if ((e = R.cudaMalloc(&x, n)) || (e = R.cudaMalloc(&y, n)) ||
	    (e = R.cudaMemsetAsync(x, 1, n, b->stream))) {
		R.cudaFree(x);
		return backend_cuda_err("measuring the bandwidth", e, err);
	}
	for (int k = 0; k < 6; k++) {
		R.cudaEventRecord(c->e0, b->stream);
		R.cudaMemcpyAsync(y, x, n, 3 /* cudaMemcpyDeviceToDevice */, b->stream);
		double ms = events_ms(b);
		if (k > 0 && ms > 0 && 2.0 * n / (ms * 1e6) > *pBw)
			*pBw = 2.0 * n / (ms * 1e6);
	}
	int sms = 0;
	R.cudaDeviceGetAttribute(&sms, ATTR_SM_COUNT, c->dev);
	for (int k = 0; K.fma && sms > 0 && k < 6; k++) {
		int blocks = sms * 8, iters = 4096;
		R.cudaEventRecord(c->e0, b->stream);
		K.fma(blocks, iters, (float *)c->pReport, b->stream);
		double ms = events_ms(b);
		double tf = 16.0 * iters * blocks * 256 / (ms * 1e9);
		if (k > 0 && ms > 0 && tf > *pTflops)
			*pTflops = tf;
	}
	R.cudaFree(x);
	R.cudaFree(y);
	if ((e = R.cudaGetLastError()))
		return backend_cuda_err("measuring the device", e, err);
	return 0;
}

/* the dense peaks per compute type (peaks.cu), and the SM clock they ran
 * at: NVML's just after them, else the device's peak clock */
static int c_peaks(struct backend *b, double *aTflops, double *pClockMhz, const char **pzClockFrom,
                   char *err)
{
	struct cuda *c = b->priv;
	*pClockMhz = 0;
	*pzClockFrom = NULL;
	if (!K.peaks)
		return kl_err(err, "libkloop-cuda.so has no kld_peaks (rebuild kloop with nvcc)");
	if (K.peaks(b->cc, aTflops, b->stream, err, KL_ERRLEN) < 0)
		return -1;
	int mhz = b->clock_mhz ? b->clock_mhz(b) : -1, khz = 0;
	if (mhz > 0) {
		*pClockMhz = mhz;
		*pzClockFrom = "nvml";
	} else if (R.cudaDeviceGetAttribute(&khz, ATTR_CLOCK_KHZ, c->dev) == 0 && khz > 0) {
		*pClockMhz = khz / 1000.0;
		*pzClockFrom = "the device's peak clock";
	}
	return 0;
}

static void c_release(struct backend *b, void *p)
{
	(void)b;
	R.cudaFree(p);
}

/* a sticky error leaves the context unusable: everything fails from then on */
static int fail(struct backend *b, const char *zWhat, cudaError_t e, char *err)
{
	backend_cuda_err(zWhat, e, err);
	R.cudaGetLastError();
	if (R.cudaDeviceSynchronize() != 0)
		b->fatal = 1;
	return -1;
}

static int c_upload(struct backend *b, void *dst, const void *src, size_t n, char *err)
{
	cudaError_t e = R.cudaMemcpy(dst, src, n, H2D);
	return e ? fail(b, "copying to the device", e, err) : 0;
}

static int c_download(struct backend *b, void *dst, const void *src, size_t n, char *err)
{
	cudaError_t e = R.cudaMemcpy(dst, src, n, D2H);
	return e ? fail(b, "copying from the device", e, err) : 0;
}

static int c_copy(struct backend *b, void *dst, const void *src, size_t n, char *err)
{
	cudaError_t e = R.cudaMemcpyAsync(dst, src, n, 3 /* device to device */, b->stream);
	return e ? fail(b, "copying within the device", e, err) : 0;
}

/* host buffers of at least n bytes each, for checks without kloop's kernels */
static void host_buffers(struct cuda *c, size_t n)
{
	if (c->nHost >= n)
		return;
	free(c->pHostA);
	free(c->pHostB);
	c->pHostA = xmalloc(n);
	c->pHostB = xmalloc(n);
	c->nHost = n;
}

static int c_compare(struct backend *b, const void *out, const void *ref, kl_dtype d, int64_t n,
                     const struct task_tol *tol, struct compare_report *r, char *err)
{
	struct cuda *c = b->priv;
	size_t es = task_dtype_size(d);
	cudaError_t e;
	if (!K.ok) {
		host_buffers(c, (size_t)n * es);
		if (c_download(b, c->pHostA, out, (size_t)n * es, err) < 0 ||
		    c_download(b, c->pHostB, ref, (size_t)n * es, err) < 0)
			return -1;
		compare_buffers(c->pHostA, c->pHostB, d, n, tol, r);
		return 0;
	}
	struct kld_report k;
	if ((e = K.compare(out, ref, (int)d, n, tol->atol, tol->rtol, c->pReport, b->stream)) ||
	    (e = R.cudaStreamSynchronize(b->stream)) ||
	    (e = R.cudaMemcpy(&k, c->pReport, sizeof k, D2H)))
		return fail(b, "comparing on the device", e, err);
	memset(r, 0, sizeof *r);
	r->n = n;
	r->nMismatch = (int64_t)k.mismatches;
	r->nNonFinite = (int64_t)k.nonFinite;
	r->nRefNaN = (int64_t)k.refNaN;
	memcpy(&r->maxAbs, &k.maxAbsBits, sizeof r->maxAbs);
	memcpy(&r->tolFrac, &k.tolFracBits, sizeof r->tolFrac);
	r->relL2 = k.nanSeen   ? INFINITY
	           : k.den > 0 ? sqrt(k.num / k.den)
	           : k.num > 0 ? INFINITY
	                       : 0;
	r->firstBad = k.mismatches ? (int64_t)k.firstBad : -1;
	if (r->firstBad >= 0) {
		unsigned char a[8], x[8];
		if (c_download(b, a, (const char *)out + (size_t)r->firstBad * es, es, err) < 0 ||
		    c_download(b, x, (const char *)ref + (size_t)r->firstBad * es, es, err) < 0)
			return -1;
		r->firstActual = task_dtype_get(a, d, 0);
		r->firstExpected = task_dtype_get(x, d, 0);
	}
	r->pass = r->nMismatch == 0 && r->relL2 <= tol->rel_l2;
	return 0;
}

static int c_error64(struct backend *b, const void *out, kl_dtype d, const void *ref, int64_t n,
                     double *a, char *err)
{
	struct cuda *c = b->priv;
	size_t es = task_dtype_size(d);
	cudaError_t e;
	if (!K.ok || !task_dtype_is_float(d)) {
		host_buffers(c, (size_t)n * (es > 8 ? es : 8));
		if (c_download(b, c->pHostA, out, (size_t)n * es, err) < 0 ||
		    c_download(b, c->pHostB, ref, (size_t)n * 8, err) < 0)
			return -1;
		compare_error64(c->pHostA, d, (const double *)c->pHostB, n, a);
		return 0;
	}
	if ((e = K.error64(out, (int)d, ref, n, c->pReport, b->stream)) ||
	    (e = R.cudaStreamSynchronize(b->stream)) ||
	    (e = R.cudaMemcpy(a, c->pReport, CMP_NSUM * sizeof *a, D2H)))
		return fail(b, "measuring the error against the float64 reference", e, err);
	return 0;
}

static int c_diff(struct backend *b, const void *x, const void *y, int64_t n, int es,
                  int64_t *pCount, int64_t *pFirst, char *err)
{
	struct cuda *c = b->priv;
	cudaError_t e;
	if (!K.ok) {
		host_buffers(c, (size_t)n * (size_t)es);
		if (c_download(b, c->pHostA, x, (size_t)n * (size_t)es, err) < 0 ||
		    c_download(b, c->pHostB, y, (size_t)n * (size_t)es, err) < 0)
			return -1;
		compare_diff(c->pHostA, c->pHostB, n, es, pCount, pFirst);
		return 0;
	}
	unsigned long long res[2];
	if ((e = K.diff(x, y, n, es, c->pReport, b->stream)) ||
	    (e = R.cudaStreamSynchronize(b->stream)) ||
	    (e = R.cudaMemcpy(res, c->pReport, sizeof res, D2H)))
		return fail(b, "comparing on the device", e, err);
	*pCount = (int64_t)res[0];
	*pFirst = res[0] ? (int64_t)res[1] : -1;
	return 0;
}

static int c_random(struct backend *b, void *p, const struct task_tensor *t, uint64_t seed,
                    char *err)
{
	struct cuda *c = b->priv;
	int64_t n = task_numel(t);
	cudaError_t e;
	if (!K.ok) {
		struct rng r;
		host_buffers(c, (size_t)n * task_dtype_size(t->dtype));
		rng_seed(&r, seed);
		rng_fill(&r, t, c->pHostA);
		return c_upload(b, p, c->pHostA, (size_t)n * task_dtype_size(t->dtype), err);
	}
	int dist = t->dist == DIST_NORMAL ? 1 : t->dist == DIST_RANDINT ? 2 : 0;
	if ((e = K.random(p, (int)t->dtype, n, dist, t->a, t->b, seed, b->stream)))
		return fail(b, "generating inputs on the device", e, err);
	return 0;
}

/*
 * rng_vary on the device (backend.h's vary): its statistics, the scaled
 * and heavy-tailed pass (the device's own normals of the seed) and the
 * outliers' scatter there, the plan and the outliers' places and values
 * drawn here as rng_vary draws them (rng_vary_plan, rng_vary_outlier).  A
 * lone eval of a GPU task varied its ten sets through the host: each down,
 * varied on the CPUs and up again, 0.7 s of 2.4 on an H200.
 */
static int c_vary(struct backend *b, void *p, const struct task_tensor *t, int flags, uint64_t seed,
                  char *err)
{
	struct cuda *c = b->priv;
	int64_t n = task_numel(t);
	int d = (int)t->dtype;
	if (!task_dtype_is_float(t->dtype) || n <= 0 || !flags)
		return 0;
	double mean = 0, sd = 0, amax = 0, a, bb;
	cudaError_t e;
	if ((e = K.varyStats(p, d, n, c->pReport, &mean, &sd, &amax, b->stream)))
		return fail(b, "varying inputs on the device", e, err);
	struct rng r;
	rng_vary_plan(&r, seed, flags, n, mean, sd, amax, &a, &bb);
	if ((flags & (RNG_SCALED | RNG_HEAVY)) &&
	    (e = K.varyApply(p, d, n, flags & (RNG_SCALED | RNG_HEAVY), a, bb,
	                     seed ^ 0x6865617679ull, c->pReport, &amax, b->stream)))
		return fail(b, "varying inputs on the device", e, err);
	if (!(flags & RNG_OUTLIERS))
		return 0;
	int64_t m = rng_vary_outliers(n);
	long long *ix = xmalloc((size_t)m * sizeof *ix);
	double *xv = xmalloc((size_t)m * sizeof *xv);
	for (int64_t k = 0; k < m; k++) {
		int64_t i;
		rng_vary_outlier(&r, n, amax, &i, &xv[k]);
		ix[k] = (long long)i;
	}
	void *dv = NULL;
	size_t half = (size_t)m * sizeof *ix;
	if (!(e = R.cudaMalloc(&dv, 2 * half)) && !(e = R.cudaMemcpy(dv, ix, half, H2D)) &&
	    !(e = R.cudaMemcpy((char *)dv + half, xv, half, H2D)))
		e = (cudaError_t)K.varyScatter(p, d, dv, (const double *)((char *)dv + half), m,
		                               b->stream);
	if (!e)
		e = R.cudaStreamSynchronize(b->stream);
	if (dv)
		R.cudaFree(dv);
	free(ix);
	free(xv);
	return e ? fail(b, "placing the outliers on the device", e, err) : 0;
}

static int c_round(struct backend *b, void *p, kl_dtype d, int64_t n, int bits, int tr, char *err)
{
	struct cuda *c = b->priv;
	cudaError_t e;
	if (!K.ok || !K.round) {
		/* on the CPU: down, rounded, up */
		size_t bytes = (size_t)n * (size_t)task_dtype_size(d);
		host_buffers(c, bytes);
		if (c_download(b, c->pHostA, p, bytes, err) < 0)
			return -1;
		compare_round_mantissa(c->pHostA, d, n, bits, tr);
		return c_upload(b, p, c->pHostA, bytes, err);
	}
	if ((e = K.round(p, (int)d, n, bits, tr, b->stream)))
		return fail(b, "rounding inputs on the device", e, err);
	return 0;
}

static int c_mix(struct backend *b, void *dst, const void *a, const void *src2, int64_t n, int es,
                 uint64_t seed, char *err)
{
	struct cuda *c = b->priv;
	cudaError_t e;
	size_t bytes = (size_t)n * (size_t)es;
	if (!K.ok || !K.mix) {
		/* on the CPU: both sets down, the mix up */
		host_buffers(c, bytes);
		if (c_download(b, c->pHostA, a, bytes, err) < 0 ||
		    c_download(b, c->pHostB, src2, bytes, err) < 0)
			return -1;
		rng_mix(c->pHostA, c->pHostA, c->pHostB, n, es, seed);
		return c_upload(b, dst, c->pHostA, bytes, err);
	}
	if ((e = K.mix(dst, a, src2, n, es, seed, b->stream)))
		return fail(b, "mixing inputs on the device", e, err);
	return 0;
}

static int c_fill(struct backend *b, void *dst, int byte, size_t n, char *err)
{
	cudaError_t e = R.cudaMemsetAsync(dst, byte, n, b->stream);
	return e ? fail(b, "cudaMemsetAsync", e, err) : 0;
}

static int c_flush(struct backend *b, char *err)
{
	struct cuda *c = b->priv;
	static int gen;
	/* persisting lines survive ordinary traffic: demote them first */
	cudaError_t e = R.cudaCtxResetPersistingL2Cache();
	if (e)
		return fail(b, "cudaCtxResetPersistingL2Cache", e, err);
	/* reading leaves the L2 clean, so the run does not pay for writing back
	 * the flush; without kloop's kernels, write the buffer instead */
	if (K.ok)
		e = K.read(c->pFlush, (long long)(c->nFlush & ~(size_t)15), c->pReport, b->stream);
	else
		e = R.cudaMemsetAsync(c->pFlush, ++gen & 0xff, c->nFlush, b->stream);
	return e ? fail(b, "flushing the L2", e, err) : 0;
}

static int c_empty(struct backend *b, char *err)
{
	cudaError_t e = K.ok ? K.empty(b->stream) : 0;
	return e ? fail(b, "launching an empty kernel", e, err) : 0;
}

static int c_sync(struct backend *b, char *err)
{
	cudaError_t e = R.cudaDeviceSynchronize();
	if (!e)
		e = R.cudaGetLastError();
	if (!e)
		return 0;
	return fail(b, "the run failed", e, err);
}

static int c_timer_start(struct backend *b, char *err)
{
	struct cuda *c = b->priv;
	cudaError_t e = R.cudaEventRecord(c->e0, b->stream);
	return e ? fail(b, "cudaEventRecord", e, err) : 0;
}

static int c_timer_stop(struct backend *b, double *pStream, double *pDevice, char *err)
{
	struct cuda *c = b->priv;
	cudaError_t e;
	/* e1: the end of the work on the candidate's stream; then a device-wide
	 * synchronize, and e2, so that work on other streams is seen too */
	if ((e = R.cudaEventRecord(c->e1, b->stream)))
		return fail(b, "cudaEventRecord", e, err);
	if ((e = R.cudaDeviceSynchronize()))
		return fail(b, "the timed run failed", e, err);
	if ((e = R.cudaEventRecord(c->e2, b->stream)) || (e = R.cudaEventSynchronize(c->e2)))
		return fail(b, "cudaEventRecord", e, err);
	float f1 = 0, f2 = 0;
	if ((e = R.cudaEventElapsedTime(&f1, c->e0, c->e1)) ||
	    (e = R.cudaEventElapsedTime(&f2, c->e0, c->e2)))
		return fail(b, "cudaEventElapsedTime", e, err);
	*pStream = f1;
	*pDevice = f2;
	return 0;
}

static int c_kernels_begin(struct backend *b)
{
	(void)b;
	return K.cuptiBegin();
}

static double c_kernels_end(struct backend *b, int *pN)
{
	double ms = -1;
	(void)b;
	return K.cuptiEnd(&ms, pN) < 0 ? -1 : ms;
}

static int c_prof_begin(struct backend *b)
{
	int rc = K.profBegin();
	const char *z = rc < 0 && K.profWhy ? K.profWhy() : NULL;
	snprintf(b->zProfWhy, sizeof b->zProfWhy, "%s", z ? z : "");
	return rc;
}

static double c_prof_end(struct backend *b, int skip, int *pN, double *aKernelMs, int nMax)
{
	double ms = -1;
	(void)b;
	if (K.profEnd(skip, &ms, pN) < 0)
		return -1;
	/* each kernel's own (the ranges it summed, the flush's left out) */
	int k = K.profRanges ? K.profRanges(aKernelMs, nMax) : 0;
	for (int i = k; i < nMax; i++)
		aKernelMs[i] = -1;
	return ms;
}

static int c_reset(struct backend *b, char *err)
{
	struct cuda *c = b->priv;
	/* a fresh stream drops any access-policy window set on the old one */
	cudaStream_t s;
	cudaError_t e = R.cudaDeviceSynchronize();
	if (e)
		return fail(b, "synchronizing before the candidate", e, err);
	if ((e = R.cudaStreamCreateWithFlags(&s, stream_flags())))
		return fail(b, "cudaStreamCreateWithFlags", e, err);
	R.cudaStreamDestroy(b->stream);
	b->stream = s;
	R.cudaDeviceSetLimit(LIMIT_PERSISTING_L2, 0);
	R.cudaCtxResetPersistingL2Cache();
	R.cudaGetLastError();
	(void)c;
	return 0;
}

static int c_clock(struct backend *b)
{
	struct cuda *c = b->priv;
	unsigned mhz = 0;
	if (!c->nvml || N.clock(c->nvml, 1 /* NVML_CLOCK_SM */, &mhz) != 0)
		return -1;
	return (int)mhz;
}

static int c_throttled(struct backend *b, char *buf, size_t n)
{
	struct cuda *c = b->priv;
	unsigned long long r = 0;
	if (!c->nvml || !N.reasons || N.reasons(c->nvml, &r) != 0)
		return -1;
	static const struct {
		unsigned long long bit;
		const char *name;
	} reasons[] = {{0x4, "software power cap"},
	               {0x8, "hardware slowdown"},
	               {0x20, "software thermal slowdown"},
	               {0x40, "hardware thermal slowdown"},
	               {0x80, "hardware power brake"}};
	size_t used = 0;
	buf[0] = 0;
	for (size_t i = 0; i < sizeof reasons / sizeof *reasons; i++)
		if (r & reasons[i].bit)
			used += (size_t)snprintf(buf + used, used < n ? n - used : 0, "%s%s",
			                         used ? ", " : "", reasons[i].name);
	return used > 0;
}

static void c_destroy(struct backend *b)
{
	struct cuda *c = b->priv;
	R.cudaFree(c->pFlush);
	R.cudaFree(c->pReport);
	free(c->pHostA);
	free(c->pHostB);
	free(c);
	free(b);
}

/*
 * The runner keeps what a candidate frees with cudaFreeAsync in the device's
 * default pool (release threshold: unlimited), as an application's allocator
 * would.  The harness synchronises after every run, and with the default
 * threshold (0) each synchronisation gave the pool's memory back, so every
 * call of a candidate allocating its scratch with cudaMallocAsync paid a
 * fresh allocation (3 ms on layernorm's seed, timed from an idle device)
 * that no real caller pays, and its timing went device-wide.  Best effort:
 * a runtime without pools is left as it is.
 */
static void keep_pool(int dev)
{
	int (*getPool)(void **, int);
	int (*setAttr)(void *, int, void *);
	*(void **)&getPool = dlsym(R.dl, "cudaDeviceGetDefaultMemPool");
	*(void **)&setAttr = dlsym(R.dl, "cudaMemPoolSetAttribute");
	void *pool = NULL;
	uint64_t all = UINT64_MAX;
	if (getPool && setAttr && getPool(&pool, dev) == 0)
		setAttr(pool, 4 /* cudaMemPoolAttrReleaseThreshold */, &all);
	R.cudaGetLastError();
}

struct backend *backend_cuda_new(int dev, char *err)
{
	if (load_runtime(err) < 0)
		return NULL;
	int n = 0;
	cudaError_t e = R.cudaGetDeviceCount(&n);
	if (e || n == 0)
		return kl_err(err, "no CUDA device is usable here (%s)",
		              e ? R.cudaGetErrorString(e) : "the driver reports none"),
		       NULL;
	if (dev < 0 || dev >= n)
		return kl_err(err, "CUDA device %d does not exist (there are %d)", dev, n), NULL;
	if ((e = R.cudaSetDevice(dev)))
		return backend_cuda_err("cudaSetDevice", e, err), NULL;
	struct backend *b = xcalloc(1, sizeof *b);
	struct cuda *c = xcalloc(1, sizeof *c);
	b->zName = "cuda";
	b->priv = c;
	c->dev = dev;
	int major = 0, minor = 0, l2 = 0, sms = 0;
	R.cudaDeviceGetAttribute(&major, ATTR_CC_MAJOR, dev);
	R.cudaDeviceGetAttribute(&minor, ATTR_CC_MINOR, dev);
	R.cudaDeviceGetAttribute(&l2, ATTR_L2_SIZE, dev);
	R.cudaDeviceGetAttribute(&sms, ATTR_SM_COUNT, dev);
	/* the memory's peak: double data rate over the bus (H100 SXM: 2 x 2.619
	 * GHz x 5120 bits = 3.35 TB/s) */
	int memKhz = 0, busBits = 0;
	if (R.cudaDeviceGetAttribute(&memKhz, ATTR_MEM_CLOCK_KHZ, dev) == 0 &&
	    R.cudaDeviceGetAttribute(&busBits, ATTR_MEM_BUS_BITS, dev) == 0 && memKhz > 0 &&
	    busBits > 0)
		b->bandwidthGbs = 2.0 * memKhz * 1e3 * (busBits / 8.0) / 1e9;
	/* the fp32 peak: an FMA (2 FLOPs) per lane per clock, 64 lanes an SM
	 * before Ampere's consumer parts and on A100, 128 on sm_86 and after
	 * (H100 SXM: 132 x 128 x 2 x 1.98 GHz = 66.9 TFLOP/s) */
	int clkKhz = 0;
	if (R.cudaDeviceGetAttribute(&clkKhz, ATTR_CLOCK_KHZ, dev) == 0 && clkKhz > 0 && sms > 0) {
		int lanes = major >= 9 || (major == 8 && minor >= 6) ? 128 : 64;
		b->tflops = (double)sms * lanes * 2.0 * clkKhz * 1e3 / 1e12;
	}
	if (clkKhz > 0)
		b->clockPeakMhz = clkKhz / 1000.0;
	/* the device's own; the target its candidates are built for is chosen
	 * from it where they are compiled (cuda_target.h) */
	snprintf(b->zArch, sizeof b->zArch, "sm_%d%d", major, minor);
	b->ccMajor = major;
	b->ccMinor = minor;
	char pci[64] = "", name[96] = "GPU";
	if (N.ok && R.cudaDeviceGetPCIBusId(pci, sizeof pci, dev) == 0 &&
	    N.byPci(pci, &c->nvml) != 0)
		c->nvml = NULL;
	if (c->nvml && N.name)
		N.name(c->nvml, name, sizeof name);
	if (c->nvml && N.uuid && N.uuid(c->nvml, b->zUuid, sizeof b->zUuid) != 0)
		b->zUuid[0] = 0;
	int drv = 0, rt = 0;
	R.cudaDriverGetVersion(&drv);
	R.cudaRuntimeGetVersion(&rt);
	b->cc = 10 * major + minor;
	b->driver = drv;
	snprintf(b->zDevice, sizeof b->zDevice,
	         "%s (%s, %d SMs, L2 %d MB, driver CUDA %d.%d, runtime %d.%d%s)", name, b->zArch,
	         sms, l2 >> 20, drv / 1000, (drv % 1000) / 10, rt / 1000, (rt % 1000) / 10,
	         K.ok ? "" : "; checks on the CPU: libkloop-cuda.so not found");
	c->nFlush = 2 * (size_t)(l2 > 0 ? l2 : 64 << 20);
	if ((e = R.cudaStreamCreateWithFlags(&b->stream, stream_flags())) ||
	    (e = R.cudaEventCreate(&c->e0)) || (e = R.cudaEventCreate(&c->e1)) ||
	    (e = R.cudaEventCreate(&c->e2)) || (e = R.cudaMalloc(&c->pFlush, c->nFlush)) ||
	    (e = R.cudaMalloc(&c->pReport, 256)) ||
	    (e = R.cudaMemsetAsync(c->pFlush, 0, c->nFlush, b->stream))) {
		backend_cuda_err("setting up the device", e, err);
		free(c);
		free(b);
		return NULL;
	}
	if (forRunner)
		keep_pool(dev);
	/* a runner times its runs by events, and the profiled runs that follow
	 * a short timing (worker/requests.c) by CUPTI's Range Profiler where it
	 * loads (by default, and KLOOP_CUPTI=range); KLOOP_CUPTI=1 (or
	 * libcupti's path) times the runs' kernels by CUPTI's activity records
	 * instead (cupti.cu), KLOOP_CUPTI=0 by events alone */
	char cerr[KL_ERRLEN];
	const char *cu = getenv("KLOOP_CUPTI");
	if (forRunner && (!cu || !*cu || !strcmp(cu, "range"))) {
		if (!K.profStart || !K.profBegin || !K.profEnd || !K.profRanges)
			snprintf(b->zProfWhy, sizeof b->zProfWhy,
			         "libkloop-cuda.so has no Range Profiler (an older build)");
		else if (K.profStart(dev, cerr, KL_ERRLEN) < 0)
			snprintf(b->zProfWhy, sizeof b->zProfWhy, "CUPTI's Range Profiler: %.200s",
			         cerr);
		else
			b->prof_begin = c_prof_begin, b->prof_end = c_prof_end;
	} else if (forRunner && K.cuptiStart && K.cuptiBegin && K.cuptiEnd &&
	           K.cuptiStart(cerr, KL_ERRLEN) == 0) {
		b->kernels_begin = c_kernels_begin;
		b->kernels_end = c_kernels_end;
	}
	b->alloc = backend_cuda_alloc;
	b->release = c_release;
	b->alloc_shared = backend_cuda_alloc_shared;
	b->release_shared = backend_cuda_release_shared;
	b->open_shared = backend_cuda_open_shared;
	b->upload = c_upload;
	b->download = c_download;
	b->fill = c_fill;
	b->copy = c_copy;
	b->compare = c_compare;
	b->error64 = c_error64;
	b->diff = c_diff;
	b->random = c_random;
	if (K.ok && K.varyStats && K.varyApply && K.varyScatter)
		b->vary = c_vary;
	b->mix = c_mix;
	b->round = c_round;
	b->launch_empty = c_empty;
	b->flush = c_flush;
	b->share_handle = c_share_handle;
	b->mem_info = c_mem_info;
	b->measure = c_measure;
	b->peaks = c_peaks;
	b->timer_start = c_timer_start;
	b->timer_stop = c_timer_stop;
	b->sync = c_sync;
	b->reset = c_reset;
	b->clock_mhz = c_clock;
	b->throttled = c_throttled;
	b->destroy = c_destroy;
	return b;
}
