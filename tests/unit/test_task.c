/*
 * test_task.c - task.json loading: the bundled tasks load with their shape
 * sets, and every kind of bad task.json gets an error naming file and field.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "task.h"
#include "util.h"

static char dir[256];

/* write body as DIR/task.json (plus the reference file it names) and load it */
static struct task *load_text(const char *body, const char *shapes, char *err)
{
	char *p = xasprintf("%s/task.json", dir);
	write_file_atomic(p, body, strlen(body), NULL);
	free(p);
	return task_load(dir, "host", shapes, err);
}

#define BASE_OK                                                                                    \
	"{\"name\": \"t\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": "         \
	"[\"n\"]}], "                                                                              \
	"\"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"n\"]}], "               \
	"\"shapes\": {\"host\": {\"n\": 8}, \"cuda\": {\"n\": 1024}}, \"reference\": {\"host\": "  \
	"\"ref.c\"}"

static void expect_error(const char *body, const char *zNeedle, const char *zWhat)
{
	char err[KL_ERRLEN] = "";
	struct task *t = load_text(body, NULL, err);
	CHECK(!t && strstr(err, zNeedle) && strstr(err, "task.json"),
	      "%s: error mentions '%s' (got: %s)", zWhat, zNeedle, err);
	task_free(t);
}

int main(void)
{
	char err[KL_ERRLEN];
	/* every bundled task loads for both backends */
	const char *names[] = {"softmax",      "layernorm",      "matmul",
	                       "hgemm",        "gemm_bias_relu", "bf16_gemm",
	                       "rmsnorm_bf16", "attention_bf16", "attention_causal_bf16",
	                       "fp8_gemm"};
	setenv("KLOOP_TASKS", "tasks", 1);
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		char *p = task_resolve(names[i], err);
		struct task *h = p ? task_load(p, "host", NULL, err) : NULL;
		struct task *c = p ? task_load(p, "cuda", NULL, err) : NULL;
		CHECK(h && c, "bundled task %s loads (%s)", names[i], h && c ? "" : err);
		if (h && c) {
			CHECK(!strcmp(h->zShapeSet, "host") && !strcmp(c->zShapeSet, "cuda"),
			      "%s: the backend picks its shape set", names[i]);
			CHECK(task_numel(&c->aOut[0]) > task_numel(&h->aOut[0]),
			      "%s: the cuda shapes are larger than the host shapes", names[i]);
			CHECK(h->ref.zHost && h->ref.zCuda && h->ref.zTorch &&
			          h->seeds.nHost >= 1 && h->seeds.nCuda >= 1,
			      "%s: has C, CUDA and PyTorch references and host and cuda seeds",
			      names[i]);
		}
		task_free(h);
		task_free(c);
		free(p);
	}
	/* the compute type: hgemm's f16 inputs make it fp16, bf16_gemm's bf16, the
	 * attention tasks declare bf16; the others fp32 */
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		char *tp = task_resolve(names[i], err);
		struct task *c = tp ? task_load(tp, "cuda", NULL, err) : NULL;
		const char *want = !strcmp(names[i], "hgemm")      ? "fp16"
		                   : !strcmp(names[i], "fp8_gemm") ? "fp8"
		                   : strstr(names[i], "gemm_bf") || strstr(names[i], "bf16_gemm") ||
		                           strstr(names[i], "attention")
		                       ? "bf16"
		                       : "fp32";
		CHECK(c && !strcmp(task_compute_name(c->compute), want),
		      "bundled %s computes in %s (got %s, from %s)", names[i], want,
		      c ? task_compute_name(c->compute) : err, c ? c->zComputeFrom : "");
		task_free(c);
		free(tp);
	}
	/* fp8_gemm: e4m3 operands (B held [N,K]) and two per-tensor scales,
	 * which a matrix product's precision verdict multiplies in */
	char *fp = task_resolve("fp8_gemm", err);
	struct task *f8 = fp ? task_load(fp, "host", NULL, err) : NULL;
	struct task_matmul mm = {0};
	CHECK(f8 && f8->aIn[0].dtype == KL_E4M3 && task_dtype_size(KL_E4M3) == 1 &&
	          !strcmp(task_dtype_name(KL_E4M3), "e4m3") && task_matmul_of(f8, &mm) && mm.bNK &&
	          mm.nScale == 2 && mm.scale[0] == 2 && mm.scale[1] == 3 && mm.nOther == 0 &&
	          mm.bias < 0 && mm.K == 96,
	      "fp8_gemm: e4m3 A and B[N,K], two scales, no other 1-D input (%s)", f8 ? "" : err);
	if (f8) { /* without its "compute", the e4m3 operands make it fp8 */
		task_compute c = task_compute_infer(f8, 0, NULL);
		CHECK(c == TASK_FP8, "an e4m3 product is inferred fp8 (got %s)",
		      task_compute_name(c));
	}
	task_free(f8);
	free(fp);
	/* the shape set's dimensions, as a task's reference.py is run with */
	char *gp = task_resolve("bf16_gemm", err);
	struct task *g = gp ? task_load(gp, "cuda", "skinny_128x4096x4096", err) : NULL;
	CHECK(g && !strcmp(g->zDims, "?M=128,?K=4096,?N=4096"),
	      "bf16_gemm at skinny_128x4096x4096: its dimensions for reference.py (got '%s')",
	      g ? g->zDims : err);
	task_free(g);
	free(gp);
	char *p = task_resolve("no_such_task", err);
	CHECK(!p && strstr(err, "unknown task 'no_such_task'") && strstr(err, "softmax"),
	      "an unknown task name lists the bundled tasks (%s)", err);

	strcpy(dir, "/tmp/kloop-test-task.XXXXXX");
	CHECK(mkdtemp(dir) != NULL, "temporary task directory");
	char *ref = xasprintf("%s/ref.c", dir);
	write_file_atomic(ref, "int x;\n", 7, NULL);
	free(ref);

	struct task *t = load_text(BASE_OK "}", NULL, err);
	CHECK(t && t->aIn[0].shape[0] == 8 && t->nIn == 1 && t->nOut == 1,
	      "a minimal task loads (%s)", t ? "" : err);
	CHECK(t && t->aTol[KL_F32].atol == 1e-5 && t->aTol[KL_F32].rel_l2 == 1e-4 &&
	          t->aTol[KL_F16].rtol == 1e-2,
	      "default tolerances per dtype");
	task_free(t);
	t = load_text(BASE_OK ", \"tolerance\": {\"f32\": {\"atol\": 0.5}}}", "cuda", err);
	CHECK(t && t->aIn[0].shape[0] == 1024 && t->aTol[KL_F32].atol == 0.5 &&
	          t->aTol[KL_F32].rtol == 1e-4,
	      "--shapes picks a set; a tolerance override keeps the other defaults");
	task_free(t);

	t = load_text(BASE_OK ", \"compute\": \"bf16\"}", NULL, err);
	CHECK(t && t->compute == TASK_BF16 && !strcmp(t->zComputeFrom, "task.json"),
	      "\"compute\": \"bf16\" is taken from task.json (%s)", t ? t->zComputeFrom : err);
	task_free(t);
	expect_error(BASE_OK ", \"compute\": \"half\"}",
	             "compute: expected one of \"fp32\", \"tf32\", \"fp16\", \"bf16\", \"fp8\", "
	             "\"int8\" (the type its products run in), got \"half\"",
	             "an unknown compute type");
	expect_error(BASE_OK ", \"compute\": 16}", "compute: expected one of",
	             "a number as compute");
	expect_error("{\"name\": ", "not valid JSON", "truncated JSON");
	expect_error("[1, 2]", "top level", "not an object");
	expect_error("{\"inputs\": []}", "name", "missing name");
	expect_error("{\"name\": \"t\", \"outputs\": [], \"reference\": {\"host\": \"ref.c\"}}",
	             "outputs", "no outputs");
	expect_error("{\"name\": \"t\", \"outputs\": [{\"name\": \"y\", \"dtype\": \"f31\", "
	             "\"shape\": [4]}], "
	             "\"reference\": {\"host\": \"ref.c\"}}",
	             "outputs[0].dtype", "unknown dtype");
	expect_error("{\"name\": \"t\", \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", "
	             "\"shape\": [0]}], "
	             "\"reference\": {\"host\": \"ref.c\"}}",
	             "outputs[0].shape[0]", "zero extent");
	expect_error("{\"name\": \"t\", \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", "
	             "\"shape\": [\"m\"]}], "
	             "\"shapes\": {\"host\": {\"n\": 4}}, \"reference\": {\"host\": \"ref.c\"}}",
	             "dimension 'm' is not given", "undefined dimension");
	expect_error("{\"name\": \"t\", \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", "
	             "\"shape\": [4]}], "
	             "\"reference\": {\"host\": \"missing.c\"}}",
	             "reference.host", "missing reference file");
	expect_error("{\"name\": \"t\", \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", "
	             "\"shape\": [4]}], "
	             "\"reference\": {}}",
	             "reference", "no reference at all");
	t = load_text(BASE_OK ", \"tolerance\": \"kernelbench\"}", NULL, err);
	CHECK(t && t->aTol[KL_F32].atol == 1e-2 && t->aTol[KL_F16].rtol == 1e-2 &&
	          isinf(t->aTol[KL_BF16].rel_l2) && t->aTol[KL_I32].atol == 0 &&
	          !strcmp(t->zTolFrom, "kernelbench"),
	      "\"tolerance\": \"kernelbench\" gives atol = rtol = 1e-2 to every float dtype");
	if (t) {
		task_override_tol(t, 1e-5, -1, -1);
		CHECK(t->aTol[KL_F32].atol == 1e-5 && t->aTol[KL_F32].rtol == 1e-2 &&
		          t->aTol[KL_I8].atol == 0 && !strcmp(t->zTolFrom, "flags"),
		      "--atol overrides the float atol only, and says so");
	}
	task_free(t);
	t = load_text("{\"name\": \"t\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", "
	              "\"shape\": [8]}], \"outputs\": [{\"name\": \"s\", \"dtype\": \"f32\", "
	              "\"shape\": []}], \"reference\": {\"host\": \"ref.c\"}}",
	              NULL, err);
	CHECK(t && t->aOut[0].ndim == 0 && task_numel(&t->aOut[0]) == 1,
	      "a scalar output (\"shape\": []) has ndim 0 and one element (%s)", t ? "" : err);
	task_free(t);
	expect_error(BASE_OK ", \"tolerance\": \"loose\"}", "expected \"kernelbench\" or an object",
	             "an unknown tolerance preset");
	expect_error(BASE_OK ", \"tolerance\": {\"f32\": {\"atol\": -1}}}", "tolerance.f32.atol",
	             "negative tolerance");
	expect_error(BASE_OK ", \"tolerance\": {\"f32\": {\"eps\": 1}}}", "unknown key",
	             "unknown tolerance key");
	expect_error(BASE_OK ", \"seeds\": {\"host\": [\"nope.c\"]}}", "seeds.host[0]",
	             "missing seed file");
	expect_error(BASE_OK
	             ", \"seeds\": {\"cuda\": [{\"file\": \"ref.c\", \"needs\": \"mkl\"}]}}",
	             "seeds.cuda[0].needs: expected \"cutlass\"",
	             "a seed needing what kloop cannot look for");
	expect_error(BASE_OK ", \"seeds\": {\"cuda\": [{\"needs\": \"cutlass\"}]}}",
	             "seeds.cuda[0]: expected {\"file\"", "a seed object without its file");
	{
		struct task *t = load_text(BASE_OK ", \"seeds\": {\"cuda\": [\"ref.c\", {\"file\": "
		                                   "\"ref.c\", \"needs\": \"cutlass\"}]}}",
		                           NULL, err);
		CHECK(t && t->seeds.nCuda == 2 && !t->seeds.azCudaNeeds[0] &&
		          t->seeds.azCudaNeeds[1] && !strcmp(t->seeds.azCudaNeeds[1], "cutlass"),
		      "a seed may need CUTLASS ({\"file\", \"needs\": \"cutlass\"}), beside one "
		      "that needs "
		      "nothing (%s)",
		      t ? "" : err);
		task_free(t);
	}
	expect_error(
	    "{\"name\": \"t\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [4]},"
	    "{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [4]}], \"outputs\": [{\"name\": "
	    "\"y\", "
	    "\"dtype\": \"f32\", \"shape\": [4]}], \"reference\": {\"host\": \"ref.c\"}}",
	    "used twice", "duplicate tensor names");
	/* numbers: every one range-checked, element counts in checked 64-bit arithmetic */
