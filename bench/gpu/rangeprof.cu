/*
 * rangeprof.cu - does CUPTI's Range Profiler read Nsight Compute's kernel
 * durations, and what does it cost a run (issue 39)?
 *
 * Issue 39 wants kernels of 3 us and more timed within 3% of Nsight
 * Compute's gpu__time_duration.sum (ncu --cache-control all --clock-control
 * none).  On an H200 CUPTI's activity records (CONCURRENT_KERNEL start/end)
 * read ~1 us short of ncu for small kernels (GELU 1.76 against 2.82 us,
 * softmax 4.29 against 5.38, an empty kernel 0.6 against 1.5) and events
 * around one launch 1.4-1.9 us long.  ncu's figure is a hardware counter
 * read around the kernel; CUPTI's Range Profiler (cupti_range_profiler.h,
 * CUDA 12.6+) collects the very same metric, per kernel with auto ranges and
 * kernel replay.  This times the same kernels on kloop's loop (the L2 flush,
 * e0, the kernel, e1, a device synchronize; engine/measure/backend/
 * backend_cuda.c) three ways, one process a way, and runs the loop bare for
 * ncu to read:
 *
 *   rangeprof header            the table's column names
 *   rangeprof METHOD [N]        N timed runs of each kernel (200) after 10
 *                               untimed, METHOD one of
 *     events    the events' e0-e1
 *     activity  as events with CUPTI activity CONCURRENT_KERNEL on: the
 *               timed kernel's record end - start (the flush kernel's
 *               records told apart by name)
 *     range     as events under the Range Profiler collecting
 *               gpu__time_duration.sum, CUPTI_AutoRange + CUPTI_KernelReplay:
 *               every launch its own range (the flush kernel's too: a run is
 *               two ranges, its second the timed kernel's), collected in
 *               batches of RP_BATCH runs (50) a Start/Stop, decoded and
 *               evaluated after each batch
 *     plain     the loop untimed, for ncu (bench/gpu/rangeprof.sh):
 *               ncu --metrics gpu__time_duration.sum --csv --cache-control all
 *                   --clock-control none -k regex:'^rp_' rangeprof plain 30
 *
 * A row (us): method, kernel, runs, the method's median, p10, p90; passes
 * (the Range Profiler's, for one metric one); host_us, the host's wall time
 * a run over the kernel's 10 + N runs with the method's own work (activity:
 * the closing flush of records; range: the batches' Start, Stop, decode and
 * evaluation); run_us, the median wall time of one run from the flush's
 * launch to the synchronize's return; ev_med, the events' e0-e1 under the
 * method; sm_mhz, NVML's SM clock after the middle timed run.  '#' lines:
 * the device, CUPTI's settings, what did not match.
 *
 * Kernels (each its real memory traffic, inputs set once, nothing checked),
 * named rp_ so that ncu's filter takes them and not the flush (rpf_):
 * rp_empty <<<1,32>>>; rp_gelu_erf, bench/gpu/usec/gelu.cu's GELU (erf) over
 * 16 x 16384 floats (ncu 2.82 us); rp_softmax, usec/softmax.cu's row softmax
 * 16 x 16384 (ncu 5.38 us); rp_gelu1m, GELU (tanh) over 1M floats
 * (ncu 5.09 us); rp_sum, usec/sum.cu's sum over dimension 1 of 16 x 256 x
 * 256 (ncu 17.6 us); rp_gelu8m, GELU (tanh) over 8M floats (~20 us).  The
 * flush: kloop's (device_kernels.cu kld_l2_flush_kernel), a read of twice
 * the L2's bytes, after cudaCtxResetPersistingL2Cache (c_flush).
 *
 * Build (CUDA 13: the CUPTI headers in $CUDA/include, libcupti.so.13 and
 * libnvperf_{host,target}.so, which CUPTI loads, in $CUDA/lib64):
 * bench/gpu/rangeprof.sh, or
 *   nvcc -O2 -gencode=arch=compute_90a,code=sm_90a -I$CUDA/include \
 *        -o /tmp/rangeprof bench/gpu/rangeprof.cu -L$CUDA/lib64 -lcupti \
 *        -lnvperf_host -lnvperf_target -ldl -Xlinker --disable-new-dtags \
 *        -Xlinker -rpath -Xlinker $CUDA/lib64
 * Every CUPTI call is checked: a failure prints the call, CUPTI's name for
 * the result and its message, and exits 2 (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
 * counters need root unless the driver has NVreg_RestrictProfilingToAdminUsers=0).
 * Env: RP_BATCH (runs a Start/Stop, 50; 0: a kernel's runs in one),
 * RP_REINIT (1: the counter data image initialized again before each batch;
 * 0: sized once for every range of the process and never reset),
 * RP_METRIC (gpu__time_duration.sum), RP_DUMP=dir (every timed run's
 * numbers to dir/<method>.tsv).
 */
