/*
 * taskopen.h - what a TASK argument names, opened in one place for every
 * command, the worker and the runner: a bundled task's name, a task
 * directory (or its task.json), or a KernelBench problem file (.py).
 */
#ifndef KL_TASKOPEN_H
#define KL_TASKOPEN_H

#include "task.h"

struct task_ref {
	char *zDir;        /* the task directory, or the problem file (absolute) */
	char *zName;       /* the task's name (a problem file's name without .py) */
	struct task *task; /* the task loaded for the backend and shape set, or NULL
	                    * for a problem file (the worker makes its task) */
};

/* 1 when zArg names a KernelBench problem file (ends in .py) */
int task_is_problem(const char *zArg);

/*
 * Open zArg: a .py problem file (which must exist), else task_resolve()
 * and task_load() with zBackend and zShapeSet (NULL: the default set).
 * Fills tr (free with task_ref_free()); 0, or -1 + err naming the file
 * and what was wrong (tr is left empty).
 */
int task_open(const char *zArg, const char *zBackend, const char *zShapeSet, struct task_ref *tr,
              char *err);
void task_ref_free(struct task_ref *tr);

#endif
