/*
 * cupti_range.cu - a run's kernels timed by the metric Nsight Compute
 * reports, gpu__time_duration.sum, through CUPTI's Range Profiler (issue 39:
 * kloop's events read a microsecond kernel 1.4 to 2.9 us long, CUPTI's
 * activity records 1 us short; on an H200 the Range Profiler came within
 * 2.3% of ncu for every kernel of 3 us and more: bench/gpu/rangeprof.sh,
 * bench/RESULTS.md).  Built into libkloop-cuda.so; libcupti is loaded at run
 * time.  Started by every GPU runner unless KLOOP_CUPTI asks for activity
 * records or none (backend_cuda.c), and used only for the profiled runs
 * that follow a short timing (harness_profiled.c).
 *
 * One metric in one pass, auto ranges (each launch a range, numbered in
 * launch order), kernel replay.  A window is a Start and a Stop around one
 * run: its first range is kloop's L2 flush (queued after the Start), the
 * rest the run's kernels.  The counter data image holds KR_RANGES ranges
 * and is initialized again before each window: a Start costs about 3 ms
 * plus 0.3 ms a KB of image on an H200, so the image is kept small, and a
 * run of more kernels than it holds has no time (its ranges dropped).
 * A driver that restricts profiling to administrators refuses it
 * (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): the first window says so.
 *
 * The device's profiling hardware serves one process at a time: a runner
 * that held it from its start (every runner of an evaluation, the spares,
 * the reference's and the twin's, started it) left the others
 * CUPTI_ERROR_HARDWARE_BUSY, at their start or their window (an H200,
 * 2026-11-30: the profiled runs of one eval in two did not stand), and its
 * start cost every runner 0.3-0.9 s.  So the start only loads CUPTI; the
 * first window loads nvperf, initializes the profiler, asks what the device
 * supports, makes the counter availability and the configuration and
 * enables the profiler on the context (after the runner confined itself and
 * loaded the candidate, which can reach all of this in its process anyway:
 * a profiled time stands only where kloop's events and clock agree), and each
 * window's Start waits a while for the hardware where another runner's
 * window holds it (on an H200 the Start is what takes it).  The profiler
 * is never disabled: enabled again after a disable, CUPTI 13.0 killed the
 * process with SIGSEGV at its next window (bench/gpu: 2026-11-30).
 */
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KR_METRIC "gpu__time_duration.sum"
#define KR_RANGES 64 /* a window's ranges at most: the flush and 63 kernels */
#define KR_BUSY_MS 2000 /* how long a window waits for the hardware, ms */

#define KR_FUNCS(X)                                                                        \
	X(cuptiProfilerInitialize, CUpti_Profiler_Initialize_Params)                       \
	X(cuptiProfilerDeviceSupported, CUpti_Profiler_DeviceSupported_Params)             \
	X(cuptiDeviceGetChipName, CUpti_Device_GetChipName_Params)                         \
	X(cuptiProfilerGetCounterAvailability, CUpti_Profiler_GetCounterAvailability_Params) \
	X(cuptiProfilerHostInitialize, CUpti_Profiler_Host_Initialize_Params)              \
	X(cuptiProfilerHostConfigAddMetrics, CUpti_Profiler_Host_ConfigAddMetrics_Params)  \
	X(cuptiProfilerHostGetConfigImageSize, CUpti_Profiler_Host_GetConfigImageSize_Params) \
	X(cuptiProfilerHostGetConfigImage, CUpti_Profiler_Host_GetConfigImage_Params)      \
	X(cuptiProfilerHostGetNumOfPasses, CUpti_Profiler_Host_GetNumOfPasses_Params)      \
	X(cuptiProfilerHostEvaluateToGpuValues,                                            \
	  CUpti_Profiler_Host_EvaluateToGpuValues_Params)                                  \
	X(cuptiRangeProfilerEnable, CUpti_RangeProfiler_Enable_Params)                     \
	X(cuptiRangeProfilerDisable, CUpti_RangeProfiler_Disable_Params)                   \
	X(cuptiRangeProfilerGetCounterDataSize, CUpti_RangeProfiler_GetCounterDataSize_Params) \
	X(cuptiRangeProfilerCounterDataImageInitialize,                                    \
	  CUpti_RangeProfiler_CounterDataImage_Initialize_Params)                          \
	X(cuptiRangeProfilerSetConfig, CUpti_RangeProfiler_SetConfig_Params)               \
	X(cuptiRangeProfilerStart, CUpti_RangeProfiler_Start_Params)                       \
	X(cuptiRangeProfilerStop, CUpti_RangeProfiler_Stop_Params)                         \
	X(cuptiRangeProfilerDecodeData, CUpti_RangeProfiler_DecodeData_Params)             \
	X(cuptiRangeProfilerGetCounterDataInfo, CUpti_RangeProfiler_GetCounterDataInfo_Params)

