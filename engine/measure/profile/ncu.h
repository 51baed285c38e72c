/*
 * ncu.h - Nsight Compute facts about a candidate's kernels: the ncu command
 * that profiles them (by name, around a program that evaluates the
 * candidate once), a profile run in the background around a kloop-worker
 * of its own (ncu_run.c), and the few metrics that matter read from its CSV
 * (--page raw): duration, achieved DRAM bandwidth, achieved and theoretical
 * occupancy, and the top stall reason.
 */
#ifndef KL_NCU_H
#define KL_NCU_H

#include <cJSON.h>

#include "loop.h"
#include "util.h"
#include "worker.h"

/* the --metrics argument kloop asks ncu for */
const char *ncu_metrics(void);

/*
 * Parse ncu's `--csv --page raw` output (lines starting with "==" are
 * ncu's own messages and skipped): one object per profiled kernel launch,
 * {"kernels": [{"name", "duration_ns", "dram_bytes_per_s", "dram_pct_of_peak",
 * "occupancy_pct", "occupancy_theoretical_pct", "grid", "block",
 * "top_stall", "top_stall_ratio", "stalls": {reason: cycles per issued
 * instruction, ...}}], "main": index of the longest}.  "selected" and
 * "not_selected" (warps that were ready) are not counted as stalls.  NULL +
 * err when the text has no ncu table or lacks the columns.
 */
cJSON *ncu_parse_csv(const char *zCsv, char *err);

/* one line for people and the LLM about the longest kernel of a parsed
 * profile: "softmax_rows: 1.23 ms, DRAM 1.50 TB/s (45% of peak), occupancy
 * 49% (theoretical 50%), top stall long_scoreboard (2.26 cycles per
 * instruction)"; appended to sb */
void ncu_summary(const cJSON *prof, strbuf *sb);

/* the kernels source zSrc defines (its outline) as an ncu --kernel-name
 * regex ("regex:^(k1|k2)(<.*)?$"), or NULL when it defines none (a cuBLAS
 * call: every launch is profiled then); a fresh string */
char *ncu_kernel_regex(const char *zSrc, size_t n);

/* ncu's command line up to the program it profiles: zNcu --csv --page raw
 * --log-file zLog --target-processes all --metrics ... --launch-count 4
 * (--kernel-name-base function --kernel-name zKernels, unless NULL); into
 * argv (room for NCU_ARGS), returns how many */
#define NCU_ARGS 16
int ncu_argv(const char **argv, const char *zNcu, const char *zLog, const char *zKernels);

/* what Nsight Compute is run on: candidate zName (source zSource) with a
 * worker's settings (task, backend, shapes, reference, python, libs) */
struct ncu_spec {
	const char *zNcu; /* the ncu program (NULL: "ncu", looked up in PATH) */
	const struct worker_config *wc;
	const char *zName;
	const char *zSource;
};

/* the end of a profile: prof (ncu_parse_csv()'s, the callee's to keep:
 * detach or duplicate it; valid during the call) and its summary line, or
 * NULL and why it failed */
typedef void (*ncu_done_fn)(const cJSON *prof, const char *zSummary, const char *zError, void *arg);

struct ncu_run;

/*
 * Profile a candidate once in the background on loop l: ncu (ncu_argv())
 * runs a kloop-worker of its own with s->wc's settings, unsandboxed (ncu's
 * injection does not reach into bubblewrap; the person chose the
 * candidate), one correctness trial and a short timing (as `kloop profile`
 * over `kloop eval --trials 1 --budget 0.05`); when the worker has answered
 * and exited, ncu's CSV is read and done is called, from the loop, never
 * from inside this call (without ncu, or its CSV, done says why).  NULL +
 * err when no temporary directory can be made.  Free with ncu_run_free()
 * (in done or after; it kills what still runs).
 */
struct ncu_run *ncu_run_start(struct loop *l, const struct ncu_spec *s, ncu_done_fn done, void *arg,
                              char *err);
void ncu_run_free(struct ncu_run *r);

#endif
