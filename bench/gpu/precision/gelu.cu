/* gelu.cu - y = x Phi(x) with erff (faithful); -DGELU_TANH: the tanh
 * approximation (0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))), which
 * torch calls approximate="tanh" */
#include <cuda_runtime.h>

#include "kloop.h"

__global__ void gelu(const float *x, float *y, long long n)
{
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x) {
		float v = x[i];
#ifdef GELU_TANH
		y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
#else
		y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
#endif
	}
}

extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	if (n_in != 1 || n_out != 1)
		return 1;
	long long n = kl_numel(&in[0]);
	gelu<<<1024, 256, 0, (cudaStream_t)stream>>>((const float *)in[0].data, (float *)out[0].data, n);
	return cudaGetLastError() != cudaSuccess;
}
