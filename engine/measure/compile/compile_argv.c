/*
 * compile_argv.c - a compile's command line: the compiler's flags by
 * language and target, with what the source includes (kloop's headers, the
 * task's libraries, CUTLASS, PyTorch's stand-in or its own headers), and
 * the bubblewrap around it that lets the compiler see only those; kloop's
 * include directory and the directories the libraries give.
 */
#include "compile_priv.h"

#include <stdlib.h>
#include <string.h>

#include "fatslot.h"
#include "sandbox.h"

/* p made absolute (the compiler runs in its build directory); consumes p */
static char *absolute(char *p)
{
	char *r = realpath(p, NULL);
	if (!r)
		return p;
	free(p);
	return r;
}

const char *compile_include_dir(void)
{
	static char *dir;
	if (dir)
		return dir;
	const char *env = getenv("KLOOP_INCLUDE");
	return dir = absolute(env && *env ? xstrdup(env) : exe_data_dir("include"));
}

char **compiler_lib_dirs(const struct compiler *c, int bIncludes)
{
	char **v = xcalloc(4 * LIBS_MAX + TORCH_REAL_MAX_INC + 1 + TORCH_REAL_MAX_DEP +
	                       TORCH_REAL_MAX_DIR + 1,
	                   sizeof(char *));
	int n = 0;
	for (int i = 0; i < c->libs.n; i++) {
		const struct lib_item *it = &c->libs.a[i];
		if (bIncludes && it->zIncDir)
			v[n++] = xstrdup(it->zIncDir);
		if (bIncludes && it->zIncDir2)
			v[n++] = xstrdup(it->zIncDir2);
		if (it->zLibDir)
			v[n++] = xstrdup(it->zLibDir);
		if (it->zLibPath) {
			/* a library given by path: its directory */
			char *d = xstrdup(it->zLibPath), *sl = strrchr(d, '/');
			if (sl && sl != d)
				*sl = 0;
			v[n++] = d;
		}
	}
	/* PyTorch's, once an extension was compiled against them */
	const struct torch_real *t = &c->torchReal;
	for (int i = 0; t->ok && bIncludes && i < t->nInc; i++)
		v[n++] = xstrdup(t->azInc[i]);
	if (t->ok && t->zLibDir)
		v[n++] = xstrdup(t->zLibDir);
	/* and where the libraries libtorch loads live (a wheel's nvidia
	 * packages): a runner's sandbox must show them too */
	for (int i = 0; t->ok && i < t->nDep; i++) {
		char *d = xstrdup(t->azDep[i]), *sl = strrchr(d, '/');
		*sl = 0;
		v[n++] = d;
	}
	for (int i = 0; t->ok && i < t->nDir; i++)
		v[n++] = xstrdup(t->azDir[i]);
	return v;
}

void compiler_dirs_free(char **az)
{
	for (int i = 0; az && az[i]; i++)
		free(az[i]);
	free(az);
}

/* (compile_priv.h) */
const char *const compile_cxx_flags[] = {"-std=gnu++17", "-O3", "-march=native", "-fPIC", NULL};
/* CUDA's half and bfloat16 operators and conversions, which an extension's
 * build turns off (torch.utils.cpp_extension's nvcc flags) */
static const char *const torchNoHalf[] = {"HALF_OPERATORS", "HALF_CONVERSIONS",
                                          "BFLOAT16_CONVERSIONS", "HALF2_OPERATORS"};

/* a compile command's words at most: kloop's flags, the libraries', and
 * PyTorch's (its includes, libraries and what import torch loaded) */
#define ARGV_MAX (32 + 4 * LIBS_MAX + 24 + 3 * TORCH_REAL_MAX_DEP)