#define KR_DECL(f, P) CUptiResult (*f)(P *);

static struct {
	KR_FUNCS(KR_DECL)
	CUptiResult (*resultString)(CUptiResult, const char **);
	CUpti_Profiler_Host_Object *host;
	CUpti_RangeProfiler_Object *obj;
	uint8_t *config, *image;
	size_t nConfig, nImage;
	double toMs; /* the metric's unit in ms (ns: 1e-6) */
	CUcontext ctx;
	int dev;
	const char *chip;
	void *dl;       /* libcupti */
	int ok;         /* started: CUPTI loaded (kld_prof_start) */
	int inited;     /* init_profiler() done, at the first window */
	char dead[240]; /* why init_profiler() failed: every window says so */
	int configured; /* the host's configuration made (at the first window) */
	int busyMs;     /* how long a call waits for the hardware, ms */
	char why[240];  /* why the last window did not open, "" */
	double last[KR_RANGES]; /* the last window's ranges summed, ms each */
	int nLast;
} P;

/* KLOOP_PROF_TRACE names a file each step of the profiler's start and
 * first window appends its milliseconds to, a line a step with the
 * process's id (bench/gpu); opened at the start, before the
 * runner confines itself */
static FILE *trace;
static double trace_t0;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void step(const char *what)
{
	if (!trace)
		return;
	double t = now_ms();
	fprintf(trace, "%d %s %.2f\n", (int)getpid(), what, t - trace_t0);
	fflush(trace);
	trace_t0 = t;
}

static int say(char *err, int nErr, const char *call, CUptiResult r)
{
	const char *s = NULL;
	if (P.resultString)
		P.resultString(r, &s);
	if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
		snprintf(err, nErr,
		         "%s: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (this driver lets only "
		         "administrators profile: NVreg_RestrictProfilingToAdminUsers=0 lifts it)",
		         call);
	else
		snprintf(err, nErr, "%s failed: %s (CUPTI error %d)", call, s ? s : "?", (int)r);
	return -1;
}

