/*
 * runner_start.c - what starting a GPU runner costs, step by step, and
 * whether starting runners ahead (several at once, or while another process
 * times a kernel) helps or disturbs.  A runner is a fresh process, so each
 * candidate pays for a CUDA context; this measures the parts.
 *
 *   runner_start steps [LIBKLOOP_CUDA]   one fresh process: ms per step
 *   runner_start conc N                 N fresh processes at once, each making a
 *                                       context: wall ms until all are ready
 *   runner_start copy MB                a device copy of MB megabytes timed 300 times,
 *                                       after a 100 MB write (as kloop's cache flush):
 *                                       median, p90, max (run it inside and outside a
 *                                       sandbox to compare)
 *   runner_start interfere N            a 0.7 ms device copy timed 300 times alone,
 *                                       then while N processes at a time keep
 *                                       making contexts: median, p90, max
 *
 * Build (no CUDA headers needed; the runtime is loaded as kloop loads it):
 *   cc -O2 -o runner_start bench/gpu/runner_start.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef int (*f_i)(int *);
static struct {
	int (*getCount)(int *);
	int (*setDevice)(int);
	int (*free_)(void *);
	int (*malloc_)(void **, size_t);
	int (*memsetAsync)(void *, int, size_t, void *);
	int (*memcpyAsync)(void *, const void *, size_t, int, void *);
	int (*streamCreate)(void **, unsigned);
	int (*eventCreate)(void **);
	int (*eventRecord)(void *, void *);
	int (*eventSync)(void *);
	int (*eventElapsed)(float *, void *, void *);
	int (*streamSync)(void *);
	int (*deviceGetAttribute)(int *, int, int);
} R;

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void load(void)
{
	const char *names[] = {"libcudart.so.13", "/usr/local/cuda/lib64/libcudart.so.13",
	                       "libcudart.so.12", "/usr/local/cuda/lib64/libcudart.so"};
	void *d = NULL;
	for (size_t i = 0; i < sizeof names / sizeof *names && !d; i++)
		d = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
	if (!d) {
		fprintf(stderr, "no libcudart: %s\n", dlerror());
		exit(2);
	}
#define L(f, n) *(void **)&R.f = dlsym(d, n)
	L(getCount, "cudaGetDeviceCount");
	L(setDevice, "cudaSetDevice");
	L(free_, "cudaFree");
	L(malloc_, "cudaMalloc");
	L(memsetAsync, "cudaMemsetAsync");
	L(memcpyAsync, "cudaMemcpyAsync");
	L(streamCreate, "cudaStreamCreateWithFlags");
	L(eventCreate, "cudaEventCreate");
	L(eventRecord, "cudaEventRecord");
	L(eventSync, "cudaEventSynchronize");
	L(eventElapsed, "cudaEventElapsedTime");
	L(streamSync, "cudaStreamSynchronize");
	L(deviceGetAttribute, "cudaDeviceGetAttribute");
}

/* a runner's start without its buffers: context, stream, events, flush buffer */
static void *ctx(void)
{
	int n;
	void *s, *e, *f;
	R.getCount(&n);
	R.setDevice(0);
	R.free_(NULL);
	R.streamCreate(&s, 1);
	R.eventCreate(&e);
	R.malloc_(&f, 100 << 20);
	R.memsetAsync(f, 0, 100 << 20, s);
	R.streamSync(s);
	return s;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void steps(const char *zKernels)
{
	double t = now_ms(), t0 = t;
#define STEP(name, code)                                                                           \
	do {                                                                                       \
		code;                                                                              \
		double u = now_ms();                                                               \
		printf("  %-34s %8.2f ms\n", name, u - t);                                         \
		t = u;                                                                             \
	} while (0)
	int n, v;
	void *s, *e0, *e1, *f;
	STEP("dlopen libcudart", load());
	STEP("cudaGetDeviceCount (cuInit)", R.getCount(&n));
	STEP("cudaSetDevice", R.setDevice(0));
	STEP("cudaFree(0) (the context)", R.free_(NULL));
	STEP("device attributes", for (int a = 0; a < 8; a++) R.deviceGetAttribute(&v, a + 1, 0));
	STEP("nvmlInit", {
		void *nv = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
		int (*init)(void) = nv ? (int (*)(void))dlsym(nv, "nvmlInit_v2") : NULL;
		if (init)
			init();
	});
	STEP("stream + 3 events", {
		R.streamCreate(&s, 1);
		R.eventCreate(&e0);
		R.eventCreate(&e1);
		R.eventCreate(&e1);
	});
	STEP("100 MB flush buffer + memset", {
		R.malloc_(&f, 100 << 20);
		R.memsetAsync(f, 0, 100 << 20, s);
		R.streamSync(s);
	});
	if (zKernels) {
		void *kd;
		STEP("dlopen libkloop-cuda.so", kd = dlopen(zKernels, RTLD_NOW | RTLD_LOCAL));
		void (*empty)(void *) = kd ? (void (*)(void *))dlsym(kd, "kld_empty") : NULL;
		if (empty)
			STEP("first kernel (module load)", {
				empty(s);
				R.streamSync(s);
			});
	}
	printf("  %-34s %8.2f ms\n", "total in the process", now_ms() - t0);
}

static double run_conc(int n)
{
	double t = now_ms();
	for (int i = 0; i < n; i++)
		if (fork() == 0) {
			execl("/proc/self/exe", "runner_start", "one", (char *)NULL);
			_exit(127);
		}
	while (wait(NULL) > 0)
		;
	return now_ms() - t;
}

static void timed_n(const char *zWhat, size_t n, int flush)
{
	void *s, *e0, *e1, *a, *b, *f = NULL;
	R.streamCreate(&s, 1);
	R.eventCreate(&e0);
	R.eventCreate(&e1);
	R.malloc_(&a, n);
	R.malloc_(&b, n);
	if (flush)
		R.malloc_(&f, 100 << 20);
	double ms[300];
	for (int i = -20; i < 300; i++) {
		if (f)
			R.memsetAsync(f, i & 0xff, 100 << 20, s);
		R.eventRecord(e0, s);
		R.memcpyAsync(b, a, n, 3 /* D2D */, s);
		R.eventRecord(e1, s);
		R.eventSync(e1);
		float f;
		R.eventElapsed(&f, e0, e1);
		if (i >= 0)
			ms[i] = f;
		usleep(2000); /* a harness's pace: runs with work between them */
	}
	qsort(ms, 300, sizeof *ms, cmp);
	printf("  %-40s median %.4f ms  p90 %.4f  max %.4f\n", zWhat, ms[150], ms[270], ms[299]);
}

static void timed(const char *zWhat)
{
	timed_n(zWhat, 1u << 30, 0);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "steps")) {
		steps(argc > 2 ? argv[2] : NULL);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "one")) {
		load();
		ctx();
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "copy")) {
		load();
		ctx();
		char what[64];
		snprintf(what, sizeof what, "%s MB device copy", argv[2]);
		timed_n(what, (size_t)atoi(argv[2]) << 20, 1);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "loop"))
		for (;;)
			run_conc(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "conc")) {
		int n = atoi(argv[2]);
		double w = run_conc(n);
		printf("  %d at once: %.1f ms (%.1f ms a runner)\n", n, w, w / n);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "interfere")) {
		int n = atoi(argv[2]);
		load();
		ctx();
		timed("1 GiB device copy, alone");
		pid_t bg = fork();
		if (bg == 0) {
			execl("/proc/self/exe", "runner_start", "loop", argv[2], (char *)NULL);
			_exit(127);
		}
		usleep(300000);
		char what[64];
		snprintf(what, sizeof what, "same, %d contexts being made", n);
		timed(what);
		kill(bg, SIGKILL);
		waitpid(bg, NULL, 0);
		while (wait(NULL) > 0)
			;
		timed("1 GiB device copy, alone again");
		return 0;
	}
	fprintf(stderr,
	        "usage: runner_start steps [LIBKLOOP_CUDA] | conc N | copy MB | interfere N\n");
	return 2;
}
