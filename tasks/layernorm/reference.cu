/*
 * layernorm/reference.cu - the cuda reference: per-row mean, then centred sum
 * of squares, each reduced in double by many blocks per row (atomicAdd into a
 * stream-ordered scratch buffer), then one thread per element normalises.
 */
#include <cuda_runtime.h>

#include "kloop.h"

#define THREADS 256
#define CHUNK 4096 /* elements of one row that one block reduces */
#define EPS 1e-5

/* the value stored as the output's type (a KL_F64 output: the exact
 * result unrounded, the float64 reference of the precision verdict) */
__device__ __forceinline__ void put(float *p, double v)
{
	*p = (float)v;
}
__device__ __forceinline__ void put(double *p, double v)
{
	*p = v;
}

/* sum (x - shift[row])^p over this block's chunk of its row, into acc[row] */
__global__ void ln_reduce(const float *x, long long n, const double *shift, double *acc, int pow2)
{
	__shared__ double red[THREADS];
	long long row = blockIdx.y, start = (long long)blockIdx.x * CHUNK;
	long long end = start + CHUNK < n ? start + CHUNK : n;
	const float *xr = x + row * n;
	double s = 0.0, c = shift ? shift[row] / (double)n : 0.0;
	for (long long i = start + threadIdx.x; i < end; i += THREADS) {
		double d = (double)xr[i] - c;
		s += pow2 ? d * d : d;
	}
	red[threadIdx.x] = s;
	__syncthreads();
	for (int k = THREADS / 2; k > 0; k /= 2) {
		if (threadIdx.x < k)
			red[threadIdx.x] += red[threadIdx.x + k];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		atomicAdd(&acc[row], red[0]);
}

template <typename O>
__global__ void ln_apply(const float *x, const float *w, const float *b, O *y, long long n,
                         long long total, const double *sum, const double *sq)
{
	long long stride = (long long)gridDim.x * blockDim.x;
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
	     i += stride) {
		long long row = i / n, j = i % n;
		double mean = sum[row] / (double)n;
		double rstd = 1.0 / sqrt(sq[row] / (double)n + EPS);
		put(&y[i], ((double)x[i] - mean) * rstd * w[j] + b[j]);
	}
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	if (n_in != 3 || n_out != 1)
		return 1;
	for (int i = 0; i < 3; i++)
		if (in[i].dtype != KL_F32)
			return 2;
	if (out[0].dtype != KL_F32 && out[0].dtype != KL_F64)
		return 2;
	int nd = in[1].ndim, lead = in[0].ndim - nd;
	if (lead < 0 || in[2].ndim != nd || kl_numel(&out[0]) != kl_numel(&in[0]))
		return 3;
	for (int i = 0; i < nd; i++)
		if (in[0].shape[lead + i] != in[1].shape[i] || in[2].shape[i] != in[1].shape[i])
			return 3;
	long long n = kl_numel(&in[1]), total = kl_numel(&in[0]);
	long long rows = n ? total / n : 0;
	if (rows == 0)
		return 0;
	if (rows > 65535)
		return 4;

	double *acc;
	if (cudaMallocAsync((void **)&acc, 2 * rows * sizeof(double), s) != cudaSuccess)
		return 5;
	cudaMemsetAsync(acc, 0, 2 * rows * sizeof(double), s);
	dim3 grid((unsigned)((n + CHUNK - 1) / CHUNK), (unsigned)rows);
	const float *x = (const float *)in[0].data;
	ln_reduce<<<grid, THREADS, 0, s>>>(x, n, NULL, acc, 0);
	ln_reduce<<<grid, THREADS, 0, s>>>(x, n, acc, acc + rows, 1);
	long long blocks = (total + THREADS - 1) / THREADS;
	unsigned g = (unsigned)(blocks < 65536 ? blocks : 65536);
	const float *w = (const float *)in[1].data, *b = (const float *)in[2].data;
	if (out[0].dtype == KL_F64)
		ln_apply<<<g, THREADS, 0, s>>>(x, w, b, (double *)out[0].data, n, total, acc,
		                                acc + rows);
	else
		ln_apply<<<g, THREADS, 0, s>>>(x, w, b, (float *)out[0].data, n, total, acc,
		                                acc + rows);
	cudaFreeAsync(acc, s);
	return cudaGetLastError() != cudaSuccess;
}