#define KR_CALL(f, p)                                                                      \
	do {                                                                               \
		CUptiResult r_ = P.f(&(p));                                                \
		if (r_ != CUPTI_SUCCESS)                                                   \
			return say(err, nErr, #f, r_);                                     \
	} while (0)

/* the libraries CUPTI loads by name for its profiler (libnvperf_host,
 * libnvperf_target), loaded first from libcupti's own directory, where a
 * runner's library path may not lead */
static void preload_nvperf(void *cupti)
{
	Dl_info di;
	void *sym = dlsym(cupti, "cuptiProfilerInitialize");
	if (!sym || !dladdr(sym, &di) || !di.dli_fname)
		return;
	const char *sl = strrchr(di.dli_fname, '/');
	if (!sl)
		return;
	static const char *const names[] = {"libnvperf_host.so", "libnvperf_target.so"};
	for (int i = 0; i < 2; i++) {
		char p[4096];
		snprintf(p, sizeof p, "%.*s/%s", (int)(sl - di.dli_fname), di.dli_fname, names[i]);
		dlopen(p, RTLD_NOW | RTLD_GLOBAL);
	}
}

static int image_init(char *err, int nErr)
{
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params p = {
	    CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
	p.pRangeProfilerObject = P.obj;
	p.counterDataSize = P.nImage;
	p.pCounterData = P.image;
	KR_CALL(cuptiRangeProfilerCounterDataImageInitialize, p);
	return 0;
}

static int configure(char *err, int nErr);

/*
 * The profiler for the current context of device dev, started: CUPTI
 * loaded and the context kept, nothing more (0, or -1 with why in err).
 * Called once, before the runner confines itself; the rest waits for the
 * first window (init_profiler), which most runners never open: on an
 * H200 it cost a runner's start 0.3-0.9 s (bench/gpu, KLOOP_PROF_TRACE:
 * nvperf's libraries 120-180 ms, CUPTI's initialize 15-50 ms, the counter
 * availability 140-760 ms while the evaluation's other runners started).
 */
extern "C" int kld_prof_start(int dev, char *err, int nErr)
{
	const char *names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so",
	                       "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
	                       "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so"};
	const char *tp = getenv("KLOOP_PROF_TRACE");
	if (tp && *tp && !trace)
		trace = fopen(tp, "a");
	trace_t0 = now_ms();
	void *dl = NULL;
	for (size_t i = 0; i < sizeof names / sizeof *names && !dl; i++)
		dl = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		return snprintf(err, nErr, "CUPTI (libcupti.so) could not be loaded: %s",
		                dlerror()),
		       -1;
#define KR_LOAD(f, Pt)                                                                     \
	if (!(*(void **)&P.f = dlsym(dl, #f)))                                             \
		return snprintf(err, nErr, "CUPTI lacks the Range Profiler (%s)", #f), -1;
	KR_FUNCS(KR_LOAD)
#undef KR_LOAD
	*(void **)&P.resultString = dlsym(dl, "cuptiGetResultString");
	void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	int (*getCurrent)(CUcontext *) =
	    cu ? (int (*)(CUcontext *))dlsym(cu, "cuCtxGetCurrent") : NULL;
	CUcontext ctx = NULL;
	if (!getCurrent || getCurrent(&ctx) != 0 || !ctx)
		return snprintf(err, nErr, "no current CUDA context to profile"), -1;
	P.dl = dl;
	P.ctx = ctx;
	P.dev = dev;
	P.toMs = 1e-6; /* gpu__time_duration is in ns (bench/gpu/rangeprof.sh) */
	P.busyMs = KR_BUSY_MS;
	P.ok = 1;
	step("dlopen");
	return 0;
}

/* the profiler's own start, at the first window: nvperf's libraries, CUPTI's
 * profiler initialized, the device asked whether it can and its chip's
 * name; 0, or -1 with why in err */
static int init_profiler(char *err, int nErr)
{
	preload_nvperf(P.dl);
	step("nvperf");
	CUpti_Profiler_Initialize_Params ini = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
	KR_CALL(cuptiProfilerInitialize, ini);
	step("initialize");
	CUpti_Profiler_DeviceSupported_Params sup = {
	    CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
	sup.cuDevice = P.dev;
	sup.api = CUPTI_PROFILER_RANGE_PROFILING;
	KR_CALL(cuptiProfilerDeviceSupported, sup);
	if (sup.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
		return snprintf(err, nErr,
		                "the device does not support CUPTI's Range Profiler (a vGPU, "
		                "confidential computing or an older architecture)"),
		       -1;
	CUpti_Device_GetChipName_Params chip = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
	chip.deviceIndex = (size_t)P.dev;
	KR_CALL(cuptiDeviceGetChipName, chip);
	P.chip = chip.pChipName;
	step("supported");
	return 0;
}


/* a call that waits while another process's window holds the profiling
 * hardware (CUPTI_ERROR_HARDWARE_BUSY), P.busyMs at most */
#define KR_CALL_WAITING(f, p)                                                              \
	do {                                                                               \
		CUptiResult r_;                                                            \
		for (int w_ = 0; (r_ = P.f(&(p))) == CUPTI_ERROR_HARDWARE_BUSY &&          \
		                 w_ < P.busyMs;                                            \
		     w_ += 5)                                                              \
			usleep(5000);                                                      \
		if (r_ != CUPTI_SUCCESS)                                                   \
			return say(err, nErr, #f, r_);                                     \
	} while (0)

/* the host's side, once, at the first window: the device's counter
 * availability, gpu__time_duration.sum's configuration image in one pass */
static int configure(char *err, int nErr)
{
	CUpti_Profiler_GetCounterAvailability_Params av = {
	    CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
	av.ctx = P.ctx;
	KR_CALL_WAITING(cuptiProfilerGetCounterAvailability, av);
	static uint8_t *avail;
	free(avail);
	avail = (uint8_t *)calloc(av.counterAvailabilityImageSize + 1, 1);
	if (!avail)
		return snprintf(err, nErr, "out of memory"), -1;
	av.pCounterAvailabilityImage = avail;
	KR_CALL_WAITING(cuptiProfilerGetCounterAvailability, av);
	step("availability");

	const char *metrics[1] = {KR_METRIC};
	CUpti_Profiler_Host_Initialize_Params hi = {
	    CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
	hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	hi.pChipName = P.chip;
	hi.pCounterAvailabilityImage = avail;
	KR_CALL(cuptiProfilerHostInitialize, hi);
	P.host = hi.pHostObject;
	step("host");
	CUpti_Profiler_Host_ConfigAddMetrics_Params am = {
	    CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
	am.pHostObject = P.host;
	am.ppMetricNames = metrics;
	am.numMetrics = 1;
	KR_CALL(cuptiProfilerHostConfigAddMetrics, am);
	CUpti_Profiler_Host_GetConfigImageSize_Params cs = {
	    CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
	cs.pHostObject = P.host;
	KR_CALL(cuptiProfilerHostGetConfigImageSize, cs);
	P.nConfig = cs.configImageSize;
	P.config = (uint8_t *)calloc(P.nConfig + 1, 1);
	if (!P.config)
		return snprintf(err, nErr, "out of memory"), -1;
	CUpti_Profiler_Host_GetConfigImage_Params ci = {
	    CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
	ci.pHostObject = P.host;
	ci.configImageSize = P.nConfig;
	ci.pConfigImage = P.config;
	KR_CALL(cuptiProfilerHostGetConfigImage, ci);
	CUpti_Profiler_Host_GetNumOfPasses_Params np = {
	    CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
	np.configImageSize = P.nConfig;
	np.pConfigImage = P.config;
	KR_CALL(cuptiProfilerHostGetNumOfPasses, np);
	if (np.numOfPasses != 1)
		return snprintf(err, nErr, "%s takes %zu passes here, not one", KR_METRIC,
		                np.numOfPasses),
		       -1;
	P.configured = 1;
	return 0;
}

/* the profiler enabled on the context and configured, its counter data
 * image made */
static int enable(char *err, int nErr)
{
	const char *metrics[1] = {KR_METRIC};
	CUpti_RangeProfiler_Enable_Params en = {CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
	en.ctx = P.ctx;
	KR_CALL_WAITING(cuptiRangeProfilerEnable, en);
	P.obj = en.pRangeProfilerObject;
	if (!P.image) {
		CUpti_RangeProfiler_GetCounterDataSize_Params ds = {
		    CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
		ds.pRangeProfilerObject = P.obj;
		ds.pMetricNames = metrics;
		ds.numMetrics = 1;
		ds.maxNumOfRanges = KR_RANGES;
		ds.maxNumRangeTreeNodes = KR_RANGES;
		KR_CALL(cuptiRangeProfilerGetCounterDataSize, ds);
		P.nImage = ds.counterDataSize;
		P.image = (uint8_t *)calloc(P.nImage + 1, 1);
		if (!P.image)
			return snprintf(err, nErr, "out of memory"), -1;
	}
	if (image_init(err, nErr) < 0)
		return -1;
	CUpti_RangeProfiler_SetConfig_Params sc = {
	    CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
	sc.pRangeProfilerObject = P.obj;
	sc.configSize = P.nConfig;
	sc.pConfig = P.config;
	sc.counterDataImageSize = P.nImage;
	sc.pCounterDataImage = P.image;
	sc.range = CUPTI_AutoRange;
	sc.replayMode = CUPTI_KernelReplay;
	sc.maxRangesPerPass = KR_RANGES;
	sc.numNestingLevels = 1; /* auto ranges: 1 */
	sc.minNestingLevel = 1;
	sc.passIndex = 0;
	sc.targetNestingLevel = 1;
	KR_CALL(cuptiRangeProfilerSetConfig, sc);
	return 0;
}

/* a window opens: the profiler enabled and configured at the first (and
 * kept so for the runner's life: enabling it again after a disable killed
 * the process with SIGSEGV, CUDA 13.0 on an H200), the counter data image
 * initialized, the profiler started, waiting while another process's
 * window holds the hardware (a Start is what takes it); every launch from
 * here a range.  0, or -1 with why in kld_prof_why() */
extern "C" int kld_prof_begin(void)
{
	char *err = P.why;
	int nErr = (int)sizeof P.why;
	P.why[0] = 0;
	if (!P.ok)
		return snprintf(err, nErr, "the Range Profiler was not started"), -1;
	if (P.dead[0])
		return snprintf(err, nErr, "%s", P.dead), -1;
	int first = !P.obj;
	if (first)
		trace_t0 = now_ms();
	if (!P.inited) {
		if (init_profiler(P.dead, (int)sizeof P.dead) < 0)
			return snprintf(err, nErr, "%s", P.dead), -1;
		P.inited = 1;
	}
	if (!P.configured && configure(err, nErr) < 0)
		return -1;
	if (!P.obj && enable(err, nErr) < 0)
		return -1;
	if (first)
		step("enable");
	if (image_init(err, nErr) < 0)
		return -1;
	CUpti_RangeProfiler_Start_Params st = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
	st.pRangeProfilerObject = P.obj;
	KR_CALL_WAITING(cuptiRangeProfilerStart, st);
	return 0;
}

/* the last window's ranges that kld_prof_end summed, each its own (ms),
 * n at most: how many (a kernel at a time, for bench/gpu's per-kernel
 * comparisons with ncu) */
extern "C" int kld_prof_ranges(double *aMs, int n)
{
	int k = P.nLast < n ? P.nLast : n;
	for (int i = 0; i < k; i++)
		aMs[i] = P.last[i];
	return k;
}

/* why the last window did not open, "" */
extern "C" const char *kld_prof_why(void)
{
	return P.why;
}

/* the window's time, as kld_prof_end says */
static int window_end(int skip, double *pMs, int *pN)
{
	P.nLast = 0;
	char err[256];
	int nErr = (int)sizeof err;
	CUpti_RangeProfiler_Stop_Params sp = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
	sp.pRangeProfilerObject = P.obj;
	KR_CALL(cuptiRangeProfilerStop, sp);
	CUpti_RangeProfiler_DecodeData_Params dd = {
	    CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
	dd.pRangeProfilerObject = P.obj;
	KR_CALL(cuptiRangeProfilerDecodeData, dd);
	CUpti_RangeProfiler_GetCounterDataInfo_Params in = {
	    CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
	in.pCounterDataImage = P.image;
	in.counterDataImageSize = P.nImage;
	KR_CALL(cuptiRangeProfilerGetCounterDataInfo, in);
	if (dd.numOfRangeDropped > 0 || !sp.isAllPassSubmitted || in.numTotalRanges <= (size_t)skip)
		return -1;
	const char *metrics[1] = {KR_METRIC};
	double sum = 0;
	for (size_t i = (size_t)skip; i < in.numTotalRanges; i++) {
		double v = NAN;
		CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
		    CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
		ev.pHostObject = P.host;
		ev.pCounterDataImage = P.image;
		ev.counterDataImageSize = P.nImage;
		ev.rangeIndex = i;
		ev.ppMetricNames = metrics;
		ev.numMetrics = 1;
		ev.pMetricValues = &v;
		KR_CALL(cuptiProfilerHostEvaluateToGpuValues, ev);
		if (!(v >= 0))
			return -1;
		sum += v;
		if (P.nLast < KR_RANGES)
			P.last[P.nLast++] = v * P.toMs;
	}
	*pMs = sum * P.toMs;
	*pN = (int)(in.numTotalRanges - (size_t)skip);
	return 0;
}

/*
 * The window closes (the device synchronized before): the sum of the
 * gpu__time_duration of its ranges but the first skip (kloop's flush), ms,
 * into *pMs, and how many were summed into *pN; 0, or -1 where there is no
 * time (ranges dropped, none left, the profiler off).  After the Stop the
 * hardware is free for another runner's window.
 */
extern "C" int kld_prof_end(int skip, double *pMs, int *pN)
{
	*pMs = -1;
	*pN = 0;
	if (!P.ok || !P.obj)
		return -1;
	return window_end(skip, pMs, pN);
}
