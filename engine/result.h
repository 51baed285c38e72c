/*
 * result.h - a worker's verdict made whole: the worker reports status,
 * correctness and timing; the engine adds what only it knows (task, source,
 * backend, device, the baseline and the speedup against it) before the
 * result is printed or journaled.
 */
#ifndef KL_RESULT_H
#define KL_RESULT_H

#include <cJSON.h>

#include "worker.h"

/*
 * Complete r (a worker result, modified in place): drops the protocol's
 * "worker_exiting", adds "task", "source", "backend", "device", "time_ms"
 * (null unless correct), "baseline_ms", "baseline" (the reference's name),
 * "speedup" (baseline / time, null unless correct), the torch.compile
 * baseline where w measured one, and empty "reason" / "correctness" where
 * the worker gave none.
 */
void result_complete(cJSON *r, struct worker *w, const char *zTask, const char *zSource,
		     const char *zBackend);

/* number field k of o, or NAN when missing or not a number */
double result_num(const cJSON *o, const char *k);

#endif
