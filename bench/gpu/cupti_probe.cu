/*
 * cupti_probe.cu - what inflates kloop's events under CUPTI (issue 39).
 *
 * kloop times a run as: the L2 flush kernel, event e0, the candidate's
 * kernel, e1, a device synchronize, e2 (engine/measure/backend/backend_cuda.c); with
 * KLOOP_CUPTI a window of CUPTI activity records is opened by a forced
 * cuptiActivityFlushAll and a timestamp between the flush and e0, and closed
 * by another forced flush after the synchronize (engine/measure/backend/cupti.cu,
 * cand_runner.c CM_RUN).  Without CUPTI the events around a 2.8 us GELU read
 * 4.2 us; with it ~27 us, and an empty launch reads far more too.  This
 * times the same sequence on one stream with CUPTI off and on in several
 * ways, and also reads CUPTI's own duration of the timed kernel, to tell
 * what adds the time (the flush before e0 draining the GPU?  the launch's
 * instrumentation?  the kind of record?) and whether CUPTI's durations are
 * Nsight Compute's.
 *
 *   cupti_probe header          the table's column names
 *   cupti_probe V [N [FLUSH]]   variant V (0-8), N timed runs of each kernel
 *                               (300) after 10 untimed, FLUSH "read" (kloop's
 *                               flush kernel, the default) or "write"
 *
 * One variant a process: a CUPTI setting such as the latency timestamps must
 * come before CUDA starts, and activity kinds once enabled stay so.
 *   V0  no CUPTI at all (the library is not even loaded)
 *   V1  kloop's way: CONCURRENT_KERNEL, MEMCPY, MEMSET; a forced flush and a
 *       timestamp after the flush kernel's launch, before e0; a forced flush
 *       after the run's synchronize
 *   V2  as V1 without the flush before e0 (only the one after)
 *   V3  as V1 without any flush in the loop: every record read at the end
 *       (what the launches' instrumentation alone costs)
 *   V4  as V1 with KIND_KERNEL for CONCURRENT_KERNEL: CUPTI then serializes
 *       every kernel on the GPU
 *   V5  as V1 with the settings that might lower CUPTI's cost: latency
 *       timestamps off (the default, said explicitly), zeroed buffers handed
 *       to CUPTI (so it does not zero them in a launch), 64 device buffers
 *       made up front (DEVICE_BUFFER_PRE_ALLOCATE_VALUE, 3 by default),
 *       hardware trace (cuptiActivityEnableHWTrace: Blackwell only, tried,
 *       its answer noted)
 *   V6  as V1 with the flush before e0 moved before the L2 flush kernel (a
 *       fix: the flush kernel then covers e0's and the launch's host time)
 *   V7  as V1 with latency timestamps on (queued, submitted) and an event
 *       after the flush kernel: diagnostic, where the kernel waited
 *   V8  as V1 with default (not forced) flushes
 * Kernels: an empty one <<<1,32>>>, GELU (tanh) over 1M floats, GELU over
 * 8M floats (~20 us), bench/gpu/usec's row softmax 16 x 16384 and GELU
 * (erf) over 16 x 16384 floats (Nsight Compute: 5.38 and 2.82 us).
 * Columns (us, medians over the N runs unless said): the events' e0-e1, its
 * p10 and p90; CUPTI's duration of the timed kernel; event - CUPTI (per
 * run); the host's time in the <<<>>> launch; in the flush before e0; the
 * GPU's gap from the flush kernel's end to the timed kernel's start (CUPTI's
 * records, where the flush's is complete); the flush kernel's duration.
 *
 * Build (CUDA 13: cupti.h in $CUDA/include, libcupti.so.13 in $CUDA/lib64;
 * older layouts: extras/CUPTI/include): bench/gpu/cupti_probe.sh, or
 *   nvcc -O2 -gencode=arch=compute_90a,code=sm_90a -o /tmp/cupti_probe \
 *        bench/gpu/cupti_probe.cu -ldl
 * Standalone on purpose (a probe of CUPTI itself, beside kloop, not through
 * it): its buffer pool mirrors cupti.cu's and its kernels bench/gpu/usec's.
 * PROBE_CUPTI=path picks the libcupti to load; PROBE_DUMP=dir writes every
 * timed run's numbers to dir/V<v>.tsv; PROBE_V5 picks V5's settings (words
 * "lat zero pre hw", all by default: which of them helps).
 */
