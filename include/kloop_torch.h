/*
 * kloop_torch.h - kloop's ATen stand-in: the part of PyTorch's C++ API a
 * PyTorch extension uses to reach its kernels (torch::Tensor over kloop's
 * own buffers, allocation, dtype dispatch, TORCH_CHECK, the current CUDA
 * stream, PYBIND11_MODULE / TORCH_LIBRARY naming the entry point), so that
 * an extension written for torch.utils.cpp_extension compiles as a kloop
 * candidate in about the time of a plain one.  C++17, host and nvcc.
 *
 * kloop compiles an extension with -I<kloop include>/kloop_torch, whose
 * torch/extension.h, torch/torch.h, ATen/ATen.h, ... include this header;
 * its kl_run (below, kloop_torch_run.h) calls the entry point:
 *
 *   - the entry point is the function a m.def / m.impl names "forward", else
 *     the first one named (a ModelNew's: the function its forward calls);
 *   - its torch::Tensor parameters take the task's inputs in order, then its
 *     outputs (an entry point that writes its outputs and returns nothing);
 *     a scalar parameter takes the number a ModelNew's forward call passes,
 *     else (an extension) the next value of the problem's get_init_inputs(),
 *     which kloop appends to the source as an init_registrar;
 *   - what it returns (a tensor, a std::vector or std::tuple of them) is the
 *     task's outputs in order: a tensor that is kloop's output buffer is left
 *     as it is, any other is copied into it inside kl_run (so the copy is
 *     timed) and the verdict names it (kl_run_copied);
 *   - torch::empty / zeros / ones / *_like allocate from a per-call arena
 *     that kl_run frees after the call; the first allocation whose shape,
 *     dtype and device match an output not yet claimed is that output's own
 *     buffer (zeros still zeroes it);
 *   - TORCH_CHECK's failure, or any exception, makes kl_run return 1 with its
 *     message in kl_run_error, which the verdict quotes.
 *
 * Tensors are contiguous and row-major, live for one call, and have no
 * operators: the arithmetic is the extension's own kernels'.  What PyTorch
 * has and this does not is a compile error naming it, which kloop explains.
 * Define KL_TORCH_NO_RUN before including it to write kl_run yourself.
 */
#ifndef KLOOP_TORCH_H
#define KLOOP_TORCH_H

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "kloop_torch.h is C++17: a PyTorch extension compiles as C++17 or CUDA"
#endif

#include <cmath>
#include <cstddef>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kloop.h"

#if defined(__CUDACC__) || defined(KL_TORCH_CUDA)
#define KL_TORCH_HAS_CUDA 1
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#endif
#ifdef __CUDACC__
#define KL_TORCH_HD __host__ __device__
#else
#define KL_TORCH_HD
#endif

#define KL_TORCH_CAT2(a, b) a##b
#define KL_TORCH_CAT(a, b) KL_TORCH_CAT2(a, b)

