/*
 * proc.h - child processes the way kloop starts them: their own process
 * group, signals reset, inherited fds closed, stdin from /dev/null, output
 * to a pipe the caller reads; killed by group.
 */
#ifndef KL_PROC_H
#define KL_PROC_H

#include <sys/types.h>

struct proc_spec {
	char *const *argv; /* program and arguments (argv[0] looked up in PATH) */
	const char *zCwd;  /* working directory, or NULL */
	int stdinFd;       /* fd to use as stdin, or -1 for /dev/null */
	int stdoutFd;      /* fd to use as stdout, or -1: a new pipe (*pOut) */
	int stderrFd;      /* fd to use as stderr, -1: same as stdout, -2: a new pipe (*pErr) */
	int keepFd[4];     /* further fds to keep open in the child (-1 terminated or 0 count) */
	int nKeep;
	int scrubEnv; /* remove secrets from its environment (proc_secret_name) */
	int cleanEnv; /* keep only the variables proc_env_allowed() names */
	int *pLife;   /* non-NULL: the child is a keeper (proc_keep) of the program,
	                 and *pLife the write end of its life line: closed (or this
	                 process dead), the keeper kills all of it.  The pid
	                 returned is the keeper's, which exits as the program did */
	int nice;     /* > 0: the child runs that much nicer (work in the background) */
	void (*inChild)(void *arg); /* optional: run in the program's process (below
	                               its keeper) before its descriptors are closed
	                               and it execs: limits, a cgroup to enter */
	void *childArg;
};

/* 1 if an environment variable of this name likely holds a secret (an API
 * key, token, password): *API_KEY*, *TOKEN*, *SECRET*, *PASSW*, *CREDENTIAL*,
 * any case */
int proc_secret_name(const char *zName);

/* 1 if a child that runs or compiles a candidate may keep a variable of
 * this name: what compilers, the CUDA runtime and kloop's runner read
 * (PATH, LD_LIBRARY_PATH, the locale, TMPDIR, CUDA_*, the compilers'
 * include and library paths, NVCC_*, the sanitizers' options, kloop's
 * KLOOP_CUDA* overrides); never kloop's configuration nor the rest of the
 * user's shell, where keys and passwords live under any name */
int proc_env_allowed(const char *zName);
/* a profiler's injection is in this process: in its environment
 * (CUDA_INJECTION64_PATH, an LD_PRELOAD of Nsight's injection, Nsight's
 * process tracking), or loaded (Nsight's injection libraries, which hide
 * their variables once loaded): proc_env_allowed() keeps its variables,
 * the runner's start keeps the descriptors it inherited (Nsight's pipes to
 * its front end), and a runner does not confine itself */
int proc_profiler_injected(void);

/* in a child about to exec: close its descriptors from first on but the
 * nKeep of keep[] and, with profiler (proc_profiler_injected(), asked
 * before the fork), a profiler's process tracking (Nsight's named pipes,
 * under a directory NVIDIA-treetracker-* of /tmp) */
void proc_close_fds(int first, const int *keep, int nKeep, int profiler);

/* in a child about to exec: drop every variable proc_env_allowed() does
 * not name */
void proc_env_clean(void);

/*
 * Start a child.  It dies with this process (PR_SET_PDEATHSIG: SIGKILL).
 * On success returns its pid (also its process group id) and
 * sets *pOut / *pErr to the read ends of the pipes it created (non-blocking,
 * close-on-exec), or -1 where none was made.  Returns -1 with err on failure.
 */
pid_t proc_spawn(const struct proc_spec *s, int *pOut, int *pErr, char *err);

/*
 * In a freshly forked child that will exec something able to leave orphans
 * behind (bubblewrap: its pid namespace's init is tied to it by
 * PR_SET_PDEATHSIG only once its setup is done): become that program's
 * keeper.  Forks; returns 0 in the new child (which dies with the keeper,
 * PR_SET_PDEATHSIG: SIGKILL, and goes on to exec).  The keeper never
 * returns: it holds lifeFd (the read end of a pipe whose write end only the
 * caller's parent holds) and nothing else, ignores hang-ups, interrupts and
 * SIGTERM, and is the child subreaper of everything below it.  When lifeFd
 * hangs up (the parent closed it, or died of any signal, SIGKILL included)
 * or the child ends, it SIGKILLs the child and every process left below it
 * (orphans come to it), reaps them all, and exits as the child did.
 */
pid_t proc_keep(int lifeFd);

/* up to max pids whose parent is pid (by /proc); their number */
int proc_children(pid_t pid, pid_t *aOut, int max);

/* wait until process group pgid has no live member (SIGKILL, sent to a
 * group, takes effect a moment later: what a helper started still shows in
 * ps until then), polling for at most limitS seconds; 1 gone, 0 not yet */
int proc_group_gone(pid_t pgid, double limitS);

/* SIGKILL the child's whole process group */
void proc_kill_group(pid_t pid);

/* end this process by sig's default action, as if sig had reached it from
 * outside (its status says so to whoever waits for it) */
_Noreturn void proc_die_of(int sig);

/* describe a wait status: "exited with status 3", "killed by signal 11 (SIGSEGV)" */
void proc_describe_status(int status, char *buf, size_t n);

/* run a command to completion, capturing stdout+stderr (up to max bytes);
 * for start-up probes only (blocks).  Returns the wait status or -1. */
int proc_capture(char *const *argv, char **pzOut, size_t max);

/* proc_capture, killing the child (and its group) when it has not ended
 * within timeoutS seconds (> 0): then *pTimedOut is 1 and the status is
 * its death by SIGKILL */
int proc_capture_timeout(char *const *argv, char **pzOut, size_t max, double timeoutS,
                         int *pTimedOut);

#endif
