/*
 * test_codehash.c - the machine-code hash of compiled candidates, through
 * the compiler service with the real compilers: sources that differ only in
 * comments, whitespace, local names or an unused static function hash the
 * same; a changed constant, another library call or (CUDA) another block
 * size or kernel constant does not.  The CUDA part compiles with nvcc to
 * cubins (no GPU needed) and skips with one line when nvcc is absent.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "codehash.h"
#include "compile.h"
#include "util.h"

struct got {
	int n, ok, cached;
	char zKey[65], zCode[65];
};

static void on_done(struct compile_result *r, void *arg)
{
	struct got *g = arg;
	g->n++;
	g->ok = r->ok;
	g->cached = r->cached;
	memcpy(g->zKey, r->zKey, sizeof g->zKey);
	memcpy(g->zCode, r->zCodeHash, sizeof g->zCode);
}

/* compile zSource as zName; its code hash into g (g->ok 0 on failure) */
static int compile(struct loop *l, struct compiler *c, const char *zName, const char *zSource,
                   struct got *g)
{
	char err[KL_ERRLEN];
	struct compile_req rq = {zSource, strlen(zSource), compile_lang_from_name(zName), zName};
	int before = g->n;
	g->ok = 0;
	if (compiler_submit(c, &rq, on_done, g, err) < 0)
		return -1;
	for (int i = 0; i < 3000 && g->n == before; i++)
		loop_once(l, 0.1);
	return g->ok ? 0 : -1;
}

/* the code hash of zSource, or "" when it does not compile */
static void hash_of(struct loop *l, struct compiler *c, const char *zName, const char *zSource,
                    char out[65])
{
	struct got g = {0};
	out[0] = 0;
	if (compile(l, c, zName, zSource, &g) == 0)
		memcpy(out, g.zCode, 65);
}

#define HOST_HEAD                                                                                  \
	"#include <math.h>\n"                                                                      \
	"#include \"kloop.h\"\n"

static const char *host_a =
    HOST_HEAD "int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)\n"
              "{\n"
              "\t(void)n_in; (void)n_out; (void)s;\n"
              "\tconst float *x = in[0].data; float *y = out[0].data;\n"
              "\tfor (int64_t i = 0; i < kl_numel(&in[0]); i++)\n"
              "\t\ty[i] = expf(x[i]) * 2.0f + 1.0f;\n"
              "\treturn 0;\n"
              "}\n";

/* the same code: comments, other whitespace, other local names, an unused
 * static function */
