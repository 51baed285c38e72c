/*
 * kloop_torch/kl_torch_tensor.h - the stand-in's tensor (at::Tensor over
 * kloop's buffers or the call's arena), its allocation (torch::empty, zeros,
 * ones, *_like, from_blob), TORCH_CHECK, the AT_DISPATCH macros and the
 * CUDA stream.  Included by kloop_torch.h, which says what it is for.
 */
#ifndef KLOOP_TORCH_TENSOR_H
#define KLOOP_TORCH_TENSOR_H

#include <optional>

namespace c10
{
template <class T> using optional = std::optional<T>;
using std::make_optional;
using std::nullopt;
} // namespace c10

namespace at
{
using namespace c10;

/* x.type(), as old extensions dispatch on it */
struct DeprecatedTypeProperties {
	ScalarType t;
	Device d;
	ScalarType scalarType() const
	{
		return t;
	}
	bool is_cuda() const
	{
		return d.is_cuda();
	}
	bool operator==(const DeprecatedTypeProperties &o) const
	{
		return t == o.t && d == o.d;
	}
};

class Tensor
{
	void *data_ = nullptr;
	ScalarType dtype_ = ScalarType::Undefined;
	int ndim_ = 0;
	int64_t sizes_[8] = {0};
	int64_t strides_[8] = {0};
	Device device_ = Device(DeviceType::CPU);

	int64_t wrap(int64_t d, int extra = 0) const
	{
		int64_t n = ndim_ + extra, m = n > 0 ? n : 1;
		if (d < -m || d >= m)
			::kl_torch::failf("Dimension out of range (expected to be in range of "
			                  "[%lld, %lld], but got %lld)",
			                  (long long)-m, (long long)m - 1, (long long)d);
		return d < 0 ? d + m : d;
	}
	template <class T> T *typed() const
	{
		constexpr ScalarType want = cpp_to_scalar<T>();
		static_assert(want != ScalarType::Undefined,
		              "kloop's ATen stand-in: data_ptr<T>() of an element type it does not "
		              "know (float, double, int8..int64, uint8, bool, at::Half, "
		              "at::BFloat16)");
		bool byteish =
		    (want == kBool || want == kByte) && (dtype_ == kBool || dtype_ == kByte);
		if (want != dtype_ && !byteish)
			::kl_torch::failf("expected scalar type %s but found %s", toString(want),
			                  toString(dtype_));
		return static_cast<T *>(data_);
	}