#include <cuda_runtime.h>
#include <cupti.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WARM 10              /* untimed runs before the timed ones */
#define BUF_SIZE (256 << 10) /* bytes of a buffer handed to CUPTI (kloop's) */
#define POOL 16              /* buffers made and touched at the start (kloop's) */
#define MAX_REC (1 << 16)    /* kernel records kept */
#define NK 5                 /* timed kernels */

/* ---- failures: one clear line, a nonzero exit ---- */

static int gVariant = -1;

static void no_gpu_check(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess || n == 0) {
		fprintf(stderr, "cupti_probe: no usable GPU (cudaGetDeviceCount: %s)\n",
		        e != cudaSuccess ? cudaGetErrorString(e) : "no devices");
		exit(2);
	}
}

static void die(const char *fmt, ...)
{
	/* without a GPU, whatever failed first, say that */
	no_gpu_check();
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "cupti_probe V%d: ", gVariant);
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

/* ---- CUPTI, loaded as kloop loads it ---- */

static struct {
	decltype(&cuptiActivityRegisterCallbacks) registerCallbacks;
	decltype(&cuptiActivityEnable) enable;
	decltype(&cuptiActivityFlushAll) flushAll;
	decltype(&cuptiActivityGetNextRecord) nextRecord;
	decltype(&cuptiActivityGetNumDroppedRecords) dropped;
	decltype(&cuptiActivitySetAttribute) setAttribute;
	decltype(&cuptiActivityEnableLatencyTimestamps) latencyTimestamps;
	decltype(&cuptiActivityEnableHWTrace) hwTrace;
	decltype(&cuptiGetTimestamp) timestamp;
	decltype(&cuptiGetResultString) resultString;
	decltype(&cuptiGetVersion) version;
	char path[512];
} U;

static const char *cupti_str(CUptiResult r)
{
	const char *s = NULL;
	if (!U.resultString || U.resultString(r, &s) != CUPTI_SUCCESS || !s)
		s = "?";
	return s;
}

static void cupti_check(CUptiResult r, const char *what, int line)
{
	if (r != CUPTI_SUCCESS)
		die("line %d: %s failed: CUPTI error %d (%s)", line, what, (int)r, cupti_str(r));
}
#define CP(x) cupti_check((x), #x, __LINE__)

static void *sym(void *dl, const char *name)
{
	void *p = dlsym(dl, name);
	if (!p)
		die("libcupti (%s) lacks %s", U.path, name);
	return p;
}

static void cupti_load(void)
{
	const char *env = getenv("PROBE_CUPTI");
	const char *names[] = {env,
	                       "libcupti.so.13",
	                       "libcupti.so",
	                       "/usr/local/cuda/lib64/libcupti.so.13",
	                       "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
	                       "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13"};
	void *dl = NULL;
	for (size_t i = 0; i < sizeof names / sizeof *names && !dl; i++)
		if (names[i] && *names[i])
			dl = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		die("libcupti could not be loaded (set PROBE_CUPTI to its path): %s", dlerror());
	Dl_info info;
	void *f = dlsym(dl, "cuptiActivityEnable");
	snprintf(U.path, sizeof U.path, "%s",
	         f && dladdr(f, &info) && info.dli_fname ? info.dli_fname : "?");
	*(void **)&U.registerCallbacks = sym(dl, "cuptiActivityRegisterCallbacks");
	*(void **)&U.enable = sym(dl, "cuptiActivityEnable");
	*(void **)&U.flushAll = sym(dl, "cuptiActivityFlushAll");
	*(void **)&U.nextRecord = sym(dl, "cuptiActivityGetNextRecord");
	*(void **)&U.dropped = sym(dl, "cuptiActivityGetNumDroppedRecords");
	*(void **)&U.setAttribute = sym(dl, "cuptiActivitySetAttribute");
	*(void **)&U.latencyTimestamps = sym(dl, "cuptiActivityEnableLatencyTimestamps");
	*(void **)&U.timestamp = sym(dl, "cuptiGetTimestamp");
	*(void **)&U.resultString = sym(dl, "cuptiGetResultString");
	*(void **)&U.version = sym(dl, "cuptiGetVersion");
	/* newer than the rest (CUDA 12.8+): may be absent from an older library */
	*(void **)&U.hwTrace = dlsym(dl, "cuptiActivityEnableHWTrace");
}

