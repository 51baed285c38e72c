/*
 * precision.h - the precision verdict of a correct candidate: its error
 * against a float64 reference, beside the error of the task's own reference
 * at its declared precision, so that reduced precision (TF32 or f16 tensor
 * cores, bf16 storage, a coarse approximation) that happens to pass the
 * tolerance on benign inputs is named as such and not taken as a win.
 *
 * The float64 outputs come from the task's reference run once more on the
 * same trial inputs with float64 output tensors (a C or CUDA reference that
 * writes KL_F64 when asked; a PyTorch reference in float64), in a harness of
 * its own (precision_harness).  Two more runs on the first trial's inputs
 * rounded to 10 and 7 mantissa bits measure what TF32 / f16 inputs and bf16
 * inputs cost on this very data, which names the likely cause and draws the
 * line for a task whose reference is exact.  The timing set and every
 * checking set of the timed runs have float64 outputs too, so that the run
 * after timing and each checked timed run are judged by the same rule: a
 * candidate faithful in the trials and reduced once timed is reduced.
 * docs/ARCHITECTURE.md, "Precision", has the rule.
 */
#ifndef KL_PRECISION_H
#define KL_PRECISION_H

#include <cJSON.h>

#include "compare.h"
#include "harness.h"

struct harness;

/* a candidate is reduced precision when its relative L2 error against the
 * float64 reference is more than PRECISION_LIMIT times the larger of the
 * task's reference's own and the rounding of the exact result to the output
 * type, more than 1/PRECISION_EMU_FRAC of the error that rounding the
 * inputs to 10 mantissa bits makes (where the inputs have more), and more
 * than summing in the output's type may cost in any order: 2 u sqrt(L),
 * u its unit roundoff, L the input elements per output element (a full
 * reduction's length) */
#define PRECISION_LIMIT 8.0
#define PRECISION_EMU_FRAC 3.0
/* a checked timed run on varied inputs (scaled, heavy-tailed, outliers:
 * harness_vary_of) is judged with the last two bounds this many times
 * larger: they are measured and derived on plain inputs, and a faithful
 * float computation errs more on varied ones (an fp32 sum of 2^20 squares
 * with outliers up to 2.2 times 2 u sqrt(L), an exp of large arguments 30
 * times its plain error), while a reduced one errs as its rounding does
 * (bf16 outputs of the softmax 4e-4 to 2e-3 on any of them) */
#define PRECISION_VARIED_FACTOR 3.0

/* the trials whose float64 outputs are kept, at most: the harness's plain
 * ones (harness_vary_of) */
#define PRECISION_TRIALS HARNESS_PLAIN_TRIALS

/* the emulation sets of the float64 harness, after its trials and timing
 * set: the first trial's inputs rounded to 10 mantissa bits (TF32 or f16),
 * truncated to 10 (a tensor core reading fp32 as TF32), rounded to 7 (bf16) */
enum { PRECISION_EMU10, PRECISION_EMU10Z, PRECISION_EMU7, PRECISION_NEMU };
/* emulation k's mantissa bits, and *pTruncate: toward zero, not to nearest */
int precision_emu_bits(int k, int *pTruncate);

/* the accumulation emulations of a task that declares fp32 accumulation
 * of low-precision inputs (compute fp16 or bf16, task.h) and is a matrix
 * product (issue 36): its product accumulated in f16, or in bf16, over a
 * sample of the first trial's output elements, 16 products a step (as
 * mma's f16 accumulator) and one (an FMA each, hfma2's): a kernel that
 * accumulates so is reduced whatever the tolerance lets through, and its
 * verdict says which it matches ("matches f16 accumulation") */
enum { PRECISION_ACC_F16, PRECISION_ACC_BF16, PRECISION_NACC };
/* the sample: at most this many output elements, in up to 16 rows */
#define PRECISION_ACC_SAMPLE 2048
#define PRECISION_ACC_ROWS 16

/*
 * The relative L2 error, against ref (the float64 reference's rows, R x N,
 * row-major), of t's product mm over those R rows and every colStep-th
 * column: accumulated in acc's type (KL_F16, KL_BF16; KL_F64: exactly, and
 * not rounded to the output's type) chunk products a step (the products and
 * a step's sum exact), times scale (the product of mm's per-tensor scales;
 * 1: none), the bias added, rounded to the output's type.  aRows: the R
 * rows of A ([R][K], A's dtype), b: all of B (its dtype and layout), bias:
 * NULL or N elements of its dtype.  -1 where the result is not finite (an
 * f16 accumulator overflowed).  Pure: for the tests.
 */
