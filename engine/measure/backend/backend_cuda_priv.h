/*
 * backend_cuda_priv.h - what the GPU backend's files share, private to them
 * (backend_cuda*.c): the CUDA runtime's entry points, resolved at run time,
 * and the backend's state.  The interface is backend.h.
 *
 *   backend_cuda.c        the runtime loaded; memory, copies, checks, timing, the device
 *   backend_cuda_share.c  buffers shared with the runner's process (file descriptors, IPC)
 *   backend_cuda_rt.c     the runtime's entry points, its errors, device memory (the
 *                         other two call it)
 */
#ifndef KL_BACKEND_CUDA_PRIV_H
#define KL_BACKEND_CUDA_PRIV_H

#include <stddef.h>

#include "backend.h"

typedef int cudaError_t;
typedef void *cudaStream_t;
typedef void *cudaEvent_t;
typedef struct {
	char reserved[64];
} cudaIpcMemHandle_t;

/* the runtime entry points kloop uses, resolved with dlsym */
#define CUDA_FUNCS(X)                                                                              \
	X(cudaError_t, cudaGetDeviceCount, (int *))                                                \
	X(cudaError_t, cudaSetDevice, (int))                                                       \
	X(cudaError_t, cudaDeviceGetAttribute, (int *, int, int))                                  \
	X(cudaError_t, cudaDeviceGetPCIBusId, (char *, int, int))                                  \
	X(cudaError_t, cudaMalloc, (void **, size_t))                                              \
	X(cudaError_t, cudaFree, (void *))                                                         \
	X(cudaError_t, cudaIpcGetMemHandle, (cudaIpcMemHandle_t *, void *))                        \
	X(cudaError_t, cudaIpcOpenMemHandle, (void **, cudaIpcMemHandle_t, unsigned))              \
	X(cudaError_t, cudaMemcpy, (void *, const void *, size_t, int))                            \
	X(cudaError_t, cudaMemsetAsync, (void *, int, size_t, cudaStream_t))                       \
	X(cudaError_t, cudaStreamCreateWithFlags, (cudaStream_t *, unsigned))                      \
	X(cudaError_t, cudaStreamDestroy, (cudaStream_t))                                          \
	X(cudaError_t, cudaStreamSynchronize, (cudaStream_t))                                      \
	X(cudaError_t, cudaEventCreate, (cudaEvent_t *))                                           \
	X(cudaError_t, cudaEventRecord, (cudaEvent_t, cudaStream_t))                               \
	X(cudaError_t, cudaEventSynchronize, (cudaEvent_t))                                        \
	X(cudaError_t, cudaEventElapsedTime, (float *, cudaEvent_t, cudaEvent_t))                  \
	X(cudaError_t, cudaDeviceSynchronize, (void))                                              \
	X(cudaError_t, cudaGetLastError, (void))                                                   \
	X(const char *, cudaGetErrorString, (cudaError_t))                                         \
	X(const char *, cudaGetErrorName, (cudaError_t))                                           \
	X(cudaError_t, cudaCtxResetPersistingL2Cache, (void))                                      \
	X(cudaError_t, cudaDeviceSetLimit, (int, size_t))                                          \
	X(cudaError_t, cudaRuntimeGetVersion, (int *))                                             \
	X(cudaError_t, cudaDriverGetVersion, (int *))                                              \
	X(cudaError_t, cudaMemGetInfo, (size_t *, size_t *))

#define DECL(ret, name, args) ret(*name) args;
struct backend_cuda_runtime {
	CUDA_FUNCS(DECL)
	cudaError_t (*cudaMemcpyAsync)(void *, const void *, size_t, int, cudaStream_t);
	void *dl;
};
#undef DECL
/* the runtime's entry points (R in the backend's files) */
extern struct backend_cuda_runtime backend_cuda_rt;

typedef void *nvmlDevice_t;

struct cuda {
	int dev;
	void *pFlush;          /* 2 x L2 bytes */
	void *pReport;         /* device memory for kloop's kernels' results */
	char *pHostA, *pHostB; /* host buffers for checks without kloop's kernels */
	size_t nHost;
	size_t nFlush;
	cudaEvent_t e0, e1, e2;
	nvmlDevice_t nvml; /* NULL without NVML */
};

/* backend_cuda_rt.c: kl_err with the CUDA error e (-1); device memory
 * (NULL + err) */
int backend_cuda_err(const char *zWhat, cudaError_t e, char *err);
void *backend_cuda_alloc(struct backend *b, size_t n, char *err);

/* backend_cuda_share.c: device memory shared with the candidate's process
 * (a file descriptor where the device can, else a legacy CUDA IPC handle),
 * released, and opened in the runner (backend.h's alloc_shared,
 * release_shared, open_shared) */
void *backend_cuda_alloc_shared(struct backend *b, size_t n, struct kl_share *sh, char *err);
void backend_cuda_release_shared(struct backend *b, void *p, struct kl_share *sh);
void *backend_cuda_open_shared(struct backend *b, const struct kl_share *sh, int ro, char *err);

#endif