/* ---- the records ---- */

enum { R_FLUSH = -1, R_OTHER = -2 };

struct rec {
	uint32_t corr;       /* correlation id: launch order */
	int what;            /* timed kernel index, R_FLUSH or R_OTHER */
	int closedAt;        /* gClosed when CUPTI handed it over */
	uint64_t start, end; /* ns, CUPTI's clock; 0: unknown */
	uint64_t queued, submitted;
};

static const char *kName[NK] = {"probe_t_empty", "probe_t_gelu1m", "probe_t_gelu8m",
                                "probe_t_softmax", "probe_t_gelu_erf"};
static const char *kLabel[NK] = {"empty", "gelu_1M", "gelu_8M", "softmax16x16K", "gelu_erf256K"};

static struct {
	pthread_mutex_t mu;
	struct rec *a;
	int n, over;
	uint64_t dropped;
	int memRecs; /* memcpy and memset records */
	int closed;  /* the last run whose closing flush returned */
	int zero;    /* hand CUPTI zeroed buffers (V5) */
} G = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0, 0, -1, 0};

static struct {
	pthread_mutex_t mu;
	uint8_t *a[4 * POOL];
	int n;
} P = {PTHREAD_MUTEX_INITIALIZER, {0}, 0};

static uint8_t *new_buffer(void)
{
	uint8_t *b = (uint8_t *)aligned_alloc(8, BUF_SIZE);
	if (b)
		memset(b, 0, BUF_SIZE); /* its pages now, not in a launch */
	return b;
}

static void CUPTIAPI requested(uint8_t **pBuf, size_t *pSize, size_t *pMax)
{
	pthread_mutex_lock(&P.mu);
	*pBuf = P.n > 0 ? P.a[--P.n] : NULL;
	pthread_mutex_unlock(&P.mu);
	if (!*pBuf)
		*pBuf = new_buffer();
	*pSize = *pBuf ? BUF_SIZE : 0;
	*pMax = 0;
}

static void give_back(uint8_t *b)
{
	pthread_mutex_lock(&P.mu);
	if (P.n < (int)(sizeof P.a / sizeof *P.a)) {
		P.a[P.n++] = b;
		b = NULL;
	}
	pthread_mutex_unlock(&P.mu);
	free(b);
}

static int kernel_index(const char *name)
{
	if (!name)
		return R_OTHER;
	if (strstr(name, "probe_flush"))
		return R_FLUSH;
	for (int k = 0; k < NK; k++)
		if (!strcmp(name, kName[k]))
			return k;
	return R_OTHER;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                               size_t valid)
{
	(void)size;
	CUpti_Activity *r = NULL;
	pthread_mutex_lock(&G.mu);
	while (valid > 0 && U.nextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
		    r->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
			CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)r;
			if (G.n == MAX_REC) {
				G.over = 1;
				continue;
			}
			struct rec *d = &G.a[G.n++];
			d->corr = k->correlationId;
			d->what = kernel_index(k->name);
			d->closedAt = G.closed;
			d->start = k->start;
			d->end = k->end;
			d->queued = k->queued;
			d->submitted = k->submitted;
		} else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY ||
		           r->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
			G.memRecs++;
		}
	}
	size_t d = 0;
	if (U.dropped(ctx, stream, &d) == CUPTI_SUCCESS)
		G.dropped += d;
	pthread_mutex_unlock(&G.mu);
	if (G.zero)
		memset(buf, 0, valid); /* off the launch's path: CUPTI wants it zeroed */
	give_back(buf);
}

/* ---- the kernels (one copy for bench/gpu's probes) ---- */

#define PK(n) probe_t_##n
#define PF(n) probe_##n
#include "probe_kernels.cuh"

/* the other flush: writes n 16-byte words (dirty lines left in the L2) */
extern "C" __global__ void probe_flush_write(uint4 *p, long long n, unsigned v)
{
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x)
		p[i] = make_uint4(v, v, v, v);
}

/* ---- the runs ---- */

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

struct dev {
	cudaStream_t s;
	cudaEvent_t e0, e1, e2, ef;
	void *flush;
	size_t nFlush;
	unsigned *sink;
	float *x, *y;
	int writeFlush;
};

