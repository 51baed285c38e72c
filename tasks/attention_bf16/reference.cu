/*
 * attention_bf16/reference.cu - the cuda reference: one block per query row
 * (batch, head, i). Its threads compute the scores q_i . k_j / sqrt(head_dim)
 * in double into shared memory (keys j <= i only when CAUSAL), the block
 * reduces their maximum and the sum of exp(s_j - max), and each thread then
 * sums p_j v_j in double for its dimensions; rounded to bf16 (a KL_F64
 * output: the exact result unrounded, the float64 reference of the precision
 * verdict).
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "kloop.h"

#define CAUSAL 0
#define THREADS 128

__device__ __forceinline__ void put(double *p, double v)
{
	*p = v;
}
__device__ __forceinline__ void put(__nv_bfloat16 *p, double v)
{
	*p = __float2bfloat16_rn((float)v);
}

/* the block's maximum (max) or sum of v, through red[THREADS] */
__device__ double block_reduce(double v, double *red, bool max)
{
	red[threadIdx.x] = v;
	__syncthreads();
	for (int k = THREADS / 2; k > 0; k /= 2) {
		if (threadIdx.x < k)
			red[threadIdx.x] = max ? fmax(red[threadIdx.x], red[threadIdx.x + k])
			                       : red[threadIdx.x] + red[threadIdx.x + k];
		__syncthreads();
	}
	double r = red[0];
	__syncthreads();
	return r;
}

template <typename O>
__global__ void attention_ref(const __nv_bfloat16 *Q, const __nv_bfloat16 *K,
                              const __nv_bfloat16 *V, O *out, int seq, int hd)
{
	extern __shared__ double s[]; /* seq scores, then THREADS for reductions */
	double *red = s + seq;
	size_t bh = (size_t)blockIdx.y * seq * hd;
	int i = blockIdx.x;
	int n = CAUSAL ? i + 1 : seq;
	const __nv_bfloat16 *q = Q + bh + (size_t)i * hd;
	double scale = 1.0 / sqrt((double)hd), m = -INFINITY;
	for (int j = threadIdx.x; j < n; j += THREADS) {
		const __nv_bfloat16 *k = K + bh + (size_t)j * hd;
		double d = 0.0;
		for (int c = 0; c < hd; c++)
			d += (double)__bfloat162float(q[c]) * (double)__bfloat162float(k[c]);
		s[j] = d * scale;
		m = fmax(m, s[j]);
	}
	m = block_reduce(m, red, true);
	double l = 0.0;
	for (int j = threadIdx.x; j < n; j += THREADS) {
		s[j] = exp(s[j] - m);
		l += s[j];
	}
	l = block_reduce(l, red, false); /* its barriers publish s[] too */
	for (int c = threadIdx.x; c < hd; c += THREADS) {
		double o = 0.0;
		for (int j = 0; j < n; j++)
			o += s[j] * (double)__bfloat162float(V[bh + (size_t)j * hd + c]);
		put(&out[bh + (size_t)i * hd + c], o / l);
	}
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	if (n_in != 3 || n_out != 1)
		return 1;
	for (int i = 0; i < 3; i++)
		if (in[i].dtype != KL_BF16 || in[i].ndim != 4)
			return 2;
	if ((out[0].dtype != KL_BF16 && out[0].dtype != KL_F64) || out[0].ndim != 4)
		return 2;
	for (int i = 0; i < 4; i++)
		if (in[1].shape[i] != in[0].shape[i] || in[2].shape[i] != in[0].shape[i] ||
		    out[0].shape[i] != in[0].shape[i])
			return 3;
	int64_t bh = in[0].shape[0] * in[0].shape[1], seq = in[0].shape[2], hd = in[0].shape[3];
	if (bh == 0 || seq == 0)
		return 0;
	if (bh > 65535 || seq > 16384)
		return 4;
	size_t smem = (size_t)(seq + THREADS) * sizeof(double);
	dim3 grid((unsigned)seq, (unsigned)bh);
	const __nv_bfloat16 *q = (const __nv_bfloat16 *)in[0].data,
	                    *k = (const __nv_bfloat16 *)in[1].data,
	                    *v = (const __nv_bfloat16 *)in[2].data;
	if (out[0].dtype == KL_F64) {
		cudaFuncSetAttribute(attention_ref<double>,
		                     cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
		attention_ref<<<grid, THREADS, smem, (cudaStream_t)stream>>>(
		    q, k, v, (double *)out[0].data, (int)seq, (int)hd);
	} else {
		cudaFuncSetAttribute(attention_ref<__nv_bfloat16>,
		                     cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
		attention_ref<<<grid, THREADS, smem, (cudaStream_t)stream>>>(
		    q, k, v, (__nv_bfloat16 *)out[0].data, (int)seq, (int)hd);
	}
	return cudaGetLastError() != cudaSuccess;
}
