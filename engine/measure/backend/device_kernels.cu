/*
 * device_kernels.cu - kloop's own GPU helpers, built into libkloop-cuda.so
 * with kloop (when nvcc is there) and loaded by the cuda backend: the
 * correctness comparison, input verification and input generation run on
 * the device, so checking a candidate moves no tensor across PCIe.
 */
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

/* must match struct kld_report in engine/backend_cuda.c */
struct kld_report {
	double num, den;               /* sums of squared error and squared reference */
	unsigned long long maxAbsBits; /* max |out - ref| as the bits of a non-negative double */
	unsigned long long mismatches; /* elements outside atol + rtol*|ref| */
	unsigned long long nonFinite;  /* NaN/Inf in out where ref is finite */
	unsigned long long nanSeen;    /* a non-finite mismatch was met */
	unsigned long long firstBad;   /* smallest mismatching index, or ~0 */
	unsigned long long tolFracBits; /* max |out - ref| / (atol + rtol*|ref|), as double bits */
	unsigned long long refNaN;     /* NaN in ref: a mismatch whatever out is */
};

template <typename T> __device__ __forceinline__ double as_double(T v)
{
	return (double)v;
}
template <> __device__ __forceinline__ double as_double<__half>(__half v)
{
	return (double)__half2float(v);
}
template <> __device__ __forceinline__ double as_double<__nv_bfloat16>(__nv_bfloat16 v)
{
	return (double)__bfloat162float(v);
}
template <> __device__ __forceinline__ double as_double<__nv_fp8_e4m3>(__nv_fp8_e4m3 v)
{
	return (double)(float)v;
}

template <typename T>
__global__ void compare_kernel(const T *out, const T *ref, long long n, double atol, double rtol,
			       kld_report *r)
{
	double num = 0, den = 0, maxAbs = 0, frac = 0;
	unsigned long long mism = 0, nonfin = 0, nan = 0, refnan = 0, first = ~0ull;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x) {
		double a = as_double(out[i]), b = as_double(ref[i]), diff = fabs(a - b);
		int bad;
		double lim = atol + rtol * fabs(b);
		if (isnan(b)) {
			/* NaN never passes: a NaN left by the poison would match it */
			bad = 1;
			refnan++;
			nan = 1;
			frac = INFINITY;
		} else if (!isfinite(a) || !isfinite(b)) {
			bad = a != b;
			if (bad && isfinite(b))
				nonfin++;
			if (bad) {
				nan = 1;
				frac = INFINITY;
			}
		} else {
			bad = !(diff <= lim);
			if (diff > 0)
				frac = fmax(frac, lim > 0 ? diff / lim : INFINITY);
			num += diff * diff;
			den += b * b;
			maxAbs = fmax(maxAbs, diff);
		}
		if (bad) {
			mism++;
			if ((unsigned long long)i < first)
				first = (unsigned long long)i;
		}
	}
	/* warp, then block, then one atomic each */
	for (int o = 16; o > 0; o /= 2) {
		num += __shfl_down_sync(0xffffffff, num, o);
		den += __shfl_down_sync(0xffffffff, den, o);
		maxAbs = fmax(maxAbs, __shfl_down_sync(0xffffffff, maxAbs, o));
		frac = fmax(frac, __shfl_down_sync(0xffffffff, frac, o));
		mism += __shfl_down_sync(0xffffffff, mism, o);
		nonfin += __shfl_down_sync(0xffffffff, nonfin, o);
		refnan += __shfl_down_sync(0xffffffff, refnan, o);
		nan |= __shfl_down_sync(0xffffffff, nan, o);
		unsigned long long f = __shfl_down_sync(0xffffffff, first, o);
		first = f < first ? f : first;
	}
	if ((threadIdx.x & 31) == 0) {
		atomicAdd(&r->num, num);
		atomicAdd(&r->den, den);
		atomicMax(&r->maxAbsBits, (unsigned long long)__double_as_longlong(maxAbs));
		atomicAdd(&r->mismatches, mism);
		atomicAdd(&r->nonFinite, nonfin);
		atomicAdd(&r->refNaN, refnan);
		atomicOr(&r->nanSeen, nan);
		atomicMin(&r->firstBad, first);
		atomicMax(&r->tolFracBits, (unsigned long long)__double_as_longlong(frac));
	}
}

