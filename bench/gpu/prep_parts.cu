/*
 * prep_parts.cu - what a timed run's preparation costs on the GPU, part by
 * part (issue 40, item 2: on an H200 a run's preparation took 1.39 ms, the
 * batch's ring of 32 slots 30 ms, of the softmax seed's 0.1 ms runs): the
 * parts harness_prepare_run() and harness_ring_prepare() queue, each timed
 * by events (median of RUNS), through libkloop-cuda.so's own kernels
 * (dlopen, as backend_cuda.c), plus the host's calls timed by its clock.
 *   nvcc -O2 -gencode=arch=compute_90a,code=sm_90a -o /tmp/prep_parts \
 *        bench/gpu/prep_parts.cu -ldl -lcuda
 *   /tmp/prep_parts bin/libkloop-cuda.so [MB of one input, 128]
 * Last, the whole preparation again with a second process (a context of
 * its own, as kloop's runner) running an empty kernel between two
 * preparations, as a timed run does: what the contexts' turns cost; then
 * each after 100 ms with the device idle (its clocks let go), and into
 * buffers allocated as kloop's shared ones are (cuMemCreate, exported as a
 * file descriptor, 2 MB granularity: backend_cuda_share.c).
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define RUNS 21

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double med(double *v, int n)
{
	qsort(v, n, sizeof *v, cmp);
	return v[n / 2];
}

/* a candidate replacement: the same hash, one 64-bit draw an element, two
 * 24-bit uniforms, Box-Muller in float */
__device__ __forceinline__ unsigned long long mix(unsigned long long z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
__global__ void normal_f32(float *p, long long n, float a, float b, unsigned long long seed)
{
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x) {
		unsigned long long h = mix(seed ^ mix((unsigned long long)i));
		float u1 = ((float)(h >> 40) + 0.5f) * 0x1.0p-24f, u2 = (float)(h & 0xffffff) * 0x1.0p-24f;
		p[i] = a + b * sqrtf(-2.f * logf(u1)) * cospif(2.f * u2);
	}
}

typedef int (*random_fn)(void *, int, long long, int, double, double, unsigned long long,
                         cudaStream_t);
typedef int (*read_fn)(const void *, long long, void *, cudaStream_t);
typedef int (*diff_fn)(const void *, const void *, long long, int, unsigned long long *,
                       cudaStream_t);

__global__ void empty_kernel(void) {}

/* device memory as kloop's shared buffers are: a VMM allocation, exportable
 * as a file descriptor, mapped read-write; NULL where the driver refuses */
static void *vmm(size_t n)
{
	CUmemAllocationProp prop = {};
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	size_t gran = 0;
	CUmemGenericAllocationHandle h;
	CUdeviceptr p = 0;
	CUmemAccessDesc acc = {};
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	if (cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) || !gran)
		return NULL;
	n = (n + gran - 1) / gran * gran;
	if (cuMemCreate(&h, n, &prop, 0) || cuMemAddressReserve(&p, n, 0, 0, 0) ||
	    cuMemMap(p, n, 0, h, 0) || cuMemSetAccess(p, n, &acc, 1))
		return NULL;
	return (void *)p;
}

