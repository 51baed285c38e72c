/*
 * mps.h - NVIDIA's Multi-Process Service for the pool's local GPUs (issue
 * 28): the driver makes CUDA contexts one process at a time for the whole
 * host, and a runner's start is a context; through an MPS server it is
 * cheaper.  Asked to (`--mps`, `mps = on`), kloop uses a control daemon
 * where one runs (its pipe directory,
 * $CUDA_MPS_PIPE_DIRECTORY or /tmp/nvidia-mps, holds the `control` pipe,
 * and nvidia-cuda-mps-control is on PATH), or starts one of its own in a
 * private directory, stopped when
 * kloop ends (a keeper process sends it `quit` even after a kill -9), and
 * never stops a daemon it did not start.  The workers inherit
 * CUDA_MPS_PIPE_DIRECTORY / CUDA_MPS_LOG_DIRECTORY; the runners get them
 * through the environment's allow-list (proc.c) and their sandbox
 * (mps_runner_args).
 */
#ifndef KL_MPS_H
#define KL_MPS_H

#include <stddef.h>

/* config key `mps`: the index of its word in the config table's "on|off|auto"
 * (config.h; test_config checks that mps_mode_name() agrees) */
enum mps_mode {
	MPS_ON,   /* use one that runs, else start one; an error where it cannot work */
	MPS_OFF,  /* use none: the workers and runners are pointed away from a running one */
	MPS_AUTO, /* the default: say whether a daemon runs; use none until asked (what
	           * MPS does to the sandboxed runners and to timing is not measured yet) */
};

/* "on", "off" or "auto" */
const char *mps_mode_name(int mode);

/* the pipe directory a daemon would use ($CUDA_MPS_PIPE_DIRECTORY, else
 * /tmp/nvidia-mps) and whether one runs there: its control pipe present and,
 * where it wrote its pid file, that process alive */
const char *mps_pipe_dir(void);
int mps_daemon_running(const char *zPipeDir);
/* the control program's path on PATH (fresh string), or NULL */
char *mps_control_path(void);

/*
 * Before a pool's workers start, in kloop's own process: what mode asks for,
 * for the backend and the workers' specification (pool.h; NULL: local) on a
 * host with nGpu GPUs.  A daemon in use or started here is named in this
 * process's environment, which the workers inherit.  0 (*pzNote, when not
 * NULL, a fresh line saying what was done, or NULL), or -1 + err: MPS_ON
 * where it cannot work (host backend, workers off this host, no GPU, no
 * nvidia-cuda-mps-control, the daemon did not start).
 */
int mps_begin(int mode, const char *zBackend, const char *zWorkers, int nGpu, char **pzNote,
              char *err);
/* a daemon of kloop's own, its pipe and log directories (pipe/, log/) in a
 * private directory made under zParent (NULL: $TMPDIR or /tmp), named in
 * this process's environment; what mps_begin does for MPS_ON.  0 or -1 + err */
int mps_start(const char *zParent, char *err);
/* the daemon mps_start started: `quit`, its private directory removed;
 * waits for it (at most 10 s).  Nothing when none was started here.  It also
 * runs at exit, and kloop's death (any signal) makes its keeper do it. */
void mps_stop(void);
/* the private pipe directory of the daemon started here, or NULL */
const char *mps_started_dir(void);

/* doctor's line: whether MPS is in use, available, or why not; 1 when in
 * use or available */
int mps_describe(int mode, int haveGpu, char *buf, size_t n);

/*
 * A runner's bubblewrap arguments for MPS (in kloop-worker, from its
 * environment), fresh strings into v (at most max), their count: the
 * variables set inside, and for a cuda runner the pipe directory (read-only)
 * and the host's /dev/shm bound (an MPS client reaches its server through
 * them).  *pShareNs is set when such a runner is to keep kloop's pid and IPC
 * namespaces as well: only with KLOOP_MPS_NAMESPACES=share (not measured
 * yet on a GPU host whether a client in its own namespaces reaches the server).
 */
int mps_runner_args(int cuda, char **v, int max, int *pShareNs);

#endif