template <typename T> __device__ __forceinline__ double round_as(double v)
{
	return (double)(T)v;
}
template <> __device__ __forceinline__ double round_as<float>(double v)
{
	return (double)(float)v;
}
template <> __device__ __forceinline__ double round_as<__half>(double v)
{
	return (double)__half2float(__float2half_rn((float)v));
}
template <> __device__ __forceinline__ double round_as<__nv_bfloat16>(double v)
{
	return (double)__bfloat162float(__float2bfloat16_rn((float)v));
}
template <> __device__ __forceinline__ double round_as<__nv_fp8_e4m3>(double v)
{
	__nv_fp8_e4m3 q;
	q.__x = __nv_cvt_float_to_fp8((float)v, __NV_SATFINITE, __NV_E4M3);
	return (double)(float)q;
}

/* the sums of a precision verdict (compare.h, compare_error64): r[0..5] */
template <typename T>
__global__ void error64_kernel(const T *out, const double *ref, long long n, double *r)
{
	double a[6] = {0, 0, 0, 0, 0, 0};
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x) {
		double o = as_double(out[i]), v = ref[i];
		if (!isfinite(o) || !isfinite(v)) {
			a[5] += 1;
			continue;
		}
		double e = o - v, e1 = round_as<T>(v) - v, e2 = round_as<__nv_bfloat16>(v) - v,
		       e3 = round_as<__half>(v) - v;
		a[0] += e * e;
		a[1] += v * v;
		a[2] += e1 * e1;
		a[3] += e2 * e2;
		a[4] += isfinite(e3) ? e3 * e3 : v * v;
	}
	for (int k = 0; k < 6; k++) {
		for (int o = 16; o > 0; o /= 2)
			a[k] += __shfl_down_sync(0xffffffff, a[k], o);
		if ((threadIdx.x & 31) == 0)
			atomicAdd(&r[k], a[k]);
	}
}

/* elements (of es bytes) that differ between a and b; the first one's index */
template <typename W>
__global__ void diff_kernel(const W *a, const W *b, long long n, unsigned long long *count,
			    unsigned long long *first)
{
	unsigned long long c = 0, f = ~0ull;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x)
		if (a[i] != b[i]) {
			c++;
			if ((unsigned long long)i < f)
				f = (unsigned long long)i;
		}
	for (int o = 16; o > 0; o /= 2) {
		c += __shfl_down_sync(0xffffffff, c, o);
		unsigned long long g = __shfl_down_sync(0xffffffff, f, o);
		f = g < f ? g : f;
	}
	if ((threadIdx.x & 31) == 0) {
		atomicAdd(count, c);
		atomicMin(first, f);
	}
}