      public:
	Tensor() = default;
	/* a contiguous tensor over data (kloop's, or the arena's) */
	Tensor(void *data, ScalarType t, IntArrayRef sizes, Device d)
	    : data_(data), dtype_(t), ndim_((int)sizes.size()), device_(d)
	{
		if (sizes.size() > 8)
			::kl_torch::failf(
			    "a tensor of %zu dimensions: kloop's tensors have at most 8",
			    sizes.size());
		int64_t s = 1;
		for (int i = ndim_ - 1; i >= 0; i--) {
			sizes_[i] = sizes[(size_t)i];
			strides_[i] = s;
			s *= sizes_[i];
		}
	}
	bool defined() const
	{
		return dtype_ != ScalarType::Undefined;
	}
	int64_t dim() const
	{
		return ndim_;
	}
	int64_t ndimension() const
	{
		return ndim_;
	}
	IntArrayRef sizes() const
	{
		return IntArrayRef(sizes_, (size_t)ndim_);
	}
	IntArrayRef strides() const
	{
		return IntArrayRef(strides_, (size_t)ndim_);
	}
	int64_t size(int64_t d) const
	{
		return sizes_[wrap(d)];
	}
	int64_t stride(int64_t d) const
	{
		return strides_[wrap(d)];
	}
	int64_t numel() const
	{
		int64_t n = 1;
		for (int i = 0; i < ndim_; i++)
			n *= sizes_[i];
		return n;
	}
	ScalarType scalar_type() const
	{
		return dtype_;
	}
	ScalarType dtype() const
	{
		return dtype_;
	}
	DeprecatedTypeProperties type() const
	{
		return {dtype_, device_};
	}
	TensorOptions options() const
	{
		return TensorOptions(dtype_).device(device_);
	}
	Device device() const
	{
		return device_;
	}
	bool is_cuda() const
	{
		return device_.is_cuda();
	}
	bool is_cpu() const
	{
		return device_.is_cpu();
	}
	int64_t get_device() const
	{
		return is_cuda() ? 0 : -1;
	}
	bool is_contiguous(MemoryFormat = MemoryFormat::Contiguous) const
	{
		return true;
	}
	Tensor contiguous(MemoryFormat = MemoryFormat::Contiguous) const
	{
		return *this;
	}
	bool is_floating_point() const
	{
		return isFloatingType(dtype_);
	}
	bool requires_grad() const
	{
		return false;
	}
	Tensor detach() const
	{
		return *this;
	}
	int64_t storage_offset() const
	{
		return 0;
	}
	bool is_same(const Tensor &o) const
	{
		return data_ == o.data_ && dtype_ == o.dtype_;
	}
	int64_t element_size() const
	{
		return (int64_t)elementSize(dtype_);
	}
	size_t itemsize() const
	{
		return elementSize(dtype_);
	}
	size_t nbytes() const
	{
		return (size_t)numel() * elementSize(dtype_);
	}
	void *data_ptr() const
	{
		return data_;
	}
	void *mutable_data_ptr() const
	{
		return data_;
	}
	const void *const_data_ptr() const
	{
		return data_;
	}
	template <class T> T *data_ptr() const
	{
		return typed<T>();
	}
	template <class T> T *mutable_data_ptr() const
	{
		return typed<T>();
	}
	template <class T> const T *const_data_ptr() const
	{
		return typed<T>();
	}
	template <class T> T *data() const
	{
		return typed<T>();
	}
	/* the same elements in another shape (one extent may be -1) */
	Tensor view(IntArrayRef shape) const
	{
		int64_t s[8], known = 1, n = 1;
		size_t k = shape.size() < 8 ? shape.size() : 8;
		int at = -1;
		for (size_t i = 0; i < k; i++) {
			s[i] = shape[i];
			if (s[i] == -1 && at < 0)
				at = (int)i;
			else
				known *= s[i];
		}
		if (at >= 0 && known > 0)
			s[at] = numel() / known;
		for (size_t i = 0; i < k; i++)
			n *= s[i];
		if (n != numel() || (at >= 0 && known == 0) || shape.size() > 8) {
			char b[120];
			::kl_torch::failf(
			    "shape %s is invalid for input of size %lld",
			    ::kl_torch::shape_str(shape.data(), shape.size(), b, sizeof b),
			    (long long)numel());
		}
		return Tensor(data_, dtype_, IntArrayRef(s, k), device_);
	}
	Tensor reshape(IntArrayRef shape) const
	{
		return view(shape);
	}
	Tensor view_as(const Tensor &o) const
	{
		return view(o.sizes());
	}
	Tensor reshape_as(const Tensor &o) const
	{
		return view(o.sizes());
	}
	Tensor flatten() const
	{
		int64_t n = numel();
		return view(IntArrayRef(&n, 1));
	}
	Tensor unsqueeze(int64_t d) const
	{
		int64_t s[9], k = wrap(d, 1);
		for (int64_t i = 0, j = 0; i <= ndim_; i++)
			s[i] = i == k ? 1 : sizes_[j++];
		return Tensor(data_, dtype_, IntArrayRef(s, (size_t)ndim_ + 1), device_);
	}
	Tensor squeeze(int64_t d) const
	{
		int64_t s[8], k = wrap(d), n = 0;
		for (int64_t i = 0; i < ndim_; i++)
			if (i != k || sizes_[i] != 1)
				s[n++] = sizes_[i];
		return Tensor(data_, dtype_, IntArrayRef(s, (size_t)n), device_);
	}
	Tensor &zero_();
	Tensor &fill_(double value);
	/* the same elements on another device (a copy; the dtype stays:
	 * kloop's stand-in converts no elements) */
	Tensor to(TensorOptions o, bool non_blocking = false, bool copy = false) const;
	Tensor to(Device d, ScalarType t, bool non_blocking = false, bool copy = false) const
	{
		return to(TensorOptions(t).device(d), non_blocking, copy);
	}
	Tensor to(Device d, bool non_blocking = false, bool copy = false) const
	{
		return to(TensorOptions(d), non_blocking, copy);
	}
	Tensor to(DeviceType d, bool non_blocking = false, bool copy = false) const
	{
		return to(TensorOptions(d), non_blocking, copy);
	}
	Tensor to(ScalarType t, bool non_blocking = false, bool copy = false) const
	{
		return to(TensorOptions(t), non_blocking, copy);
	}
	Tensor cuda() const
	{
		return to(DeviceType::CUDA);
	}
	Tensor cpu() const
	{
		return to(DeviceType::CPU);
	}
	Tensor clone() const
	{
		return to(TensorOptions(), false, true);
	}
	Tensor &copy_(const Tensor &src, bool non_blocking = false);
};

struct NoGradGuard {
};
struct InferenceMode {
	explicit InferenceMode(bool = true)
	{
	}
};
} // namespace at