/* the other process: an empty kernel and a synchronize a byte read */
static void other(int in, int out)
{
	char b;
	cudaFree(0);
	while (read(in, &b, 1) == 1) {
		empty_kernel<<<1, 1>>>();
		cudaDeviceSynchronize();
		if (write(out, &b, 1) != 1)
			break;
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	int toOther[2], fromOther[2];
	if (pipe(toOther) < 0 || pipe(fromOther) < 0)
		return 1;
	if (fork() == 0) {
		close(toOther[1]);
		close(fromOther[0]);
		other(toOther[0], fromOther[1]);
	}
	close(toOther[0]);
	close(fromOther[1]);
	void *kd = dlopen(argc > 1 ? argv[1] : "bin/libkloop-cuda.so", RTLD_NOW);
	if (!kd) {
		printf("dlopen: %s\n", dlerror());
		return 1;
	}
	random_fn rnd = (random_fn)dlsym(kd, "kld_random");
	read_fn rd = (read_fn)dlsym(kd, "kld_read");
	diff_fn df = (diff_fn)dlsym(kd, "kld_diff");
	size_t mb = argc > 2 ? (size_t)atol(argv[2]) : 128, bytes = mb << 20;
	long long n = (long long)(bytes / 4);
	int l2 = 0;
	cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
	size_t nFlush = 2 * (size_t)l2;
	cudaStream_t s;
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	void *in, *scratch, *out, *flush, *rep;
	unsigned long long *res;
	cudaMalloc(&in, bytes);
	cudaMalloc(&scratch, bytes);
	cudaMalloc(&out, bytes);
	cudaMalloc(&flush, nFlush);
	cudaMalloc(&rep, 64);
	cudaMallocManaged(&res, 64);
	cudaEvent_t e0, e1;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	printf("one input %zu MB (%lld floats), flush %zu MB\n", mb, n, nFlush >> 20);
	const char *names[] = {"kld_random (normal f32)", "copy D2D (scratch to input)",
	                       "memset (poison the output)", "kld_read (the L2 flush)",
	                       "kld_diff (inputs unchanged?)", "a float draw (normal_f32)"};
	for (int part = 0; part < 6; part++) {
		double v[RUNS];
		for (int r = 0; r < RUNS; r++) {
			cudaEventRecord(e0, s);
			if (part == 0)
				rnd(scratch, 0, n, 1, 0.0, 1.0, 1234 + r, s);
			else if (part == 1)
				cudaMemcpyAsync(in, scratch, bytes, cudaMemcpyDeviceToDevice, s);
			else if (part == 2)
				cudaMemsetAsync(out, 0xff, bytes, s);
			else if (part == 3)
				rd(flush, (long long)(nFlush & ~(size_t)15), rep, s);
			else if (part == 4)
				df(in, scratch, n, 4, res, s);
			else
				normal_f32<<<4096, 256, 0, s>>>((float *)scratch, n, 0.f, 1.f, 1234 + r);
			cudaEventRecord(e1, s);
			cudaEventSynchronize(e1);
			float ms;
			cudaEventElapsedTime(&ms, e0, e1);
			v[r] = ms;
		}
		printf("%-34s %8.3f ms (events, median of %d)\n", names[part], med(v, RUNS), RUNS);
	}
	double v[RUNS], w[RUNS], x[4][RUNS], z[RUNS];
	void *vIn = vmm(bytes), *vOut = vmm(bytes);
	for (int r = 0; r < RUNS; r++) {
		double t0 = now_ms();
		cudaCtxResetPersistingL2Cache();
		v[r] = now_ms() - t0;
		t0 = now_ms();
		cudaDeviceSynchronize();
		w[r] = now_ms() - t0;
	}
	/* the whole of a preparation, as harness_prepare_run queues it: alone
	 * (pass 0), each after the other process's empty kernel (1), after
	 * 100 ms idle (2), into VMM buffers (3) */
	const char *passes[] = {"a whole preparation", "a whole preparation after it",
	                        "... after 100 ms idle", "... into VMM buffers"};
	for (int pass = 0; pass < 4 && (pass < 3 || (vIn && vOut)); pass++)
		for (int r = 0; r < RUNS; r++) {
			char b = 1;
			double t0 = now_ms();
			if (pass == 1 &&
			    (write(toOther[1], &b, 1) != 1 || read(fromOther[0], &b, 1) != 1))
				return 1;
			if (pass == 1)
				z[r] = now_ms() - t0;
			if (pass == 2)
				usleep(100000);
			t0 = now_ms();
			rnd(scratch, 0, n, 1, 0.0, 1.0, 99 + r, s);
			cudaMemcpyAsync(pass == 3 ? vIn : in, scratch, bytes, cudaMemcpyDeviceToDevice, s);
			cudaMemsetAsync(pass == 3 ? vOut : out, 0xff, bytes, s);
			cudaCtxResetPersistingL2Cache();
			rd(flush, (long long)(nFlush & ~(size_t)15), rep, s);
			cudaDeviceSynchronize();
			x[pass][r] = now_ms() - t0;
		}
	/* the batch's ring (harness_ring_prepare): 32 slots drawn and poisoned
	 * back to back, one synchronize; into the three buffers in turn */
	double q[5];
	for (int r = 0; r < 5; r++) {
		double t0 = now_ms();
		for (int k = 0; k < 32; k++) {
			void *slot = k % 3 == 0 ? in : k % 3 == 1 ? scratch : out;
			rnd(slot, 0, n, 1, 0.0, 1.0, 7 * r + k, s);
			cudaMemsetAsync(out, 0xff, bytes, s);
		}
		cudaDeviceSynchronize();
		q[r] = now_ms() - t0;
	}
	printf("%-34s %8.3f ms (host clock, median of 5)\n", "a ring of 32 slots", med(q, 5));
	printf("%-34s %8.3f ms (host clock)\n", "cudaCtxResetPersistingL2Cache", med(v, RUNS));
	printf("%-34s %8.3f ms (host clock)\n", "cudaDeviceSynchronize (idle)", med(w, RUNS));
	printf("%-34s %8.3f ms (host clock)\n", "the other process's empty kernel", med(z, RUNS));
	for (int pass = 0; pass < 4; pass++)
		if (pass < 3 || (vIn && vOut))
			printf("%-34s %8.3f ms (host clock)\n", passes[pass], med(x[pass], RUNS));
	if (!vIn || !vOut)
		printf("no VMM buffers: the driver refused them\n");
	close(toOther[1]);
	return 0;
}
