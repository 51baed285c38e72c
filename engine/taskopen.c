/*
 * taskopen.c - opening a TASK argument: a problem file, a directory or a
 * bundled name.
 */
#include "taskopen.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

int task_is_problem(const char *zArg)
{
	size_t n = strlen(zArg);
	return n > 3 && !strcmp(zArg + n - 3, ".py");
}

int task_open(const char *zArg, const char *zBackend, const char *zShapeSet, struct task_ref *tr,
              char *err)
{
	memset(tr, 0, sizeof *tr);
	if (task_is_problem(zArg)) {
		char *real = realpath(zArg, NULL);
		if (!real)
			return kl_err(err, "%s: no such problem file", zArg);
		tr->zDir = real;
		const char *b = strrchr(real, '/');
		b = b ? b + 1 : real;
		tr->zName = xstrndup(b, strlen(b) - 3);
		return 0;
	}
	tr->zDir = task_resolve(zArg, err);
	if (!tr->zDir || !(tr->task = task_load(tr->zDir, zBackend, zShapeSet, err))) {
		task_ref_free(tr);
		return -1;
	}
	tr->zName = xstrdup(tr->task->zName);
	return 0;
}

void task_ref_free(struct task_ref *tr)
{
	task_free(tr->task);
	free(tr->zDir);
	free(tr->zName);
	memset(tr, 0, sizeof *tr);
}