static const char *host_same =
    HOST_HEAD "/* the same kernel, written another way */\n"
              "static float never_called(float v) { return v * 3.0f; }\n\n"
              "int kl_run(const kl_tensor *inputs, int n_in, kl_tensor *outputs, int n_out,\n"
              "           void *stream)\n"
              "{\n"
              "    (void)n_in;   (void)n_out;   (void)stream;   // unused\n"
              "    const float *src = inputs[0].data;\n"
              "    float *dst = outputs[0].data;\n"
              "    for (int64_t k = 0; k < kl_numel(&inputs[0]); k++)\n"
              "        dst[k] = expf(src[k]) * 2.0f + 1.0f;   /* the work */\n"
              "    return 0;\n"
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

	/* ---- host: the shared object's code ---- */
	char a[65], same[65], cnst[65], call[65], again[65];
	hash_of(l, c, "a.c", host_a, a);
	CHECK(strlen(a) == 64, "a host candidate compiles and gets a 64-digit code hash");
	hash_of(l, c, "other_name.c", host_same, same);
	CHECK(a[0] && !strcmp(a, same),
	      "comments, whitespace, renamed variables, an unused static function and another "
	      "file name: the same code hash");
	char *z = xstrdup(host_a);
	memcpy(strstr(z, "1.0f"), "1.5f", 4);
	hash_of(l, c, "a.c", z, cnst);
	CHECK(cnst[0] && strcmp(a, cnst), "a changed constant changes the code hash");
	free(z);
	z = xstrdup(host_a);
	memcpy(strstr(z, "expf"), "logf", 4);
	hash_of(l, c, "a.c", z, call);
	CHECK(call[0] && strcmp(a, call),
	      "another library function in the same place (logf for expf) changes the code hash");
	free(z);
	struct got g = {0};
	compile(l, c, "a.c", host_a, &g);
	CHECK(g.cached && !strcmp(g.zCode, a), "a cache hit has the same code hash");
	memcpy(again, g.zCode, 65);
	CHECK(strcmp(g.zKey, again) != 0, "the code hash is not the cache key");

	/* a file that is not an object: its bytes, so two differ */
	char h1[65], h2[65];
	code_hash("not an ELF file", 15, h1);
	code_hash("not an ELF file!", 16, h2);
	CHECK(strlen(h1) == 64 && strcmp(h1, h2),
	      "bytes that are not an ELF object hash by content");
	/* a truncated object: never read past its end, and not the whole one's hash */
	strbuf so = STRBUF_INIT;
	char *soPath = xasprintf("%s/%s.so", dir, g.zKey);
	if (read_file(soPath, &so, 1 << 26, err) == 0) {
		code_hash(so.buf, so.len / 2, h1);
		CHECK(strcmp(h1, a) != 0, "half of the object does not hash as the whole");
	}
	sb_free(&so);
	free(soPath);

	/* ---- CUDA: the cubin's SASS and launch data, and the host's launch ---- */
	static const char *cu_a =
	    "#include \"kloop.h\"\n"
	    "__global__ void twice(const float *x, float *y, long n)\n"
	    "{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x;\n"
	    "  if (i < n) y[i] = x[i] * 2.0f + 1.0f; }\n"
	    "extern \"C\" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out,\n"
	    "                        void *s)\n"
	    "{ (void)n_in; (void)n_out; long n = kl_numel(&in[0]);\n"
	    "  twice<<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)s>>>(\n"
	    "      (const float *)in[0].data, (float *)out[0].data, n);\n"
	    "  return 0; }\n";
	static const char *cu_same =
	    "#include \"kloop.h\"\n"
	    "// the same kernel, written another way\n"
	    "static __device__ float unused_helper(float v) { return v * 7.0f; }\n"
	    "__global__ void twice(const float *src, float *dst, long count)\n"
	    "{\n"
	    "    long idx = blockIdx.x * (long)blockDim.x + threadIdx.x;  /* one each */\n"
	    "    if (idx < count)\n"
	    "        dst[idx] = src[idx] * 2.0f + 1.0f;\n"
	    "}\n\n"
	    "extern \"C\" int kl_run(const kl_tensor *inputs, int n_in, kl_tensor *outputs,\n"
	    "                        int n_out, void *stream)\n"
	    "{\n"
	    "    (void)n_in; (void)n_out;\n"
	    "    long total = kl_numel(&inputs[0]);\n"
	    "    twice<<<(unsigned)((total + 255) / 256), 256, 0, (cudaStream_t)stream>>>(\n"
	    "        (const float *)inputs[0].data, (float *)outputs[0].data, total);\n"
	    "    return 0;\n"
	    "}\n";
	struct got cg = {0};
	if (compile(l, c, "a.cu", cu_a, &cg) < 0 && !cg.n) {
		printf("skip - CUDA code hashes: nvcc is not installed (KLOOP_NVCC)\n");
	} else {
		CHECK(cg.ok && strlen(cg.zCode) == 64, "a CUDA candidate compiles with nvcc");
		char cs[65], cc[65], cb[65];
		hash_of(l, c, "b.cu", cu_same, cs);
		CHECK(cs[0] && !strcmp(cg.zCode, cs),
		      "CUDA: comments, whitespace, renamed variables, an unused static device "
		      "function: the same code hash");
		z = xstrdup(cu_a);
		memcpy(strstr(z, "1.0f"), "1.5f", 4);
		hash_of(l, c, "a.cu", z, cc);
		CHECK(cc[0] && strcmp(cg.zCode, cc),
		      "CUDA: a changed constant in the kernel changes "
		      "the code hash");
		free(z);
		z = xstrdup(cu_a);
		memcpy(strstr(z, "255) / 256), 256"), "127) / 128), 128", 16);
		hash_of(l, c, "a.cu", z, cb);
		CHECK(cb[0] && strcmp(cg.zCode, cb),
		      "CUDA: another block size changes the code hash");
		free(z);
	}

	compiler_free(c);
	loop_free(l);
	char *cmd = xasprintf("rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "the cache directory is removed");
	free(cmd);
	return check_done();
}
