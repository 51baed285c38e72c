/*
 * compile.h - compiling candidates into shared objects: the compiler command
 * per language (C, C++, CUDA), parallel compiler jobs on the event loop, and
 * a cache keyed by the SHA-256 of source, flags, the ABI header and the
 * compiler's version.  Used inside kloop-worker.
 */
#ifndef KL_COMPILE_H
#define KL_COMPILE_H

/* how much nicer a compile runs than kloop: compiles are work ahead of the
 * GPU, and yield the CPU to a candidate being timed and to the PyTorch
 * helper (a search's torch.compile baseline) */
#define COMPILE_NICE 10

#include <stddef.h>

#include "cuda_target.h"
#include "loop.h"

enum compile_lang { LANG_C, LANG_CPP, LANG_CUDA };

struct compile_req {
	const char *zSource; /* source text */
	size_t nSource;      /* its length */
	enum compile_lang lang;
	const char *zName; /* file name shown in diagnostics, e.g. "cand.cu" */
	/* a PyTorch extension: COMPILE_TORCH_STANDIN compiles it against
	 * kloop's ATen stand-in (include/kloop_torch.h, its torch/extension.h
	 * and the like under -I<include>/kloop_torch); COMPILE_TORCH_REAL
	 * against PyTorch's own headers and libraries (compiler_torch_real
	 * found them; include/kloop_torch_real.h binds the module); 0: none */
	int torch;
};
enum { COMPILE_TORCH_STANDIN = 1, COMPILE_TORCH_REAL = 2 };

struct compile_result {
	int ok;     /* 1: a shared object was produced */
	int cached; /* 1: it came from the cache */
	/* 1: a CUDA source whose host part (hostpart.h) an earlier compile had:
	 * only its device code was compiled, into that compile's host object
	 * (the same bytes as a whole build) */
	int deviceOnly;
	/* 1: deviceOnly, and its device code written into the shared object
	 * last linked from that host object, no link (fatslot.h; the same
	 * bytes again) */
	int noLink;
	/* 1: built whole, its host object by nvcc's own steps with the host
	 * and device halves side by side (compile_argv.c; the same bytes) */
	int sideBySide;
	/* 1: device code only, its lines after the last #include preprocessed
	 * alone, the preprocessing of those up to it kept from an earlier edit
	 * (compile_host.c; the same bytes) */
	int prefixKept;
	char *zSo;      /* path of the shared object (ok only) */
	char *zLog;     /* the compiler's output, verbatim ("" if none) */
	char *zCommand; /* the command line, for the report */
	double seconds; /* wall time of the compile (0 when cached) */
	char zKey[65];  /* the cache key */
	/* the hash of the machine code in the object (codehash.h), "" when
	 * not ok: equal for sources that differ only in what does not change
	 * the code that runs */
	char zCodeHash[65];
	char zWhy[256]; /* on failure: one line saying why ("exited with status 1", "timed out") */
	/* 1: the compiler was ended by SIGTERM from outside kloop (which ends
	 * its compilers with SIGKILL): whoever sent it is stopping this
	 * process's job too (Slurm's scancel signals every process of the
	 * step), so the failure says nothing about the source */
	int stopped;
	char zTarget[16]; /* a CUDA compile's target ("sm_90a", cuda_target.h), "" on the host */
	/* on failure, code that needs a target this build lacks: the words
	 * naming the target, the device's compute capability and the fix
	 * (also the log's last line); "" otherwise */
	char zHint[512];
	/* not 0: the compile's memory limit stopped it, a limit of this many
	 * MiB; zWhy then says "the compile reached its memory limit of N MiB
	 * (KLOOP_COMPILE_MEM_MB)" */
	unsigned long long memLimitMb;
};

/* called once per request; r and its strings are freed after the call */
typedef void (*compile_done_fn)(struct compile_result *r, void *arg);

struct compiler;

/*
 * A compiler service over loop l, caching under zCacheDir, running at most
 * jobs compilers at once, building CUDA for the device's target *pTarget
 * (copied; cuda_target_choose) or, NULL, for sm_90 with no device known.
 * Reads each compiler's version once.  NULL + err on failure.
 */
struct compiler *compiler_new(struct loop *l, const char *zCacheDir, int jobs,
                              const struct cuda_target *pTarget, char *err);

/* the device's target the compiler was made with, NULL for none (it
 * belongs to the compiler) */
const struct cuda_target *compiler_target(const struct compiler *c);
void compiler_free(struct compiler *c);

/*
 * Give every later compile the libraries and include paths of zList (words:
 * cublas, cublasLt, cudnn, cutlass, any NAME for -lNAME, a header directory,
 * a .so or .a; libs.h), found now; relative paths from zBaseDir.  They are
 * part of the command and so of the cache key.  0 or -1 + err naming the
 * word that was not found.
 */
