/*
 * task.h - a task: the tensors a candidate reads and writes, the shape sets,
 * the tolerances, the reference and the seeds, loaded from a directory's
 * task.json (format in docs/TASKS.md).
 */
#ifndef KL_TASK_H
#define KL_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "kloop.h"

#define TASK_MAX_TENSORS 32

enum task_dist { DIST_UNIFORM, DIST_NORMAL, DIST_RANDINT };

struct task_tensor {
	char *zName;         /* tensor name */
	kl_dtype dtype;      /* element type */
	int ndim;            /* dimensions in shape[] */
	int64_t shape[8];    /* resolved extents for the chosen shape set */
	char *azDim[8];      /* symbolic dimension names as written (NULL: literal) */
	enum task_dist dist; /* how random inputs are drawn */
	double a, b;         /* uniform lo/hi, normal mean/std, randint lo/hi */
};

struct task_tol {
	double atol, rtol, rel_l2; /* see docs/TASKS.md */
};

struct task_sources {
	char *zHost;  /* path of the host (C) source, or NULL */
	char *zCuda;  /* path of the cuda source, or NULL */
	char *zTorch; /* path of reference.py (reference only), or NULL */
};

struct task_seeds {
	char **azHost; /* host seed paths */
	int nHost;
	char **azCuda; /* cuda seed paths */
	int nCuda;
};

struct task {
	char *zDir;         /* the task directory (absolute) */
	char *zName;        /* task name */
	char *zDescription; /* one-line description ("" if none) */
	char *zShapeSet;    /* name of the shape set in use ("" if the task has none) */
	char **azShapeSets; /* every shape set's name */
	int nShapeSets;
	struct task_tensor aIn[TASK_MAX_TENSORS];
	int nIn;
	struct task_tensor aOut[TASK_MAX_TENSORS];
	int nOut;
	struct task_tol aTol[8]; /* per kl_dtype, defaults overridden by the task */
	struct task_sources ref; /* the reference per backend */
	struct task_seeds seeds; /* the seeds per backend */
};

/*
 * Load DIR/task.json (DIR may also be a path to a task.json itself), resolving
 * shapes with the set named zShapeSet (NULL: the set named zBackend if it
 * exists, else the only set, else the first).  Returns a task the caller frees
 * with task_free(), or NULL with err naming the file, the field and what was
 * expected.
 */
struct task *task_load(const char *zDir, const char *zBackend, const char *zShapeSet, char *err);
void task_free(struct task *t);

/*
 * Find a task by name or path: an existing directory or task.json path is
 * used as it is; otherwise a bundled task of that name.  Returns a fresh path
 * the caller frees, or NULL with err saying which names exist.
 */
char *task_resolve(const char *zNameOrPath, char *err);

/* the directory of the bundled tasks (static string) */
const char *task_bundled_dir(void);

/* dtype helpers */
size_t task_dtype_size(kl_dtype d);
const char *task_dtype_name(kl_dtype d);
/* parse "f32" etc.; 0 or -1 */
int task_dtype_parse(const char *z, kl_dtype *pOut);
/* default tolerance for a dtype */
struct task_tol task_default_tol(kl_dtype d);
/* elements in a tensor */
int64_t task_numel(const struct task_tensor *t);
/* "rows=64 cols=4096"-style description of shape: "[64, 4096]"; caller frees */
char *task_shape_str(const struct task_tensor *t);

#endif