__device__ __forceinline__ unsigned long long mix(unsigned long long z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* element i of a counter-based stream: reproducible for (seed, i) */
/* a float dtype's element i as a double, and v stored as that dtype (kloop.h's
 * dtype numbers: 0 f32, 1 f16, 2 bf16, 3 f64, 8 e4m3) */
__device__ __forceinline__ double load_f(const void *p, int dtype, long long i)
{
	switch (dtype) {
	case 0:
		return ((const float *)p)[i];
	case 1:
		return __half2float(((const __half *)p)[i]);
	case 2:
		return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
	case 3:
		return ((const double *)p)[i];
	default:
		return (double)(float)((const __nv_fp8_e4m3 *)p)[i];
	}
}

__device__ __forceinline__ void store_f(void *p, int dtype, long long i, double v)
{
	switch (dtype) {
	case 0:
		((float *)p)[i] = (float)v;
		break;
	case 1:
		((__half *)p)[i] = __float2half_rn((float)v);
		break;
	case 2:
		((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn((float)v);
		break;
	case 3:
		((double *)p)[i] = v;
		break;
	default:
		((__nv_fp8_storage_t *)p)[i] = __nv_cvt_float_to_fp8((float)v, __NV_SATFINITE, __NV_E4M3);
		break;
	}
}

__global__ void random_kernel(void *p, int dtype, long long n, int dist, double a, double b,
			      unsigned long long seed)
{
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x) {
		unsigned long long h1 = mix(seed ^ mix((unsigned long long)i));
		if (dist == 1 && (dtype <= 2 || dtype == 8)) {
			/* a normal of a float type narrower than double: two 24-bit
			 * uniforms of one hash, Box-Muller in float (on an H200 0.16
			 * ms for 32M floats, against 0.34 in double: a timed run's
			 * preparation draws them every run, the batch's ring 32 times),
			 * |v - a| up to 5.9 b */
			float f1 = ((float)(h1 >> 40) + 0.5f) * 0x1.0p-24f;
			float f2 = (float)(h1 & 0xffffff) * 0x1.0p-24f;
			store_f(p, dtype, i, (float)a + (float)b * sqrtf(-2.f * logf(f1)) * cospif(2.f * f2));
			continue;
		}
		unsigned long long h2 = mix(h1);
		double u1 = (double)(h1 >> 11) * 0x1.0p-53, u2 = (double)(h2 >> 11) * 0x1.0p-53, v;
		if (dist == 1) { /* normal, double */
			if (u1 < 1e-300)
				u1 = 1e-300;
			v = a + b * sqrt(-2 * log(u1)) * cospi(2 * u2);
		} else if (dist == 2) { /* randint, inclusive */
			v = a + (double)(h2 % (unsigned long long)(b - a + 1));
		} else {
			v = a + (b - a) * u1;
		}
		if (dtype == 4)
			((int32_t *)p)[i] = (int32_t)v;
		else if (dtype == 5)
			((int64_t *)p)[i] = (int64_t)v;
		else if (dtype == 6)
			((int8_t *)p)[i] = (int8_t)v;
		else if (dtype <= 3 || dtype == 8) /* e4m3 saturating, as kloop.h's */
			store_f(p, dtype, i, v);
		else
			((uint8_t *)p)[i] = (uint8_t)v;
	}
}

/* rng_mix() on the device: the same hash, the same choice per element */
__device__ int mix_bit(unsigned long long seed, long long i)
{
	unsigned long long z = seed + 0x9e3779b97f4a7c15ull * (unsigned long long)(i / 64 + 1);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (int)((z >> (i % 64)) & 1);
}

template <typename T>
__global__ void mix_kernel(T *d, const T *a, const T *b, long long n, unsigned long long seed)
{
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x)
		d[i] = mix_bit(seed, i) ? a[i] : b[i];
}

__global__ void empty_kernel()
{
}

/* iters rounds of 8 independent FMA chains per thread: the fp32 peak */
__global__ void fma_kernel(int iters, float seed, float *sink)
{
	float a[8];
	for (int k = 0; k < 8; k++)
		a[k] = seed + threadIdx.x + k;
	for (int i = 0; i < iters; i++)
		for (int k = 0; k < 8; k++)
			a[k] = fmaf(a[k], 0.999999f, 1e-7f);
	float s = 0;
	for (int k = 0; k < 8; k++)
		s += a[k];
	if (s == 12345.678f) /* never: keeps the chains */
		*sink = s;
}

/* read n 16-byte words: evicts the L2 and leaves only clean lines in it */
__global__ void kld_l2_flush_kernel(const uint4 *p, long long n, unsigned *sink)
{
	unsigned acc = 0;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x) {
		uint4 v = p[i];
		acc ^= v.x ^ v.y ^ v.z ^ v.w;
	}
	if (acc == 0x9e3779b9u) /* practically never: keeps the loads */
		*sink = acc;
}

/* ---- varying a set's inputs on the device (rng.h's RNG_* flags, the
 * backend's vary: rng_vary without the round trip through the host) ---- */

/* a warp's sum of s and largest m into the block's accumulators (one atomic
 * each; a non-negative double's bits order as the double) */
__device__ __forceinline__ void vary_reduce(double s, double m, double *sum,
					    unsigned long long *maxBits)
{
	for (int o = 16; o > 0; o /= 2) {
		s += __shfl_down_sync(0xffffffff, s, o);
		m = fmax(m, __shfl_down_sync(0xffffffff, m, o));
	}
	if ((threadIdx.x & 31) == 0) {
		atomicAdd(sum, s);
		atomicMax(maxBits, (unsigned long long)__double_as_longlong(m));
	}
}

/* pass 0: the sum and the largest |x|; pass 1: the squares about mean */
__global__ void vary_sum_kernel(const void *p, int dtype, long long n, int pass, double mean,
				double *sum, unsigned long long *maxBits)
{
	double s = 0, m = 0;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x) {
		double x = load_f(p, dtype, i);
		if (pass == 0) {
			s += x;
			m = fmax(m, fabs(x));
		} else {
			s += (x - mean) * (x - mean);
		}
	}
	vary_reduce(s, m, sum, maxBits);
}

