// An nvcc extended lambda (__device__ annotation on a host-side lambda),
// which the CUDA grammar does not know: the outline must still list the
// kernel, the launch and the host function around the error.
#include "kloop.h"

template <typename F>
__global__ void apply(float *y, int n, F f)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = f(y[i]);
}

void twice(float *y, int n)
{
	apply<<<(n + 127) / 128, 128>>>(y, n, [] __device__(float v) { return v * 2.f; });
}

__device__ float square(float v)
{
	return v * v;
}
