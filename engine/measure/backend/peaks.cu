/*
 * peaks.cu - the device's dense peaks per compute type, measured with
 * cuBLASLt (peaks.h): a large square matrix product of each type the
 * device has (tf32; fp16 and bf16 with fp32 accumulation; fp8 e4m3 with
 * fp32 accumulation from compute capability 8.9; int8 with int32
 * accumulation), timed with events, the best of three batches.  Built into
 * libkloop-cuda.so beside kloop's own kernels; cuBLASLt is loaded at run
 * time (KLOOP_CUBLASLT names it), so the library loads where it is absent
 * and only the peaks go unmeasured.
 */
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* the compute types, as task.h numbers them */
enum { KP_FP32, KP_TF32, KP_FP16, KP_BF16, KP_FP8, KP_INT8, KP_N };

/* values in [-1, 1) (int8: the whole range), from a hash of the index */
__global__ void klp_fill(void *p, long long n, int kind, unsigned seed)
{
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x) {
		unsigned h = (unsigned)i * 2654435761u ^ seed;
		h ^= h >> 15;
		h *= 0x2c1b3c6du;
		h ^= h >> 12;
		float u = (float)(h & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
		switch (kind) {
		case KP_TF32:
			((float *)p)[i] = u;
			break;
		case KP_FP16:
			((__half *)p)[i] = __float2half(u);
			break;
		case KP_BF16:
			((__nv_bfloat16 *)p)[i] = __float2bfloat16(u);
			break;
		case KP_FP8:
			((__nv_fp8_e4m3 *)p)[i] = __nv_fp8_e4m3(u);
			break;
		case KP_INT8:
			((signed char *)p)[i] = (signed char)(int)((h >> 24) & 0xff);
			break;
		}
	}
}

#define LT_FUNCS(X)                                                                                \
	X(Create)                                                                          \
	X(Destroy)                                                                         \
	X(MatmulDescCreate)                                                                \
	X(MatmulDescDestroy)                                                               \
	X(MatmulDescSetAttribute)                                                          \
	X(MatrixLayoutCreate)                                                              \
	X(MatrixLayoutDestroy)                                                             \
	X(MatmulPreferenceCreate)                                                          \
	X(MatmulPreferenceDestroy)                                                         \
	X(MatmulPreferenceSetAttribute)                                                    \
	X(MatmulAlgoGetHeuristic)                                                          \
	X(Matmul)

static struct {
#define DECL(name) decltype(&cublasLt##name) name;
	LT_FUNCS(DECL)
#undef DECL
} L;

static int say(char *err, int nErr, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, (size_t)nErr, fmt, ap);
	va_end(ap);
	return -1;
}

