/*
 * test_codehash.c - the hash of compiled candidates, through the compiler
 * service with the real compilers: every byte of the object counts (a note
 * byte, a .rodata byte, an .eh_frame byte, a byte in no loaded section),
 * and two builds of the same code are the same bytes: sources that differ
 * only in comments, whitespace, local and static names or an unused static
 * function, compiled under other file names in other directories, hash the
 * same.  The CUDA part compiles with nvcc (no GPU needed) and skips with
 * one line when nvcc is absent.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "codehash.h"
#include "compile.h"
#include "compiled.h"
#include "util.h"

/* the code hash of zSource, or "" when it does not compile */
static void hash_of(struct loop *l, struct compiler *c, const char *zName, const char *zSource,
                    char out[65])
{
	struct compiled g = {0};
	char err[KL_ERRLEN];
	out[0] = 0;
	if (compiled_wait(l, c, zSource, zName, 0, &g, err) == 0 && g.ok)
		memcpy(out, g.zCode, 65);
	compiled_free(&g);
}

/* zSrc with its first zFrom replaced by zTo (a new string) */
static char *subst(const char *zSrc, const char *zFrom, const char *zTo)
{
	const char *at = strstr(zSrc, zFrom);
	if (!at)
		return xstrdup(zSrc);
	return xasprintf("%.*s%s%s", (int)(at - zSrc), zSrc, zTo, at + strlen(zFrom));
}

/* "same"/"differ" of two hashes, for a check's message */
static const char *same(const char *a, const char *b)
{
	return !a[0] || !b[0] ? "one did not compile" : strcmp(a, b) ? "differ" : "same";
}

/* a change of one place in a source */
struct change {
	const char *zFrom, *zTo, *zWhat;
};

/* each change of zSrc (compiled as zName) gives another code hash than
 * zBase, zSrc's own */
static void check_changes(struct loop *l, struct compiler *c, const char *zName, const char *zSrc,
                          const char *zBase, const struct change *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char h[65];
		char *z = subst(zSrc, a[i].zFrom, a[i].zTo);
		CHECK(strcmp(z, zSrc) != 0, "%s: the source with %s changed", zName, a[i].zWhat);
		hash_of(l, c, zName, z, h);
		CHECK(h[0] && zBase[0] && strcmp(h, zBase), "%s: %s changes the code hash (%s)",
		      zName, a[i].zWhat, same(h, zBase));
		free(z);
	}
}

#define HOST_HEAD                                                                                  \
	"#include <math.h>\n"                                                                      \
	"#include \"kloop.h\"\n"

static const char *host_a =
    HOST_HEAD "static __attribute__((noinline)) float scale(float v) { return v * 2.0f + 1.0f; }\n"
              "int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)\n"
              "{\n"
              "\t(void)n_in; (void)n_out; (void)s;\n"
              "\tconst float *x = in[0].data; float *y = out[0].data;\n"
              "\tfor (int64_t i = 0; i < kl_numel(&in[0]); i++)\n"
              "\t\ty[i] = scale(expf(x[i]));\n"
              "\treturn 0;\n"
              "}\n";

/* the same code: comments, blank lines, other whitespace, other local and
 * static names, an unused static function */
static const char *host_same =
    HOST_HEAD "/* the same kernel, written another way */\n\n\n"
              "static float never_called(float v) { return v * 3.0f; }\n\n"
              "static __attribute__((noinline)) float an_affine_map_of_a_longer_name(float u)\n"
              "{\n"
              "    return u * 2.0f + 1.0f;\n"
              "}\n\n"
              "int kl_run(const kl_tensor *inputs, int n_in, kl_tensor *outputs, int n_out,\n"
              "           void *stream)\n"
              "{\n"
              "    (void)n_in;   (void)n_out;   (void)stream;   // unused\n"
              "    const float *src = inputs[0].data;\n"
              "    float *dst = outputs[0].data;\n"
              "    for (int64_t k = 0; k < kl_numel(&inputs[0]); k++)\n"
              "        dst[k] = an_affine_map_of_a_longer_name(expf(src[k]));   /* the work */\n"
              "    return 0;\n"
              "}\n";

/* a candidate whose path is chosen by a byte of a note (loaded, and left
 * out of the hash until issue 37), of .rodata, or of its unwind table
 * (.eh_frame, through a CFI escape that changes no instruction) */