#define ONE_OUT(SHAPE, DT)                                                                         \
	"{\"name\": \"t\", \"outputs\": [{\"name\": \"y\", \"dtype\": \"" DT                       \
	"\", \"shape\": " SHAPE "}], \"reference\": {\"host\": \"ref.c\"}}"
	/* 2^32 x 2^32 = 2^64 elements: wrapped to 0 before, so a no-op was "correct" */
	expect_error(ONE_OUT("[4294967296, 4294967296]", "f32"), "overflows 64 bits",
	             "[2^32, 2^32] is refused, not wrapped to 0 elements");
	expect_error(ONE_OUT("[4294967297, 4294967296]", "f32"),
	             "outputs[0]: shape [4294967297, 4294967296]",
	             "[2^32+1, 2^32] is refused with the shape in the message");
	/* 2^31 x 2^31 f32: the count fits in 64 bits, the bytes (x4) do not */
	expect_error(ONE_OUT("[2147483648, 2147483648]", "f32"),
	             "4611686018427387904 elements of 4 bytes are over the limit",
	             "an element count whose byte size overflows is refused");
	/* 65536 x 65536 f32 = 16 GiB + 0: over the limit without overflowing */
	expect_error(ONE_OUT("[65536, 65536, 2]", "f32"), "are over the limit of 17179869184 bytes",
	             "a tensor over 16 GiB names its element count and the limit");
	t = load_text(ONE_OUT("[65536, 65536]", "f32"), NULL, err);
	int64_t nb = 0;
	CHECK(t && task_bytes_checked(&t->aOut[0], &nb) == 0 && nb == ((int64_t)16 << 30),
	      "exactly 16 GiB loads (%s)", t ? "" : err);
	task_free(t);
	struct task_tensor big = {
	    .dtype = KL_F32, .ndim = 2, .shape = {(int64_t)1 << 32, (int64_t)1 << 32}};
	int64_t n64 = 0;
	CHECK(task_numel_checked(&big, &n64) < 0 && task_numel(&big) == INT64_MAX,
	      "task_numel of [2^32, 2^32] saturates instead of wrapping to 0");
	expect_error(ONE_OUT("[1e300]", "f32"),
	             "outputs[0].shape[0]: 1e+300 is not a positive integer",
	             "an absurd extent (1e300) is refused before any conversion");
	expect_error(ONE_OUT("[1e999]", "f32"),
	             "outputs[0].shape[0]: inf is not a positive integer",
	             "an extent that parses as inf (1e999) is refused");
	expect_error(ONE_OUT("[-4]", "f32"), "outputs[0].shape[0]: -4 is not a positive integer",
	             "a negative extent is refused");
	expect_error(ONE_OUT("[2.5]", "f32"), "2.5 is not a positive integer",
	             "a fractional extent");
	expect_error(BASE_OK ", \"tolerance\": {\"f32\": {\"rtol\": 1e999}}}", "tolerance.f32.rtol",
	             "an infinite tolerance is refused");
	expect_error(BASE_OK ", \"tolerance\": {\"f32\": {\"atol\": 1e40}}}", "at most 1e+30",
	             "an absurd tolerance is refused");
	expect_error(BASE_OK ", \"tolerence\": {\"f32\": {\"atol\": 1e-3}}}",
	             "'tolerence': unknown key (expected name, description",
	             "a misspelt top-level key is refused, not ignored");
	expect_error(
	    "{\"name\": \"t\", \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [4], "
	    "\"init\": {\"dist\": \"normal\", \"stdev\": 2}}], \"reference\": {\"host\": "
	    "\"ref.c\"}}",
	    "outputs[0].init: 'stdev': unknown key (expected dist, mean, std",
	    "a misspelt init key is refused");
	expect_error(
	    "{\"name\": \"t\", \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [4], "
	    "\"dtyp\": \"f16\"}], \"reference\": {\"host\": \"ref.c\"}}",
	    "outputs[0]: 'dtyp': unknown key", "a misspelt tensor key is refused");
	expect_error("{\"name\": \"t\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", "
	             "\"shape\": [\"n\"]}], \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", "
	             "\"shape\": [\"n\"]}], \"shapes\": {\"host\": {\"n\": 4, \"n\": 8}}, "
	             "\"reference\": {\"host\": \"ref.c\"}}",
	             "shapes.host: 'n' is given twice",
	             "a key given twice is refused, not the first taken silently");
	expect_error(BASE_OK ", \"name\": \"other\"}", "task.json: 'name' is given twice",
	             "... at the top level too");
	expect_error("{\"name\": \"t\", \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", "
	             "\"shape\": [4], \"dtype\": \"f16\"}], \"reference\": {\"host\": \"ref.c\"}}",
	             "outputs[0]: 'dtype' is given twice",
	             "... and in a tensor, named by its path");
	expect_error(BASE_OK "}\n garbage", "task.json:2: text after the JSON object",
	             "text after the object is refused, with its line");
	expect_error("{\"name\": \"t\", \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", "
	             "\"shape\": [4]}],\n\"reference\": {\"host\": \"ref.c\\u0000/../x.c\"}}",
	             "task.json:2: a string holds \\u0000 (NUL)",
	             "a NUL escape in a file name is refused, with its line (cJSON would end "
	             "the name there)");
	struct task *tb = load_text(BASE_OK ", \"description\": \"a\\\\u0000b\"}", NULL, err);
	CHECK(tb && !strcmp(tb->zDescription, "a\\u0000b"),
	      "... but an escaped backslash before u0000 is text, not a NUL (%s)",
	      tb ? tb->zDescription : err);
	task_free(tb);
	{
		struct task *t = load_text(BASE_OK ", \"_comment\": \"a note\"}\n\n", NULL, err);
		CHECK(t != NULL,
		      "a key starting with '_' is a note, and whitespace after the object "
		      "is fine (%s)",
		      t ? "" : err);
		task_free(t);
	}
	expect_error(
	    "{\"name\": \"t\", \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [4], "
	    "\"init\": {\"dist\": \"uniform\", \"lo\": -1e999, \"hi\": 1}}], "
	    "\"reference\": {\"host\": \"ref.c\"}}",
	    "outputs[0].init.lo: -inf is out of range", "an infinite init bound is refused");
	expect_error(
	    "{\"name\": \"t\", \"outputs\": [{\"name\": \"y\", \"dtype\": \"i32\", \"shape\": [4], "
	    "\"init\": {\"dist\": \"randint\", \"lo\": 0.5, \"hi\": 1e17}}], "
	    "\"reference\": {\"host\": \"ref.c\"}}",
	    "must be integers", "randint bounds must be integers within 2^53");
	expect_error(
	    "{\"name\": \"t\", \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": "
	    "[\"n\"]}], "
	    "\"shapes\": {\"host\": {\"n\": 1e999}}, \"reference\": {\"host\": \"ref.c\"}}",
	    "outputs[0].shape[0]: inf", "an infinite shape-set dimension is refused");

	/* paths: inside the task directory, regular files */
	expect_error(BASE_OK ", \"seeds\": {\"host\": [\"../../etc/passwd\"]}}",
	             "seeds.host[0]: '../../etc/passwd' steps out",
	             "a seed path with '..' is refused");
	expect_error("{\"name\": \"t\", \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", "
	             "\"shape\": [4]}], "
	             "\"reference\": {\"host\": \"/etc/passwd\"}}",
	             "reference.host: '/etc/passwd' is an absolute path",
	             "an absolute reference path is refused");
	expect_error(BASE_OK ", \"seeds\": {\"host\": \"sub/../../x.c\"}}",
	             "seeds.host: 'sub/../../x.c' steps out", "'..' inside a path is refused too");
	char *link = xasprintf("%s/out.c", dir);
	CHECK(symlink("/etc/hostname", link) == 0, "a symlink out of the task directory");
	expect_error(BASE_OK ", \"seeds\": {\"host\": [\"out.c\"]}}",
	             "leads out of the task directory",
	             "a seed symlinked out of the task directory is refused");
	unlink(link);
	CHECK(mkfifo(link, 0600) == 0, "a FIFO in the task directory");
	expect_error(BASE_OK ", \"seeds\": {\"host\": [\"out.c\"]}}",
	             "is a FIFO (named pipe), not a regular file",
	             "a seed that is a FIFO is refused (without blocking)");
	unlink(link);
	CHECK(mkdir(link, 0700) == 0, "a directory in the task directory");
	expect_error(BASE_OK ", \"seeds\": {\"host\": [\"out.c\"]}}", "is a directory",
	             "a seed that is a directory is refused");
	rmdir(link);
	free(link);
	char *tj = xasprintf("%s/fifo", dir);
	CHECK(mkdir(tj, 0700) == 0, "a task directory whose task.json is a FIFO");
	char *tjf = xasprintf("%s/task.json", tj);
	CHECK(mkfifo(tjf, 0600) == 0, "mkfifo task.json");
	t = task_load(tj, "host", NULL, err);
	CHECK(!t && strstr(err, "task.json: is a FIFO"),
	      "a task.json that is a FIFO is refused, not read (%s)", err);
	unlink(tjf);
	free(tjf);
	free(tj);

	t = load_text(BASE_OK "}", "gpu", err);
	CHECK(!t && strstr(err, "no shape set named 'gpu'") && strstr(err, "host, cuda"),
	      "an unknown shape set lists the sets (%s)", err);
	char *missing = xasprintf("%s/nothing", dir);
	t = task_load(missing, "host", NULL, err);
	CHECK(!t && strstr(err, "cannot open"), "a missing task.json is reported (%s)", err);

	/* flops, and the cascade's small shapes */
	const char *fl = "{\"name\": \"mm\", \"inputs\": [{\"name\": \"a\", \"dtype\": "
	                 "\"f32\", \"shape\": [\"M\", \"K\"]}, {\"name\": \"b\", \"dtype\": "
	                 "\"f32\", \"shape\": [\"K\", 3]}], \"outputs\": [{\"name\": \"c\", "
	                 "\"dtype\": \"f32\", \"shape\": [\"M\", 3]}], \"shapes\": {\"host\": "
	                 "{\"M\": 1000, \"K\": 4096}}, \"flops\": %s, \"reference\": "
	                 "{\"host\": \"ref.c\"}}";
	char body[1024];
	snprintf(body, sizeof body, fl, "\"2*M*K*3 + M\"");
	t = load_text(body, NULL, err);
	CHECK(t && t->flops == 2.0 * 1000 * 4096 * 3 + 1000, "flops \"2*M*K*3 + M\" evaluated (%s)",
	      t ? "" : err);
	char desc[128];
	CHECK(t && task_shrink(t, desc, sizeof desc) == 4 && t->aIn[0].shape[0] == 128 &&
	          t->aIn[0].shape[1] == 512 && t->aIn[1].shape[1] == 3 &&
	          t->aOut[0].shape[0] == 128 && !strcmp(desc, "M=128 K=512"),
	      "task_shrink: M 1000 -> 128 (a multiple of 8), K 4096 -> 512 in 4 extents, a literal "
	      "3 stays (%s)",
	      desc);
	task_free(t);
	snprintf(body, sizeof body, fl, "\"2*M*N\"");
	expect_error(body, "flops: 'N' is not a dimension of shape set 'host'",
	             "a flops expression naming an unknown dimension");
	snprintf(body, sizeof body, fl, "\"2*M*/K\"");
	expect_error(body, "flops: expected a number or a dimension name at '/K'",
	             "a flops expression with an unknown operator");
	snprintf(body, sizeof body, fl, "-5");
	expect_error(body, "flops: expected a positive number", "a negative flops");
	free(missing);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(system(cmd) == 0, "cleanup");
	return check_done();
}
