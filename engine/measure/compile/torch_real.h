/*
 * torch_real.h - PyTorch's own C++ headers and libraries, for an extension
 * that uses what kloop's ATen stand-in lacks (issue 38): found once, from
 * $KLOOP_LIBTORCH (a libtorch directory, or "off"), else the PyTorch of the
 * worker's Python (torch.utils.cpp_extension's include and library paths,
 * its C++ ABI), else Debian's libtorch-dev; then the compiler's flags for
 * them (include/kloop_torch_real.h says how such a build binds its module).
 */
#ifndef KL_TORCH_REAL_H
#define KL_TORCH_REAL_H

#include "util.h"

#define TORCH_REAL_MAX_INC 6
#define TORCH_REAL_MAX_DEP 24
#define TORCH_REAL_MAX_DIR 32

struct torch_real {
	int tried;                       /* torch_real_find ran */
	int ok;                          /* 1: found */
	char *azInc[TORCH_REAL_MAX_INC]; /* include directories (-isystem) */
	int nInc;
	char *zLibDir; /* libtorch.so's directory (-L, rpath) */
	int abi;       /* _GLIBCXX_USE_CXX11_ABI, -1: the compiler's */
	int cuda;      /* libtorch_cuda.so is there */
	/* libraries libtorch needs that the loader does not find alone, where
	 * import torch found them (a wheel's nvidia packages): linked too */
	char *azDep[TORCH_REAL_MAX_DEP];
	int nDep;
	/* the directories of the libraries import torch loaded from outside the
	 * system's (the nvidia packages libtorch_cuda's rpath names): shown to
	 * a sandboxed runner (compiler_lib_dirs) */
	char *azDir[TORCH_REAL_MAX_DIR];
	int nDir;
	char zVersion[40];    /* "1.13.1" */
	char zWhere[300];     /* for people: which PyTorch, where */
	char zErr[KL_ERRLEN]; /* why none was found */
};

/* how long zPython may take to answer (an import of torch takes a second
 * or two) */
#define TORCH_REAL_ASK_S 30

/*
 * Find PyTorch's headers and libraries (once: later calls answer the
 * first's); zPython is the interpreter asked (NULL: none).  0, or -1 with
 * t->zErr saying where kloop looked.  It waits for zPython's answer.
 */
int torch_real_find(struct torch_real *t, const char *zPython);

/*
 * The same in two steps, for a caller that must not wait for Python:
 * torch_real_begin answers 0 or -1 as torch_real_find does (a later call,
 * KLOOP_LIBTORCH, no zPython), or 1: run torch_real_ask_argv(zPython)'s
 * command (at most TORCH_REAL_ASK_S seconds) and hand its output, wait
 * status and whether it ran out of time to torch_real_answer, which
 * answers 0 or -1 (Debian's libtorch-dev where zPython has no torch).
 */
int torch_real_begin(struct torch_real *t, const char *zPython);
void torch_real_ask_argv(const char *zPython, char *argv[5]);
int torch_real_answer(struct torch_real *t, const char *zPython, const char *zOut, int rc,
                      int timedOut);

/* the flags of t for a C++ (cuda 0) or nvcc (cuda 1) command, appended to
 * azOut at *pn (fresh strings, at most max): the include directories, the
 * ABI, then the libraries with an rpath (libtorch's, and the ones import
 * torch loaded for them) */
void torch_real_flags(const struct torch_real *t, int cuda, char **azOut, int *pn, int max);

void torch_real_free(struct torch_real *t);

#endif