namespace c10
{
using at::InferenceMode;
}

namespace kl_torch
{

inline c10::ScalarType scalar_of(kl_dtype d)
{
	static const c10::ScalarType m[] = {c10::kFloat,  c10::kHalf, c10::kBFloat16,
	                                    c10::kDouble, c10::kInt,  c10::kLong,
	                                    c10::kChar,   c10::kByte, c10::kFloat8_e4m3fn};
	return (unsigned)d < sizeof m / sizeof *m ? m[d] : c10::ScalarType::Undefined;
}

/* the kl_dtype of a ScalarType (bool as u8, as kloop holds it), -1: none */
inline int kl_of(c10::ScalarType t)
{
	for (int d = 0; d <= (int)KL_E4M3; d++)
		if (scalar_of((kl_dtype)d) == t)
			return d;
	return t == c10::kBool ? (int)KL_U8 : -1;
}

/* the tensor over one of kloop's buffers */
inline at::Tensor wrap(const kl_tensor &t, bool cuda)
{
	return at::Tensor(t.data, scalar_of(t.dtype), c10::IntArrayRef(t.shape, (size_t)t.ndim),
	                  c10::Device(cuda ? c10::kCUDA : c10::kCPU));
}

#ifdef KL_TORCH_HAS_CUDA
[[noreturn]] KL_TORCH_COLD inline void cuda_failed(cudaError_t e, const char *file, int line,
                                                   const char *what)
{
	failf("%s:%d: CUDA error: %s (%s)", file, line, cudaGetErrorString(e), what);
}
inline void cuda_check(cudaError_t e, const char *file, int line, const char *what)
{
	if (e != cudaSuccess)
		cuda_failed(e, file, line, what);
}
/*
 * kloop's stream is a blocking one (backend_cuda.c, stream_flags()): an
 * extension's launches on the legacy default stream (`<<<grid, block>>>`
 * with no stream) wait for what the stand-in did on kloop's stream (an
 * allocation, a fill), and what the stand-in does after them (a copy, a
 * free) waits for them, with no event of the stand-in's.
 */
#ifdef __CUDACC__
template <class W> __global__ void kl_torch_fill_kernel(W *p, int64_t n, W v)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
	     i += (int64_t)gridDim.x * blockDim.x)
		p[i] = v;
}
#endif
#endif

/* element value v in type t, as its bytes (at most 8) */
inline void value_bytes(c10::ScalarType t, double v, unsigned char *b)
{
	switch (t) {
	case c10::kFloat: {
		float f = (float)v;
		memcpy(b, &f, 4);
		break;
	}
	case c10::kDouble:
		memcpy(b, &v, 8);
		break;
	case c10::kHalf: {
		uint16_t h = kl_f32_to_f16((float)v);
		memcpy(b, &h, 2);
		break;
	}
	case c10::kBFloat16: {
		uint16_t h = kl_f32_to_bf16((float)v);
		memcpy(b, &h, 2);
		break;
	}
	case c10::kInt: {
		int32_t i = (int32_t)v;
		memcpy(b, &i, 4);
		break;
	}
	case c10::kLong: {
		int64_t i = (int64_t)v;
		memcpy(b, &i, 8);
		break;
	}
	case c10::kShort: {
		int16_t i = (int16_t)v;
		memcpy(b, &i, 2);
		break;
	}
	case c10::kFloat8_e4m3fn:
		b[0] = kl_f32_to_e4m3((float)v);
		break;
	default:
		b[0] = (unsigned char)(int)v;
		break;
	}
}