#include <cuda_runtime.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WARM 10           /* untimed runs before the timed ones */
#define NK 6              /* timed kernels */
#define ACT_BUF (4 << 20) /* bytes of an activity buffer handed to CUPTI */
#define MAX_REC (1 << 16) /* activity records kept */
#define RANGES_PER_RUN 4  /* room in the counter data image a run (2 used) */
#define METRIC "gpu__time_duration.sum"

enum { M_EVENTS, M_ACTIVITY, M_RANGE, M_PLAIN };
static const char *mName[] = {"events", "activity", "range", "plain"};
static int gMethod = -1;

/* ---- failures: one clear line, a nonzero exit ---- */

static const char *method_name(void)
{
	return gMethod >= 0 ? mName[gMethod] : "?";
}

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "rangeprof %s: ", method_name());
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void cuda_check(cudaError_t e, const char *what, int line)
{
	if (e != cudaSuccess)
		die("line %d: %s failed: %s (%s)", line, what, cudaGetErrorName(e),
		    cudaGetErrorString(e));
}
#define CK(x) cuda_check((x), #x, __LINE__)

static const char *cupti_name(CUptiResult r)
{
	const char *s = NULL;
	if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
		s = "?";
	return s;
}

/* a CUPTI failure: the call, CUPTI's name and message for it, exit 2 */
static void cupti_check(CUptiResult r, const char *what, int line)
{
	if (r == CUPTI_SUCCESS)
		return;
	const char *msg = NULL;
	if (cuptiGetErrorMessage(r, &msg) != CUPTI_SUCCESS || !msg)
		msg = "";
	fprintf(stderr, "rangeprof %s: line %d: %s failed: %s (%d) %s\n", method_name(), line, what,
	        cupti_name(r), (int)r, msg);
	if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
		fprintf(stderr,
		        "rangeprof %s: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: reading the GPU's "
		        "performance counters needs root (CAP_SYS_ADMIN) unless the driver is "
		        "loaded with NVreg_RestrictProfilingToAdminUsers=0\n",
		        method_name());
	fflush(stdout);
	exit(2);
}
#define CP(x) cupti_check((x), #x, __LINE__)

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* ---- NVML's SM clock, optional (loaded as kloop's backend loads it) ---- */

static struct {
	int (*init)(void);
	int (*byPci)(const char *, void **);
	int (*clock)(void *, int, unsigned *);
	void *dev;
} NV;

static void nvml_open(void)
{
	void *dl = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		return;
	*(void **)&NV.init = dlsym(dl, "nvmlInit_v2");
	*(void **)&NV.byPci = dlsym(dl, "nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&NV.clock = dlsym(dl, "nvmlDeviceGetClockInfo");
	char pci[64];
	if (!NV.init || !NV.byPci || !NV.clock || NV.init() != 0 ||
	    cudaDeviceGetPCIBusId(pci, sizeof pci, 0) != cudaSuccess || NV.byPci(pci, &NV.dev) != 0)
		NV.dev = NULL;
}

static double sm_mhz(void)
{
	unsigned mhz = 0;
	if (!NV.dev || NV.clock(NV.dev, 1 /* NVML_CLOCK_SM */, &mhz) != 0)
		return NAN;
	return mhz;
}

/* ---- the kernels (one copy for bench/gpu's probes) ---- */

#define PK(n) rp_##n
#define PF(n) rpf_##n
#include "probe_kernels.cuh"

#define GELU_ERF (16LL * 16384)
#define SM_ROWS 16
#define SM_COLS 16384
#define GELU_1M (1LL << 20)
#define GELU_8M (8LL << 20)
#define SUM_B 16
#define SUM_N 256
#define SUM_M 256

/* in size order; the names are the kernels' (ncu's rows) */
static const char *kName[NK] = {"rp_empty",        "rp_gelu_erf", "rp_softmax",
                                "rp_gelu1m", "rp_sum",  "rp_gelu8m"};

struct dev {
	cudaStream_t s;
	cudaEvent_t e0, e1;
	void *flush;
	size_t nFlush;
	unsigned *sink;
	float *x, *y;
};

static void launch(const struct dev *d, int k)
{
	switch (k) {
	case 0:
		rp_empty<<<1, 32, 0, d->s>>>();
		break;
	case 1:
		rp_gelu_erf<<<(unsigned)(GELU_ERF / 256), 256, 0, d->s>>>(d->x, d->y, GELU_ERF);
		break;
	case 2:
		rp_softmax<<<SM_ROWS, SM_T, 0, d->s>>>(d->x, d->y, SM_COLS);
		break;
	case 3:
		rp_gelu1m<<<(unsigned)(GELU_1M / 256), 256, 0, d->s>>>(d->x, d->y, GELU_1M);
		break;
	case 4:
		rp_sum<<<(SUM_B * SUM_M + 127) / 128, 128, 0, d->s>>>(d->x, d->y, SUM_B, SUM_N,
		                                                      SUM_M);
		break;
	default:
		rp_gelu8m<<<(unsigned)(GELU_8M / 256), 256, 0, d->s>>>(d->x, d->y, GELU_8M);
		break;
	}
	CK(cudaGetLastError());
}

/* kloop's c_flush: persisting lines demoted, then the read flush kernel */
static void flush(const struct dev *d)
{
	CK(cudaCtxResetPersistingL2Cache());
	rpf_flush_read<<<4096, 256, 0, d->s>>>((const uint4 *)d->flush, (long long)(d->nFlush / 16),
	                                  d->sink);
	CK(cudaGetLastError());
}

/* what one run measured (us; NAN: not measured) */
struct sample {
	double ev;   /* e0-e1 */
	double dur;  /* the method's duration of the kernel (events: ev) */
	double host; /* the flush's launch to the synchronize's return */
};

/* one run of kernel k as kloop's CM_RUN times it; plain: no events */
static void run_once(const struct dev *d, int k, int timed, struct sample *o)
{
	double t = now_us();
	flush(d);
	if (timed)
		CK(cudaEventRecord(d->e0, d->s));
	launch(d, k);
	if (timed)
		CK(cudaEventRecord(d->e1, d->s));
	CK(cudaDeviceSynchronize());
	o->host = now_us() - t;
	o->ev = o->dur = NAN;
	if (timed) {
		float ms = 0;
		CK(cudaEventElapsedTime(&ms, d->e0, d->e1));
		o->ev = ms * 1e3;
	}
}

/* ---- activity records (CONCURRENT_KERNEL) ---- */

enum { R_FLUSH = -1, R_OTHER = -2 };

struct arec {
	uint32_t corr;       /* correlation id: launch order */
	int what;            /* kernel index, R_FLUSH or R_OTHER */
	uint64_t start, end; /* ns */
};

static struct {
	pthread_mutex_t mu;
	struct arec *a;
	int n, over;
	uint64_t dropped;
} A = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0};

