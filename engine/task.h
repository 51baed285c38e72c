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
	int fixed;           /* init.vary false: checked sets keep its distribution (a
	                      * probability, a mask: values a scale or an outlier
	                      * would take out of the problem's domain) */
};

/* the kl_dtype values (kloop.h), KL_F32 to KL_E4M3 */
#define TASK_NDTYPE 9

struct task_tol {
	double atol, rtol, rel_l2; /* see docs/TASKS.md */
};

struct task_sources {
	char *zHost;  /* path of the host (C) source, or NULL */
	char *zCuda;  /* path of the cuda source, or NULL */
	char *zTorch; /* path of reference.py (reference only), or NULL */
};

/* the arithmetic a task's products run in (task.json "compute"), which
 * picks its roofline's compute floor (roofline.h); the low-precision ones
 * multiply their inputs' type and accumulate in fp32 */
typedef enum {
	TASK_FP32, /* fp32 FMA on CUDA cores (fp64 too: no floor of its own) */
	TASK_TF32, /* fp32 inputs through TF32 tensor cores */
	TASK_FP16, /* fp16 inputs, fp32 accumulation */
	TASK_BF16, /* bf16 inputs, fp32 accumulation */
	TASK_FP8,  /* fp8 e4m3 inputs, fp32 accumulation */
	TASK_INT8, /* int8 inputs, int32 accumulation */
	TASK_NCOMPUTE
} task_compute;

/* a value a KernelBench problem's get_init_inputs() gives Model's
 * constructor (issue 38): a ModelNew's self.X set from __init__'s argument
 * and an extension's scalar parameters take the numbers */
#define TASK_MAX_INIT 16
enum task_init_kind {
	TASK_INIT_OTHER, /* not a number (a tuple, a string): zType says what */
	TASK_INIT_INT,
	TASK_INIT_FLOAT,
	TASK_INIT_BOOL,
};
struct task_init {
	char *zName; /* __init__'s parameter it fills ("init0"... where unknown) */
	enum task_init_kind kind;
	long long i;    /* an int's or a bool's value */
	double f;       /* a float's */
	char zType[24]; /* Python's name of its type ("int", "float", "tuple") */
};

struct task_seeds {
	char **azHost; /* host seed paths */
	int nHost;
	char **azCuda; /* cuda seed paths */
	int nCuda;
	/* what each seed needs ("cutlass": a CUTLASS/CuTe seed, used where
	 * kloop finds CUTLASS), NULL where nothing; parallel to azHost, azCuda */
	char **azHostNeeds, **azCudaNeeds;
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
	struct task_tol aTol[TASK_NDTYPE]; /* per kl_dtype, defaults overridden by the task */
	const char *zTolFrom;              /* where the float tolerances come from (static string):
	                                    * "default", "task.json", "kernelbench" or "flags" */
	const char *zTolFromInt;           /* ... and the integer ones, which KernelBench's
	                                      tolerance and --atol/--rtol leave as they were
	                                      (static string; NULL: as zTolFrom) */
	struct task_sources ref;           /* the reference per backend */
	struct task_seeds seeds;           /* the seeds per backend */
	char *zLibs;  /* "libs": the words, space-separated ("" if none; libs.h) */
	char *zDims;  /* the shape set's dimensions as "?name=value,..." ("" if
	               * none): what a task's reference.py is run with, its
	               * constants of those names set */
	double flops; /* "flops" for the shape set in use (0: not given) */
	struct task_init aInit[TASK_MAX_INIT]; /* a KernelBench problem's get_init_inputs(),
	                                        * in order (the first TASK_MAX_INIT) */
	int nInit;
	int bInitByName;          /* get_init_inputs() gave a dict: Model(**init), by name */
	task_compute compute;     /* "compute", or inferred (task_compute_infer) */
	const char *zComputeFrom; /* where compute comes from (static string): "task.json",
	                           * "the inputs' dtypes", "the dtypes reaching its
	                           * products" (a KernelBench problem's, traced), "the
	                           * default" */
};

/* a task shaped as a matrix product: out[0][M,N] from A[M,K] and B[K,N]
 * (or B[N,K], as nn.Linear holds its weight), besides which it has only 1-D
 * inputs; input indices of A, B and the bias (the one 1-D input, of N
 * elements; -1: none), and of up to two per-tensor scales (1-D inputs of
 * one element, which multiply the product, as an fp8 GEMM's do) */