char **compile_argv(struct compiler *c, struct cjob *j, const char *zOut)
{
	char **v = xcalloc(ARGV_MAX + 1, sizeof(char *));
	int n = 0;
	const char *inc = compile_include_dir();
	v[n++] = xstrdup(c->azCmd[j->req.lang]);
	switch (j->req.lang) {
	case LANG_C:
	case LANG_CPP:
		v[n++] = xstrdup(j->req.lang == LANG_C ? "-std=gnu11" : compile_cxx_flags[0]);
		for (int i = 1; compile_cxx_flags[i]; i++)
			v[n++] = xstrdup(compile_cxx_flags[i]);
		v[n++] = xstrdup("-shared");
		v[n++] = xstrdup("-Wall");
		/* the vectoriser's remarks: the host's counterpart of ptxas' report
		 * (not over PyTorch's headers, whose inlined code would be most of
		 * them) */
		if (j->req.torch != COMPILE_TORCH_REAL)
			v[n++] = xstrdup(c->azVersion[j->req.lang] &&
			                         strstr(c->azVersion[j->req.lang], "clang")
			                     ? "-Rpass=loop-vectorize"
			                     : "-fopt-info-vec-optimized");
		/* an extension against PyTorch's own headers (kloop_torch_real.h) */
		if (j->req.torch == COMPILE_TORCH_REAL)
			v[n++] = xasprintf("-I%s/kloop_torch_real", inc),
			v[n++] = xstrdup("-include"), v[n++] = xstrdup("kloop_torch_real.h");
		/* an extension: the stand-in, precompiled where it has been */
		if (j->req.torch == COMPILE_TORCH_STANDIN && c->pch.zDir)
			v[n++] = xasprintf("-I%s", c->pch.zDir), v[n++] = xstrdup("-include"),
			v[n++] = xstrdup("kloop_torch.h");
		v[n++] = xasprintf("-I%s", inc);
		if (j->req.torch == COMPILE_TORCH_STANDIN)
			v[n++] = xasprintf("-I%s/kloop_torch", inc);
		/* a reproducible object (codehash.h): no build id, no local
		 * symbols (the file's name, static functions' names) */
		v[n++] = xstrdup("-Wl,--build-id=none");
		v[n++] = xstrdup("-Wl,--discard-all");
		v[n++] = xstrdup("-o");
		v[n++] = xstrdup(zOut);
		v[n++] = xstrdup(j->zName);
		libs_flags(&c->libs, 0, v, &n, 31 + 4 * LIBS_MAX);
		if (j->req.torch == COMPILE_TORCH_REAL)
			torch_real_flags(&c->torchReal, 0, v, &n, ARGV_MAX - 1);
		v[n++] = xstrdup("-lm");
		break;
	case LANG_CUDA:
		v[n++] = xstrdup("-O3");
		v[n++] = xstrdup("-std=c++17");
		v[n++] = cuda_target_gencode(c->target.zName);
		v[n++] = xstrdup("-shared");
		v[n++] = xstrdup("-Xcompiler");
		v[n++] = xstrdup("-fPIC");
		v[n++] = xstrdup("--cudart");
		v[n++] = xstrdup("shared");
		v[n++] = xstrdup("-Xptxas");
		v[n++] = xstrdup("-v");
		/* reproducible, as above; and no -lineinfo: the line tables in
		 * the fatbin (loaded, readable) hold the build's path and move
		 * with every comment line */
		v[n++] = xstrdup("-Xlinker");
		v[n++] = xstrdup("--build-id=none");
		v[n++] = xstrdup("-Xlinker");
		v[n++] = xstrdup("--discard-all");
		v[n++] = xasprintf("-I%s", inc);
		/* an extension: the stand-in, and torch.utils.cpp_extension's own
		 * nvcc flags (CUDA's half operators and conversions left out, as
		 * c10::Half's are the ones; constexpr host functions in kernels);
		 * one that includes CUTLASS or CuTe keeps CUDA's (CuTe converts
		 * float to __half: CUDA-L2's build undoes those flags too) */
		if (j->req.torch) {
			if (j->req.torch == COMPILE_TORCH_REAL)
				v[n++] = xasprintf("-I%s/kloop_torch_real", inc),
				v[n++] = xstrdup("-include"),
				v[n++] = xstrdup("kloop_torch_real.h");
			else
				v[n++] = xasprintf("-I%s/kloop_torch", inc);
			for (size_t i = 0; i < sizeof torchNoHalf / sizeof *torchNoHalf &&
			                   !libs_source_includes_cutlass(j->zSrc);
			     i++)
				v[n++] = xasprintf("-D__CUDA_NO_%s__", torchNoHalf[i]);
			v[n++] = xstrdup("--expt-relaxed-constexpr");
		}
		v[n++] = xstrdup("-o");
		v[n++] = xstrdup(zOut);
		v[n++] = xstrdup(j->zName);
		libs_flags(&c->libs, 1, v, &n, 31 + 4 * LIBS_MAX);
		if (j->bCutlass)
			libs_flags(&c->cutlass, 1, v, &n, 31 + 4 * LIBS_MAX);
		if (j->req.torch == COMPILE_TORCH_REAL)
			torch_real_flags(&c->torchReal, 1, v, &n, ARGV_MAX - 1);
		break;
	}
	return v;
}

