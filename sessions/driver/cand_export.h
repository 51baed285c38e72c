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

/* the line (at a line's start, among the first of the module) by which a
 * module `export --kernelbench` wrote says which candidate it holds: this,
 * then a JSON object {id, name, form, status, bytes, sha256} (a ModelNew's
 * source starts on the next line) */
#define CAND_EXPORT_MARK "# kloop-candidate: "

/* a candidate read back from a module `export --kernelbench` wrote */
struct cand_exported {
	int id;           /* its id in the session it was exported from */
	char *zName;      /* its name there ("softmax.cpp") */
	char *zSource;    /* its source */
	char zForm[16];   /* "kernel", "extension", "modelnew" */
	char zStatus[32]; /* its verdict when it was exported */
	int edited;       /* the source differs from the one exported (its sha256) */
};

/*
 * Whether z[0..n) is a module `export --kernelbench` wrote: 1 and *x (for
 * cand_exported_free()) with the candidate's name and source as they were
 * (a ModelNew's module before the problem appended to it; an extension's
 * _KLOOP_SOURCE, a kernel's _SOURCE), 0 when it is not one, -1 + err when
 * it is one whose source cannot be read back (its line edited out of what
 * kloop wrote).
 */
int cand_export_read(const char *z, size_t n, struct cand_exported *x, char *err);
void cand_exported_free(struct cand_exported *x);

/* what cand_export_write() wrote for c, in one line (no newline) appended to
 * sb: "wrote candidate 3 to out.cu (2104 bytes), to m.py as a KernelBench
 * ModelNew module"; withNote: then "; note: its last verdict is V" when c
 * is not correct */
void cand_export_said(const struct cand *c, const struct cand_export *x, int withNote, strbuf *sb);

#endif
