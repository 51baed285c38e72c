/*
 * compile_pch.h - the ATen stand-in (include/kloop_torch.h) precompiled for
 * the host's C++ compiler, private to compile*.c: most of a C++ extension's
 * compile was the stand-in's headers (<cmath>, <vector>, <tuple> and its
 * own) parsed again for every candidate; GCC reads them from a .gch made
 * once per compiler, flags and header version, which it finds in a
 * directory before the header's own (-I DIR -include kloop_torch.h) and
 * ignores where it is missing or does not fit (issue 38).
 */
#ifndef KL_COMPILE_PCH_H
#define KL_COMPILE_PCH_H

#include <sys/types.h>

#include "loop.h"

struct compile_pch {
	char *zDir; /* <cache>/pch/<key>: where kloop_torch.h.gch is, or will be; NULL: none */
	pid_t pid;  /* its build running, or 0 */
	int fd;     /* the build's output, -1 when none runs */
	int tried;  /* a build was started (it is not tried twice in a process) */
	struct loop *l;
};

/*
 * Make p's directory under zCache for compiler zCxx (its --version text
 * zVersion) with flags azFlags (NULL-terminated) and the stand-in's headers
 * of hash zTorchHash; none (p->zDir NULL) for a compiler GCC's .gch lookup
 * is not (clang's version).  0, or -1 when the directory cannot be made.
 */
int compile_pch_init(struct compile_pch *p, struct loop *l, const char *zCache, const char *zCxx,
                     const char *zVersion, const char *const *azFlags, const char *zTorchHash);

/*
 * Start building p's kloop_torch.h.gch from zInc/kloop_torch.h with zCxx
 * and azFlags, in the background on p's loop (nice: how much nicer than
 * kloop it runs), unless it is there, a build
 * runs or one was tried: compiles meanwhile parse the header (the build is
 * kloop's own header, not a candidate's: it runs outside the sandbox).
 */
void compile_pch_start(struct compile_pch *p, const char *zCxx, const char *const *azFlags,
                       const char *zInc, int nice);

/* end a build still running (its temporary file removed), free p's strings */
void compile_pch_free(struct compile_pch *p);

#endif
