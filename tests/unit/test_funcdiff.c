/*
 * test_funcdiff.c - the function-level diff: functions the same token for
 * token (layout aside), changed, removed and added, with their lines; and
 * the diff of a candidate against its edit.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "funcdiff.h"
#include "slurp.h"
#include "splice.h"
#include "syntax.h"
#include "util.h"

#define FIX "tests/fixtures/cuda_src/"

static void test_diff(void)
{
	const char *a = "__device__ int sq(int x) { return x * x; }\n"
	                "__global__ void k1(int *p) { p[0] = sq(p[0]); }\n"
	                "__global__ void gone(void) {}\n"
	                "void host(void) { }\n";
	const char *b = "__device__ int sq(int x)\n{\n\treturn x * x; // same tokens\n}\n"
	                "__global__ void k1(int *p) { p[0] = sq(p[1]); }\n"
	                "void host(void) { }\n"
	                "__global__ void fresh(void) {}\n";
	struct funcdiff d;
	char err[KL_ERRLEN];
	CHECK(funcdiff_compare(a, strlen(a), b, strlen(b), &d, err) == 0 && d.n == 5,
	      "the diff has 5 entries");
	if (d.n == 5) {
		CHECK(!strcmp(d.v[0].name, "sq") && d.v[0].status == FUNCDIFF_SAME &&
		          d.v[0].layout_only && d.v[0].b_line == 1 && d.v[0].b_end == 4,
		      "sq: same tokens, only the layout changed");
		CHECK(!strcmp(d.v[1].name, "k1") && d.v[1].status == FUNCDIFF_CHANGED &&
		          d.v[1].a_line == 2 && d.v[1].b_line == 5,
		      "k1: changed (line 2 in a, 5 in b)");
		CHECK(!strcmp(d.v[2].name, "gone") && d.v[2].status == FUNCDIFF_REMOVED &&
		          d.v[2].b_line == 0,
		      "gone: removed");
		CHECK(!strcmp(d.v[3].name, "host") && d.v[3].status == FUNCDIFF_SAME &&
		          !d.v[3].layout_only,
		      "host: the same");
		CHECK(!strcmp(d.v[4].name, "fresh") && d.v[4].status == FUNCDIFF_ADDED &&
		          d.v[4].b_line == 7,
		      "fresh: added, line 7 of b");
	}
	funcdiff_free(&d);

	size_t n;
	char *src = slurp(FIX "multi_launch.cu", &n);
	struct splice_result r;
	const char *rv =
	    "__global__ void row_var(const float *x, const float *mean, float *rstd, int cols) { }";
	splice_replace(src, n, "row_var", rv, strlen(rv), &r, err);
	CHECK(r.src && funcdiff_compare(src, n, r.src, r.len, &d, err) == 0,
	      "diff of a candidate and its edit");
	int changed = 0, same = 0;
	for (size_t i = 0; i < d.n; i++) {
		changed += d.v[i].status == FUNCDIFF_CHANGED;
		same += d.v[i].status == FUNCDIFF_SAME;
	}
	CHECK(changed == 1 && same == (int)d.n - 1 && d.n == 6,
	      "exactly one function changed (ln::row_var) of six (%d, %zu)", changed, d.n);
	funcdiff_free(&d);
	splice_result_free(&r);
	free(src);
}

static void test_bad_input(void)
{
	struct funcdiff d;
	char err[KL_ERRLEN] = "";
	static const char bin[] = "int x;\0binary";
	CHECK(funcdiff_compare("int f();", 8, bin, sizeof bin - 1, &d, err) == -1 &&
	          strstr(err, "the second source") && strstr(err, "NUL byte"),
	      "a binary second source is refused, naming it: %s", err);
	const char *broken = "__global__ void k(int *p) { p[0] = ; }\nvoid h(void) {}\n";
	CHECK(funcdiff_compare(broken, strlen(broken), broken, strlen(broken), &d, err) == 0 &&
	          d.n == 2 && d.v[0].status == FUNCDIFF_SAME && d.v[1].status == FUNCDIFF_SAME,
	      "a source with a syntax error still gives its functions (%zu)", d.n);
	CHECK(!strcmp(funcdiff_status_name(FUNCDIFF_CHANGED), "changed"), "status names");
	funcdiff_free(&d);
}

int main(void)
{
	test_diff();
	test_bad_input();
	syntax_shutdown();
	return check_done();
}