/* what one run measured (us; NAN: not measured) */
struct sample {
	double ev, launch, pre, efToE0;
};

#define GELU_1M (1LL << 20)
#define GELU_8M (8LL << 20)
#define GELU_ERF (16LL * 16384)
#define SM_ROWS 16
#define SM_COLS 16384

/* the candidate: its launch timed on the host, then its error check */
static double launch(const struct dev *d, int k)
{
	double t = now_us();
	switch (k) {
	case 0:
		probe_t_empty<<<1, 32, 0, d->s>>>();
		break;
	case 1:
		probe_t_gelu1m<<<(unsigned)(GELU_1M / 256), 256, 0, d->s>>>(d->x, d->y, GELU_1M);
		break;
	case 2:
		probe_t_gelu8m<<<(unsigned)(GELU_8M / 256), 256, 0, d->s>>>(d->x, d->y, GELU_8M);
		break;
	case 3:
		probe_t_softmax<<<SM_ROWS, SM_T, 0, d->s>>>(d->x, d->y, SM_COLS);
		break;
	default:
		probe_t_gelu_erf<<<(unsigned)(GELU_ERF / 256), 256, 0, d->s>>>(d->x, d->y,
		                                                               GELU_ERF);
		break;
	}
	t = now_us() - t;
	CK(cudaGetLastError());
	return t;
}

static void flush_kernel(const struct dev *d, unsigned gen)
{
	long long n = (long long)(d->nFlush / 16);
	if (d->writeFlush)
		probe_flush_write<<<4096, 256, 0, d->s>>>((uint4 *)d->flush, n, gen);
	else
		probe_flush_read<<<4096, 256, 0, d->s>>>((const uint4 *)d->flush, n, d->sink);
	CK(cudaGetLastError());
}

/* kloop's window opening (kld_cupti_begin): a flush, then the timestamp */
static double window_open(uint32_t flag)
{
	uint64_t t0;
	double t = now_us();
	CP(U.flushAll(flag));
	CP(U.timestamp(&t0));
	return now_us() - t;
}

/* one run of kernel k as kloop's CM_RUN times it, under variant v */
static void run_once(const struct dev *d, int v, int k, int run, struct sample *o)
{
	static unsigned gen;
	uint32_t flag = v == 8 ? 0 : CUPTI_ACTIVITY_FLAG_FLUSH_FORCED;
	int preBefore = v == 6;                                        /* before the flush kernel */
	int preAfter = v == 1 || v == 4 || v == 5 || v == 7 || v == 8; /* kloop's place */
	int post = v != 0 && v != 3;
	o->pre = o->efToE0 = NAN;
	if (preBefore)
		o->pre = window_open(flag);
	CK(cudaCtxResetPersistingL2Cache());
	flush_kernel(d, ++gen);
	if (v == 7)
		CK(cudaEventRecord(d->ef, d->s));
	if (preAfter)
		o->pre = window_open(flag);
	CK(cudaEventRecord(d->e0, d->s));
	o->launch = launch(d, k);
	CK(cudaEventRecord(d->e1, d->s));
	CK(cudaDeviceSynchronize());
	CK(cudaEventRecord(d->e2, d->s));
	CK(cudaEventSynchronize(d->e2));
	float ms = 0;
	CK(cudaEventElapsedTime(&ms, d->e0, d->e1));
	o->ev = ms * 1e3;
	if (v == 7) {
		CK(cudaEventElapsedTime(&ms, d->ef, d->e0));
		o->efToE0 = ms * 1e3;
	}
	if (post)
		CP(U.flushAll(flag));
	pthread_mutex_lock(&G.mu);
	G.closed = run;
	pthread_mutex_unlock(&G.mu);
	CK(cudaDeviceSynchronize());
	CK(cudaGetLastError());
}

/* ---- statistics ---- */

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int by_corr(const void *a, const void *b)
{
	const struct rec *x = (const struct rec *)a, *y = (const struct rec *)b;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
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

static void put(double x, int w)
{
	if (isfinite(x))
		printf(" %*.2f", w, x);
	else
		printf(" %*s", w, "-");
}

/* the flush record launched last before r (fl in launch order), or NULL */
static const struct rec *flush_before(const struct rec *r, const struct rec *fl, int nFl)
{
	int lo = 0, hi = nFl - 1, f = -1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (fl[mid].corr < r->corr)
			f = mid, lo = mid + 1;
		else
			hi = mid - 1;
	}
	return f >= 0 ? &fl[f] : NULL;
}

