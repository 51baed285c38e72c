/*
 * test_cmd_outline.c - `kloop outline FILE [--json]` run in-process (the
 * command's file, cli/cmd.c and the flag table are compiled into this
 * test): the text and JSON outputs, exit statuses, and the "kloop: FILE:
 * ..." errors for files it refuses.
 */
#include <fcntl.h>
#include <unistd.h>

#include "cmd.c"
#include "cmd_outline.c"
#include "flags.c"

#include "check.h"

#define FIX "tests/fixtures/cuda_src/"

struct run {
	int rc;
	char *out; /* stdout */
	char *err; /* stderr */
};

static char *read_back(FILE *f)
{
	strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t k;
	rewind(f);
	while ((k = fread(buf, 1, sizeof buf, f)) > 0)
		sb_add(&sb, buf, k);
	fclose(f);
	if (!sb.buf)
		sb_grow(&sb, 0);
	return sb_detach(&sb);
}

/* run `kloop outline ARGS...` with stdout and stderr captured */
static struct run run(const char *a1, const char *a2)
{
	char *argv[4] = {"outline", (char *)a1, (char *)a2, NULL};
	int argc = a2 ? 3 : a1 ? 2 : 1;
	FILE *fo = tmpfile(), *fe = tmpfile();
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2);
	dup2(fileno(fo), 1);
	dup2(fileno(fe), 2);
	struct run r;
	r.rc = cmd_outline_entry.exec(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	r.out = read_back(fo);
	r.err = read_back(fe);
	size_t n = strlen(r.err);
	while (n && r.err[n - 1] == '\n')
		r.err[--n] = 0;
	return r;
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

static void test_text(void)
{
	struct run r = run(FIX "gemm_tiled.cu", NULL);
	CHECK(r.rc == 0, "outline of gemm_tiled.cu exits 0 (%d: %s)", r.rc, r.err);
	CHECK(strstr(r.out, "1 kernel, 1 device function, 1 host function, 1 launch, 6 tunables, "
	                    "0 syntax errors"),
	      "the summary line counts what it found");
	CHECK(strstr(r.out, "kernels\n  12-50     gemm_tiled<int BM, int BN, int BK>(const float "
	                    "*__restrict__ A,"),
	      "the kernel with its lines, template and parameters");
	CHECK(strstr(r.out, "__launch_bounds__(THREADS, MIN_BLOCKS)"), "and its launch bounds");
	CHECK(strstr(r.out, "launches\n  64        gemm_tiled<64, 64, TILE_K><<<grid, block, 0, "
	                    "(cudaStream_t)stream>>>  in kl_run"),
	      "the launch with its configuration and caller");
	CHECK(strstr(r.out, "  5         TILE_K = 8  (define)"), "the tunables with their lines");
	CHECK(strstr(r.out, "extern \"C\""), "kl_run is marked extern \"C\"");
	run_free(&r);
}

static void test_json(void)
{
	struct run r = run(FIX "multi_launch.cu", "--json");
	CHECK(r.rc == 0, "--json exits 0");
	cJSON *j = cJSON_Parse(r.out);
	CHECK(j != NULL, "and prints one JSON object");
	if (j) {
		cJSON *k = cJSON_GetObjectItem(j, "kernels");
		CHECK(
		    cJSON_GetArraySize(k) == 3 &&
		        !strcmp(cJSON_GetObjectItem(cJSON_GetArrayItem(k, 0), "name")->valuestring,
		                "row_mean") &&
		        cJSON_GetObjectItem(cJSON_GetArrayItem(k, 0), "line")->valuedouble == 33,
		    "kernels: row_mean at line 33 first of three");
		CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(j, "device_functions")) == 1,
		      "device_functions: block_reduce");
		cJSON *l = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "launches"), 1);
		CHECK(l && !strcmp(cJSON_GetObjectItem(l, "kernel")->valuestring, "ln::row_var") &&
		          cJSON_GetObjectItem(l, "line")->valuedouble == 76 &&
		          !strcmp(cJSON_GetObjectItem(cJSON_GetObjectItem(l, "config"), "block")
		                      ->valuestring,
		                  "128"),
		      "launches[1]: ln::row_var at line 76, block 128");
		cJSON *t = cJSON_GetObjectItem(j, "tunables");
		int found = 0;
		for (int i = 0; i < cJSON_GetArraySize(t); i++) {
			cJSON *x = cJSON_GetArrayItem(t, i);
			if (!strcmp(cJSON_GetObjectItem(x, "name")->valuestring,
			            "ROWS_PER_BLOCK") &&
			    cJSON_GetObjectItem(x, "value")->valuedouble == 4 &&
			    cJSON_GetObjectItem(x, "line")->valuedouble == 13)
				found = 1;
		}
		CHECK(found, "tunables: ROWS_PER_BLOCK = 4 at line 13");
		CHECK(cJSON_IsArray(cJSON_GetObjectItem(j, "errors")), "errors is an array");
		CHECK(!strcmp(cJSON_GetObjectItem(j, "file")->valuestring, FIX "multi_launch.cu"),
		      "file names the input");
	}
	cJSON_Delete(j);
	run_free(&r);

	r = run("--json", FIX "device_lambda.cu");
	j = cJSON_Parse(r.out);
	CHECK(r.rc == 0 && j, "a source with a syntax error still exits 0 (a partial outline)");
	cJSON *e = j ? cJSON_GetArrayItem(cJSON_GetObjectItem(j, "errors"), 0) : NULL;
	CHECK(e && cJSON_GetObjectItem(e, "line")->valuedouble == 16 &&
	          cJSON_GetArraySize(cJSON_GetObjectItem(j, "kernels")) == 1,
	      "with the error at line 16 and the kernel still listed");
	cJSON_Delete(j);
	run_free(&r);
}

