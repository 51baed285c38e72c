/*
 * torchext.h - the field's candidates as they are (issue 38): besides a
 * file defining kl_run, a PyTorch extension (torch::Tensor functions named
 * by PYBIND11_MODULE or TORCH_LIBRARY) and a KernelBench ModelNew module
 * (its forward calls a function of a load_inline module).  Tells a
 * candidate's form and language from its name and text; makes a ModelNew
 * one extension source (modelnew.py reads it in a python3 -I -S process
 * that parses and runs none of it); says what an extension uses that
 * kloop's ATen stand-in (include/kloop_torch.h) lacks; and the form a
 * verdict records.  Used by the worker (compile), the front ends (which
 * files are candidates, on which backend), the LLM's replies and export.
 */
#ifndef KL_TORCHEXT_H
#define KL_TORCHEXT_H

#include <cJSON.h>
#include <stddef.h>

#include "task.h"

enum torchext_form {
	TORCHEXT_KERNEL,    /* a file defining kl_run */
	TORCHEXT_EXTENSION, /* a PyTorch extension: torch include + PYBIND11_MODULE/TORCH_LIBRARY */
	TORCHEXT_MODELNEW,  /* a KernelBench ModelNew module (.py) */
};

/* "kernel", "extension", "modelnew" */
const char *torchext_form_name(enum torchext_form f);
/* the form named z into *pOut: 0, or -1 for another word */
int torchext_form_parse(const char *z, enum torchext_form *pOut);

/* the form of candidate zName (a path or a base name) whose source is
 * z[0..n): .py is a ModelNew; a C, C++ or CUDA file that includes a torch
 * header (torch/, ATen/, c10/) and has PYBIND11_MODULE or TORCH_LIBRARY, or
 * defines a function of tensors and no kl_run (a bare extension), is an
 * extension; anything else a kernel */
enum torchext_form torchext_form_of(const char *zName, const char *z, size_t n);

/* 1 when z[0..n) is an extension's text (the test torchext_form_of makes of
 * a C++ or CUDA file): for a reply's code block, whose name is not known */
int torchext_is_extension(const char *z, size_t n);

/*
 * The language candidate zName compiles as (enum compile_lang), -1 for a
 * name kloop does not take: a kernel's by its extension (.c, .cpp, .cu); an
 * extension or a ModelNew is CUDA when it is a .cu file or its text has
 * __global__ kernels or <<< launches, else C++ (a ModelNew's own reading in
 * the worker, by its cuda_sources, has the last word).
 */
int torchext_lang_of(const char *zName, const char *z, size_t n);

/*
 * Whether candidate zPath (its text z, n bytes) runs on backend zBackend:
 * CUDA code (a .cu file, an extension or ModelNew with kernels) on the cuda
 * backend, the rest on the host.  0, or -1 + err naming the backend it
 * needs.  A ModelNew without kernels in its text passes: the worker's
 * reading of its cuda_sources decides.
 */
int torchext_check_backend(const char *zPath, const char *z, size_t n, const char *zBackend,
                           char *err);

/* 1 when zName ends in an extension kloop takes as a candidate (.c .cc .cpp
 * .cxx .cu .py) */
int torchext_known_name(const char *zName);

/* the name zName's source compiles under in language lang (a ModelNew's
 * "m.py" as "m.cpp" or "m.cu"; an extension's "e.cpp" with kernels as
 * "e.cu"): a fresh string */
char *torchext_compile_name(const char *zName, int lang);

/* the function an extension's module names for kloop to call, as the
 * stand-in picks it ("forward" when a def or impl names it, else the first
 * named; for a bare extension, torchext_bare_entry's) into zOut; "" when
 * none is found */
void torchext_entry_of(const char *z, size_t n, char *zOut, size_t nOut);

/*
 * A bare extension: a C++ or CUDA file that includes a torch header and
 * defines functions of tensors at file scope but no module (no
 * PYBIND11_MODULE or TORCH_LIBRARY: CUDA-L2's kernels, whose module is
 * built apart).  1 and its entry point in zOut (the function named
 * forward, else the only one); -1 when it defines several and none is
 * forward (zOut: their names, ", " between); 0 when z[0..n) is no bare
 * extension.  torchext_with_init writes the module load_inline would.
 */
int torchext_bare_entry(const char *z, size_t n, char *zOut, size_t nOut);

