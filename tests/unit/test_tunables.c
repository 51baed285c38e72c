/*
 * test_tunables.c - discovery of the integer constants a sweep may change
 * (#defines, const/constexpr, enumerators, template defaults, launch
 * template arguments, literal launch configurations, dim3 sizes,
 * __launch_bounds__) and rewriting them into a source that still parses.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "slurp.h"
#include "syntax.h"
#include "tunables.h"
#include "util.h"

#define FIX "tests/fixtures/cuda_src/"

static void find_in(const char *src, size_t n, struct tunable_list *l)
{
	struct syntax_doc *d = syntax_parse(src, n, NULL);
	char err[KL_ERRLEN] = "";
	if (tunables_find(d, l, err) < 0)
		printf("# %s\n", err);
	syntax_free(d);
}

#define HAS(l, nm, val, kd, ln)                                                                    \
	do {                                                                                       \
		const struct tunable *t_ = tunables_get(l, nm);                                    \
		CHECK(t_ && t_->value == (val) && t_->kind == (kd) && t_->line == (ln),            \
		      "%s = %lld (%s) on line %d (got %lld %s line %u)", nm, (long long)(val),     \
		      tunable_kind_name(kd), ln, t_ ? t_->value : 0,                               \
		      t_ ? tunable_kind_name(t_->kind) : "none", t_ ? t_->line : 0);               \
	} while (0)

static void test_parse_int(void)
{
	long long v;
	size_t s, e;
	CHECK(tunables_parse_int("128", 3, &v, &s, &e) == 0 && v == 128 && s == 0 && e == 3, "128");
	CHECK(tunables_parse_int("0x80u", 5, &v, &s, &e) == 0 && v == 128 && e == 5,
	      "0x80u is 128");
	CHECK(tunables_parse_int("-4", 2, &v, &s, &e) == 0 && v == -4, "-4");
	CHECK(tunables_parse_int("010", 3, &v, &s, &e) == 0 && v == 8, "010 is octal 8");
	CHECK(tunables_parse_int("0b101", 5, &v, &s, &e) == 0 && v == 5, "0b101 is 5");
	CHECK(tunables_parse_int("1'024", 5, &v, &s, &e) == 0 && v == 1024, "1'024 is 1024");
	const char *p = " (16) // tile edge";
	CHECK(tunables_parse_int(p, strlen(p), &v, &s, &e) == 0 && v == 16 && s == 2 && e == 4,
	      "a #define value in parentheses with a comment: 16 at 2..4");
	p = "64 /* rows */ ";
	CHECK(tunables_parse_int(p, strlen(p), &v, &s, &e) == 0 && v == 64,
	      "a block comment after it");
	const char *no[] = {"1.0f", "1e5", "BLOCK / 32",          "(16",  "16)",  "0x",
	                    "abc",  "",    "9223372036854775808", "12ab", "0x1p3"};
	for (size_t i = 0; i < sizeof no / sizeof *no; i++)
		CHECK(tunables_parse_int(no[i], strlen(no[i]), &v, &s, &e) == -1,
		      "`%s` is not an integer", no[i]);
	CHECK(tunables_parse_int("-9223372036854775808", 20, &v, &s, &e) == 0 && v == LLONG_MIN,
	      "the most negative value fits");
}