/* x a + b (flags & 1), x e^g, g a normal of (seed, i) (flags & 2), stored,
 * and the largest |x| as stored */
__global__ void vary_apply_kernel(void *p, int dtype, long long n, int flags, double a, double b,
				  unsigned long long seed, double *sum, unsigned long long *maxBits)
{
	double m = 0;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x) {
		double x = load_f(p, dtype, i);
		if (flags & 1)
			x = x * a + b;
		if (flags & 2) {
			unsigned long long h1 = mix(seed ^ mix((unsigned long long)i)), h2 = mix(h1);
			double u1 = (double)(h1 >> 11) * 0x1.0p-53, u2 = (double)(h2 >> 11) * 0x1.0p-53;
			x *= exp(sqrt(-2 * log(u1 < 1e-300 ? 1e-300 : u1)) * cospi(2 * u2));
		}
		store_f(p, dtype, i, x);
		m = fmax(m, fabs(load_f(p, dtype, i)));
	}
	vary_reduce(0, m, sum, maxBits);
}

__global__ void vary_scatter_kernel(void *p, int dtype, const long long *idx, const double *val,
				    long long m)
{
	for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < m;
	     k += (long long)gridDim.x * blockDim.x)
		store_f(p, dtype, idx[k], val[k]);
}

static int grid_for(long long n)
{
	long long g = (n + 255) / 256;
	return (int)(g > 4096 ? 4096 : g < 1 ? 1 : g);
}

/* the low `drop` bits of u rounded away, to nearest even or (tr) toward
 * zero: compare.c's compare_round_mantissa, element by element */
template <typename U>
__device__ static U round_bits(U u, int drop, int tr)
{
	U one = 1;
	U add = tr ? 0 : ((one << (drop - 1)) - 1) + ((u >> drop) & 1);
	return (U)((u + add) & ~((one << drop) - 1));
}

__global__ static void round_kernel(void *p, int dtype, long long n, int bits, int tr)
{
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x) {
		if (dtype == 0 /* KL_F32 */ && bits < 23) {
			unsigned u = ((unsigned *)p)[i];
			if ((u & 0x7f800000u) != 0x7f800000u)
				((unsigned *)p)[i] = round_bits(u, 23 - bits, tr);
		} else if (dtype == 3 /* KL_F64 */ && bits < 52) {
			unsigned long long u = ((unsigned long long *)p)[i];
			if ((u & 0x7ff0000000000000ull) != 0x7ff0000000000000ull)
				((unsigned long long *)p)[i] = round_bits(u, 52 - bits, tr);
		} else if (dtype == 1 /* KL_F16 */ && bits < 10) {
			unsigned u = ((unsigned short *)p)[i];
			if ((u & 0x7c00) != 0x7c00)
				((unsigned short *)p)[i] = (unsigned short)round_bits(u, 10 - bits, tr);
		}
	}
}