/*
 * The kinds of the parameters of the function the C++ or CUDA text z[0..n)
 * names zName (the function m.def("NAME", &fn) or m.impl binds, else the
 * function of that name), as the text declares it (its definition, else a
 * declaration), into zOut, one character each: 't' a tensor
 * (torch::Tensor, its references, c10::optional of one), 'n' a number
 * ("tn" for f(torch::Tensor x, int64_t d); "" for none).  0, or -1 where no
 * declaration of it is found.
 */
int torchext_entry_params(const char *z, size_t n, const char *zName, char *zOut, size_t nOut);

/* a ModelNew made one C++ or CUDA source */
struct torchext_src {
	char *zSource;    /* the source: the cpp pieces, the cuda pieces, the bindings, the plan */
	size_t nSource;   /* its length */
	int lang;         /* LANG_CPP or LANG_CUDA */
	char *zName;      /* the name it compiles under ("m.cu" for "m.py") */
	char zEntry[64];  /* the function forward calls */
	char zNotes[400]; /* what kloop ignored (extra_cuda_cflags, ...), "" if nothing */
};

/*
 * Read ModelNew module zName (its text z, n bytes) with zPython (-I -S:
 * modelnew.py parses it, nothing of it runs) and make it one extension
 * source for task t: forward's parameters take its inputs in order;
 * self.NAME of a parameter or buffer the input of that name; self.X that
 * __init__ sets from its parameter the value the problem's
 * get_init_inputs() gives that parameter (t->aInit: by position, by name
 * for a dict; else the parameter's default).  0 and *out
 * (torchext_src_free), or -1 and err naming the module's line and what
 * kloop takes.
 */
int torchext_modelnew(const char *zPython, const char *zName, const char *z, size_t n,
                      const struct task *t, struct torchext_src *out, char *err);

/*
 * The source extension zBase compiles as for task t: its text z[0..n),
 * then, where the problem's get_init_inputs() gives values (t->aInit), the
 * stand-in's table of them after a #line naming it (an init_registrar: the
 * entry point's scalar parameters take them in order), and for a bare
 * extension the PYBIND11_MODULE naming its entry point.  A fresh string,
 * its length in *pn.
 */
char *torchext_with_init(const char *z, size_t n, const struct task *t, const char *zBase,
                         size_t *pn);
void torchext_src_free(struct torchext_src *s);

/* modelnew.py's path: $KLOOP_MODELNEW, else beside torchref.py (static) */
const char *torchext_script(void);

/*
 * A failed compile of extension zName against the stand-in: when its log
 * zLog says the code uses a name the stand-in lacks (torch::matmul,
 * at::Tensor::add_, a header), the words saying so into zOut ("e.cpp uses
 * torch::matmul, which kloop's ATen stand-in does not provide; ...") and
 * 1, else 0.
 */
int torchext_diagnose(const char *zName, const char *zLog, char *zOut, size_t nOut);
/* the names compile log zLog says the stand-in lacks ("torch::matmul and
 * at::softmax") into zOut; how many (0: none) */
int torchext_missing(const char *zLog, char *zOut, size_t nOut);

/* what a verdict records of a candidate that is not a kernel */
struct torchext_note {
	enum torchext_form form;
	int cuda;         /* it compiled as CUDA */
	char zEntry[64];  /* its entry point ("" unknown) */
	unsigned copied;  /* outputs filled by copying a result (a bit each) */
	char zNotes[400]; /* what kloop ignored of it, "" if nothing */
	/* built against PyTorch's own headers: which PyTorch ("PyTorch 1.13.1
	 * of the system (...)"), and what the stand-in lacks; "" on the stand-in */
	char zPytorch[300];
	char zLacks[200];
};

/* n as the result's "candidate_form" object: {form, via ("stand-in" or
 * "pytorch"), pytorch?, stand_in_lacks?, language, entry?, copied: [names
 * of azOut (nOut)]?, notes?} */
cJSON *torchext_note_json(const struct torchext_note *n, char *const *azOut, int nOut);

/*
 * The words for a result's "candidate_form" object o into zOut: "a PyTorch
 * extension (C++), entry point forward, on kloop's ATen stand-in; output y
 * copied from the tensor it returned (the copy is in its time)"; 0, or -1
 * when o is not one.
 */
int torchext_note_line(const cJSON *o, char *zOut, size_t nOut);

#endif