static int kernel_index(const char *name)
{
	if (!name)
		return R_OTHER;
	if (!strcmp(name, "rpf_flush_read"))
		return R_FLUSH;
	for (int k = 0; k < NK; k++)
		if (!strcmp(name, kName[k]))
			return k;
	return R_OTHER;
}

static void CUPTIAPI act_requested(uint8_t **pBuf, size_t *pSize, size_t *pMax)
{
	*pBuf = (uint8_t *)aligned_alloc(8, ACT_BUF);
	*pSize = *pBuf ? ACT_BUF : 0;
	*pMax = 0;
}

static void CUPTIAPI act_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                                   size_t valid)
{
	(void)size;
	CUpti_Activity *r = NULL;
	pthread_mutex_lock(&A.mu);
	while (valid > 0 && cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
		if (r->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			continue;
		const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)r;
		if (A.n == MAX_REC) {
			A.over = 1;
			continue;
		}
		struct arec *d = &A.a[A.n++];
		d->corr = k->correlationId;
		d->what = kernel_index(k->name);
		d->start = k->start;
		d->end = k->end;
	}
	size_t dr = 0;
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dr) == CUPTI_SUCCESS)
		A.dropped += dr;
	pthread_mutex_unlock(&A.mu);
	free(buf);
}

static int by_corr(const void *a, const void *b)
{
	const struct arec *x = (const struct arec *)a, *y = (const struct arec *)b;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

/* after kernel k's runs and a forced flush: its records in launch order,
 * the i-th its i-th run's; the records then dropped */
static void act_collect(int k, int per, struct sample *s, char *note, size_t nNote)
{
	pthread_mutex_lock(&A.mu);
	qsort(A.a, (size_t)A.n, sizeof *A.a, by_corr);
	int m = 0, flushes = 0, other = 0;
	for (int i = 0; i < A.n; i++) {
		if (A.a[i].what == k) {
			if (m < per && A.a[i].end > A.a[i].start && A.a[i].start)
				s[m].dur = (double)(A.a[i].end - A.a[i].start) / 1e3;
			m++;
		} else if (A.a[i].what == R_FLUSH) {
			flushes++;
		} else {
			other++;
		}
	}
	if (m != per)
		for (int i = 0; i < per; i++)
			s[i].dur = NAN; /* not matched: no CUPTI column */
	if (m != per || flushes != per || other)
		snprintf(note, nNote,
		         "%s: %d records of the kernel and %d of the flush for %d runs, %d other%s",
		         kName[k], m, flushes, per, other, m != per ? ": not matched" : "");
	A.n = 0;
	pthread_mutex_unlock(&A.mu);
}

/* ---- the Range Profiler ---- */

static struct {
	CUpti_Profiler_Host_Object *host;
	CUpti_RangeProfiler_Object *obj;
	uint8_t *config, *image;
	size_t nConfig, nImage, capacity; /* bytes, bytes, ranges */
	size_t passes;
	const char *metric;
	double toUs; /* the metric's unit in us */
	const char *unit;
	size_t seen; /* ranges of the image already read */
	int reinit;
	size_t dropped;      /* ranges, over all batches */
	int notAllSubmitted; /* batches whose Stop said passes were left */
	int mismatched;      /* batches whose ranges did not pair with runs */
	int flushPicked;     /* kernel ranges named like the flush */
	char firstNames[256];
	double tStart, tStop, tDecode, tEval; /* us, summed */
	size_t nEval, nBatch;
} RP;

static CUcontext current_context(void)
{
	/* the runtime's primary context, without linking libcuda */
	CUresult(CUDAAPI * getCurrent)(CUcontext *) = NULL;
	cudaDriverEntryPointQueryResult q;
	CK(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", (void **)&getCurrent, 12000,
	                                    cudaEnableDefault, &q));
	if (q != cudaDriverEntryPointSuccess || !getCurrent)
		die("the driver has no cuCtxGetCurrent (%d)", (int)q);
	CUcontext ctx = NULL;
	if (getCurrent(&ctx) != CUDA_SUCCESS || !ctx)
		die("cuCtxGetCurrent found no context");
	return ctx;
}

