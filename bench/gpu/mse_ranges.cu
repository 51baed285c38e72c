/*
 * mse_ranges.cu - usec's MSE candidate (two kernels) timed kernel by kernel
 * by libkloop-cuda.so's Range Profiler (kld_prof_start/begin/end and
 * kld_prof_ranges: gpu__time_duration.sum, ncu's metric), to tell where
 * kloop's sum and Nsight Compute's differ (issue 39: 6.82 against 7.65 us).
 * Each run: a 256 MB memset (the L2 evicted), then a window around one
 * kl_run, its ranges printed in us; with a third argument the window also
 * holds a 256 MB read kernel before kl_run, as kloop's profiled runs hold
 * its L2 flush (its range skipped).
 *   nvcc -O2 -gencode=arch=compute_90a,code=sm_90a -Iinclude \
 *        -o /tmp/mse_ranges bench/gpu/mse_ranges.cu -ldl
 *   /tmp/mse_ranges bin/libkloop-cuda.so 20 [flush]
 */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "usec/mse.cu"
__global__ void rd(const float4 *p, size_t n, float *sink)
{
	float acc = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		acc += p[i].x;
	if (acc == 12345.f)
		*sink = acc;
}
int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	void *kd = dlopen(argv[1], RTLD_NOW);
	int (*start)(int, char *, int) = (int (*)(int, char *, int))dlsym(kd, "kld_prof_start");
	int (*begin)(void) = (int (*)(void))dlsym(kd, "kld_prof_begin");
	int (*end)(int, double *, int *) = (int (*)(int, double *, int *))dlsym(kd, "kld_prof_end");
	int (*ranges)(double *, int) = (int (*)(double *, int))dlsym(kd, "kld_prof_ranges");
	cudaSetDevice(0);
	cudaFree(0);
	char err[300] = "";
	if (start(0, err, 300) < 0) { printf("start: %s\n", err); return 1; }
	size_t n = 128 * 4096;
	float *a, *b, *o; void *junk;
	cudaMalloc(&a, n * 4); cudaMalloc(&b, n * 4); cudaMalloc(&o, 4); cudaMalloc(&junk, 256 << 20);
	cudaMemset(a, 0, n * 4); cudaMemset(b, 0, n * 4);
	kl_tensor in[2] = {{a, KL_F32, 2, {128, 4096}}, {b, KL_F32, 2, {128, 4096}}};
	kl_tensor out[1] = {{o, KL_F32, 0, {0}}};
	int N = argc > 2 ? atoi(argv[2]) : 30;
	for (int i = 0; i < N; i++) {
		cudaMemset(junk, i, 256 << 20);
		cudaDeviceSynchronize();
		if (begin() < 0) { printf("begin failed\n"); continue; }
		int fk = argc > 3;
		if (fk)
			rd<<<528, 256>>>((const float4 *)junk, (256 << 20) / 16, o);
		kl_run(in, 2, out, 1, 0);
		cudaDeviceSynchronize();
		double ms; int k; double r[8];
		end(fk, &ms, &k);
		int m = ranges(r, 8);
		printf("run %d sum %.3f us:", i, ms * 1e3);
		for (int j = 0; j < m; j++) printf(" %.3f", r[j] * 1e3);
		printf("\n");
	}
	return 0;
}