char *compile_argv_join(char **v)
{
	strbuf sb = STRBUF_INIT;
	for (int i = 0; v[i]; i++)
		sb_addf(&sb, "%s%s", i ? " " : "", v[i]);
	return sb_detach(&sb);
}

void compile_argv_free(char **v)
{
	for (int i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* argv prefixed with bubblewrap: the compiler sees the system, the build
 * directory (writable), kloop's include directory and the libraries' and
 * include paths the task gave (libs), nothing else (no
 * home, no session, no cache, no network); consumes argv */
char **compile_sandboxed(struct compiler *c, struct cjob *j, char **argv)
{
	char **v = xcalloc(160, sizeof(char *));
	int n = 0;
#define A(x) (v[n++] = xstrdup(x))
	A("bwrap");
	A("--unshare-all");
	A("--die-with-parent");
	A("--new-session");
	A("--clearenv");
	const char *path = getenv("PATH");
	A("--setenv"), A("PATH"), A(path && *path ? path : "/usr/bin:/bin");
	const char *ld = getenv("LD_LIBRARY_PATH");
	if (ld && *ld)
		A("--setenv"), A("LD_LIBRARY_PATH"), A(ld);
	A("--setenv"), A("HOME"), A("/tmp");
	A("--setenv"), A("TMPDIR"), A("/tmp");
	/* the system, and /opt where toolchains live */
	const char *ro[32];
	size_t nRo = 0;
	for (size_t i = 0; i < sandbox_nSystem && nRo < 31; i++)
		ro[nRo++] = sandbox_system[i];
	ro[nRo++] = "/opt";
	for (size_t i = 0; i < nRo; i++)
		A("--ro-bind-try"), A(ro[i]), A(ro[i]);
	/* a compiler installed elsewhere: its prefix */
	char *exe = argv[0][0] == '/' ? realpath(argv[0], NULL) : NULL;
	if (exe && strncmp(exe, "/usr/", 5)) {
		char *sl = strrchr(exe, '/');
		if (sl)
			*sl = 0;
		sl = strrchr(exe, '/');
		if (sl && sl != exe)
			*sl = 0;
		A("--ro-bind-try"), A(exe), A(exe);
	}
	free(exe);
	A("--proc"), A("/proc");
	A("--dev"), A("/dev");
	A("--tmpfs"), A("/tmp");
	A("--ro-bind"), A(compile_include_dir()), A(compile_include_dir());
	/* the libraries and include paths the task or --libs gave (libs.h) */
	char **libDirs = compiler_lib_dirs(c, 1);
	for (int i = 0; libDirs[i] && n < 114; i++)
		n += sandbox_dir_args(libDirs[i], ro, nRo, v + n);
	compiler_dirs_free(libDirs);
	if (j->req.torch == COMPILE_TORCH_STANDIN && c->pch.zDir)
		n += sandbox_dir_args(c->pch.zDir, ro, nRo, v + n);
	/* CUTLASS's headers for a source that includes them */
	for (int i = 0; j->bCutlass && i < c->cutlass.n && n < 114; i++) {
		const struct lib_item *it = &c->cutlass.a[i];
		if (it->zIncDir)
			n += sandbox_dir_args(it->zIncDir, ro, nRo, v + n);
		if (it->zIncDir2 && n < 114)
			n += sandbox_dir_args(it->zIncDir2, ro, nRo, v + n);
	}
	A("--bind"), A(j->zDir), A(j->zDir);
	A("--chdir"), A(j->zDir);
	A("--");
#undef A
	for (int i = 0; argv[i] && n < 158; i++)
		v[n++] = argv[i];
	free(argv);
	return v;
}

/* the staged CUDA build's scripts ($1 nvcc, $2 the source, $3 and $4 the
 * kept shared object's slot (fatslot.h: its offset and size, 0 0 for none),
 * $5 1 where nvcc's steps may run side by side, the rest its flags).
 * Either way the host object's fatbinary is padded to a whole number of
 * FATSLOT_GRAIN bytes (pad).  Whole: the host object kept as kl_host.o,
 * then linked.  Only the device code: its fatbinary written into the kept
 * shared object (kl_linked.so, copied in) where it fills the slot, else put
 * into the kept host object (.nv_fatbin, which holds nothing else) and
 * linked as nvcc links: either way the bytes of a whole build of the
 * source; kl_nolink says which.
 *
 * The host object (hostobj) with nvcc's steps side by side: `nvcc -c`
 * runs seven programs one after another, the host half (its preprocessing,
 * cudafe++) and the device half (its preprocessing, cicc, ptxas,
 * fatbinary) before the host compile, which takes both.  Only the module
 * id, a hash of the source's path and text that cudafe++ writes and cicc
 * reads, joins them, and cicc makes the same one itself
 * (--gen_module_id_file).  So the script asks nvcc for its steps
 * (dry: --dryrun, their files kept in kl_steps, $d), runs the halves at
 * once (run_step: a sorted list of steps under nvcc's environment), each
 * one's output kept, and the host compile after them: nvcc's own commands,
 * files, output in nvcc's order and exit status, the same object but for
 * its temporary files' names (a local symbol the link discards); kl_side
 * says it did.  Where
 * the steps are not the seven this expects (another nvcc, several
 * targets), cicc's module id is not cudafe++'s, or a step was killed
 * (the compile's memory limit: two halves hold more at once; gcc says
 * "Killed signal" and exits 1), nvcc runs alone. */
#define STAGED_GRAIN_S STAGED_STR(FATSLOT_GRAIN)
#define STAGED_STR(x) STAGED_STR2(x)
#define STAGED_STR2(x) #x
/* nvcc --dryrun's line l of its environment: a plain NAME=value into
 * d/env, one that sets a path the steps need otherwise refused (bad) */
#define STAGED_ENV_AWK                                                                             \
	"\tl = substr($0, 4)\n"                                                                    \
	"\tif (l ~ /^[A-Za-z_][A-Za-z0-9_]*=/) {\n"                                                \
	"\t\tif (l ~ /^[A-Za-z_][A-Za-z0-9_]*=[A-Za-z0-9_.\\/:+@%,=-]* *$/) print l > (d "         \
	"\"/env\")\n"                                                                              \
	"\t\telse if (l ~ /^(PATH|LD_LIBRARY_PATH|CICC_PATH|NVVMIR_LIBRARY_DIR)=/) bad = 1\n"      \
	"\t\tnext\n"                                                                               \
	"\t}\n"
#define STAGED_STEPS_AWK                                                                           \
	"/^#\\$ / {\n" STAGED_ENV_AWK "\tk++\n"                                                    \
	"\tif (k == 1 && l ~ / -E / && l ~ /\\.cpp4\\.ii\"/) f = \"h\"\n"                          \
	"\telse if (k == 2 && l ~ /^cudafe\\+\\+ / && l ~ / --gen_module_id_file /) f = \"h\"\n"   \
	"\telse if (k == 3 && l ~ / -E / && l ~ /\\.cpp1\\.ii\"/) f = \"d\"\n"                     \
	"\telse if (k == 4 && l ~ /\\/cicc\" / && match(l, / --module_id_file_name \"[^\"]*\"/)) " \
	"{\n"                                                                                      \
	"\t\tid = substr(l, RSTART + 24, RLENGTH - 25)\n"                                          \
	"\t\tl = substr(l, 1, RSTART - 1) \" --gen_module_id_file --module_id_file_name \\\"\" "   \
	"id "                                                                                      \
	"\".d\\\"\" substr(l, RSTART + RLENGTH)\n"                                                 \
	"\t\tf = \"d\"\n"                                                                          \
	"\t} else if (k == 5 && l ~ /^ptxas /) f = \"d\"\n"                                        \
	"\telse if (k == 6 && l ~ /^fatbinary /) f = \"d\"\n"                                      \
	"\telse if (k == 7 && l ~ / -c / && l ~ /-o \"kl_host\\.o\"/) f = \"f\"\n"                 \
	"\telse bad = 1\n"                                                                         \
	"\tif (!bad) print l > (d \"/\" f)\n"                                                      \
	"}\n"                                                                                      \
	"END { if (bad || k != 7 || id == \"\") exit 1; print id > (d \"/id\") }\n"
/* devfat's pieces (an edit's #includes preprocessed once, compile_host.c's
 * prefix_in): STAGED_DEV_AWK sorts `nvcc -fatbin --dryrun`'s four steps
 * into d/e (the preprocessing), d/r (cicc, ptxas, fatbinary), d/base and
 * d/nobase (the preprocessing's command without its files, and without its
 * forced -includes too) and d/ii (its output); STAGED_TAIL_AWK keeps of the
 * rest's preprocessing (lines after the last #include, those before blank)
 * its own lines, led by a marker of the line they start at;
 * STAGED_STATE_AWK makes the macros the #includes left, less gcc's own
 * (its predefined ones first, then those after the #includes), with
 * #undef for the predefined ones they took away or changed;
 * STAGED_RENAME_AWK names the source in the kept preprocessing's line
 * markers (it was made as kl_src.cu) */
#define STAGED_DEV_AWK                                                                             \
	"/^#\\$ / {\n" STAGED_ENV_AWK "\tk++\n"                                                    \
	"\tp = index(l, \" \\\"\" s \"\\\" -o \\\"\")\n"                                           \
	"\tif (k == 1 && l ~ / -E / && p && l ~ /\\.cpp1\\.ii\" *$/) {\n"                          \
	"\t\tprint l > (d \"/e\")\n"                                                               \
	"\t\tb = substr(l, 1, p - 1)\n"                                                            \
	"\t\tprint b > (d \"/base\")\n"                                                            \
	"\t\tgsub(/ -include \"[^\"]*\"/, \"\", b)\n"                                              \
	"\t\tprint b > (d \"/nobase\")\n"                                                          \
	"\t\tii = substr(l, p + length(s) + 8)\n"                                                  \
	"\t\tprint substr(ii, 1, index(ii, \"\\\"\") - 1) > (d \"/ii\")\n"                         \
	"\t} else if (k == 2 && l ~ /\\/cicc\" / && l !~ / -(generate-line-info|g) /) print l > "  \
	"(d \"/r\")\n"                                                                             \
	"\telse if (k == 3 && l ~ /^ptxas /) print l > (d \"/r\")\n"                               \
	"\telse if (k == 4 && l ~ /^fatbinary /) print l > (d \"/r\")\n"                           \
	"\telse bad = 1\n"                                                                         \
	"}\n"                                                                                      \
	"END { if (bad || k != 4) exit 1 }\n"
#define STAGED_TAIL_AWK                                                                            \
	"function mark(l,   q) {\n"                                                                \
	"\tif (l !~ /^# [0-9]+ \"/) return 0\n"                                                    \
	"\tq = index(l, \"\\\"\")\n"                                                               \
	"\treturn substr(l, q) == \"\\\"\" s \"\\\"\" || substr(l, q, length(s) + 3) == \"\\\"\" " \
	"s \"\\\" \"\n"                                                                            \
	"}\n"                                                                                      \
	"!go {\n"                                                                                  \
	"\tif (cl && $0 == \"# 1 \\\"\" s \"\\\"\") go = ln = 1\n"                                 \
	"\telse if (index($0, \"\\\"<command-line>\\\"\")) cl = 1\n"                               \
	"\tnext\n"                                                                                 \
	"}\n"                                                                                      \
	"!out {\n"                                                                                 \
	"\tif (mark($0)) { split($0, a, \" \"); ln = a[2]; next }\n"                               \
	"\tif ($0 == \"\") { ln++; next }\n"                                                       \
	"\tprintf \"# %d \\\"%s\\\"\\n\", ln, s\n"                                                 \
	"\tout = 1\n"                                                                              \
	"}\n"                                                                                      \
	"{ print }\n"
#define STAGED_STATE_AWK                                                                           \
	"FNR == NR { split($0, a, /[ (]/); pre[a[2]] = $0; next }\n"                               \
	"{\n"                                                                                      \
	"\tsplit($0, a, /[ (]/)\n"                                                                 \
	"\tm = a[2]\n"                                                                             \
	"\tseen[m] = 1\n"                                                                          \
	"\tif (m in pre) {\n"                                                                      \
	"\t\tif (pre[m] == $0) next\n"                                                             \
	"\t\tprint \"#undef \" m\n"                                                                \
	"\t}\n"                                                                                    \
	"\tprint\n"                                                                                \
	"}\n"                                                                                      \
	"END { for (m in pre) if (!(m in seen)) print \"#undef \" m }\n"
#define STAGED_RENAME_AWK                                                                          \
	"/^# [0-9]+ \"kl_src\\.cu\"/ { sub(/\"kl_src\\.cu\"/, \"\\\"\" s \"\\\"\") }\n"            \
	"{ print }\n"
#define STAGED_DEVFAT                                                                              \
	"upart() {\n"                                                                              \
	"\trm -rf kl_u && mkdir kl_u && awk -v k=\"$k\" 'NR <= k { print \"\"; next } { print }' " \
	"\"$s\" >\"kl_u/$s\" &&\n"                                                                 \
	"\t\t(cd kl_u && set -a && . \"../$d/env\" && eval \"$(cat \"../$d/nobase\") -imacros "    \
	"\\\"../\\$1\\\" \\\"\\$s\\\" -o \\\"../\\$2\\\"\")\n"                                     \
	"}\n"                                                                                      \
	"splice() {\n"                                                                             \
	"\tawk -v s=\"$s\" '" STAGED_RENAME_AWK "' \"$1\" && awk -v s=\"$s\" '" STAGED_TAIL_AWK    \
	"' \"$2\"\n"                                                                               \
	"}\n"                                                                                      \
	"prefix() {\n"                                                                             \
	"\tp=kl_p\n"                                                                               \
	"\trm -rf \"$p\" && mkdir \"$p\" && head -n \"$k\" \"$s\" >\"$p/kl_src.cu\" && : "         \
	">\"$p/kl_empty.cu\" &&\n"                                                                 \
	"\t\t(cd \"$p\" && set -a && . \"../$d/env\" && eval \"$(cat \"../$d/base\") kl_src.cu "   \
	"-o pre.ii\" &&\n"                                                                         \
	"\t\t\teval \"$(cat \"../$d/base\") -dM kl_src.cu -o state.h\" &&\n"                       \
	"\t\t\teval \"$(cat \"../$d/nobase\") -dM kl_empty.cu -o predef.h\") >\"$p/log\" 2>&1 "    \
	"&&\n"                                                                                     \
	"\t\t[ ! -s \"$p/log\" ] && awk '" STAGED_STATE_AWK                                        \
	"' \"$p/predef.h\" \"$p/state.h\" >\"$p/pre.h\" &&\n"                                      \
	"\t\tupart \"$p/pre.h\" \"$p/u.ii\" 2>\"$p/ulog\" && [ ! -s \"$p/ulog\" ] &&\n"            \
	"\t\tsplice \"$p/pre.ii\" \"$p/u.ii\" | grep -v '^# ' | tr -d ' \\t\\n' >\"$p/a\" &&\n"    \
	"\t\tgrep -v '^# ' \"$1\" | tr -d ' \\t\\n' >\"$p/b\" && [ -s \"$p/b\" ] && cmp -s "       \
	"\"$p/a\" \"$p/b\" &&\n"                                                                   \
	"\t\tmv \"$p/pre.ii\" kl_pre.ii.new && mv \"$p/pre.h\" kl_pre.h.new && return\n"           \
	"\t: >kl_pre.no.new\n"                                                                     \
	"}\n"                                                                                      \
	"devfat() {\n"                                                                             \
	"\tif ! { [ \"$steps\" = 1 ] && [ \"$k\" -ge 0 ] &&\n"                                     \
	"\t\tdry \"$@\" -fatbin \"$s\" -o kl_device.fatbin &&\n"                                   \
	"\t\tawk -v d=\"$d\" -v s=\"$s\" '" STAGED_DEV_AWK "' \"$d/dry\"; }; then\n"               \
	"\t\t\"$n\" \"$@\" -fatbin \"$s\" -o kl_device.fatbin\n"                                   \
	"\t\treturn\n"                                                                             \
	"\tfi\n"                                                                                   \
	"\tii=$(cat \"$d/ii\")\n"                                                                  \
	"\tif [ -s kl_pre.ii ] && [ -s kl_pre.h ]; then\n"                                         \
	"\t\tupart kl_pre.h \"$d/u.ii\" || return\n"                                               \
	"\t\tsplice kl_pre.ii \"$d/u.ii\" >\"$ii\" || return\n"                                    \
	"\t\t: >kl_spliced\n"                                                                      \
	"\telse\n"                                                                                 \
	"\t\trun_step e || return\n"                                                               \
	"\t\tprefix \"$ii\" >/dev/null 2>&1 &\n"                                                   \
	"\tfi\n"                                                                                   \
	"\trun_step r\n"                                                                           \
	"\trc=$?\n"                                                                                \
	"\twait\n"                                                                                 \
	"\treturn $rc\n"                                                                           \
	"}\n"

#define STAGED_HEAD                                                                                \
	"n=$1 s=$2 at=$3 room=$4 steps=$5 k=$6; shift 6\n"                                         \
	"pad() { z=$(wc -c <\"$1\") && c=$(( (z + " STAGED_GRAIN_S " - 1) / " STAGED_GRAIN_S       \
	" * " STAGED_GRAIN_S " )) && head -c $((c - z)) /dev/zero >>\"$1\" && echo \"$c\"; }\n"    \
	"alone() { \"$n\" \"$@\" -c \"$s\" -o kl_host.o; }\n"                                      \
	"d=kl_steps\n"                                                                             \
	"dry() {\n"                                                                                \
	"\trm -rf \"$d\" && mkdir \"$d\" &&\n"                                                     \
	"\t\t\"$n\" \"$@\" --dryrun --keep --keep-dir \"$d\" >\"$d/dry\" 2>&1\n"                   \
	"}\n"                                                                                      \
	"run_step() { (set -a && . \"./$d/env\" && exec sh -e \"$d/$1\"); }\n"                     \
	"hostobj() {\n"                                                                            \
	"\t[ \"$steps\" = 1 ] && dry \"$@\" -c \"$s\" -o kl_host.o &&\n"                           \
	"\t\tawk -v d=\"$d\" '" STAGED_STEPS_AWK "' \"$d/dry\" || { alone \"$@\"; return; }\n"     \
	"\tgrep -v '^#\\$ ' \"$d/dry\"\n"                                                          \
	"\trun_step h >\"$d/h.log\" 2>&1 &\n"                                                      \
	"\thp=$!\n"                                                                                \
	"\trun_step d >\"$d/d.log\" 2>&1\n"                                                        \
	"\tds=$?\n"                                                                                \
	"\twait $hp\n"                                                                             \
	"\ths=$?\n"                                                                                \
	"\tid=$(cat \"$d/id\")\n"                                                                  \
	"\twhy=\n"                                                                                 \
	"\tif [ $hs -gt 128 ] || [ $ds -gt 128 ] ||\n"                                             \
	"\t   grep -q -e 'Killed signal' -e 'signal 9' \"$d/h.log\" \"$d/d.log\"; then\n"          \
	"\t\twhy=\"a step was killed (the halves ended with $hs and $ds)\"\n"                      \
	"\telif [ $hs = 0 ] && [ $ds = 0 ] && ! cmp -s \"$id\" \"$id.d\"; then\n"                  \
	"\t\twhy=\"cicc's module id was not cudafe++'s\"\n"                                        \
	"\tfi\n"                                                                                   \
	"\tif [ -n \"$why\" ]; then\n"                                                             \
	"\t\techo \"kloop: nvcc's host and device steps side by side: $why; nvcc compiles "        \
	"alone\"\n"                                                                                \
	"\t\talone \"$@\"\n"                                                                       \
	"\t\treturn\n"                                                                             \
	"\tfi\n"                                                                                   \
	"\tcat \"$d/h.log\"\n"                                                                     \
	"\t[ $hs = 0 ] || return $hs\n"                                                            \
	"\tcat \"$d/d.log\"\n"                                                                     \
	"\t[ $ds = 0 ] || return $ds\n"                                                            \
	"\trun_step f || return\n"                                                                 \
	"\t: >kl_side\n"                                                                           \
	"}\n" STAGED_DEVFAT "whole() {\n"                                                          \
	"\thostobj \"$@\" || exit\n"                                                               \
	"\trm -f kl_device.fatbin\n"                                                               \
	"\tobjcopy --dump-section .nv_fatbin=kl_device.fatbin kl_host.o 2>/dev/null\n"             \
	"\tif [ -s kl_device.fatbin ]; then\n"                                                     \
	"\t\tpad kl_device.fatbin >/dev/null || exit\n"                                            \
	"\t\tobjcopy --update-section .nv_fatbin=kl_device.fatbin kl_host.o || exit\n"             \
	"\tfi\n"                                                                                   \
	"\texec \"$n\" \"$@\" -shared kl_host.o -o out.so\n"                                       \
	"}\n"
static const char stagedWhole[] = STAGED_HEAD "whole \"$@\"\n";
static const char stagedDevice[] = STAGED_HEAD
    "devfat \"$@\" || exit\n"
    "c=$(pad kl_device.fatbin) || exit\n"
    "if [ \"$room\" = \"$c\" ] && [ -f kl_linked.so ] &&\n"
    "   dd if=kl_device.fatbin of=kl_linked.so bs=65536 oflag=seek_bytes seek=\"$at\" "
    "conv=notrunc status=none 2>kl_dd.log && mv kl_linked.so out.so; then\n"
    "\t: >kl_nolink\n"
    "\texit 0\n"
    "fi\n"
    "if objcopy --update-section .nv_fatbin=kl_device.fatbin kl_host.o 2>kl_objcopy.log; then\n"
    "\texec \"$n\" \"$@\" -shared kl_host.o -o out.so\n"
    "fi\n"
    "echo \"kloop: the host object kept for this source did not take the new device code "
    "($(head -c 300 kl_objcopy.log)): compiling it whole\"\n"
    "whole \"$@\"\n";
#define STAGED_NAME "kloop-nvcc"

char **compile_staged(struct compiler *c, struct cjob *j, char **argv, int deviceOnly)
{
	int n = 0;
	while (argv[n])
		n++;
	char **v = xcalloc((size_t)n + 12, sizeof(char *));
	int k = 0;
	v[k++] = xstrdup("sh");
	v[k++] = xstrdup("-c");
	v[k++] = xstrdup(deviceOnly ? stagedDevice : stagedWhole);
	v[k++] = xstrdup(STAGED_NAME);
	v[k++] = argv[0];
	v[k++] = xstrdup(j->zName);
	v[k++] = xasprintf("%llu", deviceOnly ? (unsigned long long)j->slotAt : 0ull);
	v[k++] = xasprintf("%llu", deviceOnly ? (unsigned long long)j->slotSize : 0ull);
	v[k++] = xstrdup(c->bSteps ? "1" : "0");
	v[k++] = xasprintf("%d", deviceOnly ? j->prefixLines : -1);
	for (int i = 1; i < n; i++) {
		if (!strcmp(argv[i], "-o") && argv[i + 1]) {
			free(argv[i]);
			free(argv[++i]);
		} else if (!strcmp(argv[i], "-shared") || !strcmp(argv[i], j->zName)) {
			free(argv[i]);
		} else {
			v[k++] = argv[i];
		}
	}
	free(argv);
	return v;
}

char *compile_argv_show(char **argv, int noLink, int sideBySide, int prefixKept)
{
	for (int i = 0; argv && argv[0] && !strcmp(argv[0], "bwrap") && argv[i]; i++)
		if (!strcmp(argv[i], "--")) {
			argv += i + 1; /* the compiler's own command, not the sandbox's */
			break;
		}
	if (!argv || !argv[0])
		return xstrdup("");
	if (!(argv[1] && argv[2] && argv[3] && !strcmp(argv[0], "sh") &&
	      !strcmp(argv[3], STAGED_NAME) && argv[4] && argv[5] && argv[6] && argv[7] &&
	      argv[8] && argv[9]))
		return compile_argv_join(argv);
	char *flags = compile_argv_join(argv + 10);
	const char *kept = prefixKept ? " (nvcc's steps, its lines after the last #include "
	                                "preprocessed alone, the #includes' preprocessing kept)"
	                              : "";
	char *r =
	    strcmp(argv[2], stagedDevice)
	        ? xasprintf("%s %s -c %s -o kl_host.o && (%sits fatbinary padded to %d bytes' "
	                    "grain) && %s %s -shared kl_host.o -o out.so",
	                    argv[4], flags, argv[5],
	                    sideBySide ? "nvcc's steps, its host and device halves side by side; "
	                               : "",
	                    FATSLOT_GRAIN, argv[4], flags)
	    : noLink ? xasprintf("%s %s -fatbin %s -o kl_device.fatbin%s && (written into the "
	                         "shared object kept for its host code, at byte %s: no link)",
	                         argv[4], flags, argv[5], kept, argv[6])
	             : xasprintf("%s %s -fatbin %s -o kl_device.fatbin%s && objcopy "
	                         "--update-section .nv_fatbin=kl_device.fatbin kl_host.o && %s %s "
	                         "-shared kl_host.o -o out.so",
	                         argv[4], flags, argv[5], kept, argv[4], flags);
	free(flags);
	return r;
}
