/*
 * test_outline.c - the outline of the fixture kernels: kernels with
 * templates and __launch_bounds__, device and host functions, extern "C",
 * namespaces, members, launch sites with their configurations and callers,
 * partial outlines of sources with errors, and the JSON form.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "outline.h"
#include "slurp.h"
#include "util.h"

#define FIX "tests/fixtures/cuda_src/"

static struct syntax_doc *load(const char *path)
{
	size_t n;
	char *src = slurp(path, &n), err[KL_ERRLEN];
	struct syntax_doc *d = syntax_parse(src, n, err);
	free(src);
	return d;
}

static const struct outline_func *func(const struct outline *o, const char *qualname)
{
	for (size_t i = 0; i < o->n_funcs; i++)
		if (!strcmp(o->funcs[i].qualname, qualname))
			return &o->funcs[i];
	return NULL;
}

static size_t count(const struct outline *o, enum outline_kind k)
{
	size_t n = 0;
	for (size_t i = 0; i < o->n_funcs; i++)
		n += o->funcs[i].kind == k;
	return n;
}

static void test_gemm(void)
{
	struct syntax_doc *d = load(FIX "gemm_tiled.cu");
	struct outline o;
	CHECK(outline_build(d, &o, NULL) == 0, "gemm_tiled.cu outlines");
	CHECK(count(&o, OUTLINE_KERNEL) == 1 && count(&o, OUTLINE_DEVICE) == 1 &&
	          count(&o, OUTLINE_HOST) == 1,
	      "one kernel, one device function, one host function");
	const struct outline_func *k = func(&o, "gemm_tiled");
	CHECK(k && k->kind == OUTLINE_KERNEL, "gemm_tiled is a kernel");
	if (k) {
		CHECK(k->line == 12 && k->end_line == 50,
		      "it spans lines 12-50, template<> included (%u-%u)", k->line, k->end_line);
		CHECK(k->name_line == 14, "its name is on line 14 (%u)", k->name_line);
		CHECK(k->template_params && !strcmp(k->template_params, "<int BM, int BN, int BK>"),
		      "template parameters <int BM, int BN, int BK>");
		CHECK(k->launch_bounds && !strcmp(k->launch_bounds, "THREADS, MIN_BLOCKS"),
		      "__launch_bounds__(THREADS, MIN_BLOCKS)");
		CHECK(k->n_params == 6 &&
		          !strcmp(k->params[0].text, "const float *__restrict__ A") &&
		          !strcmp(k->params[0].name, "A") && !strcmp(k->params[5].name, "K"),
		      "six parameters, A .. K, with their declarations");
		CHECK(!strncmp(d->src + k->item_start, "template <int BM", 16) &&
		          !strncmp(d->src + k->def_start, "__global__", 10) &&
		          d->src[k->body_start] == '{' && d->src[k->item_end - 1] == '}',
		      "byte ranges: item from template, definition from __global__, the body in "
		      "braces");
	}
	const struct outline_func *cd = func(&o, "ceil_div");
	CHECK(cd && cd->kind == OUTLINE_DEVICE && !cd->host_device && cd->line == 52,
	      "ceil_div is a device function on line 52");
	const struct outline_func *run = func(&o, "kl_run");
	CHECK(run && run->kind == OUTLINE_HOST && run->extern_c && run->wrapped_extern_c &&
	          run->line == 57 && run->end_line == 67,
	      "kl_run is an extern \"C\" host function, lines 57-67");
	CHECK(run && !strncmp(d->src + run->item_start, "extern \"C\"", 10),
	      "its item includes the extern \"C\"");

	CHECK(o.n_launches == 1, "one launch");
	if (o.n_launches) {
		const struct outline_launch *l = &o.launches[0];
		CHECK(!strcmp(l->kernel, "gemm_tiled") && l->template_args &&
		          !strcmp(l->template_args, "<64, 64, TILE_K>"),
		      "it launches gemm_tiled<64, 64, TILE_K>");
		CHECK(l->n_config == 4 && !strcmp(l->config[0], "grid") &&
		          !strcmp(l->config[1], "block") && !strcmp(l->config[2], "0") &&
		          !strcmp(l->config[3], "(cudaStream_t)stream"),
		      "with <<<grid, block, 0, (cudaStream_t)stream>>>");
		CHECK(l->line == 64 && l->column == 2 && l->caller && !strcmp(l->caller, "kl_run"),
		      "at 64:2 in kl_run (%u:%u)", l->line, l->column);
	}
	CHECK(o.n_errors == 0 && o.n_errors_total == 0, "no errors");
	outline_free(&o);
	syntax_free(d);
}

static void test_shapes(void)
{
	struct syntax_doc *d = load(FIX "softmax_coop.cu");
	struct outline o;
	outline_build(d, &o, NULL);
	const struct outline_func *k = func(&o, "softmax_rows");
	CHECK(k && k->kind == OUTLINE_KERNEL && k->launch_bounds &&
	          !strcmp(k->launch_bounds, "BLOCK") && k->line == 29 && k->end_line == 60,
	      "softmax_rows: a kernel with __launch_bounds__(BLOCK) on lines 29-60");
	CHECK(func(&o, "warp_max") && func(&o, "warp_sum") && count(&o, OUTLINE_DEVICE) == 2,
	      "two warp-shuffle device functions");
	CHECK(o.n_launches == 2 && !strcmp(o.launches[0].kernel, "softmax_rows") &&
	          !strcmp(o.launches[1].kernel, "scale_rows"),
	      "two launches, in order");
	CHECK(o.n_launches == 2 && !strcmp(o.launches[1].config[0], "(n + 255) / 256") &&
	          !strcmp(o.launches[1].config[1], "256") && o.launches[1].line == 75,
	      "scale_rows<<<(n + 255) / 256, 256, 0, s>>> on line 75");
	outline_free(&o);
	syntax_free(d);

	d = load(FIX "multi_launch.cu");
	outline_build(d, &o, NULL);
	CHECK(count(&o, OUTLINE_KERNEL) == 3, "multi_launch: three kernels");
	const struct outline_func *n = func(&o, "ln::normalize");
	CHECK(n && !strcmp(n->name, "normalize") && n->line == 58,
	      "normalize, under #if in namespace ln, is ln::normalize on line 58");
	CHECK(func(&o, "ln::block_reduce") && func(&o, "layernorm") && func(&o, "kl_run"),
	      "the device and host functions are there");
	CHECK(o.n_launches == 3, "three launches (%zu)", o.n_launches);
	if (o.n_launches == 3) {
		CHECK(!strcmp(o.launches[0].kernel, "ln::row_mean") &&
		          !strcmp(o.launches[0].config[2], "ln::kThreads * sizeof(float)"),
		      "ln::row_mean with a computed smem size");
		CHECK(o.launches[2].n_config == 2 && !o.launches[2].config[2] &&
		          !strcmp(o.launches[2].config[1], "block"),
		      "ln::normalize<<<grid, block>>> has no smem or stream");
		CHECK(!strcmp(o.launches[2].caller, "layernorm"), "launched from layernorm");
	}
	CHECK(outline_find(&o, "row_var") == func(&o, "ln::row_var"), "row_var finds ln::row_var");
	CHECK(outline_find(&o, "ln::row_var") != NULL, "so does the qualified name");
	CHECK(outline_find(&o, "nothere") == NULL, "a name that is not there finds nothing");
	outline_free(&o);
	syntax_free(d);

	d = load(FIX "lambda.cu");
	outline_build(d, &o, NULL);
	k = func(&o, "map_kernel");
	CHECK(k && k->template_params && !strcmp(k->template_params, "<typename F>"),
	      "map_kernel is a template kernel");
	const struct outline_func *m = func(&o, "Relu::operator()");
	CHECK(m && m->member && m->kind == OUTLINE_DEVICE, "Relu::operator() is a device member");
	CHECK(o.n_launches == 2 && !strcmp(o.launches[0].caller, "launch_all") &&
	          !strcmp(o.launches[0].config[0], "blocks(n, 256)"),
	      "a launch inside a lambda is reported with its enclosing function");
	outline_free(&o);
	syntax_free(d);

	d = load(FIX "wmma_gemm.cu");
	outline_build(d, &o, NULL);
	CHECK(func(&o, "wmma_gemm") && func(&o, "bias_half2") && count(&o, OUTLINE_KERNEL) == 2,
	      "wmma_gemm.cu: the WMMA kernel and the half2 kernel");
	CHECK(func(&o, "mma_m16n8k16") && func(&o, "mma_m16n8k16")->kind == OUTLINE_DEVICE,
	      "the inline-PTX mma helper is a device function");
	outline_free(&o);
	syntax_free(d);

	const char *hd = "__host__ __device__ inline float sq(float x) { return x * x; }\n"
	                 "extern \"C\" {\n__global__ void k2(float *p) { p[0] = sq(p[0]); }\n}\n";
	d = syntax_parse(hd, strlen(hd), NULL);
	outline_build(d, &o, NULL);
	CHECK(o.n_funcs == 2 && o.funcs[0].host_device && o.funcs[0].kind == OUTLINE_DEVICE,
	      "__host__ __device__ is a device function that also runs on the host");
	CHECK(o.n_funcs == 2 && o.funcs[1].extern_c && !o.funcs[1].wrapped_extern_c,
	      "a kernel in an extern \"C\" { } block is extern C, not wrapped");
	outline_free(&o);
	syntax_free(d);
}

static void test_partial(void)
{
	struct syntax_doc *d = load(FIX "device_lambda.cu");
	struct outline o;
	outline_build(d, &o, NULL);
	CHECK(func(&o, "apply") && func(&o, "twice") && func(&o, "square"),
	      "around a syntax error, all three functions are still listed");
	CHECK(o.n_launches == 1 && !strcmp(o.launches[0].kernel, "apply") &&
	          !strcmp(o.launches[0].config[1], "128"),
	      "and the launch of apply");
	CHECK(o.n_errors == 1 && o.errors[0].line == 16, "the error is listed, line 16");
	outline_free(&o);
	syntax_free(d);

	const char *cut =
	    "__global__ void a(float *x) { x[0] = 1; }\n__global__ void b(float *x) {\n"
	    "\tx[0] = 2;\n";
	d = syntax_parse(cut, strlen(cut), NULL);
	outline_build(d, &o, NULL);
	CHECK(func(&o, "a") && o.n_errors_total >= 1, "a truncated file keeps its complete kernel");
	outline_free(&o);
	syntax_free(d);

	d = syntax_parse("", 0, NULL);
	outline_build(d, &o, NULL);
	CHECK(o.n_funcs == 0 && o.n_launches == 0 && o.n_errors == 0,
	      "an empty source: empty outline");
	outline_free(&o);
	syntax_free(d);

	/* many errors: only the first OUTLINE_MAX_ERRORS are listed */
	strbuf sb = STRBUF_INIT;
	for (int i = 0; i < 50; i++)
		sb_addf(&sb, "int v%d = ;\n", i);
	d = syntax_parse(sb.buf, sb.len, NULL);
	outline_build(d, &o, NULL);
	CHECK(o.n_errors == OUTLINE_MAX_ERRORS && o.n_errors_total == 50,
	      "50 errors: %d listed, all counted (%zu)", OUTLINE_MAX_ERRORS, o.n_errors_total);
	outline_free(&o);
	syntax_free(d);
	sb_free(&sb);
}