/* ---- 16-bit floats: IEEE half and bfloat16, on host and device ---- */
namespace kl_torch
{
/* the bits of an IEEE half */
struct half_bits {
	static KL_TORCH_HD uint16_t of(float f)
	{
#if defined(__CUDA_ARCH__)
		return __half_as_ushort(__float2half(f));
#else
		return kl_f32_to_f16(f);
#endif
	}
	static KL_TORCH_HD float value(uint16_t x)
	{
#if defined(__CUDA_ARCH__)
		return __half2float(__ushort_as_half(x));
#else
		return kl_f16_to_f32(x);
#endif
	}
#ifdef KL_TORCH_HAS_CUDA
	using cuda = __half;
	static KL_TORCH_HD uint16_t of_cuda(const __half &h)
	{
		return __half_as_ushort(h);
	}
	static KL_TORCH_HD __half cuda_of(uint16_t x)
	{
		return __ushort_as_half(x);
	}
#endif
};

/* the bits of a bfloat16: the top 16 of a float */
struct bf16_bits {
	static KL_TORCH_HD uint16_t of(float f)
	{
#if defined(__CUDA_ARCH__)
		return __bfloat16_as_ushort(__float2bfloat16(f));
#else
		return kl_f32_to_bf16(f);
#endif
	}
	static KL_TORCH_HD float value(uint16_t x)
	{
#if defined(__CUDA_ARCH__)
		return __uint_as_float((unsigned)x << 16);
#else
		return kl_bf16_to_f32(x);
#endif
	}
#ifdef KL_TORCH_HAS_CUDA
	using cuda = __nv_bfloat16;
	static KL_TORCH_HD uint16_t of_cuda(const __nv_bfloat16 &h)
	{
		return __bfloat16_as_ushort(h);
	}
	static KL_TORCH_HD __nv_bfloat16 cuda_of(uint16_t x)
	{
		return __ushort_as_bfloat16(x);
	}
#endif
};

/* a 16-bit float whose conversions are Bits': arithmetic goes through float,
 * as c10::Half's does */
template <class Bits> struct alignas(2) float16 {
	uint16_t x;
	struct from_bits_t {
	};
	static constexpr from_bits_t from_bits()
	{
		return from_bits_t();
	}
	float16() = default;
	constexpr KL_TORCH_HD float16(uint16_t bits, from_bits_t) : x(bits)
	{
	}
	KL_TORCH_HD float16(float f) : x(Bits::of(f))
	{
	}
	KL_TORCH_HD operator float() const
	{
		return Bits::value(x);
	}
#ifdef KL_TORCH_HAS_CUDA
	KL_TORCH_HD float16(const typename Bits::cuda &h) : x(Bits::of_cuda(h))
	{
	}
	KL_TORCH_HD operator typename Bits::cuda() const
	{
		return Bits::cuda_of(x);
	}
#endif
};
/* c10::Half's arithmetic: two halves make a half, a half and a float a
 * float (a double a double, an int a half), all through float */
#define KL_TORCH_F16_OP(op)                                                                        \
	template <class B> KL_TORCH_HD inline float16<B> operator op(float16<B> a, float16<B> b)   \
	{                                                                                          \
		return float16<B>((float)a op(float) b);                                           \
	}                                                                                          \
	template <class B> KL_TORCH_HD inline float operator op(float16<B> a, float b)             \
	{                                                                                          \
		return (float)a op b;                                                              \
	}                                                                                          \
	template <class B> KL_TORCH_HD inline float operator op(float a, float16<B> b)             \
	{                                                                                          \
		return a op(float) b;                                                              \
	}                                                                                          \
	template <class B> KL_TORCH_HD inline double operator op(float16<B> a, double b)           \
	{                                                                                          \
		return (double)(float)a op b;                                                      \
	}                                                                                          \
	template <class B> KL_TORCH_HD inline double operator op(double a, float16<B> b)           \
	{                                                                                          \
		return a op(double)(float) b;                                                      \
	}                                                                                          \
	template <class B> KL_TORCH_HD inline float16<B> operator op(float16<B> a, int b)          \
	{                                                                                          \
		return a op float16<B>((float)b);                                                  \
	}                                                                                          \
	template <class B> KL_TORCH_HD inline float16<B> operator op(int a, float16<B> b)          \
	{                                                                                          \
		return float16<B>((float)a) op b;                                                  \
	}                                                                                          \
	template <class B, class T>                                                                \
	KL_TORCH_HD inline float16<B> &operator op##=(float16<B> &a, const T &b)                   \
	{                                                                                          \
		return a = float16<B>((float)(a op b));                                            \
	}
KL_TORCH_F16_OP(+)
KL_TORCH_F16_OP(-)
KL_TORCH_F16_OP(*)
KL_TORCH_F16_OP(/)
#undef KL_TORCH_F16_OP
template <class B> KL_TORCH_HD inline float16<B> operator-(float16<B> a)
{
	return float16<B>(-(float)a);
}
#define KL_TORCH_F16_CMP(op)                                                                       \
	template <class B> KL_TORCH_HD inline bool operator op(float16<B> a, float16<B> b)         \
	{                                                                                          \
		return (float)a op(float) b;                                                       \
	}
KL_TORCH_F16_CMP(==)
KL_TORCH_F16_CMP(!=)
KL_TORCH_F16_CMP(<)
KL_TORCH_F16_CMP(<=)
KL_TORCH_F16_CMP(>)
KL_TORCH_F16_CMP(>=)
#undef KL_TORCH_F16_CMP
} // namespace kl_torch

