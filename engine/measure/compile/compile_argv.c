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
 * the rest its flags).  Either way the host object's fatbinary is padded
 * to a whole number of FATSLOT_GRAIN bytes (pad).  Whole: the host object
 * kept as kl_host.o, then linked.  Only the device code: its fatbinary
 * written into the kept shared object (kl_linked.so, copied in) where it
 * fills the slot, else put into the kept host object (.nv_fatbin, which
 * holds nothing else) and linked as nvcc links: either way the bytes of a
 * whole build of the source; kl_nolink says which */
#define STAGED_GRAIN_S STAGED_STR(FATSLOT_GRAIN)
#define STAGED_STR(x) STAGED_STR2(x)
#define STAGED_STR2(x) #x
#define STAGED_HEAD                                                                                \
	"n=$1 s=$2 at=$3 room=$4; shift 4\n"                                                       \
	"pad() { z=$(wc -c <\"$1\") && c=$(( (z + " STAGED_GRAIN_S " - 1) / " STAGED_GRAIN_S       \
	" * " STAGED_GRAIN_S " )) && head -c $((c - z)) /dev/zero >>\"$1\" && echo \"$c\"; }\n"    \
	"whole() {\n"                                                                              \
	"\t\"$n\" \"$@\" -c \"$s\" -o kl_host.o || exit\n"                                         \
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
    "\"$n\" \"$@\" -fatbin \"$s\" -o kl_device.fatbin || exit\n"
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
	(void)c;
	int n = 0;
	while (argv[n])
		n++;
	char **v = xcalloc((size_t)n + 10, sizeof(char *));
	int k = 0;
	v[k++] = xstrdup("sh");
	v[k++] = xstrdup("-c");
	v[k++] = xstrdup(deviceOnly ? stagedDevice : stagedWhole);
	v[k++] = xstrdup(STAGED_NAME);
	v[k++] = argv[0];
	v[k++] = xstrdup(j->zName);
	v[k++] = xasprintf("%llu", deviceOnly ? (unsigned long long)j->slotAt : 0ull);
	v[k++] = xasprintf("%llu", deviceOnly ? (unsigned long long)j->slotSize : 0ull);
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

char *compile_argv_show(char **argv, int noLink)
{
	for (int i = 0; argv && argv[0] && !strcmp(argv[0], "bwrap") && argv[i]; i++)
		if (!strcmp(argv[i], "--")) {
			argv += i + 1; /* the compiler's own command, not the sandbox's */
			break;
		}
	if (!argv || !argv[0])
		return xstrdup("");
	if (!(argv[1] && argv[2] && argv[3] && !strcmp(argv[0], "sh") &&
	      !strcmp(argv[3], STAGED_NAME) && argv[4] && argv[5] && argv[6] && argv[7]))
		return compile_argv_join(argv);
	char *flags = compile_argv_join(argv + 8);
	char *r =
	    !strstr(argv[2], "-fatbin")
	        ? xasprintf("%s %s -c %s -o kl_host.o && (its fatbinary padded to %d bytes' "
	                    "grain) && %s %s -shared kl_host.o -o out.so",
	                    argv[4], flags, argv[5], FATSLOT_GRAIN, argv[4], flags)
	    : noLink ? xasprintf("%s %s -fatbin %s -o kl_device.fatbin && (written into the shared "
	                         "object kept for its host code, at byte %s: no link)",
	                         argv[4], flags, argv[5], argv[6])
	             : xasprintf("%s %s -fatbin %s -o kl_device.fatbin && objcopy --update-section "
	                         ".nv_fatbin=kl_device.fatbin kl_host.o && %s %s -shared kl_host.o "
	                         "-o out.so",
	                         argv[4], flags, argv[5], argv[4], flags);
	free(flags);
	return r;
}
