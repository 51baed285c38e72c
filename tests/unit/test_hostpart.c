/*
 * test_hostpart.c - the host part of a CUDA source (hostpart.h), which
 * decides whether an edit rebuilds only the device code: an edit inside a
 * kernel or a __device__ function keeps it, one in host code, a kernel's
 * signature, a __host__ __device__ or constexpr function, or a #define in a
 * body changes it; lines count where the host code may print them.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cudasrc.h"
#include "hostpart.h"
#include "util.h"

/* the host part of z, or NULL (why in zWhy) */
static char *part(const char *z, char *zWhy)
{
	char *out = NULL;
	size_t n = 0;
	return cuda_host_part(z, strlen(z), &out, &n, zWhy, 200) ? out : NULL;
}

/* z's host part compared with zBase's: want 1 the same, 0 different */
static void same(const char *zBase, const char *z, int want, const char *zWhat)
{
	char w1[200] = "", w2[200] = "";
	char *a = part(zBase, w1), *b = part(z, w2);
	CHECK(a && b && (!strcmp(a, b)) == want, "%s: the host part %s%s%s", zWhat,
	      want ? "is the same" : "changes", a && b ? "" : " (no host part: ", a && b ? "" : w2);
	free(a);
	free(b);
}

static void none(const char *z, const char *zWhyHas, const char *zWhat)
{
	char why[200] = "";
	char *p = part(z, why);
	CHECK(!p && strstr(why, zWhyHas), "%s: no host part, and it says why (%s)", zWhat, why);
	free(p);
}

int main(void)
{
	char why[200];
	char *p = part(cudasrc_seed, why);
	CHECK(p && !strncmp(p, "// kloop host part: lines not counted\n", 38) &&
	          strstr(p, "kl_run") && !strstr(p, "twice(x[i])") && !strstr(p, "2.0f") &&
	          !strstr(p, "a softmax"),
	      "a seed's host part: kl_run kept, the kernel's and the device function's bodies and "
	      "the comment gone, lines not counted");
	free(p);

	/* each: the seed made "before" by one edit (NULL: the seed itself),
	 * then "after" by another; whether the host part stays */
	static const struct {
		const char *zFrom0, *zTo0, *zFrom1, *zTo1;
		int same;
		const char *zWhat;
	} aEdit[] = {
	    {NULL, NULL, "y[i] = twice(x[i]);", "y[i] = twice(x[i]) + 1.0f;", 1,
	     "an edit inside the kernel"},
	    {NULL, NULL, "\treturn 2.0f * x;\n",
	     "\tfloat t = x + x;\n\t/* doubled */\n\treturn t;\n", 1,
	     "an edit adding lines to a __device__ function"},
	    {NULL, NULL, "#pragma unroll\n", "#pragma unroll 4\n#if __CUDA_ARCH__ >= 900\n#endif\n",
	     1, "a #pragma and a balanced #if in a kernel"},
	    {NULL, NULL, "// a softmax", "/* a softmax,\n   rows of it */", 1, "a comment"},
	    {NULL, NULL, "(n + 255) / 256, 256", "(n + 127) / 128, 128", 0,
	     "an edit in the host code (the launch's block size)"},
	    {NULL, NULL, "float *y, int n)\n{", "float *__restrict__ y, int n)\n{", 0,
	     "a kernel's signature"},
	    {"__device__ float twice", "__host__ __device__ float twice", "2.0f * x", "x + x", 0,
	     "an edit inside a __host__ __device__ function (the host compiles it)"},
	    {"__device__ float twice", "constexpr __device__ float twice", "2.0f * x", "x + x", 0,
	     "an edit inside a constexpr __device__ function"},
	    {"#pragma unroll\n", "#define W 1\n", "#define W 1", "#define W 2", 0,
	     "a #define inside a kernel (it reaches the host code below)"},
	    {"__device__ float twice(float x)\n{\n\treturn 2.0f * x;\n}\n",
	     "struct op {\n\t__device__ float twice(float x)\n\t{\n\t\treturn 2.0f * "
	     "x;\n\t}\n};\n",
	     "2.0f * x", "x + x", 0, "an edit inside a member function"},
	    /* where the host's lines may reach its object */
	    {"\tint n = (int)kl_numel(&in[0]);\n",
	     "\tint n = (int)kl_numel(&in[0]);\n\tassert(n > 0);\n", "\treturn 2.0f * x;\n",
	     "\tfloat t = x + x;\n\treturn t;\n", 0,
	     "a host assert(), and an edit adding a line to a device function (assert's line "
	     "moves)"},
	    {"\tint n = (int)kl_numel(&in[0]);\n",
	     "\tint n = (int)kl_numel(&in[0]);\n\tassert(n > 0);\n", "2.0f * x", "x + x", 1,
	     "... while one on the same lines keeps the host part"},
	};
	for (size_t i = 0; i < sizeof aEdit / sizeof *aEdit; i++) {
		char *before = aEdit[i].zFrom0
		                   ? cudasrc_edit(cudasrc_seed, aEdit[i].zFrom0, aEdit[i].zTo0)
		                   : xstrdup(cudasrc_seed);
		char *after = cudasrc_edit(before, aEdit[i].zFrom1, aEdit[i].zTo1);
		same(before, after, aEdit[i].same, aEdit[i].zWhat);
		free(before);
		free(after);
	}

	/* lines counted or not, by what the host code may expand */
	static const struct {
		const char *zFrom, *zTo;
		int counted;
		const char *zWhat;
	} aLines[] = {
	    {"\tint n = (int)kl_numel(&in[0]);\n",
	     "\tint n = (int)kl_numel(&in[0]);\n\tassert(n > 0);\n", 1, "a host assert()"},
	    {"#include \"kloop.h\"\n", "#include \"kloop.h\"\n#include \"check.h\"\n", 1,
	     "a header of the candidate's own (its macros unknown)"},
	    {"\tint n = (int)kl_numel(&in[0]);\n",
	     "\tint n = (int)kl_numel(&in[0]);\n\tconst char *f = __FILE__;\n", 1,
	     "the host code names __FILE__"},
	    {"#include <cuda_runtime.h>\n",
	     "#include <cuda_runtime.h>\n#include <cuda/pipeline>\n#include <stdio.h>\n", 0,
	     "CUDA's and C's own headers"},
	};
	for (size_t i = 0; i < sizeof aLines / sizeof *aLines; i++) {
		char *e = cudasrc_edit(cudasrc_seed, aLines[i].zFrom, aLines[i].zTo);
		p = part(e, why);
		const char *want = aLines[i].counted ? "// kloop host part: lines counted\n"
		                                     : "// kloop host part: lines not counted\n";
		CHECK(p && !strncmp(p, want, strlen(want)), "%s: lines %s", aLines[i].zWhat,
		      aLines[i].counted ? "counted" : "not counted");
		free(p);
		free(e);
	}

	char *e;
	e = cudasrc_edit(cudasrc_seed, "int i = ", "int i = __COUNTER__ + ");
	none(e, "__COUNTER__", "__COUNTER__");
	free(e);
	e = cudasrc_edit(cudasrc_seed, "return 2.0f * x;", "return 2.0f * x");
	none(e, "parse", "a syntax error");
	free(e);
	none("int f(int x) { return x; }\n", "no kernel", "a source without a kernel");
	return check_done();
}