/* ---- c10: element types, devices, sizes ---- */
namespace c10
{

using Half = kl_torch::float16<kl_torch::half_bits>;
using BFloat16 = kl_torch::float16<kl_torch::bf16_bits>;

/* fp8 e4m3fn as stored (kloop's KL_E4M3), converted on the host by
 * kloop.h's functions; device code reads the bytes as __nv_fp8_e4m3 */
struct Float8_e4m3fn {
	uint8_t x;
	Float8_e4m3fn() = default;
	Float8_e4m3fn(float f) : x(kl_f32_to_e4m3(f))
	{
	}
	operator float() const
	{
		return kl_e4m3_to_f32(x);
	}
};

enum class ScalarType : int8_t {
	Byte,
	Char,
	Short,
	Int,
	Long,
	Half,
	Float,
	Double,
	Bool,
	BFloat16,
	Float8_e4m3fn,
	Undefined,
};
constexpr ScalarType kByte = ScalarType::Byte, kUInt8 = ScalarType::Byte, kChar = ScalarType::Char,
                     kInt8 = ScalarType::Char, kShort = ScalarType::Short,
                     kInt16 = ScalarType::Short, kInt = ScalarType::Int, kInt32 = ScalarType::Int,
                     kLong = ScalarType::Long, kInt64 = ScalarType::Long, kHalf = ScalarType::Half,
                     kFloat16 = ScalarType::Half, kFloat = ScalarType::Float,
                     kFloat32 = ScalarType::Float, kDouble = ScalarType::Double,
                     kFloat64 = ScalarType::Double, kBool = ScalarType::Bool,
                     kBFloat16 = ScalarType::BFloat16, kFloat8_e4m3fn = ScalarType::Float8_e4m3fn;

inline const char *toString(ScalarType t)
{
	static const char *const names[] = {"Byte", "Char",     "Short",         "Int",
	                                    "Long", "Half",     "Float",         "Double",
	                                    "Bool", "BFloat16", "Float8_e4m3fn", "Undefined"};
	return names[(int)t];
}

inline size_t elementSize(ScalarType t)
{
	static const unsigned char sizes[] = {1, 1, 2, 4, 8, 2, 4, 8, 1, 2, 1, 0};
	return sizes[(int)t];
}

inline bool isFloatingType(ScalarType t)
{
	return t == kHalf || t == kFloat || t == kDouble || t == kBFloat16 || t == kFloat8_e4m3fn;
}

inline bool isIntegralType(ScalarType t, bool includeBool = false)
{
	return t == kByte || t == kChar || t == kShort || t == kInt || t == kLong ||
	       (includeBool && t == kBool);
}

/* the C++ type of a ScalarType, and back */
template <ScalarType T> struct ScalarTypeToCPPType;
#define KL_TORCH_ST(T, cpp)                                                                        \
	template <> struct ScalarTypeToCPPType<ScalarType::T> {                                    \
		using type = cpp;                                                                  \
	};
KL_TORCH_ST(Byte, uint8_t)
KL_TORCH_ST(Char, int8_t)
KL_TORCH_ST(Short, int16_t)
KL_TORCH_ST(Int, int32_t)
KL_TORCH_ST(Long, int64_t)
KL_TORCH_ST(Half, c10::Half)
KL_TORCH_ST(Float, float)
KL_TORCH_ST(Double, double)
KL_TORCH_ST(Bool, bool)
KL_TORCH_ST(BFloat16, c10::BFloat16)
KL_TORCH_ST(Float8_e4m3fn, c10::Float8_e4m3fn)
#undef KL_TORCH_ST

template <class T> constexpr ScalarType cpp_to_scalar()
{
	using U = std::remove_cv_t<T>;
	if constexpr (std::is_same_v<U, uint8_t>)
		return kByte;
	else if constexpr (std::is_same_v<U, int8_t> || std::is_same_v<U, char>)
		return kChar;
	else if constexpr (std::is_same_v<U, int16_t>)
		return kShort;
	else if constexpr (std::is_same_v<U, int32_t>)
		return kInt;
	else if constexpr (std::is_same_v<U, int64_t> || std::is_same_v<U, long long> ||
	                   std::is_same_v<U, long>)
		return kLong;
	else if constexpr (std::is_same_v<U, Half>)
		return kHalf;
	else if constexpr (std::is_same_v<U, float>)
		return kFloat;
	else if constexpr (std::is_same_v<U, double>)
		return kDouble;
	else if constexpr (std::is_same_v<U, bool>)
		return kBool;
	else if constexpr (std::is_same_v<U, BFloat16>)
		return kBFloat16;
	else if constexpr (std::is_same_v<U, Float8_e4m3fn>)
		return kFloat8_e4m3fn;
#ifdef KL_TORCH_HAS_CUDA
	else if constexpr (std::is_same_v<U, __half>)
		return kHalf;
	else if constexpr (std::is_same_v<U, __nv_bfloat16>)
		return kBFloat16;
#endif
	else
		return ScalarType::Undefined;
}

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
constexpr DeviceType kCPU = DeviceType::CPU, kCUDA = DeviceType::CUDA;

struct Device {
	DeviceType type_ = DeviceType::CPU;
	int8_t index_ = -1;
	Device(DeviceType t, int index = -1) : type_(t), index_((int8_t)index)
	{
	}
	/* "cpu", "cuda", "cuda:0" */
	Device(const char *s)
	    : type_(strncmp(s, "cuda", 4) ? DeviceType::CPU : DeviceType::CUDA),
	      index_((int8_t)(s[0] && s[1] && s[2] && s[3] && s[4] == ':' ? atoi(s + 5) : -1))
	{
	}
	template <class S, class = decltype(std::declval<const S &>().c_str())>
	Device(const S &s) : Device(s.c_str())
	{
	}
	DeviceType type() const
	{
		return type_;
	}
	int8_t index() const
	{
		return index_;
	}
	bool has_index() const
	{
		return index_ >= 0;
	}
	bool is_cuda() const
	{
		return type_ == DeviceType::CUDA;
	}
	bool is_cpu() const
	{
		return type_ == DeviceType::CPU;
	}
	bool operator==(const Device &o) const
	{
		return type_ == o.type_;
	}
	bool operator!=(const Device &o) const
	{
		return !(*this == o);
	}
	const char *str() const
	{
		return is_cuda() ? "cuda" : "cpu";
	}
};

/* a view of a contiguous array (sizes, strides) */
template <class T> class ArrayRef
{
	const T *p_ = nullptr;
	size_t n_ = 0;

      public:
	constexpr ArrayRef() = default;
	constexpr ArrayRef(const T *p, size_t n) : p_(p), n_(n)
	{
	}
	constexpr ArrayRef(const T &one) : p_(&one), n_(1)
	{
	}
	ArrayRef(const std::vector<T> &v) : p_(v.data()), n_(v.size())
	{
	}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
	/* as PyTorch's: the list lives as long as the call it is written in */
	constexpr ArrayRef(std::initializer_list<T> l) : p_(l.begin()), n_(l.size())
	{
	}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
	constexpr const T *begin() const
	{
		return p_;
	}
	constexpr const T *end() const
	{
		return p_ + n_;
	}
	constexpr const T *data() const
	{
		return p_;
	}
	constexpr size_t size() const
	{
		return n_;
	}
	constexpr bool empty() const
	{
		return n_ == 0;
	}
	constexpr const T &operator[](size_t i) const
	{
		return p_[i];
	}
	const T &front() const
	{
		return p_[0];
	}
	const T &back() const
	{
		return p_[n_ - 1];
	}
	std::vector<T> vec() const
	{
		return std::vector<T>(p_, p_ + n_);
	}
	bool equals(ArrayRef o) const
	{
		if (n_ != o.n_)
			return false;
		for (size_t i = 0; i < n_; i++)
			if (!(p_[i] == o.p_[i]))
				return false;
		return true;
	}
	bool operator==(ArrayRef o) const
	{
		return equals(o);
	}
	bool operator!=(ArrayRef o) const
	{
		return !equals(o);
	}
	operator std::vector<T>() const
	{
		return vec();
	}
};
using IntArrayRef = ArrayRef<int64_t>;

enum class Layout : int8_t { Strided };
constexpr Layout kStrided = Layout::Strided;
enum class MemoryFormat : int8_t { Contiguous, Preserve, ChannelsLast };

/* what an allocation asks for; unset fields come from elsewhere (the
 * default, or the tensor an *_like copies) */
struct TensorOptions {
	ScalarType dtype_ = ScalarType::Float;
	Device device_ = Device(DeviceType::CPU);
	bool has_dtype_ = false, has_device_ = false;
	TensorOptions() = default;
	TensorOptions(ScalarType t) : dtype_(t), has_dtype_(true)
	{
	}
	TensorOptions(Device d) : device_(d), has_device_(true)
	{
	}
	TensorOptions(DeviceType d) : device_(d), has_device_(true)
	{
	}
	TensorOptions dtype(ScalarType t) const
	{
		TensorOptions o = *this;
		o.dtype_ = t, o.has_dtype_ = true;
		return o;
	}
	template <class T> TensorOptions dtype() const
	{
		return dtype(cpp_to_scalar<T>());
	}
	TensorOptions device(Device d) const
	{
		TensorOptions o = *this;
		o.device_ = d, o.has_device_ = true;
		return o;
	}
	TensorOptions device(DeviceType t, int index = -1) const
	{
		return device(Device(t, index));
	}
	TensorOptions device_index(int) const
	{
		return *this;
	}
	TensorOptions layout(Layout) const
	{
		return *this;
	}
	TensorOptions requires_grad(bool = true) const
	{
		return *this;
	}
	TensorOptions memory_format(MemoryFormat) const
	{
		return *this;
	}
	TensorOptions pinned_memory(bool = true) const
	{
		return *this;
	}
	ScalarType dtype() const
	{
		return dtype_;
	}
	Device device() const
	{
		return device_;
	}
	bool has_dtype() const
	{
		return has_dtype_;
	}
	bool has_device() const
	{
		return has_device_;
	}
};
/* `std::cout << x.options()` in an extension's message (no <ostream> here:
 * any stream that takes a C string) */
template <class S> auto operator<<(S &os, ScalarType t) -> decltype(os << "")
{
	return os << toString(t);
}
template <class S> auto operator<<(S &os, const Device &d) -> decltype(os << "")
{
	return os << d.str();
}
template <class S> auto operator<<(S &os, const TensorOptions &o) -> decltype(os << "")
{
	return os << "TensorOptions(dtype=" << toString(o.dtype())
	          << ", device=" << o.device().str() << ")";
}
inline TensorOptions dtype(ScalarType t)
{
	return TensorOptions(t);
}
template <class T> TensorOptions dtype()
{
	return TensorOptions(cpp_to_scalar<T>());
}
inline TensorOptions device(Device d)
{
	return TensorOptions(d);
}

} // namespace c10

