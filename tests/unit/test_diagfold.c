/*
 * test_diagfold.c - repeated compiler diagnostics folded into one line with
 * a count and the first place, on logs shaped as gcc 12, clang 14 and nvcc
 * 13 write them (nvcc's #20013-D said 5000 times, as CuTe makes it), errors
 * folded only where they repeat exactly, what is not a diagnostic (ptxas'
 * report) kept, and a huge log cut for a prompt saying how much was cut.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "diagfold.h"
#include "util.h"

/* the number of times z occurs in s */
static int count(const char *s, const char *z)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, z)); p += strlen(z))
		n++;
	return n;
}

static const char *gcc =
    "w.c: In function \xe2\x80\x98"
    "f\xe2\x80\x99:\n"
    "w.c:2:27: warning: unused variable \xe2\x80\x98x\xe2\x80\x99 [-Wunused-variable]\n"
    "    2 | static int f(int a) { int x; return a; }\n"
    "      |                           ^\n"
    "w.c: In function \xe2\x80\x98g\xe2\x80\x99:\n"
    "w.c:3:27: warning: unused variable \xe2\x80\x98x\xe2\x80\x99 [-Wunused-variable]\n"
    "    3 | static int g(int a) { int x; return a; }\n"
    "      |                           ^\n"
    "w.c: In function \xe2\x80\x98h\xe2\x80\x99:\n"
    "w.c:4:19: warning: unused variable \xe2\x80\x98x\xe2\x80\x99 [-Wunused-variable]\n"
    "    4 | int h(void) { int x; return f(1) + g(2); }\n"
    "      |                   ^\n"
    "w.c:4:29: warning: unused variable \xe2\x80\x98y\xe2\x80\x99 [-Wunused-variable]\n"
    "    4 | int h(void) { int x; int y; return f(1) + g(2); }\n"
    "      |                          ^\n"
    "w.c: In function \xe2\x80\x98k\xe2\x80\x99:\n"
    "w.c:5:3: error: \xe2\x80\x98z\xe2\x80\x99 undeclared (first use in this function)\n"
    "    5 |   z = 1;\n"
    "      |   ^\n"
    "w.c:5:3: note: each undeclared identifier is reported only once for each function it "
    "appears in\n"
    "w.c:6:3: error: \xe2\x80\x98z\xe2\x80\x99 undeclared (first use in this function)\n"
    "    6 |   z = 2;\n"
    "      |   ^\n";

static const char *clang =
    "w.c:2:27: warning: unused variable 'x' [-Wunused-variable]\n"
    "static int f(int a) { int x; return a; }\n"
    "                          ^\n"
    "w.c:3:27: warning: unused variable 'x' [-Wunused-variable]\n"
    "static int g(int a) { int x; return a; }\n"
    "                          ^\n"
    "w.c:5:37: warning: comparison of integers of different signs: 'unsigned int' and 'int' "
    "[-Wsign-compare]\n"
    "int k(unsigned u, int i) { return u < i; }\n"
    "                                  ~ ^ ~\n"
    "w.c:6:38: warning: comparison of integers of different signs: 'unsigned int' and 'int' "
    "[-Wsign-compare]\n"
    "int k2(unsigned u, int i) { return u < i; }\n"
    "                                   ~ ^ ~\n"
    "4 warnings generated.\n";

#define W20013                                                                                     \
	"warning #20013-D: calling a constexpr __host__ function(\"sq\") from a __host__ "         \
	"__device__ function(\"get\") is not allowed. The experimental flag "                      \
	"'--expt-relaxed-constexpr' can be used to allow this."

/* nvcc's log of a CuTe-like kernel: #20013-D 5000 times at other places,
 * one other warning, an error said twice (host and device passes), ptxas */