static void test_refusals(void)
{
	char dir[] = "/tmp/kloop-outline-XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	char *empty = xasprintf("%s/empty.cu", dir), *bin = xasprintf("%s/blob.cu", dir),
	     *big = xasprintf("%s/big.cu", dir);
	write_file_atomic(empty, "", 0, NULL);
	char blob[256];
	for (int i = 0; i < 256; i++)
		blob[i] = (char)i;
	write_file_atomic(bin, blob, sizeof blob, NULL);
	size_t bn = 10u << 20;
	char *bigtext = xmalloc(bn);
	for (size_t i = 0; i < bn; i++)
		bigtext[i] = "int a;\n"[i % 7];
	write_file_atomic(big, bigtext, bn, NULL);
	free(bigtext);

	struct run r = run(empty, "--json");
	cJSON *j = cJSON_Parse(r.out);
	CHECK(r.rc == 0 && j && cJSON_GetArraySize(cJSON_GetObjectItem(j, "kernels")) == 0,
	      "an empty file: exit 0, an empty outline");
	cJSON_Delete(j);
	run_free(&r);

	r = run(bin, NULL);
	CHECK(r.rc == 2 && strstr(r.err, "kloop: ") && strstr(r.err, "blob.cu: binary file"),
	      "a binary file: exit 2, kloop: FILE: binary file (%s)", r.err);
	run_free(&r);

	r = run(big, NULL);
	CHECK(r.rc == 2 && strstr(r.err, "big.cu: file is 10485760 bytes, over the limit"),
	      "a 10 MB file: exit 2, too large (%s)", r.err);
	run_free(&r);

	r = run("/nonexistent/k.cu", NULL);
	CHECK(r.rc == 2 && strstr(r.err, "kloop: /nonexistent/k.cu: cannot open"),
	      "a missing file: exit 2 (%s)", r.err);
	run_free(&r);

	r = run(dir, NULL);
	CHECK(r.rc == 2 && strstr(r.err, "not a regular file"), "a directory: exit 2 (%s)", r.err);
	run_free(&r);

	r = run(NULL, NULL);
	CHECK(r.rc == 2 && strstr(r.err, "usage: kloop outline FILE [--json]"),
	      "no file: usage, exit 2");
	run_free(&r);
	r = run(empty, "--xml");
	CHECK(r.rc == 2 && strstr(r.err, "usage:"), "an unknown option: usage, exit 2");
	run_free(&r);

	unlink(empty);
	unlink(bin);
	unlink(big);
	rmdir(dir);
	free(empty);
	free(bin);
	free(big);
}

int main(void)
{
	test_text();
	test_json();
	test_refusals();
	syntax_shutdown();
	return check_done();
}
