/*
 * backend_cuda_rt.c - the CUDA runtime as the GPU backend's files call it:
 * its entry points (backend_cuda_rt, resolved by backend_cuda.c's
 * load_runtime()), a CUDA error said, device memory allocated.  Both
 * backend_cuda.c and backend_cuda_share.c call it; it calls neither.
 */
#include "backend_cuda_priv.h"

#include "util.h"

#define R backend_cuda_rt

/* the runtime's entry points, resolved by load_runtime() (backend_cuda.c) */
struct backend_cuda_runtime backend_cuda_rt;

int backend_cuda_err(const char *zWhat, cudaError_t e, char *err)
{
	return kl_err(err, "%s: %s (%s, CUDA error %d)", zWhat, R.cudaGetErrorString(e),
	              R.cudaGetErrorName(e), e);
}

void *backend_cuda_alloc(struct backend *b, size_t n, char *err)
{
	void *p = NULL;
	cudaError_t e = R.cudaMalloc(&p, n);
	(void)b;
	if (e) {
		R.cudaGetLastError();
		return backend_cuda_err("cudaMalloc", e, err), NULL;
	}
	return p;
}
