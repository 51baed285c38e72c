/*
 * compare.h - deciding whether an output matches the reference: allclose per
 * element with the dtype's tolerance, the relative L2 error, and the count of
 * mismatching elements, with the first mismatch named.
 */
#ifndef KL_COMPARE_H
#define KL_COMPARE_H

#include <stdint.h>

#include "task.h"

struct compare_report {
	int pass;             /* 1 when allclose holds everywhere and rel_l2 is within bounds */
	int64_t n;            /* elements compared */
	int64_t nMismatch;    /* elements outside atol + rtol*|ref| (NaN counts) */
	int64_t nNonFinite;   /* NaN or Inf in the output where the reference is finite */
	int64_t nRefNaN;      /* NaN in the reference: a mismatch whatever the output (NaN
	                       * never passes, as torch.allclose: a candidate that writes
	                       * nothing leaves the NaN poison there) */
	double maxAbs;        /* max |out - ref| over finite pairs */
	double maxRel;        /* max |out - ref| / |ref| over finite pairs with ref != 0 */
	double relL2;         /* ||out - ref|| / ||ref|| (inf if a NaN was met) */
	double tolFrac;       /* max |out - ref| / (atol + rtol*|ref|): how much of its
	                       * tolerance the worst element uses (> 1: outside; inf for a
	                       * non-finite mismatch or an error where the tolerance is 0) */
	int64_t firstBad;     /* flat index of the first mismatch, or -1 */
	double firstExpected; /* reference value there */
	double firstActual;   /* output value there */
};

/* compare n elements of out against ref (both of dtype d) under tol */
void compare_buffers(const void *out, const void *ref, kl_dtype d, int64_t n,
                     const struct task_tol *tol, struct compare_report *r);

/* how many of n elements of es bytes differ between x and y, and the first
 * one's index (-1 if none) */
void compare_diff(const void *x, const void *y, int64_t n, int es, int64_t *pCount,
                  int64_t *pFirst);

/*
 * The sums a precision verdict is made of (harness.h), over n elements of an
 * output of dtype d against its float64 reference ref: the squared error of
 * the output, the squared reference, and the squared error that rounding the
 * reference itself to d, to bf16 and to f16 makes (the least error any
 * output of d can have, and what storing it in a 16-bit type costs).  Pairs
 * with a non-finite value count in a[CMP_NONFINITE] and nowhere else.
 */
enum { CMP_ERR, CMP_REF, CMP_ROUND, CMP_BF16, CMP_F16, CMP_NONFINITE, CMP_NSUM };
void compare_error64(const void *out, kl_dtype d, const double *ref, int64_t n, double a[CMP_NSUM]);

/* round n floating elements of dtype d at p to `bits` explicit mantissa bits
 * (10: TF32 or f16, 7: bf16), to nearest even, or toward zero where
 * bTruncate (as a tensor core reading fp32 as TF32 drops the low bits); a
 * type with no more bits than that, a non-finite value and an integer type
 * are left as they are */
void compare_round_mantissa(void *p, kl_dtype d, int64_t n, int bits, int bTruncate);

/* format a flat index of tensor t as "[r, c]" into buf */
void compare_index_str(const struct task_tensor *t, int64_t flat, char *buf, size_t n);

#endif