static const char *level(CUpti_Profiler_Support_Level l)
{
	switch (l) {
	case CUPTI_PROFILER_CONFIGURATION_SUPPORTED:
		return "supported";
	case CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED:
		return "UNSUPPORTED";
	case CUPTI_PROFILER_CONFIGURATION_DISABLED:
		return "DISABLED";
	default:
		return "unknown";
	}
}

static void rp_init_image(void)
{
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params p = {
	    CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
	p.pRangeProfilerObject = RP.obj;
	p.counterDataSize = RP.nImage;
	p.pCounterData = RP.image;
	CP(cuptiRangeProfilerCounterDataImageInitialize(&p));
	RP.seen = 0;
}

/* the host's configuration for METRIC, the profiler on ctx, a counter data
 * image for capacity ranges, and the configuration set: the order of
 * NVIDIA's range_profiling sample */
static void rp_setup(CUcontext ctx, size_t capacity, char *note, size_t nNote)
{
	RP.metric = getenv("RP_METRIC") && *getenv("RP_METRIC") ? getenv("RP_METRIC") : METRIC;
	const char *metrics[1] = {RP.metric};

	CUpti_Profiler_Initialize_Params ini = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
	CP(cuptiProfilerInitialize(&ini));

	/* say plainly why the device can't be profiled, where it can't */
	CUpti_Profiler_DeviceSupported_Params sup = {
	    CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
	sup.cuDevice = 0;
	sup.api = CUPTI_PROFILER_RANGE_PROFILING;
	CP(cuptiProfilerDeviceSupported(&sup));
	if (sup.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
		fprintf(stderr,
		        "rangeprof range: the device does not support range profiling: "
		        "overall %s, architecture %s, sli %s, vGpu %s, confidential compute %s, "
		        "cmp %s, wsl %s\n",
		        level(sup.isSupported), level(sup.architecture), level(sup.sli),
		        level(sup.vGpu), level(sup.confidentialCompute), level(sup.cmp),
		        level(sup.wsl));
		exit(2);
	}

	CUpti_Device_GetChipName_Params chip = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
	chip.deviceIndex = 0;
	CP(cuptiDeviceGetChipName(&chip));

	/* the counters this context can read: its size, then the image */
	CUpti_Profiler_GetCounterAvailability_Params av = {
	    CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
	av.ctx = ctx;
	CP(cuptiProfilerGetCounterAvailability(&av));
	uint8_t *avail = (uint8_t *)calloc(av.counterAvailabilityImageSize + 1, 1);
	if (!avail)
		die("out of memory");
	av.pCounterAvailabilityImage = avail;
	CP(cuptiProfilerGetCounterAvailability(&av));

	CUpti_Profiler_Host_Initialize_Params hi = {
	    CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
	hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	hi.pChipName = chip.pChipName;
	hi.pCounterAvailabilityImage = avail;
	CP(cuptiProfilerHostInitialize(&hi));
	RP.host = hi.pHostObject;

	CUpti_Profiler_Host_ConfigAddMetrics_Params am = {
	    CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
	am.pHostObject = RP.host;
	am.ppMetricNames = metrics;
	am.numMetrics = 1;
	CP(cuptiProfilerHostConfigAddMetrics(&am));

	CUpti_Profiler_Host_GetConfigImageSize_Params cs = {
	    CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
	cs.pHostObject = RP.host;
	CP(cuptiProfilerHostGetConfigImageSize(&cs));
	RP.nConfig = cs.configImageSize;
	RP.config = (uint8_t *)calloc(RP.nConfig + 1, 1);
	if (!RP.config)
		die("out of memory");
	CUpti_Profiler_Host_GetConfigImage_Params ci = {
	    CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
	ci.pHostObject = RP.host;
	ci.configImageSize = RP.nConfig;
	ci.pConfigImage = RP.config;
	CP(cuptiProfilerHostGetConfigImage(&ci));

	CUpti_Profiler_Host_GetNumOfPasses_Params np = {
	    CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
	np.configImageSize = RP.nConfig;
	np.pConfigImage = RP.config;
	CP(cuptiProfilerHostGetNumOfPasses(&np));
	RP.passes = np.numOfPasses;

	/* the metric's unit: gpu__time_duration is in ns (its dim unit
	 * "nsecond"); a failure here only leaves ns assumed */
	CUpti_Profiler_Host_GetMetricProperties_Params mp = {
	    CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
	mp.pHostObject = RP.host;
	mp.pMetricName = RP.metric;
	CUptiResult r = cuptiProfilerHostGetMetricProperties(&mp);
	RP.unit = r == CUPTI_SUCCESS && mp.pDimUnit ? mp.pDimUnit : "?";
	RP.toUs = 1e-3;
	if (!strcmp(RP.unit, "usecond"))
		RP.toUs = 1;
	else if (!strcmp(RP.unit, "msecond"))
		RP.toUs = 1e3;
	else if (!strcmp(RP.unit, "second"))
		RP.toUs = 1e6;

	CUpti_RangeProfiler_Enable_Params en = {CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
	en.ctx = ctx;
	CP(cuptiRangeProfilerEnable(&en));
	RP.obj = en.pRangeProfilerObject;

	CUpti_RangeProfiler_GetCounterDataSize_Params ds = {
	    CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
	ds.pRangeProfilerObject = RP.obj;
	ds.pMetricNames = metrics;
	ds.numMetrics = 1;
	ds.maxNumOfRanges = capacity;
	ds.maxNumRangeTreeNodes = (uint32_t)capacity;
	CP(cuptiRangeProfilerGetCounterDataSize(&ds));
	RP.nImage = ds.counterDataSize;
	RP.capacity = capacity;
	RP.image = (uint8_t *)calloc(RP.nImage + 1, 1);
	if (!RP.image)
		die("out of memory");
	rp_init_image();

	CUpti_RangeProfiler_SetConfig_Params sc = {
	    CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
	sc.pRangeProfilerObject = RP.obj;
	sc.configSize = RP.nConfig;
	sc.pConfig = RP.config;
	sc.counterDataImageSize = RP.nImage;
	sc.pCounterDataImage = RP.image;
	sc.range = CUPTI_AutoRange;
	sc.replayMode = CUPTI_KernelReplay;
	sc.maxRangesPerPass = capacity;
	sc.numNestingLevels = 1; /* auto range: 1 */
	sc.minNestingLevel = 1;
	sc.passIndex = 0;
	sc.targetNestingLevel = 1;
	CP(cuptiRangeProfilerSetConfig(&sc));

	snprintf(note, nNote,
	         "range: chip %s, %s (%s, in us x%g), %zu pass(es), config image %zu bytes, "
	         "counter data image %zu bytes for %zu ranges%s",
	         chip.pChipName, RP.metric, RP.unit, RP.toUs, RP.passes, RP.nConfig, RP.nImage,
	         capacity, r == CUPTI_SUCCESS ? "" : " (its unit unknown: ns assumed)");
	free(avail);
}

static const char *range_name(size_t i)
{
	CUpti_RangeProfiler_CounterData_GetRangeInfo_Params p = {
	    CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE};
	p.pCounterDataImage = RP.image;
	p.counterDataImageSize = RP.nImage;
	p.rangeIndex = i;
	p.rangeDelimiter = "/";
	CP(cuptiRangeProfilerCounterDataGetRangeInfo(&p));
	/* CUPTI's string, left to it (a few thousand at most) */
	return p.rangeName ? p.rangeName : "";
}

static double range_value(size_t i)
{
	const char *metrics[1] = {RP.metric};
	double v = NAN;
	CUpti_Profiler_Host_EvaluateToGpuValues_Params p = {
	    CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
	p.pHostObject = RP.host;
	p.pCounterDataImage = RP.image;
	p.counterDataImageSize = RP.nImage;
	p.rangeIndex = i;
	p.ppMetricNames = metrics;
	p.numMetrics = 1;
	p.pMetricValues = &v;
	CP(cuptiProfilerHostEvaluateToGpuValues(&p));
	RP.nEval++;
	return v * RP.toUs;
}

/* after a batch of nb runs (s[0..nb)) of kernel k has run between Start and
 * Stop: decode, then each run's kernel range evaluated.  A run is its
 * flush's range, then its kernel's (each launch a range, in launch order:
 * a run's last range is its kernel's); where the ranges don't come in whole
 * groups a run, the kernel's are found by name (auto ranges may be named by
 * number only), and failing that the batch has no values */
static void rp_collect(int k, int nb, struct sample *s)
{
	double t = now_us();
	CUpti_RangeProfiler_DecodeData_Params dd = {
	    CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
	dd.pRangeProfilerObject = RP.obj;
	CP(cuptiRangeProfilerDecodeData(&dd));
	RP.dropped += dd.numOfRangeDropped;
	CUpti_RangeProfiler_GetCounterDataInfo_Params in = {
	    CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
	in.pCounterDataImage = RP.image;
	in.counterDataImageSize = RP.nImage;
	CP(cuptiRangeProfilerGetCounterDataInfo(&in));
	double t2 = now_us();
	RP.tDecode += t2 - t;

	size_t total = in.numTotalRanges, first = RP.seen;
	size_t m = total > first ? total - first : 0;
	if (!RP.firstNames[0]) {
		size_t l = 0;
		for (size_t i = first; i < total && i < first + 4; i++)
			l += (size_t)snprintf(RP.firstNames + l, sizeof RP.firstNames - l, "%s'%s'",
			                      i > first ? ", " : "", range_name(i));
		if (!l)
			snprintf(RP.firstNames, sizeof RP.firstNames, "(none)");
	}
	if (m > 0 && m % (size_t)nb == 0) {
		size_t per = m / (size_t)nb;
		for (int j = 0; j < nb; j++) {
			size_t i = first + per * (size_t)j + per - 1;
			/* names checked at a batch's ends only: kloop would not */
			if ((j == 0 || j == nb - 1) && strstr(range_name(i), "rpf_flush_read"))
				RP.flushPicked++;
			s[j].dur = range_value(i);
		}
	} else {
		/* by name: the i-th range named like the kernel is the i-th run's */
		int j = 0;
		for (size_t i = first; i < total && j < nb; i++) {
			const char *nm = range_name(i);
			if (strstr(nm, kName[k]) && !strstr(nm, "rpf_"))
				s[j++].dur = range_value(i);
		}
		if (j != nb) {
			RP.mismatched++;
			for (int i = 0; i < nb; i++)
				s[i].dur = NAN;
		}
	}
	RP.seen = total;
	RP.tEval += now_us() - t2;
}

/* runs [i0, i0 + nb) of kernel k into s[i0..]; after run mid, NVML's SM
 * clock into *mhz, the time it took added to *skip (not the runs' cost) */
static void runs(const struct dev *d, int k, int i0, int nb, struct sample *s, int mid, double *mhz,
                 double *skip)
{
	for (int i = i0; i < i0 + nb; i++) {
		run_once(d, k, 1, &s[i]);
		if (i == mid) {
			double t = now_us();
			*mhz = sm_mhz();
			*skip += now_us() - t;
		}
	}
}

/* runs [0, per) of kernel k in batches of b a Start/Stop */
static void rp_runs(const struct dev *d, int k, int per, int b, struct sample *s, int mid,
                    double *mhz, double *skip)
{
	for (int i0 = 0; i0 < per; i0 += b) {
		int nb = per - i0 < b ? per - i0 : b;
		double t = now_us();
		if (RP.reinit && RP.nBatch > 0)
			rp_init_image();
		CUpti_RangeProfiler_Start_Params st = {
		    CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
		st.pRangeProfilerObject = RP.obj;
		CP(cuptiRangeProfilerStart(&st));
		RP.tStart += now_us() - t;
		runs(d, k, i0, nb, s, mid, mhz, skip);
		t = now_us();
		CUpti_RangeProfiler_Stop_Params sp = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
		sp.pRangeProfilerObject = RP.obj;
		CP(cuptiRangeProfilerStop(&sp));
		RP.tStop += now_us() - t;
		/* kernel replay replays inside each launch: one Stop ends all */
		RP.notAllSubmitted += !sp.isAllPassSubmitted;
		rp_collect(k, nb, s + i0);
		RP.nBatch++;
	}
}

static void rp_teardown(void)
{
	CUpti_RangeProfiler_Disable_Params di = {CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
	di.pRangeProfilerObject = RP.obj;
	CP(cuptiRangeProfilerDisable(&di));
	CUpti_Profiler_Host_Deinitialize_Params hd = {
	    CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
	hd.pHostObject = RP.host;
	CP(cuptiProfilerHostDeinitialize(&hd));
	CUpti_Profiler_DeInitialize_Params de = {CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
	CP(cuptiProfilerDeInitialize(&de));
}

/* ---- statistics ---- */

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* the p quantile (nearest rank) of the finite values of a[0..n): NAN if none */
static double quantile(const double *a, int n, double p)
{
	double *b = (double *)malloc((size_t)(n > 0 ? n : 1) * sizeof *b);
	if (!b)
		die("out of memory");
	int m = 0;
	for (int i = 0; i < n; i++)
		if (isfinite(a[i]))
			b[m++] = a[i];
	double q = NAN;
	if (m > 0) {
		qsort(b, (size_t)m, sizeof *b, by_value);
		q = b[(int)(p * (m - 1) + 0.5)];
	}
	free(b);
	return q;
}

static void put(double x, int w, int prec)
{
	if (isfinite(x))
		printf(" %*.*f", w, prec, x);
	else
		printf(" %*s", w, "-");
}

static void header(void)
{
	printf("%-8s %-16s %5s %9s %9s %9s %6s %9s %9s %9s %6s\n", "method", "kernel", "runs",
	       "med_us", "p10_us", "p90_us", "passes", "host_us", "run_us", "ev_med", "sm_mhz");
}

/* kernel k's row from its n timed samples s; hostPer: wall us a run */
static void report(int m, int k, int n, const struct sample *s, double hostPer, double mhz,
                   FILE *dump)
{
	double *col = (double *)calloc((size_t)3 * n, sizeof *col);
	if (!col)
		die("out of memory");
	double *du = col, *ev = col + n, *ho = col + 2 * n;
	for (int i = 0; i < n; i++) {
		du[i] = s[i].dur;
		ev[i] = s[i].ev;
		ho[i] = s[i].host;
		if (dump)
			fprintf(dump, "%s\t%d\t%.3f\t%.3f\t%.3f\n", kName[k], i, du[i], ev[i],
			        ho[i]);
	}
	printf("%-8s %-16s %5d", mName[m], kName[k], n);
	put(quantile(du, n, 0.5), 9, 2);
	put(quantile(du, n, 0.1), 9, 2);
	put(quantile(du, n, 0.9), 9, 2);
	if (m == M_RANGE)
		printf(" %6zu", RP.passes);
	else
		printf(" %6s", "-");
	put(hostPer, 9, 1);
	put(quantile(ho, n, 0.5), 9, 1);
	put(quantile(ev, n, 0.5), 9, 2);
	put(mhz, 6, 0);
	putchar('\n');
	fflush(stdout);
	free(col);
}

static int method_of(const char *s)
{
	for (int m = 0; m < (int)(sizeof mName / sizeof *mName); m++)
		if (!strcmp(s, mName[m]))
			return m;
	return -1;
}

static int env_int(const char *name, int dflt, int lo, int hi)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return dflt;
	char *end;
	long x = strtol(v, &end, 10);
	if (*end || x < lo || x > hi) {
		fprintf(stderr, "rangeprof: %s must be %d to %d\n", name, lo, hi);
		exit(2);
	}
	return (int)x;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "header")) {
		header();
		return 0;
	}
	int m = argc > 1 ? method_of(argv[1]) : -1;
	if (m < 0 || argc > 3) {
		fprintf(stderr, "usage: rangeprof header | rangeprof events|activity|range|plain "
		                "[N]\n");
		return 2;
	}
	gMethod = m;
	int n = argc > 2 ? atoi(argv[2]) : 200;
	if (n < 1 || n > 10000) {
		fprintf(stderr, "rangeprof: N must be 1 to 10000\n");
		return 2;
	}
	int batch = env_int("RP_BATCH", 50, 0, 100000);
	int reinit = env_int("RP_REINIT", 1, 0, 1);

	int nDev = 0;
	cudaError_t e = cudaGetDeviceCount(&nDev);
	if (e != cudaSuccess || nDev == 0) {
		fprintf(stderr, "rangeprof: no usable GPU (cudaGetDeviceCount: %s)\n",
		        e != cudaSuccess ? cudaGetErrorString(e) : "no devices");
		return 2;
	}

	/* kloop's backend: a device, a non-blocking stream, events, the flush */
	struct dev d;
	memset(&d, 0, sizeof d);
	CK(cudaSetDevice(0));
	CK(cudaFree(0));
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, 0));
	int l2 = 0, drv = 0;
	CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
	CK(cudaDriverGetVersion(&drv));
	CK(cudaStreamCreateWithFlags(&d.s, cudaStreamNonBlocking));
	CK(cudaEventCreate(&d.e0));
	CK(cudaEventCreate(&d.e1));
	d.nFlush = 2 * (size_t)(l2 > 0 ? l2 : 64 << 20);
	CK(cudaMalloc(&d.flush, d.nFlush));
	CK(cudaMemset(d.flush, 1, d.nFlush));
	CK(cudaMalloc((void **)&d.sink, 4));
	CK(cudaMalloc((void **)&d.x, GELU_8M * sizeof(float)));
	CK(cudaMalloc((void **)&d.y, GELU_8M * sizeof(float)));
	rpf_init<<<(unsigned)(GELU_8M / 256), 256, 0, d.s>>>(d.x, GELU_8M);
	CK(cudaGetLastError());
	CK(cudaMemset(d.y, 0, GELU_8M * sizeof(float)));
	CK(cudaDeviceSynchronize());
	nvml_open();

	int per = WARM + n;
	struct sample *smp = (struct sample *)calloc((size_t)per, sizeof *smp);
	if (!smp)
		die("out of memory");

	/* ncu's run: the loop bare, n runs a kernel, nothing printed but a note */
	if (m == M_PLAIN) {
		for (int k = 0; k < NK; k++)
			for (int i = 0; i < n; i++)
				run_once(&d, k, 0, &smp[0]);
		CK(cudaDeviceSynchronize());
		printf("# plain: %d runs of each of %d kernels, untimed\n", n, NK);
		return 0;
	}

	char setup[512] = "";
	uint32_t ver = 0;
	if (m != M_EVENTS)
		CP(cuptiGetVersion(&ver));
	if (m == M_ACTIVITY) {
		/* kloop's CUPTI start (kld_cupti_start): after the context */
		A.a = (struct arec *)calloc(MAX_REC, sizeof *A.a);
		if (!A.a)
			die("out of memory");
		CP(cuptiActivityRegisterCallbacks(act_requested, act_completed));
		CP(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
		snprintf(setup, sizeof setup, "activity: CUPTI API %u, CONCURRENT_KERNEL", ver);
	}
	if (m == M_RANGE) {
		int b = batch > 0 && batch < per ? batch : per;
		size_t cap = (size_t)RANGES_PER_RUN * (reinit ? b : per * NK);
		RP.reinit = reinit;
		rp_setup(current_context(), cap, setup, sizeof setup);
		size_t l = strlen(setup);
		snprintf(setup + l, sizeof setup - l, "; CUPTI API %u, batches of %d runs, %s", ver,
		         b, reinit ? "the image initialized again before each" : "never reset");
		batch = b;
	}

	printf("# %s; %s, driver %d, L2 %d MB, read flush of %zu MB; %d timed runs a kernel "
	       "after %d\n",
	       mName[m], prop.name, drv, l2 >> 20, d.nFlush >> 20, n, WARM);
	if (setup[0])
		printf("# %s\n", setup);

	FILE *dump = NULL;
	const char *dir = getenv("RP_DUMP");
	if (dir && *dir) {
		char path[1024];
		snprintf(path, sizeof path, "%s/%s.tsv", dir, mName[m]);
		if (!(dump = fopen(path, "w")))
			die("cannot write %s", path);
		fprintf(dump, "kernel\trun\tdur_us\tev_us\thost_us\n");
	}

	char notes[NK][256];
	memset(notes, 0, sizeof notes);
	for (int k = 0; k < NK; k++) {
		double mhz = NAN, skip = 0, t = now_us();
		int mid = WARM + n / 2;
		if (m == M_RANGE) {
			rp_runs(&d, k, per, batch, smp, mid, &mhz, &skip);
		} else {
			runs(&d, k, 0, per, smp, mid, &mhz, &skip);
			if (m == M_EVENTS)
				for (int i = 0; i < per; i++)
					smp[i].dur = smp[i].ev;
			if (m == M_ACTIVITY) {
				CP(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
				act_collect(k, per, smp, notes[k], sizeof notes[k]);
			}
		}
		double hostPer = (now_us() - t - skip) / per;
		report(m, k, n, smp + WARM, hostPer, mhz, dump);
	}
	if (dump && fclose(dump))
		die("writing RP_DUMP's file failed");
	for (int k = 0; k < NK; k++)
		if (notes[k][0])
			printf("#   %s\n", notes[k]);
	if (m == M_ACTIVITY && (A.dropped || A.over))
		printf("#   activity: %llu records dropped%s\n", (unsigned long long)A.dropped,
		       A.over ? ", more than kept" : "");
	if (m == M_RANGE) {
		double nb = RP.nBatch ? (double)RP.nBatch : 1;
		printf("#   range: %zu batches; a batch's Start %.0f us, Stop %.0f us, decode %.0f "
		       "us; evaluation %.1f us a range (%zu evaluated)\n",
		       RP.nBatch, RP.tStart / nb, RP.tStop / nb, RP.tDecode / nb,
		       RP.nEval ? RP.tEval / (double)RP.nEval : 0.0, RP.nEval);
		printf("#   range: the first ranges' names: %s\n", RP.firstNames);
		if (RP.dropped || RP.notAllSubmitted || RP.mismatched || RP.flushPicked)
			printf(
			    "#   range: WARNING: %zu ranges dropped, %d batches with passes left "
			    "after Stop, %d batches whose ranges did not pair with the runs (no "
			    "values), %d kernel ranges named like the flush\n",
			    RP.dropped, RP.notAllSubmitted, RP.mismatched, RP.flushPicked);
		rp_teardown();
	}
	CK(cudaDeviceSynchronize());
	fflush(stdout);
	return 0;
}
