/*
 * kloop_torch_real.h - an extension compiled against PyTorch's own headers
 * and libraries: where it uses what kloop's ATen stand-in (kloop_torch.h)
 * lacks (torch::matmul, at::softmax, a tensor's operators), kloop compiles
 * it again with -include kloop_torch_real.h, -I<kloop include>/kloop_torch_real
 * first (whose torch/extension.h, torch/python.h and pybind11/pybind11.h
 * stand for the Python bindings: nothing of Python is compiled or linked)
 * and PyTorch's include directories and libraries after it.
 *
 * The rules are the stand-in's (kloop_torch.h; kl_run in
 * kloop_torch/kl_torch_run.h, shared): the entry point is the function the
 * module names "forward" (else the first), its tensor parameters take
 * kloop's inputs, then its outputs, as tensors over kloop's buffers
 * (torch::from_blob); a scalar parameter takes a ModelNew's number or the
 * problem's get_init_inputs(); what it returns is copied into kloop's
 * outputs inside kl_run (so the copy is timed, and the verdict names it):
 * PyTorch allocates with its own allocator, which kloop cannot point at its
 * output buffer.  On the GPU the current stream is kloop's for the call
 * (at::cuda::getCurrentCUDAStream()), a blocking stream: launches on the
 * legacy default stream are ordered with it (backend_cuda.c, stream_flags()).
 */
#ifndef KLOOP_TORCH_REAL_H
#define KLOOP_TORCH_REAL_H

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "kloop_torch_real.h is C++17: a PyTorch extension compiles as C++17 or CUDA"
#endif

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <torch/all.h>
#include <torch/version.h>

#include "kloop.h"

#if defined(__CUDACC__) || defined(KL_TORCH_CUDA)
#define KL_TORCH_HAS_CUDA 1
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#endif

#define KL_TORCH_REAL 1
#define KL_TORCH_CAT2(a, b) a##b
#define KL_TORCH_CAT(a, b) KL_TORCH_CAT2(a, b)
#if defined(__GNUC__)
#define KL_TORCH_COLD __attribute__((noinline, cold))
#define KL_TORCH_NOINLINE __attribute__((noinline))
#define KL_TORCH_PRINTF __attribute__((format(printf, 1, 2)))
#else
#define KL_TORCH_COLD
#define KL_TORCH_NOINLINE
#define KL_TORCH_PRINTF
#endif

#include "kloop_torch/kl_torch_common.h"

namespace kl_torch
{

/* a message being built */
struct text {
	std::string s;
	void add(const char *z)
	{
		s += z ? z : "(null)";
	}
	const char *c_str() const
	{
		return s.c_str();
	}
	bool empty() const
	{
		return s.empty();
	}
};
/* kloop's own failure (a c10::Error, TORCH_CHECK's, is a std::exception) */
struct failure {
	text what;
};
[[noreturn]] KL_TORCH_COLD KL_TORCH_PRINTF inline void failf(const char *fmt, ...)
{
	char b[KL_RUN_ERROR_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b, sizeof b, fmt, ap);
	va_end(ap);
	failure f;
	f.what.add(b);
	throw f;
}
template <class... A> text cat(const A &...a)
{
	text s;
	(s.add(a), ...);
	return s;
}

/* the call of kl_run in progress (PyTorch allocates: no arena) */
struct call : call_head {
};
static inline call *&current()
{
	static call *c;
	return c;
}

/* PyTorch's ScalarType of a kl_dtype (in kl_dtype's order) */
inline c10::ScalarType scalar_of(kl_dtype d)
{
	static const c10::ScalarType m[] = {
		c10::kFloat,
		c10::kHalf,
		c10::kBFloat16,
		c10::kDouble,
		c10::kInt,
		c10::kLong,
		c10::kChar,
		c10::kByte,
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
		c10::ScalarType::Float8_e4m3fn,
#endif
	};
	if ((unsigned)d >= sizeof m / sizeof *m)
		failf("this PyTorch (%s) has no tensors of kloop's type %s", TORCH_VERSION,
		      kl_name((int)d));
	return m[d];
}
/* the kl_dtype of a ScalarType (bool as u8, as kloop holds it), -1: none */
inline int kl_of(c10::ScalarType t)
{
	int last = TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
	               ? (int)KL_E4M3
	               : (int)KL_U8;
	for (int d = 0; d <= last; d++)
		if (scalar_of((kl_dtype)d) == t)
			return d;
	return t == c10::kBool ? (int)KL_U8 : -1;
}

/* a tensor over one of kloop's buffers, which PyTorch never frees */
inline at::Tensor wrap(const kl_tensor &t, bool cuda)
{
	at::TensorOptions o = at::TensorOptions().dtype(scalar_of(t.dtype));
#ifdef KL_TORCH_HAS_CUDA
	if (cuda)
		o = o.device(at::Device(at::kCUDA, c10::cuda::current_device()));
#else
	(void)cuda;
#endif
	return torch::from_blob(t.data, at::IntArrayRef(t.shape, (size_t)t.ndim), o);
}

using opt_tensor = c10::optional<at::Tensor>;

/* for the call, PyTorch's current stream is kloop's (a blocking one:
 * kernels the extension launches on the legacy default stream are ordered
 * with it both ways, as they are with PyTorch's default stream) */
struct call_scope {
#ifdef KL_TORCH_HAS_CUDA
	std::optional<c10::cuda::CUDAStreamGuard> g;
	explicit call_scope(call &c)
	{
		if (c.cuda)
			g.emplace(c10::cuda::getStreamFromExternal((cudaStream_t)c.stream,
			                                           c10::cuda::current_device()));
	}
#else
	explicit call_scope(call &)
	{
	}
#endif
};

/* result t into kloop's output k: PyTorch's copy_ (any strides), on the
 * current stream, which is kloop's */
inline void copy_result(call &c, int k, const at::Tensor &t)
{
	wrap(c.out[k], c.cuda).copy_(t);
}

/* PyTorch gives back what it allocated itself */
inline void release(call &)
{
}

} // namespace kl_torch

/* load_inline's bindings wrap each function in it (torch/python.h's, which
 * kloop_torch_real/ stands for) */
namespace torch
{
template <class F> F wrap_pybind_function(F f)
{
	return f;
}
} // namespace torch

#include "kloop_torch/kl_torch_run.h"

#endif