/* n elements of es bytes at p set to the bytes b, in typed stores */
inline void fill_host(unsigned char *p, size_t n, size_t es, const unsigned char *b)
{
	uint64_t w = 0;
	memcpy(&w, b, es);
	for (size_t i = 0; i < n; i++)
		switch (es) {
		case 1:
			p[i] = (unsigned char)w;
			break;
		case 2:
			((uint16_t *)(void *)p)[i] = (uint16_t)w;
			break;
		case 4:
			((uint32_t *)(void *)p)[i] = (uint32_t)w;
			break;
		default:
			((uint64_t *)(void *)p)[i] = w;
			break;
		}
}

/* every element of t set to v (on kloop's stream for device memory) */
KL_TORCH_NOINLINE inline void fill(const at::Tensor &t, double v)
{
	size_t es = t.itemsize(), n = (size_t)t.numel();
	unsigned char b[8] = {0};
	value_bytes(t.scalar_type(), v, b);
	if (!n)
		return;
	if (t.is_cpu()) {
		unsigned char *p = (unsigned char *)t.data_ptr();
		if (v == 0)
			memset(p, 0, n * es);
		else
			fill_host(p, n, es, b);
		return;
	}
#ifdef KL_TORCH_HAS_CUDA
	call &c = need_call("filling a CUDA tensor");
	cudaStream_t s = (cudaStream_t)c.stream;
	if (v == 0) {
		cuda_check(cudaMemsetAsync(t.data_ptr(), 0, n * es, s), __FILE__, __LINE__,
		           "cudaMemsetAsync");
	} else {
#ifdef __CUDACC__
		unsigned blocks = (unsigned)((n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096);
		if (es == 1)
			kl_torch_fill_kernel<<<blocks, 256, 0, s>>>((uint8_t *)t.data_ptr(),
			                                            (int64_t)n, b[0]);
		else if (es == 2)
			kl_torch_fill_kernel<<<blocks, 256, 0, s>>>(
			    (uint16_t *)t.data_ptr(), (int64_t)n, *(uint16_t *)(void *)b);
		else if (es == 4)
			kl_torch_fill_kernel<<<blocks, 256, 0, s>>>(
			    (uint32_t *)t.data_ptr(), (int64_t)n, *(uint32_t *)(void *)b);
		else
			kl_torch_fill_kernel<<<blocks, 256, 0, s>>>(
			    (uint64_t *)t.data_ptr(), (int64_t)n, *(uint64_t *)(void *)b);
		cuda_check(cudaGetLastError(), __FILE__, __LINE__, "the stand-in's fill");
#else
		unsigned char *h = (unsigned char *)malloc(n * es);
		if (!h)
			failf("out of memory filling a tensor");
		for (size_t i = 0; i < n; i++)
			memcpy(h + i * es, b, es);
		cudaError_t e = cudaMemcpyAsync(t.data_ptr(), h, n * es, cudaMemcpyHostToDevice, s);
		if (e == cudaSuccess)
			e = cudaStreamSynchronize(s);
		free(h);
		cuda_check(e, __FILE__, __LINE__, "cudaMemcpyAsync");
#endif
	}
#else
	failf("a CUDA tensor in an extension compiled without CUDA");
#endif
}

/*
 * A tensor of size and o's dtype and device (bFill: every element v): the
 * first output not yet claimed that matches it, else the call's arena.
 */
KL_TORCH_NOINLINE inline at::Tensor alloc(c10::IntArrayRef size, c10::TensorOptions o, bool bFill,
                                          double v)
{
	call &c = need_call("torch::empty");
	c10::ScalarType t = o.dtype();
	c10::Device d = o.device();
	int64_t n = 1;
	for (int64_t s : size) {
		if (s < 0) {
			char b[120];
			failf("torch::empty: negative dimension in size %s",
			      shape_str(size.data(), size.size(), b, sizeof b));
		}
		n *= s;
	}
	if (c10::elementSize(t) == 0)
		failf("torch::empty: kloop's ATen stand-in has no tensors of %s", c10::toString(t));
	if (d.is_cuda() && !c.cuda)
		failf(
		    "a CUDA tensor asked for on kloop's host backend (its tensors are on the CPU: "
		    "allocate with x.options())");
	int kl = kl_of(t);
	for (int k = 0; k < c.nOut && k < 32; k++) {
		const kl_tensor &out = c.out[k];
		if ((c.claimed >> k & 1) || kl != (int)out.dtype || d.is_cuda() != c.cuda ||
		    !(size == c10::IntArrayRef(out.shape, (size_t)out.ndim)))
			continue;
		c.claimed |= 1u << k;
		at::Tensor r = wrap(out, c.cuda);
		if (bFill)
			fill(r, v);
		return r;
	}
	if (c.nArena == KL_TORCH_MAX_ARENA)
		failf("more than %d allocations in one call of kl_run", KL_TORCH_MAX_ARENA);
	size_t bytes = (size_t)n * c10::elementSize(t), rounded = (bytes + 63) / 64 * 64;
	void *p = nullptr;
	if (d.is_cuda()) {
#ifdef KL_TORCH_HAS_CUDA
		cuda_check(cudaMallocAsync(&p, rounded ? rounded : 64, (cudaStream_t)c.stream),
		           __FILE__, __LINE__, "cudaMallocAsync");
#endif
	} else {
		p = aligned_alloc(64, rounded ? rounded : 64);
		if (!p)
			failf("torch::empty: out of memory for %zu bytes", bytes);
	}
	c.arena[c.nArena] = p;
	c.arenaCuda[c.nArena++] = d.is_cuda();
	at::Tensor r(p, t, size, d);
	if (bFill)
		fill(r, v);
	return r;
}

/* o completed from the tensor an *_like copies */
inline c10::TensorOptions like(const at::Tensor &x, c10::TensorOptions o)
{
	if (!o.has_dtype())
		o = o.dtype(x.scalar_type());
	if (!o.has_device())
		o = o.device(x.device());
	return o;
}

inline c10::ScalarType dispatch_type(c10::ScalarType t)
{
	return t;
}
inline c10::ScalarType dispatch_type(const at::DeprecatedTypeProperties &t)
{
	return t.scalarType();
}
[[noreturn]] KL_TORCH_COLD inline void dispatch_failed(const char *name, c10::ScalarType t)
{
	failf("\"%s\" not implemented for '%s'", name, c10::toString(t));
}

} // namespace kl_torch

