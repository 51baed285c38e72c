/*
 * cupti.cu - the time a run's kernels, copies and sets kept the GPU busy,
 * from CUPTI's activity records (issue 39: a microsecond kernel's events
 * read 0.1 to 1 us long, +23% for a 4 us one against Nsight Compute's
 * duration).  Built into libkloop-cuda.so; libcupti is loaded at run time,
 * so the library loads where it is absent and runs are then timed by events
 * alone.  On trial: only where KLOOP_CUPTI is set ("1", or the library's
 * path).  One window at a time (the runner's one thread); CUPTI may
 * complete buffers from its own thread, so the records are taken under a
 * lock.  Its buffers are kept and reused, their pages touched at the start:
 * a buffer allocated in a launch (after each window's flush returned the
 * last) held the candidate's first launch back by tens of microseconds on
 * an H200, and the events around a 2.8 us kernel read 42 us.  The window
 * opens before kloop's L2 flush is queued, not after: a forced flush held
 * the host 30 to 45 us, longer than the flush kernel, so the GPU idled
 * before the start event and the events counted the launch that followed
 * (17 us for a 1.8 us kernel; bench/gpu/cupti_probe.cu, 2026-11-29).
 */
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KC_BUF (256 << 10)             /* bytes a buffer CUPTI fills */
#define KC_POOL 16                     /* buffers made and touched at the start */
#define KC_MAX 4096                    /* intervals a window keeps; more: no time */
#define KC_FLUSH "kld_l2_flush_kernel" /* kloop's L2 flush (device_kernels.cu) */

static struct {
	CUptiResult (*registerCallbacks)(CUpti_BuffersCallbackRequestFunc,
	                                 CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*enable)(CUpti_ActivityKind);
	CUptiResult (*flushAll)(uint32_t);
	CUptiResult (*nextRecord)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*timestamp)(uint64_t *);
	CUptiResult (*setAttribute)(CUpti_ActivityAttribute, size_t *, void *);
	int ok;
} C;

/* the records of the window under way */
static struct {
	pthread_mutex_t mu;
	uint64_t t0;           /* the window's start (CUPTI's clock, ns) */
	int open;              /* records are kept */
	int n, over;           /* intervals kept; more than KC_MAX came */
	uint64_t a[KC_MAX][2]; /* start, end */
	int flushAt;           /* the first flush kernel's index, -1: none */
	int dropped;           /* records CUPTI dropped */
} W = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, {{0}}, -1, 0};

/* the buffers not in CUPTI's hands */
static struct {
	pthread_mutex_t mu;
	uint8_t *a[4 * KC_POOL];
	int n;
} P = {PTHREAD_MUTEX_INITIALIZER, {0}, 0};

static uint8_t *new_buffer(void)
{
	uint8_t *b = (uint8_t *)aligned_alloc(8, KC_BUF);
	if (b)
		memset(b, 0, KC_BUF); /* its pages now, not in a launch */
	return b;
}

static void CUPTIAPI requested(uint8_t **pBuf, size_t *pSize, size_t *pMax)
{
	pthread_mutex_lock(&P.mu);
	*pBuf = P.n > 0 ? P.a[--P.n] : NULL;
	pthread_mutex_unlock(&P.mu);
	if (!*pBuf)
		*pBuf = new_buffer();
	*pSize = *pBuf ? KC_BUF : 0;
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

static void keep(uint64_t s, uint64_t e, const char *zName)
{
	if (!W.open || s < W.t0 || e < s)
		return;
	if (W.n == KC_MAX) {
		W.over = 1;
		return;
	}
	/* the flush kloop queued before the window's start runs in it: the
	 * earliest one of its name is the flush, and is no run's */
	if (zName && strstr(zName, KC_FLUSH) && (W.flushAt < 0 || s < W.a[W.flushAt][0]))
		W.flushAt = W.n;
	W.a[W.n][0] = s;
	W.a[W.n][1] = e;
	W.n++;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                               size_t valid)
{
	(void)ctx;
	(void)stream;
	CUpti_Activity *r = NULL;
	pthread_mutex_lock(&W.mu);
	while (valid > 0 && C.nextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
		switch (r->kind) {
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		case CUPTI_ACTIVITY_KIND_KERNEL: {
			CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)r;
			keep(k->start, k->end, k->name);
			break;
		}
		case CUPTI_ACTIVITY_KIND_MEMCPY: {
			CUpti_ActivityMemcpy6 *m = (CUpti_ActivityMemcpy6 *)r;
			keep(m->start, m->end, NULL);
			break;
		}
		case CUPTI_ACTIVITY_KIND_MEMSET: {
			CUpti_ActivityMemset4 *m = (CUpti_ActivityMemset4 *)r;
			keep(m->start, m->end, NULL);
			break;
		}
		default:
			break;
		}
	}
	pthread_mutex_unlock(&W.mu);
	/* handed back zeroed, as CUPTI was told (ZEROED_OUT_ACTIVITY_BUFFER):
	 * it then does not clear a buffer in a launch */
	memset(buf, 0, valid < size ? valid : size);
	give_back(buf);
}

