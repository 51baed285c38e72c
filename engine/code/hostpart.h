/*
 * hostpart.h - the host part of a CUDA source: what nvcc's host object
 * (the code around the kernels, their launch stubs and registrations) is
 * made of.  It is the source with the bodies of its device-only functions
 * (__global__, and __device__ without __host__) and its comments blanked,
 * so that an edit inside a kernel leaves it as it was and an edit anywhere
 * else changes it.  The compiler keeps a host object under the hash of
 * this text and, when only device code changed, builds the device code
 * alone into it (compile.c).
 *
 * A body stays in the text (an edit there changes the host part) when the
 * host compile may depend on it: a constexpr, consteval or auto function
 * (the host may evaluate it or deduce its type), a member function, or a
 * body with a preprocessor line other than #pragma and a balanced
 * #if/#ifdef/#ifndef/#elif/#else/#endif (a #define there reaches the host
 * code below it).
 *
 * Lines: a blank keeps its newlines ("lines counted", the text's first
 * line) when the host code's line numbers or its file's name may reach its
 * object: the host text names __LINE__ or __FILE__ or a macro known to
 * expand them (assert, TORCH_CHECK, CubDebug, CUTLASS_CHECK and the like),
 * or includes a header other than kloop.h and the system's C, C++ and CUDA
 * ones.  Otherwise ("not counted") newlines go too, and an edit that adds
 * lines to a kernel keeps the host part; so does another file name (the
 * compiler leaves the name out of the host object's key then).
 */
#ifndef KL_HOSTPART_H
#define KL_HOSTPART_H

#include <stddef.h>

/*
 * The host part of n bytes of CUDA source src.  Returns 1 with *pzOut
 * (fresh, NUL-terminated) and *pnOut; 0 when the source has no host part
 * kloop can tell apart, with zWhy saying why (syntax errors, __COUNTER__,
 * whose count device code advances, a source too large to parse, no
 * kernel).
 */
int cuda_host_part(const char *src, size_t n, char **pzOut, size_t *pnOut, char *zWhy, size_t nWhy);

#endif