double precision_acc_error(const struct task *t, const struct task_matmul *mm, const void *aRows,
                           const void *b, const void *bias, double scale, const double *ref, int R,
                           int64_t colStep, kl_dtype acc, int chunk);

struct precision;

/*
 * A harness like h (its first PRECISION_TRIALS trials or as many as fit,
 * their inputs and the timing set's) whose float outputs are float64, with
 * PRECISION_NEMU extra sets where memory allows: the first trial's inputs
 * rounded to 10 and to 7 mantissa bits; then h's checking sets, as many as
 * fit (the first to go where memory is short).  Run the reference on it
 * with harness_run_reference() (or fill its expected outputs from
 * PyTorch), then give it to precision_attach().  NULL + err (no float
 * output; no memory).
 */
struct harness *precision_harness(struct harness *h, char *err);
/* the same in two steps: the harness made (its buffers, no inputs yet: a
 * runner may map them before h's reference has run), then its inputs
 * copied from h (once h's sets are final: the reference may draw a set
 * again); 0, or -1 + err (h64 then to precision_discard()) */
struct harness *precision_harness_new(struct harness *h, char *err);
int precision_harness_fill(struct harness *h64, struct harness *h, char *err);
/* which set of h the set s64 of h64 (precision_harness(h)) has the inputs
 * of, and *pBits: 0, or the mantissa bits they are rounded to (negative:
 * truncated), for an emulation set */
int precision_source(const struct harness *h64, const struct harness *h, int s64, int *pBits);

/* free a harness from precision_harness() that is not attached */
void precision_discard(struct harness *h64);

/*
 * Take h64 (owned from now on, also on failure) as h's float64 reference:
 * measures the task's reference's own error on the trials and the checking
 * sets and the errors of the emulations, and gives back h64's inputs.  h
 * keeps only the checking sets h64 has float64 outputs for (all of them
 * where none fit: their checked runs are then not judged, and the verdict
 * says so).  0, or -1 + err where its outputs cannot be the task's
 * reference's in float64 (non-finite where the reference is finite, or
 * farther from them than the task's tolerance): then h has no precision
 * verdict and err says why.
 */
int precision_attach(struct harness *h, struct harness *h64, char *err);

/* h's precision state (NULL: no float64 reference) */
struct precision *precision_of(const struct harness *h);
/* where h has no precision verdict, why (a copy): its verdicts say
 * {"verdict": "unknown", "why"} */
void precision_note(struct harness *h, const char *zWhy);
void precision_free(struct precision *p);

/* a new evaluation: the candidate's sums start again */
void precision_reset(struct precision *p);
/* add the candidate's outputs now in h's buffers (trial set s) */
int precision_add_trial(struct precision *p, struct harness *h, int s, char *err);
/* ... of the run after timing (h's timing set, whose float64 outputs the
 * float64 harness holds too): a candidate faithful in the trials and not
 * there is reduced, "faithful in the trials, not in the run after timing" */
int precision_add_after_timing(struct precision *p, struct harness *h, char *err);
/* ... of checked timed run `run` (h's checking set s, whose float64
 * outputs the float64 harness holds): a candidate faithful in the trials
 * and not there is reduced, "faithful in the trials, reduced in checked
 * timed run 7 (ratio ...)" */
int precision_add_checked(struct precision *p, struct harness *h, int s, unsigned long long run,
                          char *err);

/*
 * The verdict of the trials added: {"verdict": "faithful" | "reduced",
 * "rel_l2", "reference_rel_l2", "rounding_rel_l2", "ratio", "limit",
 * "emulated": {"tf32_f16_inputs", "bf16_inputs", "bf16_outputs",
 * "f16_outputs"}, "cause"?, "trials", "after_timing_rel_l2"?,
 * "checked_runs"?: [{"run", "verdict", "rel_l2", "ratio"}],
 * "checked_runs_unjudged"?}; NULL when no trial was added
 */
cJSON *precision_json(const struct precision *p);

/* the verdict object of a task without a float64 reference: {"verdict":
 * "unknown", "why"} */
cJSON *precision_unknown_json(const char *zWhy);

#endif