namespace kl_torch
{
/* dst's bytes from src's (the same count): a memcpy on the host, else a
 * copy on kloop's stream, waited for where the CPU reads the result */
KL_TORCH_NOINLINE inline void copy_bytes(const at::Tensor &dst, const at::Tensor &src)
{
	if (dst.nbytes() != src.nbytes() || dst.scalar_type() != src.scalar_type())
		failf(
		    "copy_ of a %s tensor of %lld elements into a %s tensor of %lld: kloop's ATen "
		    "stand-in copies tensors of one dtype and size",
		    c10::toString(src.scalar_type()), (long long)src.numel(),
		    c10::toString(dst.scalar_type()), (long long)dst.numel());
	if (!dst.is_cuda() && !src.is_cuda()) {
		memmove(dst.data_ptr(), src.data_ptr(), dst.nbytes());
		return;
	}
#ifdef KL_TORCH_HAS_CUDA
	call &c = need_call("copying a CUDA tensor");
	cudaStream_t s = (cudaStream_t)c.stream;
	cuda_check(
	    cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), dst.nbytes(), cudaMemcpyDefault, s),
	    __FILE__, __LINE__, "cudaMemcpyAsync");
	if (!dst.is_cuda())
		cuda_check(cudaStreamSynchronize(s), __FILE__, __LINE__, "cudaStreamSynchronize");
#else
	failf("a CUDA tensor in an extension compiled without CUDA");
#endif
}
} // namespace kl_torch

