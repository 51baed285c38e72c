/*
 * fp8_gemm/reference.cu - the cuda reference: one thread per element of C,
 * the dot product of the e4m3 operands accumulated in double, times the two
 * scales, then rounded to bf16 (a KL_F64 output: the exact result
 * unrounded, the float64 reference of the precision verdict).
 */
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "kloop.h"

__device__ __forceinline__ void put(double *p, double v)
{
	*p = v;
}
__device__ __forceinline__ void put(__nv_bfloat16 *p, double v)
{
	*p = __float2bfloat16_rn((float)v);
}

template <typename O>
__global__ void fp8_gemm_ref(const __nv_fp8_e4m3 *A, const __nv_fp8_e4m3 *B, const float *sa,
                             const float *sb, O *C, int M, int K, int N)
{
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	int i = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= M || j >= N)
		return;
	double acc = 0.0;
	for (int k = 0; k < K; k++)
		acc += (double)(float)A[(size_t)i * K + k] * (double)(float)B[(size_t)j * K + k];
	put(&C[(size_t)i * N + j], acc * ((double)*sa * *sb));
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	if (n_in != 4 || n_out != 1)
		return 1;
	if (in[0].dtype != KL_E4M3 || in[1].dtype != KL_E4M3 || in[2].dtype != KL_F32 ||
	    in[3].dtype != KL_F32 || (out[0].dtype != KL_BF16 && out[0].dtype != KL_F64))
		return 2;
	if (in[0].ndim != 2 || in[1].ndim != 2 || out[0].ndim != 2 || kl_numel(&in[2]) != 1 ||
	    kl_numel(&in[3]) != 1)
		return 3;
	int64_t M = in[0].shape[0], K = in[0].shape[1], N = in[1].shape[0];
	if (in[1].shape[1] != K || out[0].shape[0] != M || out[0].shape[1] != N)
		return 3;
	if (M == 0 || N == 0)
		return 0;
	dim3 block(16, 16), grid((unsigned)((N + 15) / 16), (unsigned)((M + 15) / 16));
	const __nv_fp8_e4m3 *A = (const __nv_fp8_e4m3 *)in[0].data,
	                    *B = (const __nv_fp8_e4m3 *)in[1].data;
	const float *sa = (const float *)in[2].data, *sb = (const float *)in[3].data;
	if (out[0].dtype == KL_F64)
		fp8_gemm_ref<<<grid, block, 0, (cudaStream_t)stream>>>(
		    A, B, sa, sb, (double *)out[0].data, (int)M, (int)K, (int)N);
	else
		fp8_gemm_ref<<<grid, block, 0, (cudaStream_t)stream>>>(
		    A, B, sa, sb, (__nv_bfloat16 *)out[0].data, (int)M, (int)K, (int)N);
	return cudaGetLastError() != cudaSuccess;
}