static char *nvcc_log(void)
{
	strbuf sb = STRBUF_INIT;
	sb_adds(&sb, "cand.cu(6): warning #177-D: variable \"unused\" was declared but never "
	             "referenced\n"
	             "  __attribute__((global)) void k(int *o) { int unused; }\n"
	             "                                               ^\n\n"
	             "Remark: The warnings can be suppressed with \"-diag-suppress "
	             "<warning-number>\"\n\n");
	for (int i = 0; i < 5000; i++) {
		sb_addf(&sb, "%s(%d): " W20013 "\n",
		        i ? "/opt/cutlass/include/cute/layout.hpp" : "cand.cu", 12 + i);
		sb_adds(&sb,
		        "    __attribute__((host)) __attribute__((device)) static int get(int "
		        "a) { return sq(a) + N; }\n"
		        "                                                                 ^\n");
		if (i % 2)
			sb_addf(&sb,
			        "          detected during instantiation of \"int S<N>::get(int) "
			        "[with N=%d]\" at line 6\n",
			        i);
		sb_adds(&sb, "\n");
		if (i % 1000 == 999) /* each pass's first warning has it */
			sb_adds(&sb, "Remark: The warnings can be suppressed with \"-diag-suppress "
			             "<warning-number>\"\n\n");
	}
	for (int i = 0; i < 2; i++)
		sb_adds(&sb, "cand.cu(40): error: identifier \"undefined_name\" is undefined\n"
		             "    return undefined_name;\n"
		             "           ^\n\n");
	sb_adds(&sb, "cand.cu(41): error: identifier \"other_name\" is undefined\n"
	             "    return other_name;\n"
	             "           ^\n\n"
	             "ptxas info    : Compiling entry function '_Z1kPi' for 'sm_90'\n"
	             "ptxas info    : Function properties for _Z1kPi\n"
	             "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
	             "ptxas info    : Used 4 registers, used 0 barriers\n"
	             "3 errors detected in the compilation of \"cand.cu\".\n");
	return sb_detach(&sb);
}

static void test_gcc(void)
{
	char *f = diag_fold(gcc);
	int ok = count(f, "unused variable \xe2\x80\x98x\xe2\x80\x99") == 1 &&
	         strstr(f, "warning: unused variable \xe2\x80\x98x\xe2\x80\x99 [-Wunused-variable] "
	                   "(3 times; first at w.c:2:27)\n");
	CHECK(ok,
	      "gcc: the three unused x fold into one line with the count and the first place%s%s",
	      ok ? "" : ":\n", ok ? "" : f);
	CHECK(strstr(f, "w.c:4:29: warning: unused variable \xe2\x80\x98y\xe2\x80\x99 "
	                "[-Wunused-variable]\n    4 | int h(void) { int x; int y;"),
	      "gcc: a warning said once keeps its place and its source line");
	CHECK(count(f, "undeclared (first use in this function)") == 2 &&
	          strstr(f, "w.c:5:3: error:") && strstr(f, "w.c:6:3: error:") &&
	          strstr(f, "note: each undeclared identifier"),
	      "gcc: two errors with the same text at two places stay, with their note");
	CHECK(!strstr(f, "In function \xe2\x80\x98g\xe2\x80\x99") &&
	          strstr(f, "In function \xe2\x80\x98k\xe2\x80\x99"),
	      "gcc: the context line goes with the warning folded away, stays with the errors");
	char *ff = diag_fold(f);
	CHECK(!strcmp(ff, f), "folding a folded log changes nothing");
	free(ff);
	free(f);
}

static void test_clang(void)
{
	char *f = diag_fold(clang);
	const char *want = "warning: unused variable 'x' [-Wunused-variable] (2 times; first at "
	                   "w.c:2:27)\n"
	                   "warning: comparison of integers of different signs: 'unsigned int' and "
	                   "'int' [-Wsign-compare] (2 times; first at w.c:5:37)\n"
	                   "4 warnings generated.\n";
	CHECK(!strcmp(f, want),
	      "clang: each warning said twice is one line, its source and caret lines (the source "
	      "at column 0) gone with it%s%s",
	      strcmp(f, want) ? ":\n" : "", strcmp(f, want) ? f : "");
	free(f);
	const char *once = "w.c:2:27: warning: unused variable 'x' [-Wunused-variable]\n"
	                   "static int f(int a) { int x; return a; }\n"
	                   "                          ^\n"
	                   "1 warning generated.";
	f = diag_fold(once);
	CHECK(!strcmp(f, once), "a log with nothing repeated comes back as it was%s%s",
	      strcmp(f, once) ? ": " : "", strcmp(f, once) ? f : "");
	free(f);
}

