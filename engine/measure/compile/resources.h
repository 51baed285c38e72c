/*
 * resources.h - reading compiler output: the per-kernel resource report of
 * `nvcc -Xptxas -v` (registers, shared memory, spills, stack frame) and the
 * first error diagnostic of any compiler's log.
 */
#ifndef KL_RESOURCES_H
#define KL_RESOURCES_H

#include <cJSON.h>

/*
 * Parse ptxas' verbose report in log into a JSON array, one object per
 * kernel: {"kernel", "arch", "registers", "shared_bytes", "const_bytes",
 * "stack_bytes", "spill_stores", "spill_loads", "barriers"}.  Returns NULL
 * when the log has no ptxas report.  The caller owns the result.
 */
cJSON *resources_parse_ptxas(const char *zLog);

/*
 * The host compiler's vectorisation remarks in log (gcc -fopt-info-vec-
 * optimized: "f.c:12:5: optimized: loop vectorized using 32 byte vectors";
 * clang -Rpass=loop-vectorize: "f.c:12:3: remark: vectorized loop
 * (vectorization width: 8, ...)"): a JSON array of {"line", "column",
 * "message"}, empty when the compiler vectorised nothing; remarks on code
 * in directory zSkipDir (kloop's include directory: its headers inlined; NULL:
 * none) are left out.  *pzRest (when not NULL) gets the log without those
 * lines (a fresh string).
 */
cJSON *resources_parse_vec(const char *zLog, const char *zSkipDir, char **pzRest);

/* the first line of log that reports an error (file:line: error: ...), as a
 * fresh string the caller frees; NULL if there is none */
char *resources_first_error(const char *zLog);

#endif