static int complete(const struct rec *r)
{
	return r && r->start && r->end > r->start;
}

/*
 * Kernel k's row (its WARM + n samples s, run k * (WARM + n) on), and into
 * note what else its records say.  Its timed records are matched to its
 * runs by launch order: the i-th of its name is its i-th run's.
 */
static void report(int v, int k, int n, const struct sample *s, const struct rec *fl, int nFl,
                   FILE *dump, char *note, size_t nNote)
{
	int per = WARM + n, run0 = k * per, m = 0, late = 0, incomplete = 0;
	const struct rec **tk = (const struct rec **)calloc((size_t)per, sizeof *tk);
	double *col = (double *)calloc((size_t)10 * n, sizeof *col);
	if (!tk || !col)
		die("out of memory");
	double *ev = col, *cu = col + n, *df = col + 2 * n, *la = col + 3 * n, *pr = col + 4 * n,
	       *gp = col + 5 * n, *fd = col + 6 * n, *q2s = col + 7 * n, *s2b = col + 8 * n,
	       *efe0 = col + 9 * n;
	for (int i = 0; i < G.n && m < per; i++)
		if (G.a[i].what == k)
			tk[m++] = &G.a[i];
	int matched = v != 0 && m == per;
	for (int i = 0; i < n; i++) {
		const struct sample *o = &s[WARM + i];
		const struct rec *r = matched ? tk[WARM + i] : NULL;
		ev[i] = o->ev;
		la[i] = o->launch;
		pr[i] = o->pre;
		efe0[i] = o->efToE0;
		cu[i] = df[i] = gp[i] = fd[i] = q2s[i] = s2b[i] = NAN;
		if (!r)
			continue;
		if (!complete(r)) {
			incomplete++;
			continue;
		}
		cu[i] = (double)(r->end - r->start) / 1e3;
		df[i] = ev[i] - cu[i];
		/* handed over after its run's closing flush had returned */
		late += r->closedAt >= run0 + WARM + i;
		const struct rec *f = flush_before(r, fl, nFl);
		if (complete(f)) {
			gp[i] = ((double)r->start - (double)f->end) / 1e3;
			fd[i] = (double)(f->end - f->start) / 1e3;
		}
		/* V7: host queue -> GPU submit -> start */
		if (r->queued && r->submitted) {
			q2s[i] = ((double)r->submitted - (double)r->queued) / 1e3;
			s2b[i] = ((double)r->start - (double)r->submitted) / 1e3;
		}
	}
	printf("V%-2d %-14s %5d", v, kLabel[k], n);
	put(quantile(ev, n, 0.5), 8);
	put(quantile(ev, n, 0.1), 8);
	put(quantile(ev, n, 0.9), 8);
	put(quantile(cu, n, 0.5), 8);
	put(quantile(df, n, 0.5), 8);
	put(quantile(la, n, 0.5), 8);
	put(quantile(pr, n, 0.5), 8);
	put(quantile(gp, n, 0.5), 8);
	put(quantile(fd, n, 0.5), 8);
	putchar('\n');
	/* launches that took the host long (the median hides them): how many, where */
	int nSlow = 0, slow0 = -1, slow1 = -1;
	for (int i = 0; i < n; i++)
		if (la[i] > 50) {
			nSlow++;
			slow1 = i;
			if (slow0 < 0)
				slow0 = i;
		}
	for (int i = 0; dump && i < n; i++)
		fprintf(dump, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", kLabel[k], i, ev[i],
		        la[i], pr[i], cu[i], gp[i], fd[i]);
	size_t l = (size_t)snprintf(note, nNote, "%s:", kLabel[k]);
	if (nSlow)
		l += (size_t)snprintf(note + l, nNote - l,
		                      " %d launches over 50 us (runs %d to %d);", nSlow, slow0,
		                      slow1);
	if (v != 0 && !matched && l < nNote)
		snprintf(note + l, nNote - l,
		         " %d records for %d launches: not matched, no CUPTI columns", m, per);
	if (v != 0 && matched && l < nNote) {
		l += (size_t)snprintf(note + l, nNote - l, " cupti p10/p90 %.2f/%.2f",
		                      quantile(cu, n, 0.1), quantile(cu, n, 0.9));
		if (incomplete && l < nNote)
			l += (size_t)snprintf(note + l, nNote - l, ", %d incomplete", incomplete);
		if (v != 3 && l < nNote)
			l += (size_t)snprintf(note + l, nNote - l,
			                      ", %d of %d in their run's window (late %d)",
			                      n - incomplete - late, n, late);
		if (v == 7 && l < nNote)
			snprintf(note + l, nNote - l,
			         "; queued->submitted %.2f, submitted->start %.2f, "
			         "flush kernel's end->e0 (events) %.2f",
			         quantile(q2s, n, 0.5), quantile(s2b, n, 0.5),
			         quantile(efe0, n, 0.5));
	}
	if (v == 0 && !nSlow)
		note[0] = 0;
	free(tk);
	free(col);
}