static void test_find(void)
{
	size_t n;
	char *src = slurp(FIX "gemm_tiled.cu", &n);
	struct tunable_list l;
	find_in(src, n, &l);
	HAS(&l, "TILE_K", 8, TUNABLE_DEFINE, 5);
	HAS(&l, "THREADS", 256, TUNABLE_DEFINE, 6);
	HAS(&l, "WARP_SIZE", 32, TUNABLE_CONSTEXPR, 9);
	HAS(&l, "MIN_BLOCKS", 2, TUNABLE_CONST, 10);
	HAS(&l, "gemm_tiled.t0", 64, TUNABLE_TEMPLATE_ARG, 64);
	HAS(&l, "gemm_tiled.t1", 64, TUNABLE_TEMPLATE_ARG, 64);
	CHECK(!tunables_get(&l, "ALPHA_SCALE"), "a float #define is not a tunable");
	CHECK(!tunables_get(&l, "gemm_tiled.t2"),
	      "a macro template argument is not a literal tunable");
	CHECK(!tunables_get(&l, "gemm_tiled.smem"), "a literal 0 smem is not listed");
	const struct tunable *t = tunables_get(&l, "gemm_tiled.t1");
	CHECK(t && t->column == 17 && !strncmp(src + t->start, "64", 2) && t->end - t->start == 2 &&
	          t->scope && !strcmp(t->scope, "gemm_tiled"),
	      "gemm_tiled.t1 points at its literal (column 17) and names the kernel");
	int sorted = 1;
	for (size_t i = 1; i < l.n; i++)
		sorted &= l.v[i - 1].start < l.v[i].start;
	CHECK(sorted, "tunables come in source order");
	tunables_free(&l);
	free(src);

	src = slurp(FIX "multi_launch.cu", &n);
	find_in(src, n, &l);
	HAS(&l, "ROWS_PER_BLOCK", 4, TUNABLE_DEFINE, 13);
	HAS(&l, "ln::kThreads", 128, TUNABLE_CONST, 18);
	HAS(&l, "ln::kSmemBytes", 4096, TUNABLE_CONST, 19);
	HAS(&l, "ln::row_var.block", 128, TUNABLE_LAUNCH_BLOCK, 76);
	HAS(&l, "ln::row_var.smem", 512, TUNABLE_LAUNCH_SMEM, 76);
	HAS(&l, "layernorm.block.x", 32, TUNABLE_DIM3, 78);
	CHECK(!tunables_get(&l, "CUDA_TRY") && !tunables_get(&l, "IDX"),
	      "function-like macros are not tunables");
	CHECK(!tunables_get(&l, "ln::row_mean.grid"), "a computed grid is not a literal tunable");
	tunables_free(&l);
	free(src);

	src = slurp(FIX "wmma_gemm.cu", &n);
	find_in(src, n, &l);
	HAS(&l, "WM", 16, TUNABLE_CONSTEXPR, 10);
	HAS(&l, "WARPS_PER_BLOCK", 4, TUNABLE_CONSTEXPR, 13);
	HAS(&l, "kl_run.block.x", 128, TUNABLE_DIM3, 57);
	HAS(&l, "kl_run.block.y", 1, TUNABLE_DIM3, 57);
	tunables_free(&l);
	free(src);

	src = slurp(FIX "inline_asm.cu", &n);
	find_in(src, n, &l);
	HAS(&l, "VEC", 4, TUNABLE_DEFINE, 5);
	HAS(&l, "kl_run.threads", 128, TUNABLE_CONST, 38);
	tunables_free(&l);
	free(src);

	src = slurp(FIX "lambda.cu", &n);
	find_in(src, n, &l);
	HAS(&l, "map_kernel.block", 256, TUNABLE_LAUNCH_BLOCK, 28);
	HAS(&l, "silu_kernel.block", 512, TUNABLE_LAUNCH_BLOCK, 31);
	tunables_free(&l);
	free(src);

	src = slurp(FIX "host_sum.c", &n);
	find_in(src, n, &l);
	HAS(&l, "BLOCK_ROWS", 8, TUNABLE_DEFINE, 5);
	HAS(&l, "UNROLL", 4, TUNABLE_ENUM, 6);
	tunables_free(&l);
	free(src);

	const char *more = "template <int BM = 64, typename T = float>\n"
	                   "__global__ void __launch_bounds__(256, 2) k(T *x) { }\n"
	                   "void h(float *p) {\n"
	                   "\tk<32><<<8, 256>>>(p);\n"
	                   "\tk<16><<<4, 128, 1024>>>(p);\n"
	                   "\tconst float scale = 2;\n"
	                   "\tint mutable_n = 5;\n"
	                   "\tstatic constexpr unsigned long big = 0x100ul;\n"
	                   "}\n"
	                   "#define TILE 16 // tile edge\n"
	                   "#define TILE 32\n";
	find_in(more, strlen(more), &l);
	HAS(&l, "k.BM", 64, TUNABLE_TEMPLATE_DEFAULT, 1);
	HAS(&l, "k.max_threads", 256, TUNABLE_LAUNCH_BOUNDS, 2);
	HAS(&l, "k.min_blocks", 2, TUNABLE_LAUNCH_BOUNDS, 2);
	HAS(&l, "k.t0", 32, TUNABLE_TEMPLATE_ARG, 4);
	HAS(&l, "k.grid", 8, TUNABLE_LAUNCH_GRID, 4);
	HAS(&l, "k.block", 256, TUNABLE_LAUNCH_BLOCK, 4);
	HAS(&l, "k#2.t0", 16, TUNABLE_TEMPLATE_ARG, 5);
	HAS(&l, "k#2.block", 128, TUNABLE_LAUNCH_BLOCK, 5);
	HAS(&l, "k#2.smem", 1024, TUNABLE_LAUNCH_SMEM, 5);
	HAS(&l, "h.big", 256, TUNABLE_CONSTEXPR, 8);
	HAS(&l, "TILE", 16, TUNABLE_DEFINE, 10);
	HAS(&l, "TILE#2", 32, TUNABLE_DEFINE, 11);
	CHECK(!tunables_get(&l, "h.scale") && !tunables_get(&l, "h.mutable_n"),
	      "a float constant and a mutable variable are not tunables");
	cJSON *j = tunables_json(&l);
	cJSON *first = cJSON_GetArrayItem(j, 0);
	CHECK(cJSON_GetArraySize(j) == (int)l.n && first &&
	          !strcmp(cJSON_GetObjectItem(first, "name")->valuestring, "k.BM") &&
	          cJSON_GetObjectItem(first, "value")->valuedouble == 64 &&
	          !strcmp(cJSON_GetObjectItem(first, "kind")->valuestring, "template_default") &&
	          cJSON_GetObjectItem(first, "line")->valuedouble == 1,
	      "JSON: name, value, kind, line");
	cJSON_Delete(j);
	tunables_free(&l);

	find_in("", 0, &l);
	CHECK(l.n == 0, "an empty source has no tunables");
	tunables_free(&l);
}

