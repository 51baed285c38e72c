/*
 * cand_import.h - a batch of files brought into a session as candidates
 * (`kloop import`, issue 38): the files a list of paths and directories
 * names, each read and told apart (a kl_run kernel, a PyTorch extension, a
 * KernelBench ModelNew, a module `kloop export --kernelbench` wrote, whose
 * candidate is read back as it was) or said not to be a candidate and why,
 * and named uniquely in the session.  The evaluation is the driver's.
 */
#ifndef KL_CAND_IMPORT_H
#define KL_CAND_IMPORT_H

#include "state.h"
#include "torchext.h"
#include "util.h"

/* at most this many files in one import */
#define CAND_IMPORT_MAX 4096

/* one file of the batch */
struct cand_import {
	char *zPath;             /* the file as found: a path given, or DIR/... */
	char *zShow;             /* as a table shows it: a path given, or the path below DIR */
	char *zName;             /* the candidate's name in the session (cand_import_names()) */
	char *zSource;           /* its source (an export's candidate: as it was exported) */
	enum torchext_form form; /* what it is */
	int lang;                /* enum compile_lang; -1 where not known */
	int exportId;            /* read back from candidate N of a kloop export (0: not one) */
	int edited;              /* ... whose source was edited since the export */
	char *zError;            /* not a candidate: why, naming the file (NULL: it is one) */
	int present;             /* the session holds its source already: that candidate's id */
	int candId;              /* its candidate in the session, once added (0: none) */
};

/* the batch */
struct cand_import_list {
	struct cand_import *a;
	int n;
	strbuf skipped; /* files found in a directory that are no source (their
	                 * names, ", " between), not counted as errors */
	int nSkipped;
};

/*
 * The files azArg[0..nArg) name, into *out (cand_import_list_free()): a
 * file as it is; a directory's files, in its subdirectories too (names in
 * byte order, hidden ones and __pycache__ left out, links to directories
 * not followed), those whose names kloop takes as sources (.c .cc .cpp
 * .cxx .cu .py) and not the file zSkip (the problem; NULL: none), the
 * others in out->skipped.  A path that is not there is an entry with its
 * error.  0, or -1 + err when there are more than CAND_IMPORT_MAX.
 */
int cand_import_list(const char *const *azArg, int nArg, const char *zSkip,
                     struct cand_import_list *out, char *err);
void cand_import_list_free(struct cand_import_list *l);

/*
 * Read file x->zPath and tell what it is for backend zBackend: its source,
 * form and language into x, with a kloop export's candidate read back; or
 * x->zError saying why it is not a candidate ("x.py defines no class
 * ModelNew: ...", "notes.txt: not a source kloop takes: ...").  0 when it
 * is one, -1 when not.
 */
int cand_import_read(struct cand_import *x, const char *zBackend);

/*
 * Name each candidate of l in session st: its base name (an export's
 * candidate: the name it had), where the session or an earlier file of l
 * has it already its directory's name before it ("run2-kernel.py"), then
 * "-2", "-3" before the extension; and mark each whose source a candidate
 * of st holds already (x->present).
 */
void cand_import_names(struct cand_import_list *l, const struct state *st);

/* "extension C++", "ModelNew CUDA", "kernel C": x's form in a word and
 * its language, into buf */
void cand_import_form(const struct cand_import *x, char *buf, size_t n);

#endif