static void header(void)
{
	printf("%-3s %-14s %5s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", "var", "kernel", "runs",
	       "ev_med", "ev_p10", "ev_p90", "cupti", "ev-cupti", "launch", "pre_fl", "gap",
	       "flush_k");
}

static const char *describe(int v)
{
	static const char *d[] = {
	    "no CUPTI",
	    "kloop's: CONCURRENT_KERNEL+MEMCPY+MEMSET, forced flush before e0 and after sync",
	    "no flush before e0, forced flush after sync",
	    "no flush in the loop, records read once at the end",
	    "KIND_KERNEL (serializes every kernel) +MEMCPY+MEMSET, kloop's flushes",
	    "kloop's + latency timestamps off, zeroed buffers, device buffers made up front, "
	    "hardware trace tried",
	    "kloop's with the flush before e0 moved before the L2 flush kernel",
	    "kloop's + latency timestamps on, an event after the flush kernel (diagnostic)",
	    "kloop's with default (not forced) flushes"};
	return d[v];
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "header")) {
		header();
		return 0;
	}
	if (argc < 2 || argc > 4 || argv[1][0] < '0' || argv[1][0] > '8' || argv[1][1]) {
		fprintf(stderr,
		        "usage: cupti_probe header | cupti_probe V(0-8) [N [read|write]]\n");
		return 2;
	}
	int v = gVariant = argv[1][0] - '0';
	int n = argc > 2 ? atoi(argv[2]) : 300;
	if (n < 1 || n > 10000) {
		fprintf(stderr, "cupti_probe: N must be 1 to 10000\n");
		return 2;
	}
	struct dev d;
	memset(&d, 0, sizeof d);
	d.writeFlush = argc > 3 && !strcmp(argv[3], "write");
	if (argc > 3 && !d.writeFlush && strcmp(argv[3], "read")) {
		fprintf(stderr, "cupti_probe: FLUSH is read or write\n");
		return 2;
	}
	int cupti = v != 0;
	char notes[1024] = "";
	const char *v5 = getenv("PROBE_V5");
	if (!v5)
		v5 = "lat zero pre hw";

	/* settings CUPTI takes only before CUDA starts */
	if (cupti) {
		cupti_load();
		uint32_t ver = 0;
		CP(U.version(&ver));
		snprintf(notes, sizeof notes, "CUPTI API %u (%s)", ver, U.path);
		if (v == 7 || (v == 5 && strstr(v5, "lat")))
			CP(U.latencyTimestamps(v == 7));
		if (v == 5 && strstr(v5, "zero")) {
			uint8_t one = 1;
			size_t sz = sizeof one;
			CP(U.setAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &sz,
			                  &one));
			G.zero = 1;
		}
		if (v == 5 && strstr(v5, "pre")) {
			/* CUPTI's device buffers made at the context's start (3 by
			 * default), not in a launch once a flush took the last */
			size_t pre = 64, sz = sizeof pre;
			CP(U.setAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, &sz,
			                  &pre));
		}
	}
	no_gpu_check();
	if (v == 5 && strstr(v5, "hw")) {
		/* after the driver's start, before the context: only Blackwell has
		 * it, so elsewhere its refusal is the answer, noted, not a failure */
		size_t l = strlen(notes);
		if (!U.hwTrace) {
			snprintf(notes + l, sizeof notes - l,
			         "; cuptiActivityEnableHWTrace: absent");
		} else {
			CUptiResult r = U.hwTrace(1);
			snprintf(notes + l, sizeof notes - l, "; cuptiActivityEnableHWTrace(1): %s",
			         r == CUPTI_SUCCESS ? "on" : cupti_str(r));
		}
	}

	/* kloop's backend: a device, a non-blocking stream, events, the flush */
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
	CK(cudaEventCreate(&d.e2));
	CK(cudaEventCreate(&d.ef));
	d.nFlush = 2 * (size_t)(l2 > 0 ? l2 : 64 << 20);
	CK(cudaMalloc(&d.flush, d.nFlush));
	CK(cudaMemset(d.flush, 1, d.nFlush));
	CK(cudaMalloc((void **)&d.sink, 4));
	CK(cudaMalloc((void **)&d.x, GELU_8M * sizeof(float)));
	CK(cudaMalloc((void **)&d.y, GELU_8M * sizeof(float)));
	probe_init<<<(unsigned)(GELU_8M / 256), 256, 0, d.s>>>(d.x, GELU_8M);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());

	/* kloop's CUPTI start (kld_cupti_start): after the context */
	if (cupti) {
		G.a = (struct rec *)calloc(MAX_REC, sizeof *G.a);
		if (!G.a)
			die("out of memory");
		for (int i = 0; i < POOL; i++) {
			uint8_t *b = new_buffer();
			if (!b)
				die("out of memory");
			give_back(b);
		}
		CP(U.registerCallbacks(requested, completed));
		CP(U.enable(v == 4 ? CUPTI_ACTIVITY_KIND_KERNEL
		                   : CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
		CP(U.enable(CUPTI_ACTIVITY_KIND_MEMCPY));
		CP(U.enable(CUPTI_ACTIVITY_KIND_MEMSET));
	}

	printf("# V%d %s; %s, driver %d, L2 %d MB, %s flush of %zu MB%s%s%s%s\n", v, describe(v),
	       prop.name, drv, l2 >> 20, d.writeFlush ? "write" : "read", d.nFlush >> 20,
	       *notes ? "; " : "", notes, v == 5 ? "; PROBE_V5 " : "", v == 5 ? v5 : "");

	int per = WARM + n;
	struct sample *smp = (struct sample *)calloc((size_t)NK * per, sizeof *smp);
	if (!smp)
		die("out of memory");
	for (int k = 0; k < NK; k++)
		for (int i = 0; i < per; i++)
			run_once(&d, v, k, k * per + i, &smp[k * per + i]);
	CK(cudaDeviceSynchronize());
	if (cupti)
		CP(U.flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));

	/* the records in launch order; the flushes' apart */
	pthread_mutex_lock(&G.mu);
	if (G.n > 1)
		qsort(G.a, (size_t)G.n, sizeof *G.a, by_corr);
	pthread_mutex_unlock(&G.mu);
	struct rec *fl = (struct rec *)calloc(MAX_REC, sizeof *fl);
	if (!fl)
		die("out of memory");
	int nFl = 0, flIncomplete = 0;
	for (int i = 0; i < G.n; i++)
		if (G.a[i].what == R_FLUSH) {
			fl[nFl++] = G.a[i];
			flIncomplete += !complete(&G.a[i]);
		}
	FILE *dump = NULL;
	const char *dir = getenv("PROBE_DUMP");
	if (dir && *dir) {
		char path[1024];
		snprintf(path, sizeof path, "%s/V%d.tsv", dir, v);
		if (!(dump = fopen(path, "w")))
			die("cannot write %s", path);
		fprintf(dump,
		        "kernel\trun\tev_us\tlaunch_us\tpre_us\tcupti_us\tgap_us\tflush_us\n");
	}
	char note[NK][320];
	for (int k = 0; k < NK; k++)
		report(v, k, n, smp + k * per, fl, nFl, dump, note[k], sizeof note[k]);
	if (dump && fclose(dump))
		die("writing PROBE_DUMP's file failed");
	for (int k = 0; k < NK; k++)
		if (note[k][0])
			printf("#   %s\n", note[k]);
	if (v != 0)
		printf("#   records: %d kernel (%d flush, %d of them incomplete), %d copy/set, "
		       "%llu dropped%s\n",
		       G.n, nFl, flIncomplete, G.memRecs, (unsigned long long)G.dropped,
		       G.over ? ", more than kept" : "");
	fflush(stdout);
	return 0;
}
