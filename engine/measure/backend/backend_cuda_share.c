/*
 * backend_cuda_share.c - the GPU backend's buffers shared with the runner's
 * process: a file descriptor of the driver's virtual memory API where the
 * device has it, else a legacy CUDA IPC handle.
 */
#include "backend_cuda_priv.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

#define R backend_cuda_rt /* the runtime (backend_cuda_priv.h) */

/* The candidate's buffers are shared with its process through a file
 * descriptor: memory made with the driver's virtual memory API (cuMemCreate)
 * exported as a POSIX file descriptor, which travels over the runner's socket
 * like the host's memfds.  Legacy CUDA IPC handles name the exporting
 * process's pid and cannot cross pid namespaces, so with them the sandboxed
 * runner could not have its own; they remain the fallback on a device
 * without the virtual memory API (the runner then keeps the pid namespace). */
typedef int CUresult;
typedef unsigned long long CUdeviceptr, CUmemHandle;
typedef struct {
	int type, id;
} CUmemLocation;
typedef struct {
	int type, requestedHandleTypes;
	CUmemLocation location;
	void *win32HandleMetaData;
	struct {
		unsigned char compressionType, gpuDirectRDMACapable;
		unsigned short usage;
		unsigned char reserved[4];
	} allocFlags;
} CUmemAllocationProp;
typedef struct {
	CUmemLocation location;
	int flags;
} CUmemAccessDesc;
enum {
	CU_MEM_ALLOCATION_TYPE_PINNED = 1,
	CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1,
	CU_MEM_LOCATION_TYPE_DEVICE = 1,
	CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3,
	CU_DEVICE_ATTRIBUTE_VMM = 102,
	CU_DEVICE_ATTRIBUTE_POSIX_FD = 103,
};
#define CU_FUNCS(X)                                                                                \
	X(cuInit, (unsigned))                                                                      \
	X(cuDeviceGet, (int *, int))                                                               \
	X(cuDeviceGetAttribute, (int *, int, int))                                                 \
	X(cuMemGetAllocationGranularity, (size_t *, const CUmemAllocationProp *, int))             \
	X(cuMemCreate, (CUmemHandle *, size_t, const CUmemAllocationProp *, unsigned long long))   \
	X(cuMemAddressReserve, (CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long))   \
	X(cuMemMap, (CUdeviceptr, size_t, size_t, CUmemHandle, unsigned long long))                \
	X(cuMemSetAccess, (CUdeviceptr, size_t, const CUmemAccessDesc *, size_t))                  \
	X(cuMemExportToShareableHandle, (void *, CUmemHandle, int, unsigned long long))            \
	X(cuMemImportFromShareableHandle, (CUmemHandle *, void *, int))                            \
	X(cuMemUnmap, (CUdeviceptr, size_t))                                                       \
	X(cuMemAddressFree, (CUdeviceptr, size_t))                                                 \
	X(cuMemRelease, (CUmemHandle))                                                             \
	X(cuGetErrorString, (CUresult, const char **))
#define CU_DECL(name, args) CUresult(*name) args;
static struct {
	CU_FUNCS(CU_DECL)
	int state; /* 0 not tried, 1 usable, -1 not */
} D;

/* the driver's virtual memory API with POSIX file descriptors, on device
 * dev: 1 usable, 0 not */
static int vmm_usable(int dev)
{
	if (D.state == 0) {
		D.state = -1;
		void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
		int ok = h != NULL;
#define CU_LOAD(name, args)                                                                        \
	if (ok && !(*(void **)&D.name = dlsym(h, #name)))                                          \
		ok = 0;
		CU_FUNCS(CU_LOAD)
#undef CU_LOAD
		if (ok && D.cuInit(0) == 0)
			D.state = 1;
	}
	int d, vmm = 0, fd = 0;
	return D.state == 1 && D.cuDeviceGet(&d, dev) == 0 &&
	       D.cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VMM, d) == 0 &&
	       D.cuDeviceGetAttribute(&fd, CU_DEVICE_ATTRIBUTE_POSIX_FD, d) == 0 && vmm && fd;
}

static int cu_err(const char *zWhat, CUresult e, char *err)
{
	const char *s = NULL;
	if (D.cuGetErrorString(e, &s) != 0 || !s)
		s = "unknown error";
	return kl_err(err, "%s: %s (CUDA driver error %d)", zWhat, s, e);
}

/* map memory handle h of n bytes read-write for device dev at a fresh
 * address: the address, or 0 + err */
static CUdeviceptr vmm_map(CUmemHandle h, size_t n, int dev, char *err)
{
	CUdeviceptr p = 0;
	CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, 0},
	                       CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	CUresult e = D.cuDeviceGet(&acc.location.id, dev);
	if (e)
		return cu_err("cuDeviceGet", e, err), 0;
	if ((e = D.cuMemAddressReserve(&p, n, 0, 0, 0)))
		return cu_err("cuMemAddressReserve", e, err), 0;
	if ((e = D.cuMemMap(p, n, 0, h, 0))) {
		D.cuMemAddressFree(p, n);
		return cu_err("cuMemMap", e, err), 0;
	}
	if ((e = D.cuMemSetAccess(p, n, &acc, 1))) {
		D.cuMemUnmap(p, n);
		D.cuMemAddressFree(p, n);
		return cu_err("cuMemSetAccess", e, err), 0;
	}
	return p;
}

static void *vmm_alloc_shared(int dev, size_t n, struct kl_share *sh, char *err)
{
	CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
	                            .requestedHandleTypes =
	                                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
	                            .location = {CU_MEM_LOCATION_TYPE_DEVICE, 0}};
	size_t gran = 0;
	CUresult e = D.cuDeviceGet(&prop.location.id, dev);
	if (!e)
		e = D.cuMemGetAllocationGranularity(&gran, &prop, 0 /* minimum */);
	if (e)
		return cu_err("cuMemGetAllocationGranularity", e, err), NULL;
	if (gran == 0)
		gran = 2u << 20;
	sh->n = (n + gran - 1) / gran * gran;
	CUmemHandle h;
	if ((e = D.cuMemCreate(&h, sh->n, &prop, 0))) {
		if (e == 2 /* CUDA_ERROR_OUT_OF_MEMORY */)
			return kl_err(err, "out of device memory: cannot allocate %zu bytes",
			              sh->n),
			       NULL;
		return cu_err("cuMemCreate", e, err), NULL;
	}
	int fd = -1;
	if ((e = D.cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
	                                        0))) {
		D.cuMemRelease(h);
		return cu_err("cuMemExportToShareableHandle", e, err), NULL;
	}
	CUdeviceptr p = vmm_map(h, sh->n, dev, err);
	if (!p) {
		close(fd);
		D.cuMemRelease(h);
		return NULL;
	}
	sh->fd = fd;
	memcpy(sh->handle, &h, sizeof h);
	return (void *)(uintptr_t)p;
}