int compiler_add_libs(struct compiler *c, const char *zList, const char *zBaseDir, char *err);

/*
 * The directories those libraries give: with bIncludes their include
 * directories too.  A sandboxed compiler (bIncludes) or runner sees them
 * read-only.  Fresh NULL-terminated strings (compiler_dirs_free).
 */
char **compiler_lib_dirs(const struct compiler *c, int bIncludes);
void compiler_dirs_free(char **az);

/* set the per-compile timeout in seconds (default 300) */
void compiler_set_timeout(struct compiler *c, double seconds);

/* queue a compile; done is called from the loop (or at once on a cache hit
 * when called outside the loop's callbacks is not required).  0 or -1 + err. */
int compiler_submit(struct compiler *c, const struct compile_req *req, compile_done_fn done,
                    void *arg, char *err);

/*
 * PyTorch's own headers and libraries for COMPILE_TORCH_REAL (torch_real.h:
 * $KLOOP_LIBTORCH, else zPython's torch, else Debian's libtorch-dev), looked
 * for at the first call: 0, or -1 + err saying where kloop looked and what
 * to install.  _where: which PyTorch, for people ("" before it was found).
 */
int compiler_torch_real(struct compiler *c, const char *zPython, char *err);
/*
 * The same without waiting for Python (a worker serves its other requests
 * meanwhile): 0 when the answer is known now (compiler_torch_real gives
 * it), 1 when zPython is being asked, and done(arg) is called from the
 * loop once it has answered (or did not within TORCH_REAL_ASK_S seconds);
 * callers that ask while it answers wait for the same answer.
 * compiler_torch_real says "still asking" until then.
 */
typedef void (*compile_torch_fn)(void *arg);
int compiler_torch_real_start(struct compiler *c, const char *zPython, compile_torch_fn done,
                              void *arg);

/* a copy of r (its strings fresh), for a result kept past its callback;
 * compile_result_free frees one */
struct compile_result *compile_result_dup(const struct compile_result *r);
void compile_result_free(struct compile_result *r);
const char *compiler_torch_real_where(const struct compiler *c);
/* 1 when the PyTorch found has CUDA (libtorch_cuda.so): a CUDA extension
 * can be built against it */
int compiler_torch_real_cuda(const struct compiler *c);

/* run the compilers inside bubblewrap, seeing only the system, the
 * candidate's build directory and kloop's include directory (default: off;
 * the worker turns it on with its sandbox) */
void compiler_set_sandbox(struct compiler *c, int on);

/*
 * Open a cached shared object for loading: its SHA-256 must match the one
 * recorded when it was compiled; returns a sealed memfd holding a copy (so
 * nothing can change it afterwards), or -1 + err.
 */
int compiler_open_so(struct compiler *c, const char *zSo, char *err);

/* number of compiles queued or running */
int compiler_pending(struct compiler *c);

/* what the memory a compile may hold is sized from (compile_mem_rule) */
struct compile_mem_facts {
	unsigned long long
	    cgroupMb; /* the limit on kloop's own cgroup (cgroup_own_memory_limit), MiB; 0: none */
	unsigned long long totalMb; /* /proc/meminfo's MemTotal, MiB (0: unknown) */
	unsigned long long availMb; /* its MemAvailable, MiB (0: unknown) */
	int jobs;                   /* compiles at once */
	const char *zEnv;           /* KLOOP_COMPILE_MEM_MB, or NULL */
};

/*
 * The memory limit of one compile in MiB, from f: KLOOP_COMPILE_MEM_MB when
 * it is a positive number, else what the machine can give: MemAvailable
 * plus what it may still grow by up to its cgroup's limit (a VM whose
 * memory grows as it is used starts with a MemTotal far below that limit),
 * no more than that limit (else MemTotal); halved and shared by the
 * compiles at once, raised to 8 GiB where half of what it can give holds
 * that, and at least 2 GiB (or half the machine on one smaller).  zHow gets
 * what it came from ("KLOOP_COMPILE_MEM_MB=300", "the cgroup's limit 131072
 * MiB, 130048 MiB of it available, 16 compiles at once").  Pure: for tests.
 */
unsigned long long compile_mem_rule(const struct compile_mem_facts *f, char *zHow, size_t nHow);

/* compile_mem_rule with this machine's facts now, for jobs compiles at once
 * (zHow may be NULL) */
unsigned long long compile_mem_mb(int jobs, char *zHow, size_t nHow);

/* language from a file name's extension (.c, .cc/.cpp/.cxx, .cu); -1 if unknown */
int compile_lang_from_name(const char *zName);

/* directory holding kloop.h for candidates (static string) */
const char *compile_include_dir(void);

#endif
