/*
 * cudasrc.h - a small CUDA candidate for the tests of the staged build and
 * the host part (a __device__ function, a kernel that calls it, kl_run
 * launching it), and edits of a source by text.
 */
#ifndef KL_TEST_CUDASRC_H
#define KL_TEST_CUDASRC_H

#include <string.h>

#include "util.h"

static const char cudasrc_seed[] = "#include <cuda_runtime.h>\n"
                                   "#include \"kloop.h\"\n"
                                   "// a softmax\n"
                                   "__device__ float twice(float x)\n"
                                   "{\n"
                                   "\treturn 2.0f * x;\n"
                                   "}\n"
                                   "__global__ void k(const float *x, float *y, int n)\n"
                                   "{\n"
                                   "\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                   "#pragma unroll\n"
                                   "\tfor (int j = 0; j < 1; j++)\n"
                                   "\t\tif (i < n)\n"
                                   "\t\t\ty[i] = twice(x[i]);\n"
                                   "}\n"
                                   "extern \"C\" int kl_run(const kl_tensor *in, int n_in, "
                                   "kl_tensor *out, int n_out, void *stream)\n"
                                   "{\n"
                                   "\tint n = (int)kl_numel(&in[0]);\n"
                                   "\tk<<<(n + 255) / 256, 256, 0, (cudaStream_t)stream>>>((const "
                                   "float *)in[0].data, (float *)out[0].data, n);\n"
                                   "\treturn cudaGetLastError() != cudaSuccess;\n"
                                   "}\n";

/* the line of cudasrc_seed that calls twice() */
#define CUDASRC_CALL_LINE 14

/* zSrc with the first zFrom replaced by zTo ("" when zFrom is not in it);
 * fresh */
static inline char *cudasrc_edit(const char *zSrc, const char *zFrom, const char *zTo)
{
	const char *at = strstr(zSrc, zFrom);
	if (!at)
		return xstrdup("");
	return xasprintf("%.*s%s%s", (int)(at - zSrc), zSrc, zTo, at + strlen(zFrom));
}

#endif
