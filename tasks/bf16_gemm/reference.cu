/*
 * bf16_gemm/reference.cu - the cuda reference: one thread per element of C, the
 * dot product of the bf16 operands accumulated in double, then rounded to bf16.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "kloop.h"

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
__device__ __forceinline__ void put(__nv_bfloat16 *p, double v)
{
	*p = __float2bfloat16_rn((float)v);
}

template <typename O>
__global__ void bf16_gemm_ref(const __nv_bfloat16 *A, const __nv_bfloat16 *B, O *C, int M, int K,
                              int N)
{
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	int i = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= M || j >= N)
		return;
	double acc = 0.0;
	for (int k = 0; k < K; k++)
		acc += (double)__bfloat162float(A[(size_t)i * K + k]) *
		       (double)__bfloat162float(B[(size_t)k * N + j]);
	put(&C[(size_t)i * N + j], acc);
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	if (n_in != 2 || n_out != 1)
		return 1;
	if (in[0].dtype != KL_BF16 || in[1].dtype != KL_BF16 ||
	    (out[0].dtype != KL_BF16 && out[0].dtype != KL_F64))
		return 2;
	if (in[0].ndim != 2 || in[1].ndim != 2 || out[0].ndim != 2)
		return 3;
	int64_t M = in[0].shape[0], K = in[0].shape[1], N = in[1].shape[1];
	if (in[1].shape[0] != K || out[0].shape[0] != M || out[0].shape[1] != N)
		return 3;
	if (M == 0 || N == 0)
		return 0;
	dim3 block(16, 16), grid((unsigned)((N + 15) / 16), (unsigned)((M + 15) / 16));
	if (out[0].dtype == KL_F64)
		bf16_gemm_ref<<<grid, block, 0, (cudaStream_t)stream>>>(
		    (const __nv_bfloat16 *)in[0].data, (const __nv_bfloat16 *)in[1].data,
		    (double *)out[0].data, (int)M, (int)K, (int)N);
	else
		bf16_gemm_ref<<<grid, block, 0, (cudaStream_t)stream>>>(
		    (const __nv_bfloat16 *)in[0].data, (const __nv_bfloat16 *)in[1].data,
		    (__nv_bfloat16 *)out[0].data, (int)M, (int)K, (int)N);
	return cudaGetLastError() != cudaSuccess;
}
