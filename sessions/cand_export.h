/*
 * cand_export.h - a candidate of a session written out for people outside
 * kloop: its plain source, or a KernelBench ModelNew module for a
 * KernelBench-style harness to import and compare against the problem's
 * Model (docs/EXPORT.md).  Used by `kloop export` and by the `export`
 * command of the TUI and the REPL alike.
 */
#ifndef KL_CAND_EXPORT_H
#define KL_CAND_EXPORT_H

#include "state.h"
#include "util.h"

/* what to write: each a file name, or NULL when not wanted */
struct cand_export {
	const char *zSource;      /* the candidate's source, as it is */
	const char *zCuda;        /* the same, for a CUDA candidate only */
	const char *zKernelbench; /* a Python module with ModelNew */
	const char *zProblem;     /* the KernelBench problem FILE.py (NULL: the session's, or its
	                           * task's reference.torch) */
};

/*
 * Write candidate c of the session st (journaled at zJournal) as x asks.
 * An output that would overwrite the journal, the problem file or another
 * output is refused before anything is written.  0, or -1 + err.
 */
int cand_export_write(const struct state *st, const char *zJournal, const struct cand *c,
                      const struct cand_export *x, char *err);

/* what cand_export_write() wrote for c, in one line (no newline) appended to
 * sb: "wrote candidate 3 to out.cu (2104 bytes), to m.py as a KernelBench
 * ModelNew module"; withNote: then "; note: its last verdict is V" when c
 * is not correct */
void cand_export_said(const struct cand *c, const struct cand_export *x, int withNote, strbuf *sb);

#endif
