/*
 * result.h - a worker's verdict made whole: the worker reports status,
 * correctness and timing; the engine adds what only it knows (task, source,
 * backend, device, the baseline and the speedup against it) before the
 * result is printed or journaled.
 */
#ifndef KL_RESULT_H
#define KL_RESULT_H

#include <cJSON.h>

#include "util.h"
#include "verdict.h"

/*
 * Complete r (a worker result, modified in place): adds "task", "source", "backend", "device",
 * "time_ms" (null unless correct), "baseline_ms", "baseline" (the reference's name), "speedup"
 * (baseline / time, null unless correct), the torch.compile baseline where one was measured, and
 * empty "reason" / "correctness" where the worker gave none.  rt is the reference's timing and
 * baselines the PyTorch ones measured on the device the result came from (a pool's
 * pool_reference_timing(p, device)), refData how a problem file's reference
 * data was made there (copied as "reference_data"), zRefName the reference's name and
 * zDevice the device; each may be NULL.  (No worker here: the session's
 * journal readers link this file alone.)
 */
void result_complete_from(cJSON *r, const cJSON *rt, const cJSON *baselines, const cJSON *refData,
                          const char *zRefName, const char *zDevice, const char *zTask,
                          const char *zSource, const char *zBackend);

/* number field k of o, or NAN when missing or not a number */
double result_num(const cJSON *o, const char *k);

/* one line a BLAS baseline of r ("library_baselines": cuBLAS, cuBLASLt,
 * cuBLASLt autotuned, each with the candidate's speedup over it, or why it
 * was not timed), each line opening with zIndent, appended to sb */
void result_library_lines(const cJSON *r, const char *zIndent, strbuf *sb);

/*
 * How far inside or outside its tolerance a result's correctness report
 * ("correctness" object) is, as one line without a newline appended to sb:
 * "max err 3.1e-06; worst element at 0.031 of tolerance (f32 atol 0.01 +
 * rtol 0.01*|ref|, KernelBench's); relative L2 1.2e-06 (not judged)": the
 * worst element is the one whose error is the largest share of its own
 * atol + rtol*|ref| (above 1: outside, and "; outside" is said).  Appends nothing when
 * the report has no "tolerance" (older results).
 */
void result_tolerance_line(const cJSON *cor, strbuf *sb);

/*
 * A verdict's precision (precision.h) in words, appended to sb:
 * "faithful: relative L2 error 9.7e-07 against float64 (the reference's own
 * 2.5e-08; TF32 or f16 inputs would make 0.00047)", "reduced precision:
 * relative L2 error 0.00047 against float64, 1.9e+04x the reference's own
 * 2.5e-08 (more than 8x): consistent with TF32 or f16 inputs (10-bit
 * mantissa)", or "unknown: WHY".  Appends nothing when r has none.
 */
void verdict_precision_line(const struct verdict *v, strbuf *sb);
/* where a worker's setup went (reference_data.setup: the PyTorch helper's
 * start, the reference data, the baselines), in one line */
void result_setup_line(const cJSON *setup, strbuf *sb);
/* baselines whose torch.compile record is {"pending": true}: compiling in
 * the background of a search (worker_config.deferCompile) */
int result_compile_pending(const cJSON *baselines);
/* candidate result r, completed before torch.compile's baseline was timed,
 * given it now (cm: the baselines' "compile" record): baseline_compile_ms
 * and speedup_compile, or baseline_compile_error.  0, or -1 when r has its
 * own already or came from another device than zDevice */
int result_add_compile(cJSON *r, const cJSON *cm, const char *zDevice);

#endif