static int load_lt(char *err, int nErr)
{
	static void *dl;
	if (dl)
		return 0;
	const char *names[] = {getenv("KLOOP_CUBLASLT"),
	                       "libcublasLt.so.13",
	                       "libcublasLt.so.12",
	                       "/usr/local/cuda/lib64/libcublasLt.so.13",
	                       "/usr/local/cuda/lib64/libcublasLt.so.12",
	                       "libcublasLt.so"};
	for (size_t i = 0; i < sizeof names / sizeof *names && !dl; i++)
		if (names[i] && *names[i])
			dl = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		return say(err, nErr, "cuBLASLt (libcublasLt.so) could not be loaded: %s (set "
		                      "KLOOP_CUBLASLT)",
		           dlerror());
#define LOAD(name)                                                                                 \
	if (!(*(void **)&L.name = dlsym(dl, "cublasLt" #name)))                                    \
		return dl = NULL, say(err, nErr, "cuBLASLt lacks cublasLt%s", #name);
	LT_FUNCS(LOAD)
#undef LOAD
	return 0;
}

/* what one type's product is made of */
struct kp_type {
	cudaDataType_t ab, cd, scale;
	cublasComputeType_t compute;
	int minCc; /* 10 x major + minor */
};

static const struct kp_type types[KP_N] = {
    [KP_FP32] = {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 1000},
    [KP_TF32] = {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 80},
    [KP_FP16] = {CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 70},
    [KP_BF16] = {CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 80},
    [KP_FP8] = {CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 89},
    [KP_INT8] = {CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, CUBLAS_COMPUTE_32I, 75},
};

/* the best of three batches of C = A^T B (n x n, the layout every type
 * takes), in TFLOP/s into *pT; 0 with *pT 0 where cuBLASLt offers no
 * algorithm for the type; -1 + err */
static int time_type(cublasLtHandle_t lt, int k, long long n, void *a, void *b, void *c, void *ws,
                     size_t nWs, cudaStream_t s, double *pT, char *err, int nErr)
{
	const struct kp_type *ty = &types[k];
	cublasLtMatmulDesc_t desc = NULL;
	cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
	cublasLtMatmulPreference_t pref = NULL;
	cublasOperation_t opT = CUBLAS_OP_T, opN = CUBLAS_OP_N;
	cublasLtMatmulHeuristicResult_t hr;
	cudaEvent_t e0 = NULL, e1 = NULL;
	int nAlgo = 0, rc = 0;
	*pT = 0;
	float fa = 1, fb = 0;
	int ia = 1, ib = 0;
	const void *alpha = k == KP_INT8 ? (const void *)&ia : (const void *)&fa;
	const void *beta = k == KP_INT8 ? (const void *)&ib : (const void *)&fb;
	if (L.MatmulDescCreate(&desc, ty->compute, ty->scale) ||
	    L.MatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opT, sizeof opT) ||
	    L.MatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opN, sizeof opN) ||
	    L.MatrixLayoutCreate(&la, ty->ab, n, n, n) ||
	    L.MatrixLayoutCreate(&lb, ty->ab, n, n, n) ||
	    L.MatrixLayoutCreate(&lc, ty->cd, n, n, n) ||
	    L.MatmulPreferenceCreate(&pref) ||
	    L.MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
	                                           &nWs, sizeof nWs)) {
		rc = say(err, nErr, "setting up cuBLASLt's %d-type product failed", k);
		goto done;
	}
	if (L.MatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 1, &hr, &nAlgo) ||
	    nAlgo < 1)
		goto done; /* not on this device */
	klp_fill<<<1024, 256, 0, s>>>(a, n * n, k, 1u);
	klp_fill<<<1024, 256, 0, s>>>(b, n * n, k, 2u);
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	{
		/* warm up, and size a batch to about 10 ms */
		float ms = 0;
		int reps = 1;
		for (int w = 0; w < 2; w++) {
			cudaEventRecord(e0, s);
			if (L.Matmul(lt, desc, alpha, a, la, b, lb, beta, c, lc, c, lc, &hr.algo,
			                     ws, nWs, s)) {
				rc = say(err, nErr, "cuBLASLt's product of type %d failed", k);
				goto done;
			}
			cudaEventRecord(e1, s);
			cudaEventSynchronize(e1);
			cudaEventElapsedTime(&ms, e0, e1);
		}
		reps = ms > 0 && ms < 10 ? (int)(10 / ms) : 1;
		reps = reps < 1 ? 1 : reps > 20 ? 20 : reps;
		for (int t = 0; t < 3; t++) {
			cudaEventRecord(e0, s);
			for (int r = 0; r < reps; r++)
				L.Matmul(lt, desc, alpha, a, la, b, lb, beta, c, lc, c, lc,
				                 &hr.algo, ws, nWs, s);
			cudaEventRecord(e1, s);
			cudaEventSynchronize(e1);
			cudaEventElapsedTime(&ms, e0, e1);
			double tf = ms > 0 ? 2.0 * n * n * n * reps / (ms * 1e9) : 0;
			*pT = tf > *pT ? tf : *pT;
		}
	}
	if (cudaError_t e = cudaGetLastError())
		rc = say(err, nErr, "timing cuBLASLt's product of type %d: %s", k,
		         cudaGetErrorString(e));
done:
	if (e0)
		cudaEventDestroy(e0);
	if (e1)
		cudaEventDestroy(e1);
	if (pref)
		L.MatmulPreferenceDestroy(pref);
	if (la)
		L.MatrixLayoutDestroy(la);
	if (lb)
		L.MatrixLayoutDestroy(lb);
	if (lc)
		L.MatrixLayoutDestroy(lc);
	if (desc)
		L.MatmulDescDestroy(desc);
	return rc;
}

/*
 * The dense peaks of the current device's compute types (cc: its compute
 * capability, 10 x major + minor) into aTflops[KP_N] (0 where it has none;
 * fp32 is not measured here), on stream s; 0, or -1 with err.
 */
extern "C" int kld_peaks(int cc, double *aTflops, void *stream, char *err, int nErr)
{
	cudaStream_t s = (cudaStream_t)stream;
	for (int k = 0; k < KP_N; k++)
		aTflops[k] = 0;
	if (load_lt(err, nErr) < 0)
		return -1;
	cublasLtHandle_t lt = NULL;
	if (L.Create(&lt))
		return say(err, nErr, "cublasLtCreate failed");
	void *a = NULL, *b = NULL, *c = NULL, *ws = NULL;
	size_t nWs = 32u << 20;
	long long n = 8192;
	/* 8192: 2 x 256 MiB of fp32 inputs and 256 MiB of output; 4096 where
	 * that does not fit */
	for (; n >= 4096; n /= 2) {
		size_t bytes = (size_t)n * n * 4;
		if (cudaMalloc(&a, bytes) == cudaSuccess && cudaMalloc(&b, bytes) == cudaSuccess &&
		    cudaMalloc(&c, bytes) == cudaSuccess && cudaMalloc(&ws, nWs) == cudaSuccess)
			break;
		cudaFree(a);
		cudaFree(b);
		cudaFree(c);
		a = b = c = ws = NULL;
		cudaGetLastError();
	}
	int rc = 0;
	if (!ws)
		rc = say(err, nErr, "no device memory for the peaks' matrices (3 x 64 MiB)");
	for (int k = KP_TF32; rc == 0 && k < KP_N; k++)
		if (cc >= types[k].minCc)
			rc = time_type(lt, k, n, a, b, c, ws, nWs, s, &aTflops[k], err, nErr);
	cudaStreamSynchronize(s);
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);
	cudaFree(ws);
	L.Destroy(lt);
	return rc;
}