static void test_nvcc(void)
{
	char *log = nvcc_log();
	char *f = diag_fold(log);
	CHECK(count(f, "#20013-D") == 1 &&
	          strstr(f, W20013 " (5000 times; first at cand.cu(12))\n"),
	      "nvcc: #20013-D said 5000 times is one line, \"... (5000 times; first at "
	      "cand.cu(12))\" (%zu bytes of %zu)",
	      strlen(f), strlen(log));
	CHECK(!strstr(f, "detected during") && !strstr(f, "layout.hpp"),
	      "nvcc: its source, caret and instantiation lines went with it");
	CHECK(strstr(f, "cand.cu(6): warning #177-D: variable \"unused\"") &&
	          count(f, "Remark: The warnings can be suppressed") == 1 &&
	          count(log, "Remark: The warnings can be suppressed") == 6,
	      "nvcc: the warning said once stays, and the remark after it, once of 6");
	CHECK(strstr(f, "cand.cu(40): error: identifier \"undefined_name\" is undefined (2 "
	                "times)\n    return undefined_name;\n") &&
	          count(f, "undefined_name\" is undefined") == 1 &&
	          strstr(f, "cand.cu(41): error: identifier \"other_name\" is undefined\n"),
	      "nvcc: an error said twice exactly is once with its count; another error stays");
	CHECK(
	    strstr(f, "ptxas info    : Function properties for _Z1kPi\n    0 bytes stack frame") &&
	        strstr(f, "ptxas info    : Used 4 registers") &&
	        strstr(f, "3 errors detected in the compilation"),
	    "nvcc: ptxas' report and the last line stay as they were");
	CHECK(strlen(f) < 4096, "nvcc: %zu bytes folded to %zu", strlen(log), strlen(f));
	free(f);
	free(log);
}

static void test_cap(void)
{
	/* a megabyte of distinct warnings, errors after them */
	strbuf sb = STRBUF_INIT;
	for (int i = 0; sb.len < (1 << 20); i++)
		sb_addf(&sb, "k.cu(%d): warning #%d-D: distinct warning number %d\n", i, i, i);
	sb_adds(&sb, "k.cu(9000): error: the first real error\n");
	for (int i = 0; i < 300; i++)
		sb_addf(&sb, "k.cu(%d): error: another error %d\n", 9001 + i, i);
	char *f = diag_fold(sb.buf);
	CHECK(!strcmp(f, sb.buf), "distinct warnings are not folded");
	char *c = diag_cap(f, 4096);
	const char *note = strstr(c, "[kloop") ? strstr(c, "[kloop") : c;
	int nNote = (int)strcspn(note, "\n");
	CHECK(strlen(c) <= 4096, "a 1 MB log cut to 4096 bytes (%zu)", strlen(c));
	CHECK(strstr(c, "k.cu(0): warning #0-D") && strstr(c, "[kloop: ") &&
	          strstr(c, " more bytes (") && strstr(c, "of the compiler's output cut here"),
	      "it keeps the first lines and says how much was cut (%.*s)", nNote, note);
	CHECK(strstr(c, "k.cu(9000): error: the first real error\n") &&
	          strstr(c, "of the 301 error lines among them:]"),
	      "the errors past the cut follow, as many as fit (%.*s)", nNote, note);
	free(c);
	c = diag_cap("short\n", 4096);
	CHECK(!strcmp(c, "short\n"), "a log that fits is unchanged");
	free(c);
	free(f);
	sb_free(&sb);
}

int main(void)
{
	test_gcc();
	test_clang();
	test_nvcc();
	test_cap();
	return check_done();
}
