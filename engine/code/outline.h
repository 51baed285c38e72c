/*
 * outline.h - the outline of a C, C++ or CUDA source: its function
 * definitions (kernels, device functions, host functions) with their
 * parameters, __launch_bounds__ and line ranges, and its kernel launch
 * sites (kernel<<<grid, block, smem, stream>>>(...)) with the text of each
 * configuration expression.  Read from a syntax_doc; a source with syntax
 * errors gives a partial outline (what tree-sitter recovered) plus the
 * errors.  splice and tunables build on the byte ranges recorded here.
 */
#ifndef KL_OUTLINE_H
#define KL_OUTLINE_H

#include <cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "syntax.h"

enum outline_kind {
	OUTLINE_KERNEL, /* __global__ */
	OUTLINE_DEVICE, /* __device__ (perhaps also __host__) */
	OUTLINE_HOST,   /* neither: ordinary C/C++ */
};

struct outline_param {
	char *text; /* the declaration as written, e.g. "const float *__restrict__ A" */
	char *name; /* the declared name, "" when unnamed */
};

/* a function definition (not a declaration) outside any class body */
struct outline_func {
	enum outline_kind kind;
	char *name;            /* as declared: "gemm_tiled", "Foo::bar" for out-of-line members */
	char *qualname;        /* with enclosing namespaces: "ln::row_var" */
	char *template_params; /* "<int BM, int BN, int BK>" or NULL */
	char *launch_bounds;   /* "THREADS, MIN_BLOCKS" (inside the parentheses) or NULL */
	struct outline_param *params;
	size_t n_params;
	int host_device;                 /* 1 for __host__ __device__ */
	int extern_c;                    /* 1 inside or under extern "C" */
	int member;                      /* 1 when defined inside a class, struct or union body */
	unsigned line;                   /* first line of the definition, template<> included */
	unsigned end_line;               /* last line */
	unsigned name_line, name_column; /* where the name is */
	/* byte ranges: the item (template_declaration or `extern "C"` wrapper
	 * included when they hold only this function), the function_definition
	 * itself, and its body */
	uint32_t item_start, item_end;
	uint32_t def_start, def_end;
	uint32_t body_start, body_end;
	int wrapped_extern_c; /* 1 when item includes a direct `extern "C"` */
};

/* a kernel launch: callee<<<config...>>>(args) */
struct outline_launch {
	char *kernel;        /* the callee without template arguments: "ln::row_mean" */
	char *template_args; /* "<64, 64, TILE_K>" or NULL */
	char *config[4];     /* grid, block, smem, stream: the expressions' text, NULL if absent */
	uint32_t config_start[4], config_end[4]; /* their byte ranges (0, 0 if absent) */
	size_t n_config;                         /* expressions given (2 to 4 in valid CUDA) */
	char *caller;          /* the enclosing function's name, NULL at file scope */
	unsigned line, column; /* where the launch starts */
	uint32_t start, end;   /* byte range of the whole call */
	/* the template argument list's byte range (0, 0 if none) */
	uint32_t targs_start, targs_end;
};

struct outline {
	struct outline_func *funcs; /* in source order */
	size_t n_funcs;
	struct outline_launch *launches; /* in source order */
	size_t n_launches;
	struct syntax_error *errors; /* at most OUTLINE_MAX_ERRORS */
	size_t n_errors;
	size_t n_errors_total; /* all errors, of which n_errors are listed */
};

#define OUTLINE_MAX_ERRORS 20

/*
 * Build the outline of d into *o (which the caller frees with
 * outline_free(), also on error).  Returns 0; the walk cannot fail on any
 * input, but keeps the 0/-1 + err convention for callers.
 */
int outline_build(const struct syntax_doc *d, struct outline *o, char *err);
/* free everything o holds and zero it */
void outline_free(struct outline *o);

/* the name of a kind: "kernel", "device", "host" */
const char *outline_kind_name(enum outline_kind k);

/*
 * The function called `name` in o: an exact match of the qualified name
 * ("ln::row_var") or of the declared name, else the only function whose
 * unqualified name matches.  NULL when there is none or the unqualified
 * name is ambiguous.
 */
const struct outline_func *outline_find(const struct outline *o, const char *name);

/*
 * The outline as JSON: {"kernels": [...], "device_functions": [...],
 * "host_functions": [...], "launches": [...], "errors": [...]}, each
 * function with name, qualname, line, end_line, params, template,
 * launch_bounds, extern_c; each launch with kernel, line, column,
 * template_args, config {grid, block, smem, stream}, caller; each error
 * with line, column, message.  The caller owns the object (cJSON_Delete).
 */
cJSON *outline_json(const struct outline *o);

#endif