/* ---- the runtime: the call in progress, failures, messages ---- */
#if defined(__GNUC__) && !defined(__clang__)
/* kloop's own paths out of the way of the extension's optimiser, and
 * optimised less than it (bookkeeping: the copies and fills are libc's or
 * the typed loops below): at -O3 they were a sixth of an extension's compile */
#define KL_TORCH_COLD __attribute__((noinline, cold, optimize("Os")))
#define KL_TORCH_NOINLINE __attribute__((noinline, optimize("O1")))
#define KL_TORCH_PRINTF __attribute__((format(printf, 1, 2)))
#elif defined(__GNUC__)
#define KL_TORCH_COLD __attribute__((noinline, cold))
#define KL_TORCH_NOINLINE __attribute__((noinline))
#define KL_TORCH_PRINTF __attribute__((format(printf, 1, 2)))
#else
#define KL_TORCH_PRINTF
#define KL_TORCH_COLD
#define KL_TORCH_NOINLINE
#endif
#define KL_TORCH_MAX_ARENA 64 /* allocations of one call */

#include "kloop_torch/kl_torch_common.h"

namespace kl_torch
{

/* a message being built, at most KL_RUN_ERROR_MAX bytes (the stand-in does
 * without std::string, whose header would be most of an extension's compile) */
struct text {
	char b[KL_RUN_ERROR_MAX];
	size_t n;
	text() : n(0)
	{
		b[0] = 0;
	}
	KL_TORCH_NOINLINE void add(const char *z)
	{
		while (z && *z && n + 1 < sizeof b)
			b[n++] = *z++;
		b[n] = 0;
	}
	const char *c_str() const
	{
		return b;
	}
	bool empty() const
	{
		return n == 0;
	}
};

/* a failure: TORCH_CHECK's, or the stand-in's own; kl_run says its text */
struct failure {
	text what;
};

[[noreturn]] KL_TORCH_COLD inline void fail(const text &m)
{
	throw failure{m};
}
/* a failure in printf's words */
[[noreturn]] KL_TORCH_COLD KL_TORCH_PRINTF inline void failf(const char *fmt, ...)
{
	failure f;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(f.what.b, sizeof f.what.b, fmt, ap);
	va_end(ap);
	f.what.n = n < 0 ? 0 : (size_t)n < sizeof f.what.b ? (size_t)n : sizeof f.what.b - 1;
	throw f;
}

KL_TORCH_COLD inline void put(text &s, const char *z)
{
	s.add(z ? z : "(null)");
}
KL_TORCH_COLD inline void put(text &s, const text &z)
{
	s.add(z.c_str());
}
KL_TORCH_COLD inline void put(text &s, char c)
{
	char b[2] = {c, 0};
	s.add(b);
}
KL_TORCH_COLD inline void put(text &s, bool b)
{
	s.add(b ? "true" : "false");
}
KL_TORCH_COLD inline void put(text &s, c10::ScalarType t)
{
	s.add(c10::toString(t));
}
KL_TORCH_COLD inline void put(text &s, const c10::Device &d)
{
	s.add(d.str());
}
KL_TORCH_COLD inline void put_num(text &s, long long v, unsigned long long u, double d, int kind)
{
	char b[40];
	if (kind == 0)
		snprintf(b, sizeof b, "%lld", v);
	else if (kind == 1)
		snprintf(b, sizeof b, "%llu", u);
	else
		snprintf(b, sizeof b, "%g", d);
	s.add(b);
}
template <class T, class = void> struct has_c_str : std::false_type {
};
template <class T>
struct has_c_str<T, std::void_t<decltype(std::declval<const T &>().c_str())>> : std::true_type {
};
template <class T> void put(text &s, const T &v)
{
	if constexpr (has_c_str<T>::value)
		s.add(v.c_str());
	else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
		put_num(s, (long long)v, 0, 0, 0);
	else if constexpr (std::is_integral_v<T> || std::is_enum_v<T>)
		put_num(s, 0, (unsigned long long)v, 0, 1);
	else if constexpr (std::is_convertible_v<T, double>)
		put_num(s, 0, 0, (double)v, 2);
	else
		s.add("<?>");
}
template <class T> void put(text &s, const c10::ArrayRef<T> &a)
{
	s.add("[");
	for (size_t i = 0; i < a.size(); i++) {
		if (i)
			s.add(", ");
		put(s, a[i]);
	}
	s.add("]");
}
template <class T> void put(text &s, const std::vector<T> &v)
{
	put(s, c10::ArrayRef<T>(v));
}

/* the message parts of TORCH_CHECK(cond, parts...) as one text */
template <class... A> text cat(const A &...a)
{
	text s;
	(put(s, a), ...);
	return s;
}

[[noreturn]] KL_TORCH_COLD inline void check_failed(const char *file, int line, const char *cond,
                                                    const text &msg)
{
	if (msg.empty())
		failf("%s:%d: expected %s to be true, but got false", file, line, cond);
	failf("%s:%d: %s", file, line, msg.c_str());
}

/* the call of kl_run in progress, and the arena it allocates from */
struct call : call_head {
	void *arena[KL_TORCH_MAX_ARENA]; /* what the call allocated, freed after it */
	bool arenaCuda[KL_TORCH_MAX_ARENA];
};
/* the stand-in's state is the object's own (static: an inline function's
 * static would be one for every object loaded in a process, GNU_UNIQUE) */
static inline call *&current()
{
	static call *c;
	return c;
}
KL_TORCH_NOINLINE inline call &need_call(const char *what)
{
	if (!current())
		failf("%s outside kl_run: kloop's ATen stand-in allocates from the call's arena "
		      "(tensors live for one call)",
		      what);
	return *current();
}

} // namespace kl_torch

#include "kloop_torch/kl_torch_tensor.h"
#include "kloop_torch/kl_torch_run.h"

#endif
