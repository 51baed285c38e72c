/*
 * kloop_torch/kl_torch_common.h - what kloop's ATen stand-in
 * (kloop_torch.h) and an extension built against PyTorch's own headers
 * (kloop_torch_real.h) both say the same way: a shape in words, a kl_dtype's
 * name.  Included by each after its KL_TORCH_COLD.
 */
#ifndef KLOOP_TORCH_COMMON_H
#define KLOOP_TORCH_COMMON_H

namespace kl_torch
{
/* "[2, 3]" into b */
KL_TORCH_COLD inline const char *shape_str(const int64_t *p, size_t n, char *b, size_t nb)
{
	size_t k = (size_t)snprintf(b, nb, "[");
	for (size_t i = 0; i < n && k < nb; i++)
		k += (size_t)snprintf(b + k, nb - k, "%s%lld", i ? ", " : "", (long long)p[i]);
	if (k < nb)
		snprintf(b + k, nb - k, "]");
	return b;
}

/* the call of kl_run in progress: what both know of it (the stand-in's
 * call adds its arena) */
struct call_head {
	const kl_tensor *in;
	int nIn;
	kl_tensor *out;
	int nOut;
	void *stream;     /* kloop's stream (NULL on the host) */
	bool cuda;        /* kloop's buffers are device memory */
	uint32_t claimed; /* outputs handed out as themselves (a bit each) */
	int nArena;       /* the stand-in's allocations; none where PyTorch allocates */
};

/* a kl_dtype's name, as kloop's task files write it */
inline const char *kl_name(int d)
{
	static const char *const n[] = {"f32", "f16", "bf16", "f64", "i32",
	                                "i64", "i8",  "u8",   "e4m3"};
	return d >= 0 && d < (int)(sizeof n / sizeof *n) ? n[d] : "?";
}
} // namespace kl_torch

#endif