static void test_json(void)
{
	struct syntax_doc *d = load(FIX "gemm_tiled.cu");
	struct outline o;
	outline_build(d, &o, NULL);
	cJSON *j = outline_json(&o);
	cJSON *k = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "kernels"), 0);
	CHECK(k && !strcmp(cJSON_GetObjectItem(k, "name")->valuestring, "gemm_tiled") &&
	          cJSON_GetObjectItem(k, "line")->valuedouble == 12,
	      "JSON kernels[0] is gemm_tiled at line 12");
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(j, "device_functions")) == 1 &&
	          cJSON_GetArraySize(cJSON_GetObjectItem(j, "host_functions")) == 1,
	      "device_functions and host_functions arrays");
	cJSON *l = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "launches"), 0);
	cJSON *cfg = l ? cJSON_GetObjectItem(l, "config") : NULL;
	CHECK(cfg && !strcmp(cJSON_GetObjectItem(cfg, "grid")->valuestring, "grid") &&
	          !strcmp(cJSON_GetObjectItem(cfg, "smem")->valuestring, "0") &&
	          !strcmp(cJSON_GetObjectItem(l, "kernel")->valuestring, "gemm_tiled") &&
	          cJSON_GetObjectItem(l, "line")->valuedouble == 64,
	      "JSON launches[0]: gemm_tiled, line 64, config {grid, block, smem, stream}");
	CHECK(cJSON_IsArray(cJSON_GetObjectItem(j, "errors")) &&
	          cJSON_GetArraySize(cJSON_GetObjectItem(j, "errors")) == 0,
	      "an empty errors array");
	cJSON_Delete(j);
	outline_free(&o);
	syntax_free(d);

	const char *bad = "__global__ void \xff\xfe(float *x) { x[0] = ; }\n";
	d = syntax_parse(bad, strlen(bad), NULL);
	outline_build(d, &o, NULL);
	j = outline_json(&o);
	char *s = cJSON_PrintUnformatted(j);
	char *u = syntax_utf8(s);
	CHECK(!strcmp(s, u), "JSON of a source with invalid UTF-8 is valid UTF-8");
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(j, "errors")) >= 1, "and lists its errors");
	free(u);
	free(s);
	cJSON_Delete(j);
	outline_free(&o);
	syntax_free(d);
}

int main(void)
{
	test_gemm();
	test_shapes();
	test_partial();
	test_json();
	syntax_shutdown();
	return check_done();
}
