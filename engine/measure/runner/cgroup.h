/*
 * cgroup.h - a control group for each runner and each compile, so that a
 * candidate is limited and stopped as a whole, every process and thread of
 * it (and the files of its private /tmp, which are its memory):
 * - one memory limit (memory.max) and one task limit (pids.max) for all of
 *   it, and afterwards what it came to: its peak memory, the OOM kills and
 *   the refused forks that the limits caused;
 * - frozen between kloop's calls (cgroup.freeze, or the v1 freezer), so
 *   that nothing of it runs while the harness writes the next run's inputs.
 * cgroup v2 where it is mounted and kloop may make groups there with the
 * memory and pids controllers (as root: below the root group, the one
 * place those controllers can be enabled beside running processes); the
 * v1 memory, pids and freezer hierarchies where a hybrid host has them;
 * v2's freezer, which needs no controller, wherever v2 is writable.  Where
 * a part is missing cgroup_probe() says so, and the callers fall back:
 * per-process limits (RLIMIT_AS, RLIMIT_DATA, RLIMIT_NPROC, no processes
 * but threads) and SIGSTOP for the freeze (cand.c).
 */
#ifndef KL_CGROUP_H
#define KL_CGROUP_H

#include <stddef.h>

/* what this host gives kloop (cgroup_probe) */
struct cgroup_support {
	int memory;       /* per-group memory limits: 2 (v2), 1 (v1), 0 (none) */
	int pids;         /* per-group task limits: 2, 1 or 0 */
	int freeze;       /* freezing a group: 2, 1 or 0 */
	char zWhere[512]; /* where kloop makes its groups, one per hierarchy used */
	char zWhy[512];   /* for what is missing: why ("" if nothing is) */
};

/* probe once per process (later calls return the first answer) */
const struct cgroup_support *cgroup_probe(void);

/* one line for kloop doctor and the worker's hello: where and what, or
 * the fallback in use */
void cgroup_describe(char *buf, size_t n);

/*
 * The memory limit on kloop's own group in bytes: the smallest memory.max
 * (v2) or memory.limit_in_bytes (v1) of that group and the groups above it,
 * what the machine lets kloop hold whatever MemTotal says (0: none).
 */
unsigned long long cgroup_own_memory_limit(void);

struct cgroup_limits {
	unsigned long long memBytes; /* memory.max (0: none) */
	int maxTasks;                /* pids.max: processes and threads (0: none) */
};

struct cgroup;

/*
 * A new group named after zTag (a fresh directory in each hierarchy kloop
 * uses) with the limits l.  NULL when this host gives no group at all
 * (cgroup_probe), or with err when making it failed.
 */
struct cgroup *cgroup_new(const char *zTag, const struct cgroup_limits *l, char *err);

/* which parts g has (as cgroup_support: 0 where it has none) */
int cgroup_has_memory(const struct cgroup *g);
int cgroup_has_pids(const struct cgroup *g);
int cgroup_has_freeze(const struct cgroup *g);

/* the CPU time g's tasks spent so far, every process and thread of it
 * (those that have ended too), in microseconds; -1 where unknown (no v2
 * group) */
long long cgroup_cpu_usec(const struct cgroup *g);

/*
 * In a child forked to exec what g is for: move the calling process into
 * g, before the exec.  Async-signal-safe (the files were opened by
 * cgroup_new and are inherited).  0, or -1 with errno.
 */
int cgroup_enter(const struct cgroup *g);

/* freeze (on) or thaw g; a freeze returns once every task of it is
 * frozen.  0, or -1 with err (the group has no freezer, or it failed) */
int cgroup_freeze(struct cgroup *g, int on, char *err);

/* a freeze in two steps: ask for it (a write, microseconds), then wait
 * until every task is frozen; 0, or -1 with err */
int cgroup_freeze_start(struct cgroup *g, char *err);
int cgroup_freeze_wait(struct cgroup *g, char *err);

/* what g's tasks came to so far */
struct cgroup_usage {
	unsigned long long memPeak;  /* the most memory it held, bytes (0: unknown) */
	unsigned long long memLimit; /* its memory.max (0: none) */
	int oomKills;                /* tasks the OOM killer ended because of the limit */
	int memMaxHits;              /* times it reached its memory limit */
	int taskLimit;               /* its pids.max (0: none) */
	int taskMaxHits;             /* forks and threads refused by it */
	int tasksPeak;               /* the most tasks it had at once (0: unknown) */
};
void cgroup_usage(const struct cgroup *g, struct cgroup_usage *u);

/*
 * Say what of u a verdict must mention, into buf ("" when nothing): the
 * memory limit reached (OOM kills, with the peak and the limit), forks or
 * threads refused by the task limit.
 */
void cgroup_usage_note(const struct cgroup_usage *u, char *buf, size_t n);

/* kill what is left in g (cgroup.kill, or each task), wait until it is
 * empty (at most a second) and remove it; NULL is fine */
void cgroup_free(struct cgroup *g);

#endif