/* device memory shared with the candidate's process: a file descriptor
 * where the device can, else a legacy CUDA IPC handle */
void *backend_cuda_alloc_shared(struct backend *b, size_t n, struct kl_share *sh, char *err)
{
	struct cuda *c = b->priv;
	memset(sh, 0, sizeof *sh);
	sh->fd = -1;
	sh->n = n ? n : 1;
	if (vmm_usable(c->dev)) {
		void *v = vmm_alloc_shared(c->dev, sh->n, sh, err);
		if (v || strstr(err, "out of device memory"))
			return v;
		/* the device says it can but does not (a driver, MIG): legacy
		 * IPC from now on, and the runner keeps the pid namespace */
		fprintf(stderr,
		        "kloop-worker: GPU buffers as file descriptors failed (%s); "
		        "using CUDA IPC handles\n",
		        err);
		D.state = -1;
		sh->n = n ? n : 1;
	}
	void *p = backend_cuda_alloc(b, sh->n, err);
	if (!p)
		return NULL;
	cudaIpcMemHandle_t h;
	cudaError_t e = R.cudaIpcGetMemHandle(&h, p);
	if (e) {
		R.cudaGetLastError();
		R.cudaFree(p);
		return backend_cuda_err("cudaIpcGetMemHandle", e, err), NULL;
	}
	memcpy(sh->handle, &h, sizeof h);
	return p;
}

void backend_cuda_release_shared(struct backend *b, void *p, struct kl_share *sh)
{
	(void)b;
	if (sh->fd < 0) {
		R.cudaFree(p);
		return;
	}
	/* the candidate's work on it is over before its buffers go */
	R.cudaDeviceSynchronize();
	CUmemHandle h;
	memcpy(&h, sh->handle, sizeof h);
	D.cuMemUnmap((CUdeviceptr)(uintptr_t)p, sh->n);
	D.cuMemAddressFree((CUdeviceptr)(uintptr_t)p, sh->n);
	D.cuMemRelease(h);
	close(sh->fd);
	sh->fd = -1;
}

void *backend_cuda_open_shared(struct backend *b, const struct kl_share *sh, int ro, char *err)
{
	struct cuda *c = b->priv;
	(void)ro; /* inputs stay writable: a write to one is a verdict, not a fault */
	if (sh->fd >= 0) {
		if (!vmm_usable(c->dev))
			return kl_err(err,
			              "a buffer came as a file descriptor, but the CUDA driver's "
			              "virtual memory API is not usable in this process"),
			       NULL;
		CUmemHandle h;
		CUresult e = D.cuMemImportFromShareableHandle(
		    &h, (void *)(intptr_t)sh->fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
		if (e)
			return cu_err("cuMemImportFromShareableHandle", e, err), NULL;
		CUdeviceptr p = vmm_map(h, sh->n, c->dev, err);
		D.cuMemRelease(h); /* the mapping holds the memory */
		return p ? (void *)(uintptr_t)p : NULL;
	}
	cudaIpcMemHandle_t h;
	memcpy(&h, sh->handle, sizeof h);
	void *p = NULL;
	cudaError_t e = R.cudaIpcOpenMemHandle(&p, h, 1 /* cudaIpcMemLazyEnablePeerAccess */);
	if (e) {
		R.cudaGetLastError();
		return backend_cuda_err("cudaIpcOpenMemHandle", e, err), NULL;
	}
	return p;
}