/* CUPTI loaded and recording kernels, copies and sets: 0, or -1 with why */
extern "C" int kld_cupti_start(char *err, int nErr)
{
	const char *env = getenv("KLOOP_CUPTI");
	if (!env || !*env || !strcmp(env, "0"))
		return snprintf(err, nErr, "KLOOP_CUPTI is not set"), -1;
	if (!strcmp(env, "range")) /* the Range Profiler's instead (cupti_range.cu) */
		return snprintf(err, nErr, "KLOOP_CUPTI=range: no activity records"), -1;
	if (!strcmp(env, "1"))
		env = NULL;
	const char *names[] = {env,
	                       "libcupti.so.13",
	                       "libcupti.so.12",
	                       "libcupti.so",
	                       "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
	                       "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so"};
	void *dl = NULL;
	for (size_t i = 0; i < sizeof names / sizeof *names && !dl; i++)
		if (names[i] && *names[i])
			dl = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		return snprintf(err, nErr, "CUPTI (libcupti.so) could not be loaded: %s",
		                dlerror()),
		       -1;
	*(void **)&C.registerCallbacks = dlsym(dl, "cuptiActivityRegisterCallbacks");
	*(void **)&C.enable = dlsym(dl, "cuptiActivityEnable");
	*(void **)&C.flushAll = dlsym(dl, "cuptiActivityFlushAll");
	*(void **)&C.nextRecord = dlsym(dl, "cuptiActivityGetNextRecord");
	*(void **)&C.timestamp = dlsym(dl, "cuptiGetTimestamp");
	*(void **)&C.setAttribute = dlsym(dl, "cuptiActivitySetAttribute");
	if (!C.registerCallbacks || !C.enable || !C.flushAll || !C.nextRecord || !C.timestamp)
		return snprintf(err, nErr, "CUPTI lacks the activity API"), -1;
	CUptiResult e;
	if ((e = C.registerCallbacks(requested, completed)) != CUPTI_SUCCESS ||
	    (e = C.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) != CUPTI_SUCCESS ||
	    (e = C.enable(CUPTI_ACTIVITY_KIND_MEMCPY)) != CUPTI_SUCCESS ||
	    (e = C.enable(CUPTI_ACTIVITY_KIND_MEMSET)) != CUPTI_SUCCESS)
		return snprintf(err, nErr, "CUPTI's activity API failed (CUPTI error %d)", (int)e),
		       -1;
	/* the buffers come zeroed (new_buffer, completed): CUPTI need not
	 * clear one in a launch (bench/gpu/cupti_probe.cu: a launch right
	 * after a forced flush took 13 to 17 us, 6.5 to 10 with this) */
	if (C.setAttribute) {
		uint8_t one = 1;
		size_t sz = sizeof one;
		C.setAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &sz, &one);
	}
	for (int i = 0; i < KC_POOL; i++) {
		uint8_t *b = new_buffer();
		if (b)
			give_back(b);
	}
	C.ok = 1;
	return 0;
}

/* a window opens: what came before it is dropped */
extern "C" int kld_cupti_begin(void)
{
	if (!C.ok)
		return -1;
	C.flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&W.mu);
	uint64_t t = 0;
	C.timestamp(&t);
	W.t0 = t;
	W.n = W.over = 0;
	W.flushAt = -1;
	W.open = 1;
	pthread_mutex_unlock(&W.mu);
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const uint64_t *x = (const uint64_t *)a, *y = (const uint64_t *)b;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/*
 * The window closes (the device synchronized before): the time the GPU was
 * busy with its kernels, copies and sets (their intervals' union, the flush
 * left out) into *pBusyMs and how many there were into *pN; 0, or -1 where
 * there is no time (none recorded, too many, CUPTI off).
 */
extern "C" int kld_cupti_end(double *pBusyMs, int *pN)
{
	*pBusyMs = -1;
	*pN = 0;
	if (!C.ok)
		return -1;
	C.flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&W.mu);
	W.open = 0;
	if (W.flushAt >= 0) {
		W.n--;
		memmove(W.a[W.flushAt], W.a[W.flushAt + 1],
		        (size_t)(W.n - W.flushAt) * sizeof W.a[0]);
	}
	int n = W.n, over = W.over;
	qsort(W.a, (size_t)n, sizeof W.a[0], by_start);
	uint64_t busy = 0, s = 0, e = 0;
	for (int i = 0; i < n; i++) {
		if (i == 0 || W.a[i][0] > e) {
			busy += e - s;
			s = W.a[i][0];
			e = W.a[i][1];
		} else if (W.a[i][1] > e) {
			e = W.a[i][1];
		}
	}
	busy += e - s;
	pthread_mutex_unlock(&W.mu);
	if (over || n == 0)
		return -1;
	*pBusyMs = (double)busy / 1e6;
	*pN = n;
	return 0;
}
