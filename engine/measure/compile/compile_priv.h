/*
 * compile_priv.h - what compile.c and compile_argv.c share: a compiler and
 * its jobs.  Private to engine/measure/compile/.
 */
#ifndef KLOOP_COMPILE_PRIV_H
#define KLOOP_COMPILE_PRIV_H

#include <sys/types.h>

#include "compile.h"
#include "compile_pch.h"
#include "cuda_target.h"
#include "libs.h"
#include "torch_real.h"
#include "util.h"

struct cgroup;
struct torch_ask;

#define LOG_MAX (1 << 20)

struct cjob {
	struct compiler *c;
	struct compile_req req; /* with owned copies of source and name */
	char *zSrc, *zName;
	compile_done_fn done;
	void *arg;
	char zKey[65];
	char *zDir;      /* build directory */
	char **argv;     /* command */
	pid_t pid;       /* running child (sandboxed: its keeper), or 0 */
	int lifeFd;      /* sandboxed: the keeper's life line (proc_spawn), or -1 */
	int fd;          /* its output pipe */
	strbuf log;      /* its output, its first LOG_MAX bytes */
	size_t nDropped; /* the bytes of its output past those */
	double t0;       /* start time */
	long long timer; /* timeout timer */
	int timedOut;
	struct cgroup *cg;        /* its control group (a memory limit for all of it), or NULL */
	unsigned long long memMb; /* its memory limit in MiB (compile_mem_mb) */
	char zMemHow[300];        /* what sized that limit (compile_mem_rule) */
	int memStopped;           /* 1: the memory limit stopped it */
	/* a CUDA source's host part (hostpart.h) hashed with the compile's
	 * command and tools: the name of its kept host object, "" when the
	 * source has none kloop can tell apart (then it is built whole) */
	char zHostKey[65];
	int deviceOnly; /* 1: built from that kept host object, device code only */
	/* the slot of the shared object kept for that host part (fatslot.h),
	 * copied in as kl_linked.so: its offset and size, 0 for none */
	unsigned long long slotAt, slotSize;
	int noLink;     /* 1: its device code went into that shared object (kl_nolink) */
	int sideBySide; /* 1: its host object by nvcc's steps side by side (kl_side) */
	/* a device-only build: the lines of its source up to and with the last
	 * #include (compile_host.c's prefix_lines; -1: none to keep), the key
	 * of their preprocessing kept (pre/PK.ii and pre/PK.h), and 1 where
	 * that was used (kl_spliced) */
	int prefixLines;
	char zPreKey[65];
	int prefixKept;
	int bCutlass;      /* CUDA source #including CUTLASS or CuTe, which no libs gave:
	                      it gets the compiler's own (cutlass below) */
	struct cjob *next; /* queue link */
};

struct compiler {
	struct loop *l;
	char *zCache; /* cache root */
	int jobs;     /* compilers at once */
	int nRunning;
	double timeout; /* seconds per compile */
	/* the CUDA target (cuda_target.h); a compiler for the host only
	 * builds CUDA for sm_90, its compute capability unknown */
	struct cuda_target target;
	int bTarget;            /* 1: target is a device's (compiler_new was given one) */
	char *azCmd[3];         /* compiler per language */
	char *azVersion[3];     /* their --version output (first line), for the key */
	char *zHeaderHash;      /* hash of kloop.h */
	char *zTorchHash;       /* hash of the ATen stand-in's headers (an extension's key) */
	struct compile_pch pch; /* the stand-in precompiled for the C++ compiler */
	char *zCpu;             /* CPU model, part of the key (-march=native) */
	struct cjob *queue;     /* waiting jobs */
	int nPending;
	int sandbox;      /* compilers run inside bubblewrap */
	int bSteps;       /* nvcc's steps side by side (KLOOP_NVCC_STEPS, compile_argv.c) */
	struct libs libs; /* libraries and include paths the candidates get */
	/* CUTLASS for a source that #includes it when no libs named it:
	 * looked for once, at the first such source */
	struct libs cutlass;
	int cutlassTried;
	char zCutlassErr[KL_ERRLEN]; /* why it was not found ("" when it was) */
	/* PyTorch's own headers and libraries, for an extension the stand-in
	 * cannot compile: looked for once, at the first (compiler_torch_real) */
	struct torch_real torchReal;
	struct torch_ask *ask; /* the Python asked for them, while it answers, or NULL */
	char *zTorchRealHash;  /* hash of kloop_torch_real.h and what it includes */
};

/* a C++ candidate's first flags (a C one's with -std=gnu11), which the
 * precompiled stand-in is made with too (compile_pch.h); NULL-terminated */
extern const char *const compile_cxx_flags[];

/* job j's compiler command writing zOut, by its language, the target and
 * what it includes (kloop's headers, libs, CUTLASS, PyTorch's); fresh */
char **compile_argv(struct compiler *c, struct cjob *j, const char *zOut);

/* argv prefixed with bubblewrap's, for the compiler to see only the system
 * and what job j needs (compile_argv.c says what); consumes argv */
char **compile_sandboxed(struct compiler *c, struct cjob *j, char **argv);

/* a CUDA compile in two stages, argv (compile_argv's, consumed) split
 * into nvcc -c (the host object kl_host.o, kept, its fatbinary padded:
 * fatslot.h) and the link; with deviceOnly, nvcc -fatbin of the device code
 * alone, written into the slot of the kept shared object kl_linked.so
 * (j->slotAt, j->slotSize) where it fits, else put into the kept kl_host.o
 * and linked (start_job copied both into the build directory) */
char **compile_staged(struct compiler *c, struct cjob *j, char **argv, int deviceOnly);

/* compile_host.c: a CUDA source with a host part (j->zHostKey) built in two
 * stages (compile_staged), from what an earlier build of its host part kept
 * where there is one (j->deviceOnly, j->slotAt, j->slotSize set); consumes
 * argv */
char **compile_host_staged(struct compiler *c, struct cjob *j, char **argv);

/* compile_host.c: after j built out.so (so, n bytes), keep its host object
 * for the sources that share its host part (not one that names nvcc's module
 * id), and where it linked, so as the object the next device-only build
 * writes its device code into */
void compile_host_keep(struct compiler *c, struct cjob *j, const char *so, size_t n);

/* keep what a device-only build made of its source's lines up to the last
 * #include (their device preprocessing, or that it could not be kept:
 * compile_host.c) */
void compile_prefix_keep(struct compiler *c, struct cjob *j);

/* the command for people: the compiler's, not bubblewrap's; a staged
 * build's as its nvcc lines (noLink: its device code written into the kept
 * shared object); fresh */
char *compile_argv_show(char **argv, int noLink, int sideBySide, int prefixKept);

/* the command as one line; fresh */
char *compile_argv_join(char **v);

/* free a command and its words (NULL is fine) */
void compile_argv_free(char **v);

#endif