static const char *host_bytes = HOST_HEAD
    "__attribute__((used, section(\".note.kloop\"), aligned(4)))\n"
    "static const struct { unsigned namesz, descsz, type; char name[8];\n"
    "                      unsigned char desc[4]; } note = {6, 4, 1, \"kloop\", {0x00}};\n"
    "static const unsigned char table[8] = {1, 2, 3, 4, 5, 6, 7, 0x00};\n"
    "int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)\n"
    "{\n"
    "\t(void)n_in; (void)n_out; (void)s;\n"
    "\t__asm__ volatile(\".cfi_escape 0x2e, 0x00\");\n"
    "\tint slow = *(volatile const unsigned char *)&note.desc[0] +\n"
    "\t           *(volatile const unsigned char *)&table[7];\n"
    "\tconst float *x = in[0].data; float *y = out[0].data;\n"
    "\tfor (int r = 0; r <= slow * 9; r++)\n"
    "\t\tfor (int64_t i = 0; i < kl_numel(&in[0]); i++)\n"
    "\t\t\ty[i] = expf(x[i]);\n"
    "\treturn 0;\n"
    "}\n";

int main(void)
{
	char dir[] = "/tmp/kloop-test-codehash.XXXXXX";
	char err[KL_ERRLEN];
	CHECK(mkdtemp(dir) != NULL, "a cache directory");
	setenv("KLOOP_INCLUDE", "include", 1);
	struct loop *l = loop_new();
	struct compiler *c = compiler_new(l, dir, 2, NULL, err);
	CHECK(c != NULL, "a compiler service (%s)", c ? "" : err);
	if (!c)
		return check_done();
	/* a second service, its cache (and so its build directories) elsewhere
	 * under a longer path */
	char *dir2 = xasprintf("%s/another/cache-directory-of-a-longer-name", dir);
	CHECK(mkdir_p(dir2, err) == 0, "a second cache directory (%s)", err);
	struct compiler *c2 = compiler_new(l, dir2, 2, NULL, err);
	CHECK(c2 != NULL, "a second compiler service (%s)", c2 ? "" : err);
	if (!c2)
		return check_done();

	/* ---- host: the shared object's code ---- */
	char a[65], sm[65], moved[65], cnst[65], call[65], again[65];
	hash_of(l, c, "a.c", host_a, a);
	CHECK(strlen(a) == 64, "a host candidate compiles and gets a 64-digit code hash");
	hash_of(l, c, "other_name.c", host_same, sm);
	CHECK(a[0] && !strcmp(a, sm),
	      "comments, blank lines, whitespace, renamed variables and static functions, an "
	      "unused static function and another file name: the same code hash (%s)",
	      same(a, sm));
	hash_of(l, c2, "a_much_longer_file_name_than_the_first.c", host_same, moved);
	CHECK(a[0] && !strcmp(a, moved),
	      "the same code built in another directory under a longer file name: the same "
	      "code hash (%s)",
	      same(a, moved));
	char *z = subst(host_a, "1.0f", "1.5f");
	hash_of(l, c, "a.c", z, cnst);
	CHECK(cnst[0] && strcmp(a, cnst), "a changed constant changes the code hash (%s)",
	      same(a, cnst));
	free(z);
	z = subst(host_a, "expf", "logf");
	hash_of(l, c, "a.c", z, call);
	CHECK(call[0] && strcmp(a, call),
	      "another library function in the same place (logf for expf) changes the code hash "
	      "(%s)",
	      same(a, call));
	free(z);
	struct compiled g = {0};
	compiled_wait(l, c, host_a, "a.c", 0, &g, err);
	CHECK(g.cached && !strcmp(g.zCode, a), "a cache hit has the same code hash");
	memcpy(again, g.zCode, 65);
	CHECK(strcmp(g.zKey, again) != 0, "the code hash is not the cache key");

	/* one byte of a note, of .rodata, of .eh_frame: each read by the code */
	static const struct change bytes[] = {
	    {"{0x00}}", "{0x01}}", "a note's byte (.note.kloop)"},
	    {"7, 0x00}", "7, 0x01}", "a .rodata byte"},
	    {"0x2e, 0x00", "0x2e, 0x01", "an .eh_frame byte (a CFI escape, no other code)"},
	};
	char base[65];
	hash_of(l, c, "bytes.c", host_bytes, base);
	CHECK(strlen(base) == 64, "the candidate whose bytes choose its path compiles");
	check_changes(l, c, "bytes.c", host_bytes, base, bytes, sizeof bytes / sizeof *bytes);

	/* every byte of the object: also one in no loaded section, and a file
	 * that is not an object */
	char h1[65], h2[65];
	code_hash("not an ELF file", 15, h1);
	code_hash("not an ELF file!", 16, h2);
	CHECK(strlen(h1) == 64 && strcmp(h1, h2),
	      "bytes that are not an ELF object hash by content");
	strbuf so = STRBUF_INIT;
	char *soPath = xasprintf("%s/%s.so", dir, g.zKey);
	CHECK(read_file(soPath, &so, 1 << 26, err) == 0, "the cached object is read (%s)", err);
	if (so.len > 64) {
		so.buf[so.len - 1] ^= 1; /* the section headers' end: not loaded */
		code_hash(so.buf, so.len, h1);
		CHECK(strcmp(h1, a), "a byte in no loaded section changes the code hash");
		code_hash(so.buf, so.len / 2, h1);
		CHECK(strcmp(h1, a) != 0, "half of the object does not hash as the whole");
	}
	sb_free(&so);
	free(soPath);

	/* ---- CUDA: the whole object, its fatbin with it ---- */
	static const char *cu_a =
	    "#include \"kloop.h\"\n"
	    "__attribute__((used, section(\".note.kloop\"), aligned(4)))\n"
	    "static const struct { unsigned namesz, descsz, type; char name[8];\n"
	    "                      unsigned char desc[4]; } note = {6, 4, 1, \"kloop\", {0x00}};\n"
	    "__device__ const unsigned char dflag = 0x00;\n"
	    "__global__ void twice(const float *x, float *y, long n)\n"
	    "{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x;\n"
	    "  if (i < n) y[i] = x[i] * 2.0f + (dflag ? 3.0f : 1.0f); }\n"
	    "extern \"C\" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out,\n"
	    "                        void *s)\n"
	    "{ (void)n_in; (void)n_out; long n = kl_numel(&in[0]);\n"
	    "  for (int r = 0; r <= *(volatile const unsigned char *)&note.desc[0] * 9; r++)\n"
	    "  twice<<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)s>>>(\n"
	    "      (const float *)in[0].data, (float *)out[0].data, n);\n"
	    "  return 0; }\n";
	static const char *cu_same =
	    "#include \"kloop.h\"\n"
	    "// the same kernel, written another way\n\n"
	    "static __device__ float unused_helper(float v) { return v * 7.0f; }\n"
	    "__attribute__((used, section(\".note.kloop\"), aligned(4)))\n"
	    "static const struct { unsigned namesz, descsz, type; char name[8];\n"
	    "    unsigned char desc[4]; } the_note = {6, 4, 1, \"kloop\", {0x00}};\n"
	    "__device__ const unsigned char dflag = 0x00;\n\n"
	    "__global__ void twice(const float *src, float *dst, long count)\n"
	    "{\n"
	    "    long idx = blockIdx.x * (long)blockDim.x + threadIdx.x;  /* one each */\n"
	    "    if (idx < count)\n"
	    "        dst[idx] = src[idx] * 2.0f + (dflag ? 3.0f : 1.0f);\n"
	    "}\n\n"
	    "extern \"C\" int kl_run(const kl_tensor *inputs, int n_in, kl_tensor *outputs,\n"
	    "                        int n_out, void *stream)\n"
	    "{\n"
	    "    (void)n_in; (void)n_out;\n"
	    "    long total = kl_numel(&inputs[0]);\n"
	    "    for (int r = 0; r <= *(volatile const unsigned char *)&the_note.desc[0] * 9; "
	    "r++)\n"
	    "        twice<<<(unsigned)((total + 255) / 256), 256, 0, (cudaStream_t)stream>>>(\n"
	    "            (const float *)inputs[0].data, (float *)outputs[0].data, total);\n"
	    "    return 0;\n"
	    "}\n";
	struct compiled cg = {0};
	if (compiled_wait(l, c, cu_a, "a.cu", 0, &cg, err) < 0 || !cg.n) {
		printf("skip - CUDA code hashes: nvcc is not installed (KLOOP_NVCC)\n");
	} else {
		CHECK(cg.ok && strlen(cg.zCode) == 64, "a CUDA candidate compiles with nvcc");
		static const struct change cu[] = {
		    {"1.0f", "1.5f", "a changed constant in the kernel"},
		    {"255) / 256), 256", "127) / 128), 128", "another block size"},
		    {"{0x00}}", "{0x01}}", "a note's byte in the host code"},
		    {"dflag = 0x00", "dflag = 0x01", "a byte of the device's constant data"},
		};
		char cs[65], cm[65];
		hash_of(l, c, "b.cu", cu_same, cs);
		CHECK(
		    cs[0] && !strcmp(cg.zCode, cs),
		    "CUDA: comments, blank lines, whitespace, renamed variables, an unused static "
		    "device function: the same code hash (%s)",
		    same(cg.zCode, cs));
		hash_of(l, c2, "the_same_kernel_under_a_longer_name.cu", cu_same, cm);
		CHECK(cm[0] && !strcmp(cg.zCode, cm),
		      "CUDA: the same code built in another directory under a longer file name: "
		      "the same code hash (%s)",
		      same(cg.zCode, cm));
		check_changes(l, c, "a.cu", cu_a, cg.zCode, cu, sizeof cu / sizeof *cu);
	}

	compiled_free(&g);
	compiled_free(&cg);
	compiler_free(c2);
	compiler_free(c);
	loop_free(l);
	free(dir2);
	char *cmd = xasprintf("rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "the cache directory is removed");
	free(cmd);
	return check_done();
}
