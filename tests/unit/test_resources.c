/*
 * test_resources.c - reading compiler output: ptxas' per-kernel resource
 * report and the first error; then, where nvcc is installed, the real
 * compile path (kloop's flags, the cache) over every bundled CUDA seed and
 * reference and every GPU test kernel.  Needs no GPU.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "compile.h"
#include "loop.h"
#include "proc.h"
#include "resources.h"
#include "util.h"

static double num(const cJSON *o, const char *k)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItem(o, k));
}

static cJSON *kernel(cJSON *arr, const char *name)
{
	cJSON *k;
	cJSON_ArrayForEach(k,
	                   arr) if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(k, "kernel")),
	                                    name)) return k;
	return NULL;
}

struct pending {
	int left;
	struct loop *l;
	char names[64][300];
	int ok[64];
	int cached[64];
	char *logs[64];
	cJSON *res[64];
};

static void done(struct compile_result *r, void *arg)
{
	struct pending *p = arg;
	for (int k = 0; k < 64; k++)
		if (p->names[k][0] && !p->logs[k] && r->zCommand &&
		    strstr(r->zCommand, strrchr(p->names[k], '/') + 1)) {
			p->ok[k] = r->ok;
			p->cached[k] = r->cached;
			p->logs[k] = xstrdup(r->zLog);
			p->res[k] = resources_parse_ptxas(r->zLog);
			break;
		}
	if (--p->left == 0)
		loop_stop(p->l);
}

/* the host compilers' vectorisation remarks, apart from the warnings */
static void test_vec(void)
{
	const char *gcc =
	    "seed.c: In function 'kl_run':\n"
	    "seed.c:14:7: warning: unused variable 'k' [-Wunused-variable]\n"
	    "seed.c:30:25: optimized: loop vectorized using 32 byte vectors\n"
	    "seed.c:41:9: optimized: basic block part vectorized using 16 byte vectors\n";
	char *rest = NULL;
	cJSON *v = resources_parse_vec(gcc, NULL, &rest);
	CHECK(cJSON_GetArraySize(v) == 2, "gcc: two remarks (got %d)", cJSON_GetArraySize(v));
	const cJSON *a = cJSON_GetArrayItem(v, 0);
	CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(a, "line")) == 30 &&
	          cJSON_GetNumberValue(cJSON_GetObjectItem(a, "column")) == 25 &&
	          !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(a, "message")),
	                  "loop vectorized using 32 byte vectors"),
	      "gcc: line 30, column 25, the message");
	CHECK(rest && strstr(rest, "unused variable") && !strstr(rest, "optimized:"),
	      "gcc: the warnings stay in the log, the remarks leave it");
	free(rest);
	cJSON_Delete(v);
	const char *clang =
	    "k.c:12:3: remark: vectorized loop (vectorization width: 8, interleaved "
	    "count: 4) [-Rpass=loop-vectorize]\n"
	    "k.c:20:1: remark: something else [-Rpass=inline]\n";
	v = resources_parse_vec(clang, NULL, &rest);
	a = cJSON_GetArrayItem(v, 0);
	CHECK(cJSON_GetArraySize(v) == 1 &&
	          cJSON_GetNumberValue(cJSON_GetObjectItem(a, "line")) == 12 &&
	          !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(a, "message")),
	                  "vectorized loop (vectorization width: 8, interleaved count: 4)"),
	      "clang: the loop-vectorize remark, without its flag");
	CHECK(strstr(rest, "[-Rpass=inline]") != NULL, "clang: other remarks stay in the log");
	free(rest);
	cJSON_Delete(v);
	v = resources_parse_vec("", NULL, NULL);
	CHECK(cJSON_IsArray(v) && cJSON_GetArraySize(v) == 0, "nothing vectorised: an empty array");
	cJSON_Delete(v);
	const char *inl = "/k/include/kloop_torch/kl_torch_tensor.h:87:21: optimized: loop "
	                  "vectorized using 32 byte vectors\n"
	                  "ext.cpp:10:2: optimized: loop vectorized using 64 byte vectors\n";
	v = resources_parse_vec(inl, "/k/include", &rest);
	a = cJSON_GetArrayItem(v, 0);
	CHECK(cJSON_GetArraySize(v) == 1 &&
	          cJSON_GetNumberValue(cJSON_GetObjectItem(a, "line")) == 10 &&
	          !strstr(rest, "kl_torch_tensor.h"),
	      "a remark on kloop's own headers (the ATen stand-in's code inlined) is left out: its "
	      "line is not the candidate's");
	free(rest);
	cJSON_Delete(v);
}