struct task_matmul {
	int a, b, bias;
	int scale[2], nScale;
	int nOther; /* 1-D inputs that are not a bias or a scale */
	int bNK;    /* B is [N,K] */
	int64_t M, N, K;
};
/* 1 and *mm when t is shaped as a matrix product (two 2-D inputs, one 2-D
 * output, in either order), else 0 */
int task_matmul_of(const struct task *t, struct task_matmul *mm);

/* "fp32", "tf32", "fp16", "bf16", "fp8", "int8" */
const char *task_compute_name(task_compute c);
/* the compute type named z into *pOut; 0, or -1 for a name not in
 * task_compute_name()'s list */
int task_compute_parse(const char *z, task_compute *pOut);
/* the compute type of a task that declares none, from the dtypes of its
 * inputs of two or more dimensions (a bias or a scale is no operand) where
 * it is a matrix product (with kernelbench, any task: a KernelBench
 * problem's inputs and parameters are what reaches its matrix products and
 * convolutions): an f16 one -> fp16, bf16 -> bf16, i8 with no float one ->
 * int8; else fp32 (never tf32: an fp32 reference is fp32).  *pzFrom (may be
 * NULL) says where it came from (static string) */
task_compute task_compute_infer(const struct task *t, int kernelbench, const char **pzFrom);

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
/* 1 when z is a task or tensor name: letters, digits, '_', '-', '.' (task_find.c) */
int task_valid_name(const char *z);

/* the directory of the bundled tasks (static string) */
const char *task_bundled_dir(void);

/* the names of the bundled tasks, sorted (*pn of them), for
 * task_names_free() */
char **task_bundled_names(size_t *pn);
void task_names_free(char **az, size_t n);

/* dtype helpers */
size_t task_dtype_size(kl_dtype d);
/* element i of an array of type d, as a double (f16 and bf16 widened) */
double task_dtype_get(const void *p, kl_dtype d, int64_t i);
const char *task_dtype_name(kl_dtype d);
/* parse "f32" etc.; 0 or -1 */
int task_dtype_parse(const char *z, kl_dtype *pOut);
/* default tolerance for a dtype */
struct task_tol task_default_tol(kl_dtype d);
/* KernelBench's tolerance for a dtype: its eval's torch.allclose(atol=1e-2,
 * rtol=1e-2) for every floating type, no relative-L2 bound (rel_l2 is
 * infinite: reported, not judged); integers as task_default_tol */
struct task_tol task_kernelbench_tol(kl_dtype d);
/* set every float dtype's tolerance to KernelBench's (zTolFrom "kernelbench") */
void task_use_kernelbench_tol(struct task *t);
/* override the float dtypes' atol / rtol / rel_l2 (a negative value leaves
 * that one as it is); zTolFrom becomes "flags" when any is set */
void task_override_tol(struct task *t, double atol, double rtol, double relL2);
/* 1 for f32, f16, bf16, f64 */
int task_dtype_is_float(kl_dtype d);
/* limits task_load() enforces: a dimension's extent, a tensor's bytes, and
 * the magnitude of any other number (init bounds, tolerances) */
#define TASK_DIM_MAX 1e12
#define TASK_BYTES_MAX ((int64_t)16 << 30)
#define TASK_VALUE_MAX 1e30

/* elements in a tensor, in checked 64-bit arithmetic: 0 with *pn set, or -1
 * when the product overflows int64_t (never a wrapped count) */
int task_numel_checked(const struct task_tensor *t, int64_t *pn);
/* the tensor's bytes (elements x dtype size), checked likewise: 0 or -1 */
int task_bytes_checked(const struct task_tensor *t, int64_t *pn);
/* elements in a tensor; INT64_MAX when the count overflows (task_load()
 * refuses such tensors, so a loaded task never has one) */
int64_t task_numel(const struct task_tensor *t);
/* the tensor's bytes (elements x dtype size) of a loaded task's tensor */
size_t task_tensor_bytes(const struct task_tensor *t);
/* the bytes of one set of the task: every input and every expected output */
size_t task_set_bytes(const struct task *t);
/*
 * The small shapes of the evaluation cascade: every named dimension above 64
 * becomes about an eighth of itself, rounded up to a multiple of the largest
 * power of two (up to 128) that divides it, and at least 64 (a literal
 * extent stays).  Describes the dimensions as "rows=64 cols=512" into zDesc;
 * returns how many extents changed (0: the small shapes are the full ones).
 */
int task_shrink(struct task *t, char *zDesc, size_t nDesc);
/* "rows=64 cols=4096"-style description of shape: "[64, 4096]"; caller frees */
char *task_shape_str(const struct task_tensor *t);

#endif