namespace at
{
inline Tensor Tensor::to(TensorOptions o, bool, bool copy) const
{
	o = ::kl_torch::like(*this, o);
	if (o.dtype() != dtype_)
		::kl_torch::failf(
		    "Tensor.to(%s) of a %s tensor: kloop's ATen stand-in moves tensors "
		    "between devices but converts no elements (convert in a kernel)",
		    c10::toString(o.dtype()), c10::toString(dtype_));
	if (o.device().is_cuda() == is_cuda() && !copy)
		return *this;
	Tensor r = ::kl_torch::alloc(sizes(), o, false, 0);
	::kl_torch::copy_bytes(r, *this);
	return r;
}
inline Tensor &Tensor::copy_(const Tensor &src, bool)
{
	::kl_torch::copy_bytes(*this, src);
	return *this;
}
inline Tensor &Tensor::zero_()
{
	::kl_torch::fill(*this, 0);
	return *this;
}
inline Tensor &Tensor::fill_(double value)
{
	::kl_torch::fill(*this, value);
	return *this;
}
inline Tensor empty(IntArrayRef size, TensorOptions o = {})
{
	return ::kl_torch::alloc(size, o, false, 0);
}
inline Tensor empty(IntArrayRef size, TensorOptions o, MemoryFormat)
{
	return ::kl_torch::alloc(size, o, false, 0);
}
inline Tensor zeros(IntArrayRef size, TensorOptions o = {})
{
	return ::kl_torch::alloc(size, o, true, 0);
}
inline Tensor ones(IntArrayRef size, TensorOptions o = {})
{
	return ::kl_torch::alloc(size, o, true, 1);
}
inline Tensor full(IntArrayRef size, double value, TensorOptions o = {})
{
	return ::kl_torch::alloc(size, o, true, value);
}
inline Tensor empty_like(const Tensor &x, TensorOptions o = {})
{
	return empty(x.sizes(), ::kl_torch::like(x, o));
}
inline Tensor empty_like(const Tensor &x, TensorOptions o, MemoryFormat)
{
	return empty(x.sizes(), ::kl_torch::like(x, o));
}
inline Tensor zeros_like(const Tensor &x, TensorOptions o = {})
{
	return zeros(x.sizes(), ::kl_torch::like(x, o));
}
inline Tensor ones_like(const Tensor &x, TensorOptions o = {})
{
	return ones(x.sizes(), ::kl_torch::like(x, o));
}
inline Tensor full_like(const Tensor &x, double value, TensorOptions o = {})
{
	return full(x.sizes(), value, ::kl_torch::like(x, o));
}
/* a tensor over memory of the extension's own (not freed by kloop) */
inline Tensor from_blob(void *data, IntArrayRef size, TensorOptions o = {})
{
	return Tensor(data, o.dtype(), size, o.device());
}
inline Tensor from_blob(void *data, IntArrayRef size, IntArrayRef, TensorOptions o = {})
{
	return Tensor(data, o.dtype(), size, o.device());
}

#ifdef KL_TORCH_HAS_CUDA
namespace cuda
{
/* kloop's stream inside kl_run (the legacy default stream outside it) */
class CUDAStream
{
	cudaStream_t s_;