int main(void)
{
	test_vec();
	char err[KL_ERRLEN];
	strbuf log = STRBUF_INIT;
	CHECK(read_file("tests/fixtures/ptxas/sm90.log", &log, 1 << 20, err) == 0, "ptxas fixture");
	cJSON *arr = resources_parse_ptxas(log.buf);
	cJSON *a = kernel(arr, "_Z13softmax_naivePKfPfii"), *b = kernel(arr, "spilly");
	CHECK(cJSON_GetArraySize(arr) == 2 && a && b, "two kernels in the report");
	CHECK(a && num(a, "registers") == 18 && num(a, "shared_bytes") == 4096 &&
	          num(a, "barriers") == 1 && num(a, "stack_bytes") == 0,
	      "registers, shared memory and barriers of a kernel");
	CHECK(b && num(b, "stack_bytes") == 136 && num(b, "spill_stores") == 96 &&
	          num(b, "spill_loads") == 112 &&
	          !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(b, "arch")), "sm_90"),
	      "stack frame and spills of a kernel");
	cJSON_Delete(arr);
	CHECK(resources_parse_ptxas("cc: all fine\n") == NULL, "no report in a log without ptxas");
	char *e = resources_first_error(
	    "x.cu(3): warning: unused\nx.cu(7): error: identifier \"y\" is undefined\n");
	CHECK(e && strstr(e, "x.cu(7): error"), "the first error line of an nvcc log");
	free(e);
	sb_free(&log);

	char *v = NULL;
	char *argv[] = {"nvcc", "--version", NULL};
	int st = proc_capture(argv, &v, 1 << 16);
	free(v);
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		printf("skip - nvcc is not installed: CUDA sources not compiled\n");
		return check_done();
	}
	/* every CUDA source kloop ships, through the real compile path */
	struct pending p = {0};
	const char *tasks[] = {"softmax",      "layernorm",      "matmul",
	                       "hgemm",        "gemm_bias_relu", "bf16_gemm",
	                       "rmsnorm_bf16", "attention_bf16", "attention_causal_bf16",
	                       "fp8_gemm"};
	int n = 0;
	for (size_t i = 0; i < sizeof tasks / sizeof *tasks; i++) {
		snprintf(p.names[n++], 300, "tasks/%s/seed.cu", tasks[i]);
		snprintf(p.names[n++], 300, "tasks/%s/reference.cu", tasks[i]);
	}
	DIR *d = opendir("tests/fixtures/cuda");
	struct dirent *de;
	while (d && (de = readdir(d)) && n < 64)
		if (strstr(de->d_name, ".cu"))
			snprintf(p.names[n++], 300, "tests/fixtures/cuda/%.200s", de->d_name);
	if (d)
		closedir(d);
	char cache[] = "/tmp/kloop-test-nvcc.XXXXXX";
	CHECK(mkdtemp(cache) != NULL, "cache directory");
	setenv("KLOOP_INCLUDE", "include", 1);
	struct loop *l = loop_new();
	p.l = l;
	struct compiler *c = compiler_new(l, cache, 2, NULL, err);
	CHECK(c != NULL, "compiler service (%s)", c ? "" : err);
	/* distinct build names: prefix each source with its directory */
	strbuf srcs[64];
	for (int i = 0; i < n; i++) {
		strbuf sb = STRBUF_INIT;
		srcs[i] = sb;
		read_file(p.names[i], &srcs[i], 1 << 20, err);
		char *name = xstrdup(p.names[i]);
		for (char *q = name; *q; q++)
			if (*q == '/')
				*q = '_';
		snprintf(p.names[i], 300, "/%.280s", name);
		free(name);
		struct compile_req req = {srcs[i].buf, srcs[i].len, LANG_CUDA, p.names[i] + 1, 0};
		p.left++;
		if (compiler_submit(c, &req, done, &p, err) < 0)
			CHECK(0, "submit %s: %s", p.names[i], err);
	}
	if (p.left)
		loop_run(l);
	for (int i = 0; i < n; i++) {
		const char *nm = p.names[i] + 1;
		if (strstr(nm, "syntax_error")) {
			char *fe = resources_first_error(p.logs[i] ? p.logs[i] : "");
			CHECK(!p.ok[i] && fe && strstr(fe, "syntax_error.cu"),
			      "%s fails with nvcc's diagnostic naming the file (%s)", nm,
			      fe ? fe : "");
			free(fe);
			continue;
		}
		int kernels = strstr(srcs[i].buf, "__global__") != NULL;
		CHECK(p.ok[i] && (!kernels || (p.res[i] && cJSON_GetArraySize(p.res[i]) >= 1)),
		      "nvcc compiles %s for sm_90%s%s%s", nm,
		      kernels ? " with a resource report" : " (no kernels)", p.ok[i] ? "" : ": ",
		      p.ok[i] ? "" : (p.logs[i] ? p.logs[i] : "no log"));
		if (strstr(nm, "slow_register_spill")) {
			int spills = 0;
			cJSON *k;
			cJSON_ArrayForEach(k, p.res[i]) spills +=
			    num(k, "stack_bytes") > 0 || num(k, "spill_stores") > 0;
			CHECK(spills,
			      "the spilling kernel's report shows a stack frame or spill stores");
		}
	}
	/* the same source again comes from the cache */
	CHECK(!p.cached[0], "the first compile of %s ran nvcc", p.names[0] + 1);
	free(p.logs[0]);
	p.logs[0] = NULL;
	cJSON_Delete(p.res[0]);
	p.res[0] = NULL;
	p.left = 1;
	struct compile_req again = {srcs[0].buf, srcs[0].len, LANG_CUDA, p.names[0] + 1, 0};
	compiler_submit(c, &again, done, &p, err);
	if (p.left)
		loop_run(l);
	CHECK(p.ok[0] && p.cached[0], "recompiling an unchanged source is served from the cache");
	for (int i = 0; i < n; i++) {
		sb_free(&srcs[i]);
		cJSON_Delete(p.res[i]);
		free(p.logs[i]);
	}
	compiler_free(c);
	loop_free(l);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", cache);
	CHECK(system(cmd) == 0, "cleanup");
	return check_done();
}
