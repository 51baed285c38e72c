/*
 * task_find.c - a task found by name (task_resolve): the bundled tasks'
 * directory, their names, and a name or path made a task's directory.
 */
#include "task.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "suggest.h"
#include "util.h"

const char *task_bundled_dir(void)
{
	static char *dir;
	if (dir)
		return dir;
	const char *env = getenv("KLOOP_TASKS");
	if (env && *env)
		return dir = xstrdup(env);
	char *p = exe_data_dir("tasks");
	char *real = realpath(p, NULL);
	if (real) {
		free(p);
		p = real;
	}
	return dir = p;
}

int task_valid_name(const char *z)
{
	if (!*z)
		return 0;
	for (; *z; z++)
		if (!isalnum((unsigned char)*z) && *z != '_' && *z != '-' && *z != '.')
			return 0;
	return 1;
}

/* the errors of task_resolve(): a name or path echoed in them is cut to a
 * length a message can hold (its reason stays whole) */
#define TASK_ARG_ECHO 120

char *task_resolve(const char *zArg, char *err)
{
	struct stat st;
	char *zShown = str_abbrev(zArg, TASK_ARG_ECHO);
	char *zPath = NULL;
	if (strchr(zArg, '/') || stat(zArg, &st) == 0) {
		char real[PATH_MAX];
		if (stat(zArg, &st) != 0)
			kl_err(err, "%s: no such task directory", zShown);
		else if (!realpath(zArg, real))
			kl_err(err, "%s: cannot resolve path", zShown);
		else
			zPath = xstrdup(real);
		free(zShown);
		return zPath;
	}
	if (!task_valid_name(zArg)) {
		kl_err(err, "%s: not a task name or directory", zShown);
		free(zShown);
		return NULL;
	}
	char *p = path_join(task_bundled_dir(), zArg);
	if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
		free(zShown);
		return p;
	}
	free(p);
	size_t n;
	char **az = task_bundled_names(&n);
	strbuf names = STRBUF_INIT;
	for (size_t i = 0; i < n; i++)
		sb_addf(&names, "%s%s", names.len ? ", " : "", az[i]);
	const char *near = suggest_nearest(zArg, (const char *const *)az, n);
	if (near)
		kl_err(err, "unknown task '%s': did you mean '%s'? (bundled tasks: %s)", zShown,
		       near, names.buf);
	else
		kl_err(err, "unknown task '%s' (bundled tasks: %s)", zShown,
		       names.len ? names.buf : "none");
	free(zShown);
	sb_free(&names);
	task_names_free(az, n);
	return NULL;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **task_bundled_names(size_t *pn)
{
	char **az = NULL;
	size_t n = 0, cap = 0;
	DIR *d = opendir(task_bundled_dir());
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *tj = xasprintf("%s/%s/task.json", task_bundled_dir(), de->d_name);
		if (path_exists(tj)) {
			if (n == cap)
				az = xrealloc(az, (cap = cap ? 2 * cap : 16) * sizeof *az);
			az[n++] = xstrdup(de->d_name);
		}
		free(tj);
	}
	if (d)
		closedir(d);
	if (n)
		qsort(az, n, sizeof *az, cmp_name);
	*pn = n;
	return az;
}

void task_names_free(char **az, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(az[i]);
	free(az);
}