extern "C" {

/* compare n elements of dtype (kl_dtype numbering); r is device memory,
 * zeroed here; 0 or a cudaError_t */
int kld_compare(const void *out, const void *ref, int dtype, long long n, double atol, double rtol,
		kld_report *r, cudaStream_t s)
{
	kld_report init = {0, 0, 0, 0, 0, 0, ~0ull, 0, 0};
	cudaError_t e = cudaMemcpyAsync(r, &init, sizeof init, cudaMemcpyHostToDevice, s);
	if (e)
		return e;
	int g = grid_for(n);
	switch (dtype) {
	case 0:
		compare_kernel<<<g, 256, 0, s>>>((const float *)out, (const float *)ref, n, atol, rtol, r);
		break;
	case 1:
		compare_kernel<<<g, 256, 0, s>>>((const __half *)out, (const __half *)ref, n, atol, rtol, r);
		break;
	case 2:
		compare_kernel<<<g, 256, 0, s>>>((const __nv_bfloat16 *)out, (const __nv_bfloat16 *)ref, n,
						 atol, rtol, r);
		break;
	case 3:
		compare_kernel<<<g, 256, 0, s>>>((const double *)out, (const double *)ref, n, atol, rtol, r);
		break;
	case 4:
		compare_kernel<<<g, 256, 0, s>>>((const int32_t *)out, (const int32_t *)ref, n, atol, rtol, r);
		break;
	case 5:
		compare_kernel<<<g, 256, 0, s>>>((const long long *)out, (const long long *)ref, n, atol, rtol, r);
		break;
	case 6:
		compare_kernel<<<g, 256, 0, s>>>((const int8_t *)out, (const int8_t *)ref, n, atol, rtol, r);
		break;
	case 8:
		compare_kernel<<<g, 256, 0, s>>>((const __nv_fp8_e4m3 *)out, (const __nv_fp8_e4m3 *)ref, n,
						 atol, rtol, r);
		break;
	default:
		compare_kernel<<<g, 256, 0, s>>>((const uint8_t *)out, (const uint8_t *)ref, n, atol, rtol, r);
		break;
	}
	return cudaGetLastError();
}

/* count elements of es bytes (1, 2, 4, 8) that differ; res[0] = count,
 * res[1] = first index (~0 if none); res is device memory, zeroed here */
int kld_diff(const void *a, const void *b, long long n, int es, unsigned long long *res, cudaStream_t s)
{
	unsigned long long init[2] = {0, ~0ull};
	cudaError_t e = cudaMemcpyAsync(res, init, sizeof init, cudaMemcpyHostToDevice, s);
	if (e)
		return e;
	int g = grid_for(n);
	if (es == 8)
		diff_kernel<<<g, 256, 0, s>>>((const unsigned long long *)a, (const unsigned long long *)b, n, res, res + 1);
	else if (es == 4)
		diff_kernel<<<g, 256, 0, s>>>((const unsigned *)a, (const unsigned *)b, n, res, res + 1);
	else if (es == 2)
		diff_kernel<<<g, 256, 0, s>>>((const unsigned short *)a, (const unsigned short *)b, n, res, res + 1);
	else
		diff_kernel<<<g, 256, 0, s>>>((const unsigned char *)a, (const unsigned char *)b, n, res, res + 1);
	return cudaGetLastError();
}

/* the sums of a precision verdict of n elements of out (f32 0, f16 1, bf16
 * 2, f64 3: kl_dtype numbering) against the float64 ref into r[6] (device
 * memory); 0 or a cudaError_t (an integer dtype: cudaErrorInvalidValue) */
int kld_error64(const void *out, int dtype, const void *ref, long long n, double *r, cudaStream_t s)
{
	cudaError_t e = cudaMemsetAsync(r, 0, 6 * sizeof(double), s);
	if (e)
		return e;
	int g = grid_for(n);
	const double *x = (const double *)ref;
	if (dtype == 0)
		error64_kernel<<<g, 256, 0, s>>>((const float *)out, x, n, r);
	else if (dtype == 1)
		error64_kernel<<<g, 256, 0, s>>>((const __half *)out, x, n, r);
	else if (dtype == 2)
		error64_kernel<<<g, 256, 0, s>>>((const __nv_bfloat16 *)out, x, n, r);
	else if (dtype == 3)
		error64_kernel<<<g, 256, 0, s>>>((const double *)out, x, n, r);
	else if (dtype == 8)
		error64_kernel<<<g, 256, 0, s>>>((const __nv_fp8_e4m3 *)out, x, n, r);
	else
		return cudaErrorInvalidValue;
	return cudaGetLastError();
}

/* fill n elements of dtype from a distribution (0 uniform [a, b), 1 normal
 * (mean a, std b), 2 integers in [a, b]); 0 or a cudaError_t */
int kld_random(void *p, int dtype, long long n, int dist, double a, double b, unsigned long long seed,
	       cudaStream_t s)
{
	random_kernel<<<grid_for(n), 256, 0, s>>>(p, dtype, n, dist, a, b, seed);
	return cudaGetLastError();
}

/* d = a or b element by element (es bytes each) as rng_mix() chooses for seed */
int kld_mix(void *d, const void *a, const void *b, long long n, int es, unsigned long long seed,
	    cudaStream_t s)
{
	int g = grid_for(n);
	if (es == 8)
		mix_kernel<<<g, 256, 0, s>>>((unsigned long long *)d, (const unsigned long long *)a,
					     (const unsigned long long *)b, n, seed);
	else if (es == 4)
		mix_kernel<<<g, 256, 0, s>>>((unsigned *)d, (const unsigned *)a, (const unsigned *)b, n,
					     seed);
	else if (es == 2)
		mix_kernel<<<g, 256, 0, s>>>((unsigned short *)d, (const unsigned short *)a,
					     (const unsigned short *)b, n, seed);
	else
		mix_kernel<<<g, 256, 0, s>>>((unsigned char *)d, (const unsigned char *)a,
					     (const unsigned char *)b, n, seed);
	return cudaGetLastError();
}

/* n elements of dtype at p (device memory) rounded to `bits` explicit
 * mantissa bits in place (compare_round_mantissa's rule); a cudaError_t */
int kld_round(void *p, int dtype, long long n, int bits, int tr, cudaStream_t s)
{
	if (n > 0)
		round_kernel<<<grid_for(n), 256, 0, s>>>(p, dtype, n, bits, tr);
	return cudaGetLastError();
}

/* a float dtype's n elements at p: their mean, standard deviation (over
 * n - 1) and largest |x|, with 16 bytes of device memory at scratch; 0 or a
 * cudaError_t (the stream synchronized) */
int kld_vary_stats(const void *p, int dtype, long long n, void *scratch, double *pMean, double *pSd,
		   double *pAmax, cudaStream_t s)
{
	double *sum = (double *)scratch, h[2];
	unsigned long long *mx = (unsigned long long *)(sum + 1);
	cudaError_t e;
	for (int pass = 0; pass < 2; pass++) {
		if ((e = cudaMemsetAsync(scratch, 0, 16, s)))
			return e;
		vary_sum_kernel<<<grid_for(n), 256, 0, s>>>(p, dtype, n, pass, pass ? *pMean : 0, sum,
							    mx);
		if ((e = cudaGetLastError()) ||
		    (e = cudaMemcpyAsync(h, scratch, 16, cudaMemcpyDeviceToHost, s)) ||
		    (e = cudaStreamSynchronize(s)))
			return e;
		if (pass == 0) {
			*pMean = h[0] / (double)n;
			*pAmax = h[1]; /* the bits of a double, copied as one */
		} else {
			*pSd = n > 1 ? sqrt(h[0] / (double)(n - 1)) : fabs(*pMean);
		}
	}
	return 0;
}

/* vary them in place (flags & 1: x a + b, flags & 2: x e^g), the largest
 * |x| as stored into *pAmax; 0 or a cudaError_t (synchronized) */
int kld_vary_apply(void *p, int dtype, long long n, int flags, double a, double b,
		   unsigned long long seed, void *scratch, double *pAmax, cudaStream_t s)
{
	double *sum = (double *)scratch, h[2];
	cudaError_t e;
	if ((e = cudaMemsetAsync(scratch, 0, 16, s)))
		return e;
	vary_apply_kernel<<<grid_for(n), 256, 0, s>>>(p, dtype, n, flags, a, b, seed, sum,
						      (unsigned long long *)(sum + 1));
	if ((e = cudaGetLastError()) ||
	    (e = cudaMemcpyAsync(h, scratch, 16, cudaMemcpyDeviceToHost, s)) ||
	    (e = cudaStreamSynchronize(s)))
		return e;
	*pAmax = h[1];
	return 0;
}

/* p[idx[k]] = val[k] for m outliers (device memory both) */
int kld_vary_scatter(void *p, int dtype, const long long *idx, const double *val, long long m,
		     cudaStream_t s)
{
	vary_scatter_kernel<<<grid_for(m), 256, 0, s>>>(p, dtype, idx, val, m);
	return cudaGetLastError();
}

/* an empty kernel on s, for calibrating the cost of a launch */
int kld_empty(cudaStream_t s)
{
	empty_kernel<<<1, 32, 0, s>>>();
	return cudaGetLastError();
}

/* blocks x 256 threads of fma_kernel (16 * iters FLOPs each) on s */
int kld_fma(int blocks, int iters, float *sink, cudaStream_t s)
{
	fma_kernel<<<blocks, 256, 0, s>>>(iters, 1.0f, sink);
	return cudaGetLastError();
}

/* read nbytes (a multiple of 16) at p on s; sink is 4 bytes of device memory */
int kld_read(const void *p, long long nbytes, void *sink, cudaStream_t s)
{
	kld_l2_flush_kernel<<<4096, 256, 0, s>>>((const uint4 *)p, nbytes / 16, (unsigned *)sink);
	return cudaGetLastError();
}

} /* extern "C" */