      public:
	explicit CUDAStream(cudaStream_t s) : s_(s)
	{
	}
	cudaStream_t stream() const
	{
		return s_;
	}
	operator cudaStream_t() const
	{
		return s_;
	}
	int device_index() const
	{
		return 0;
	}
	Device device() const
	{
		return Device(kCUDA, 0);
	}
	void synchronize() const
	{
		::kl_torch::cuda_check(cudaStreamSynchronize(s_), __FILE__, __LINE__,
		                       "cudaStreamSynchronize");
	}
	bool query() const
	{
		return cudaStreamQuery(s_) == cudaSuccess;
	}
};
inline CUDAStream getCurrentCUDAStream(int = -1)
{
	::kl_torch::call *c = ::kl_torch::current();
	return CUDAStream(c ? (cudaStream_t)c->stream : (cudaStream_t)0);
}
inline CUDAStream getDefaultCUDAStream(int = -1)
{
	return getCurrentCUDAStream();
}
inline CUDAStream getStreamFromPool(bool = false, int = -1)
{
	return getCurrentCUDAStream();
}
static inline cudaDeviceProp *getCurrentDeviceProperties()
{
	static cudaDeviceProp p;
	static bool got;
	if (!got) {
		int d = 0;
		cudaGetDevice(&d);
		::kl_torch::cuda_check(cudaGetDeviceProperties(&p, d), __FILE__, __LINE__,
		                       "cudaGetDeviceProperties");
		got = true;
	}
	return &p;
}
inline int current_device()
{
	int d = 0;
	cudaGetDevice(&d);
	return d;
}
/* one device: guards that change nothing */
struct CUDAGuard {
	explicit CUDAGuard(Device)
	{
	}
	explicit CUDAGuard(int)
	{
	}
};
struct OptionalCUDAGuard {
	OptionalCUDAGuard() = default;
	explicit OptionalCUDAGuard(Device)
	{
	}
	explicit OptionalCUDAGuard(std::optional<Device>)
	{
	}
	void set_device(Device)
	{
	}
};
} // namespace cuda
#endif
} // namespace at

namespace torch
{
using namespace at;
/* load_inline's bindings wrap each function in it */
template <class F> F wrap_pybind_function(F f)
{
	return f;
}
} // namespace torch

#ifdef KL_TORCH_HAS_CUDA
namespace c10
{
namespace cuda
{
using namespace at::cuda;
}
} // namespace c10
#define C10_CUDA_CHECK(expr) ::kl_torch::cuda_check((expr), __FILE__, __LINE__, #expr)
#define AT_CUDA_CHECK(expr) C10_CUDA_CHECK(expr)
#define C10_CUDA_KERNEL_LAUNCH_CHECK()                                                             \
	::kl_torch::cuda_check(cudaGetLastError(), __FILE__, __LINE__, "a kernel's launch")
#endif

/* ---- checks ---- */
#define TORCH_CHECK(cond, ...)                                                                     \
	do {                                                                                       \
		if (!(cond))                                                                       \
			::kl_torch::check_failed(__FILE__, __LINE__, #cond,                        \
			                         ::kl_torch::cat(__VA_ARGS__));                    \
	} while (0)
#define TORCH_CHECK_VALUE TORCH_CHECK
#define TORCH_CHECK_TYPE TORCH_CHECK
#define TORCH_CHECK_INDEX TORCH_CHECK
#define TORCH_CHECK_NOT_IMPLEMENTED TORCH_CHECK
#define TORCH_INTERNAL_ASSERT TORCH_CHECK
#define AT_ASSERTM TORCH_CHECK
#define AT_ASSERT TORCH_CHECK
#define AT_ERROR(...) ::kl_torch::fail(::kl_torch::cat(__VA_ARGS__))
#define TORCH_WARN(...) fprintf(stderr, "%s\n", ::kl_torch::cat(__VA_ARGS__).c_str())
#define TORCH_WARN_ONCE TORCH_WARN

/* ---- dispatch on a tensor's dtype: scalar_t inside the lambda ---- */
#define KL_TORCH_CASE(T, ...)                                                                      \
	case T: {                                                                                  \
		using scalar_t [[maybe_unused]] = ::c10::ScalarTypeToCPPType<T>::type;             \
		return __VA_ARGS__();                                                              \
	}
#define KL_TORCH_DISPATCH(TYPE, NAME, CASES)                                                       \
	[&] {                                                                                      \
		const ::c10::ScalarType kl_torch_st_ = ::kl_torch::dispatch_type(TYPE);            \
		switch (kl_torch_st_) {                                                            \
			CASES                                                                      \
		default:                                                                           \
			::kl_torch::dispatch_failed(NAME, kl_torch_st_);                           \
		}                                                                                  \
	}()
#define KL_TORCH_FLOATS(...)                                                                       \
	KL_TORCH_CASE(::c10::ScalarType::Double, __VA_ARGS__)                                      \
	KL_TORCH_CASE(::c10::ScalarType::Float, __VA_ARGS__)
