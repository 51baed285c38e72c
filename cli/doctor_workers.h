/*
 * doctor_workers.h - `kloop doctor --workers` (cli/doctor_workers.c).
 */
#ifndef KL_DOCTOR_WORKERS_H
#define KL_DOCTOR_WORKERS_H

#include <cJSON.h>

/*
 * Start the workers zSpec describes (pool.h; NULL: local) on backend
 * zBackend, have each evaluate the bundled softmax seed, and print one line
 * per worker (into json's "workers" array instead when json is not NULL).
 * Returns 0 when every worker works, 1 when one does not, 2 when zSpec is
 * wrong (said on stderr).
 */
int doctor_workers(const char *zSpec, const char *zBackend, int nJobs, const char *zPython,
                   cJSON *json);

#endif
