/*
 * libs.h - libraries and include paths a task or a flag gives candidates
 * (cuBLAS, cuBLASLt, cuDNN, CUTLASS/CuTe headers, any -lNAME, a header
 * directory or a library file): found on this machine once, then turned into
 * the compiler's flags for each language.  `kloop doctor` shows what it finds.
 */
#ifndef KL_LIBS_H
#define KL_LIBS_H

#include "util.h"

#define LIBS_MAX 16

struct lib_item {
	char *zName;    /* as written: "cublas", "m", "/opt/cutlass/include", "libfoo.so" */
	char *zIncDir;  /* include directory to add (-I), or NULL */
	char *zIncDir2; /* a second one (CUTLASS's tools/util/include), or NULL */
	char *zLibDir;  /* directory of the library (-L, rpath), or NULL */
	char *zLibFile; /* the library's file name there (linked as -l:FILE), or NULL */
	char *zLibPath; /* a library given by path (linked as it is), or NULL */
	char *zFound;   /* what was found, for people ("/usr/lib/.../libcublas.so.13") */
	/* a flag nvcc needs for it (cutlass: --expt-relaxed-constexpr, for
	 * CuTe), a static string, or NULL */
	const char *zNvccFlag;
};

struct libs {
	struct lib_item a[LIBS_MAX];
	int n;
};

/*
 * Add the words of zList (spaces or commas between them) to L: a known name
 * (cublas, cublasLt, cudnn: looked for in the CUDA toolkit, $CUDA_HOME,
 * /usr/local, /opt and the system's library directories; cutlass, cute:
 * CUTLASS's include/ and tools/util/include, with nvcc's
 * --expt-relaxed-constexpr, in $CUTLASS_DIR alone where it is set, else
 * the CUDA toolkit, /usr/local/cutlass, /opt/cutlass, ~/cutlass, the kloop
 * checkout's .devdeps/cutlass, /usr/local/include), any other NAME (libNAME.so or libNAME.a in
 * those directories, as -lNAME would), a directory (an include path) or a .so / .a file (a word
 * with a '/', or naming something in zBaseDir); relative paths are taken from zBaseDir (NULL: the
 * current directory).  0, or -1 with err naming the word and where it was looked for.
 */
int libs_add(struct libs *L, const char *zList, const char *zBaseDir, char *err);
void libs_free(struct libs *L);

/* 1 when L has CUTLASS's headers (the word cutlass or cute) */
int libs_have_cutlass(const struct libs *L);
/* 1 when source zSrc has an #include of a CUTLASS or CuTe header
 * ("cutlass/...", <cute/...>): it gets CUTLASS without --libs */
int libs_source_includes_cutlass(const char *zSrc);

/* append L's compiler flags for a CUDA (nvcc, cuda = 1) or C/C++ (cc)
 * command to azOut at *pn (fresh strings; *pn advanced, at most max): the
 * include paths and the flags nvcc needs for them (once each), then each
 * library with an rpath to its directory */
void libs_flags(const struct libs *L, int cuda, char **azOut, int *pn, int max);

/* CUTLASS's version "4.7.0" from zIncDir/cutlass/version.h (CUTLASS_MAJOR,
 * _MINOR, _PATCH) into zOut: 0, or -1 where the file or a number is missing */
int libs_cutlass_version(const char *zIncDir, char *zOut, size_t n);

/* the well-known libraries kloop doctor reports: names, NULL-terminated */
extern const char *const libs_known[];

#endif
