/*
 * ncu.h - Nsight Compute facts about a candidate's kernels: the ncu command
 * that profiles them (by name, inside a `kloop eval` run), and the few
 * metrics that matter read from its CSV (--page raw): duration, achieved
 * DRAM bandwidth, achieved and theoretical occupancy, and the top stall
 * reason.
 */
#ifndef KL_NCU_H
#define KL_NCU_H

#include <cJSON.h>

#include "util.h"

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

#endif