static void test_rewrite(void)
{
	size_t n;
	char *src = slurp(FIX "gemm_tiled.cu", &n);
	char err[KL_ERRLEN] = "";
	size_t len;
	struct tunable_set one[] = {{"TILE_K", 16}};
	char *out = tunables_rewrite(src, n, one, 1, &len, err);
	CHECK(out && strstr(out, "#define TILE_K 16\n") && len == n + 1,
	      "TILE_K rewritten to 16 (%s)", err);
	CHECK(out && syntax_check(out, len, NULL) == 0, "the result parses");
	free(out);

	struct tunable_set several[] = {
	    {"THREADS", 128}, {"gemm_tiled.t0", 128}, {"gemm_tiled.t1", 32}, {"MIN_BLOCKS", 4}};
	out = tunables_rewrite(src, n, several, 4, &len, err);
	CHECK(out && strstr(out, "#define THREADS 128") &&
	          strstr(out, "gemm_tiled<128, 32, TILE_K><<<") && strstr(out, "MIN_BLOCKS = 4;"),
	      "four tunables at once (%s)", err);
	CHECK(out && strstr(out, "__shared__ float As[BK][BM];"), "the rest is untouched");
	free(out);

	struct tunable_set unknown[] = {{"TILE_M", 64}};
	out = tunables_rewrite(src, n, unknown, 1, &len, err);
	CHECK(!out && strstr(err, "no tunable named `TILE_M`") && strstr(err, "TILE_K"),
	      "an unknown tunable is an error listing the known ones: %s", err);
	free(src);

	src = slurp(FIX "multi_launch.cu", &n);
	struct tunable_set neg[] = {{"ln::row_var.block", -32}};
	out = tunables_rewrite(src, n, neg, 1, &len, err);
	CHECK(!out && strstr(err, "must not be negative"), "a negative block size is refused: %s",
	      err);
	struct tunable_set zero[] = {{"layernorm.block.x", 0}};
	out = tunables_rewrite(src, n, zero, 1, &len, err);
	CHECK(!out && strstr(err, "must be positive"), "a zero dim3 size is refused: %s", err);
	struct tunable_set cfg[] = {
	    {"ln::row_var.block", 256}, {"ln::row_var.smem", 1024}, {"layernorm.block.x", 64}};
	out = tunables_rewrite(src, n, cfg, 3, &len, err);
	CHECK(out && strstr(out, "ln::row_var<<<rows, 256, 1024, s>>>") &&
	          strstr(out, "dim3 block(64, ROWS_PER_BLOCK)"),
	      "launch configuration and dim3 rewritten (%s)", err);
	free(out);
	free(src);

	const char *hex =
	    "#define MASK 0xFFu // lanes\nconstexpr unsigned W = 010;\nconst int D = -1;\n";
	struct tunable_set hs[] = {{"MASK", 4095}, {"W", 16}, {"D", -3}};
	out = tunables_rewrite(hex, strlen(hex), hs, 3, &len, err);
	CHECK(out && !strcmp(out, "#define MASK 0xFFFu // lanes\nconstexpr unsigned W = "
	                          "020;\nconst int D = -3;\n"),
	      "base, case, suffix and comment are kept: %s", out ? out : err);
	free(out);
	struct tunable_set uneg[] = {{"MASK", -1}};
	out = tunables_rewrite(hex, strlen(hex), uneg, 1, &len, err);
	CHECK(!out && strstr(err, "must not be negative"), "an unsigned literal refuses -1: %s",
	      err);

	out = tunables_rewrite("int x;\0", 7, one, 1, &len, err);
	CHECK(!out && strstr(err, "NUL"), "a binary source is refused: %s", err);
}

int main(void)
{
	test_parse_int();
	test_find();
	test_rewrite();
	syntax_shutdown();
	return check_done();
}