#define KL_TORCH_INTS(...)                                                                         \
	KL_TORCH_CASE(::c10::ScalarType::Byte, __VA_ARGS__)                                        \
	KL_TORCH_CASE(::c10::ScalarType::Char, __VA_ARGS__)                                        \
	KL_TORCH_CASE(::c10::ScalarType::Short, __VA_ARGS__)                                       \
	KL_TORCH_CASE(::c10::ScalarType::Int, __VA_ARGS__)                                         \
	KL_TORCH_CASE(::c10::ScalarType::Long, __VA_ARGS__)
#define AT_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...)                                                \
	KL_TORCH_DISPATCH(TYPE, NAME, KL_TORCH_FLOATS(__VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND_HALF(TYPE, NAME, ...)                                       \
	KL_TORCH_DISPATCH(TYPE, NAME,                                                              \
	                  KL_TORCH_FLOATS(__VA_ARGS__)                                             \
	                      KL_TORCH_CASE(::c10::ScalarType::Half, __VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND(T1, TYPE, NAME, ...)                                        \
	KL_TORCH_DISPATCH(TYPE, NAME, KL_TORCH_FLOATS(__VA_ARGS__) KL_TORCH_CASE(T1, __VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND2(T1, T2, TYPE, NAME, ...)                                   \
	KL_TORCH_DISPATCH(TYPE, NAME,                                                              \
	                  KL_TORCH_FLOATS(__VA_ARGS__) KL_TORCH_CASE(T1, __VA_ARGS__)              \
	                      KL_TORCH_CASE(T2, __VA_ARGS__))
#define AT_DISPATCH_REDUCED_FLOATING_TYPES(TYPE, NAME, ...)                                        \
	KL_TORCH_DISPATCH(TYPE, NAME,                                                              \
	                  KL_TORCH_CASE(::c10::ScalarType::Half, __VA_ARGS__)                      \
	                      KL_TORCH_CASE(::c10::ScalarType::BFloat16, __VA_ARGS__))
#define AT_DISPATCH_INTEGRAL_TYPES(TYPE, NAME, ...)                                                \
	KL_TORCH_DISPATCH(TYPE, NAME, KL_TORCH_INTS(__VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES(TYPE, NAME, ...)                                                     \
	KL_TORCH_DISPATCH(TYPE, NAME, KL_TORCH_FLOATS(__VA_ARGS__) KL_TORCH_INTS(__VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES_AND_HALF(TYPE, NAME, ...)                                            \
	KL_TORCH_DISPATCH(TYPE, NAME,                                                              \
	                  KL_TORCH_FLOATS(__VA_ARGS__) KL_TORCH_INTS(__VA_ARGS__)                  \
	                      KL_TORCH_CASE(::c10::ScalarType::Half, __VA_ARGS__))

/* ---- what kl_torch_run.h asks of the stand-in ---- */
namespace kl_torch
{
using opt_tensor = std::optional<at::Tensor>;

/* result t into kloop's output k (of its shape and dtype): the copy is in
 * the call, so in its time */
KL_TORCH_NOINLINE inline void copy_result(call &c, int k, const at::Tensor &t)
{
	const kl_tensor &o = c.out[k];
	if (!c.cuda) {
		memmove(o.data, t.data_ptr(), t.nbytes());
		return;
	}
#ifdef KL_TORCH_HAS_CUDA
	cudaStream_t s = (cudaStream_t)c.stream;
	cuda_check(cudaMemcpyAsync(o.data, t.data_ptr(), t.nbytes(), cudaMemcpyDeviceToDevice, s),
	           __FILE__, __LINE__, "copying a result into kloop's output");
#endif
}

/* the arena given back */
KL_TORCH_NOINLINE inline void release(call &c)
{
	for (int i = 0; i < c.nArena; i++) {
		if (!c.arenaCuda[i]) {
			free(c.arena[i]);
			continue;
		}
#ifdef KL_TORCH_HAS_CUDA
		cudaFreeAsync(c.arena[i], (cudaStream_t)c.stream);
#endif
	}
	c.nArena = 0;
}

/* the stand-in's current stream is the call's own: nothing to hold */
struct call_scope {
	explicit call_scope(call &)
	{
	}
};
} // namespace kl_torch

#endif
