/*
 * cmd_tasks.c - `kloop tasks`: the bundled tasks with their tensors, shape
 * sets, references and seeds.
 */
#include <cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "config.h"
#include "flags.h"
#include "json.h"
#include "task.h"
#include "torchref.h"
#include "util.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static cJSON *tensors_json(const struct task_tensor *a, int n)
{
	cJSON *arr = cJSON_CreateArray();
	for (int i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", a[i].zName);
		cJSON_AddStringToObject(o, "dtype", task_dtype_name(a[i].dtype));
		cJSON *s = cJSON_AddArrayToObject(o, "shape");
		for (int k = 0; k < a[i].ndim; k++)
			cJSON_AddItemToArray(s, cJSON_CreateNumber((double)a[i].shape[k]));
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

static void print_tensors(const char *zWhat, const struct task_tensor *a, int n)
{
	printf("    %-8s", zWhat);
	for (int i = 0; i < n; i++) {
		char *s = task_shape_str(&a[i]);
		printf("%s%s %s%s", i ? ", " : "", a[i].zName, task_dtype_name(a[i].dtype), s);
		free(s);
	}
	printf("\n");
}

/*
 * `kloop tasks PROBLEM.py`: in[] and out[] of a KernelBench problem file as
 * the PyTorch helper describes them (forward inputs, then parameters - a
 * module's own before its submodules' - and buffers), with the constants
 * --shapes and --size changed.
 */
static int show_problem(const char *zProblem, const char *zShapes, const char *zSize,
                        const char *zPython, double timeoutS, int json)
{
	char err[KL_ERRLEN];
	if (!path_exists(zProblem)) {
		fprintf(stderr, "kloop: tasks: %s: no such problem file\n", zProblem);
		return 2;
	}
	struct config cfg;
	if (config_load(&cfg, err) < 0) {
		fprintf(stderr, "kloop: %s\n", err);
		return 2;
	}
	int rc = 0;
	const char *py = zPython ? zPython : cfg.zPython ? cfg.zPython : "python3";
	/* PyTorch's import and the problem's own code at its full size may take
	 * a minute or more: said before, on stderr (always: the answer itself is
	 * stdout's), and how long it took after */
	fprintf(stderr,
	        "kloop: tasks: describing %s with %s: importing PyTorch, then the problem's "
	        "get_init_inputs(), get_inputs() and forward() at its size (a large problem "
	        "takes a minute or more; --timeout %g s)\n",
	        zProblem, py, timeoutS > 0 ? timeoutS : TORCHREF_DESCRIBE_S);
	double t0 = now_s();
	cJSON *d = torchref_describe(py, zProblem, zShapes, zSize, timeoutS, err);
	if (d)
		fprintf(stderr, "kloop: tasks: described in %.1f s\n", now_s() - t0);
	const char *other = NULL;
	if (!d && torchref_has_torch(py) == 0 && (other = torchref_python_with_torch(py)))
		/* as doctor says it: the Python that has PyTorch */
		fprintf(stderr,
		        "kloop: %s\nkloop: %s has PyTorch: give --python %s, or set python = %s in "
		        "the config\n",
		        err, other, other, other);
	if (!d && !other) {
		fprintf(stderr, "kloop: %s\n", err);
		rc = 2;
	} else if (!d) {
		rc = 2;
	} else if (json) {
		char *z = json_text(d, 1);
		printf("%s\n", z);
		free(z);
	} else {
		printf("%s  KernelBench problem, described by PyTorch %s on %s\n", zProblem,
		       cJSON_GetStringValue(cJSON_GetObjectItem(d, "torch")),
		       cJSON_GetStringValue(cJSON_GetObjectItem(d, "device")));
		for (int k = 0; k < 2; k++) {
			const cJSON *arr = cJSON_GetObjectItem(d, k ? "outputs" : "inputs"), *e;
			int i = 0;
			cJSON_ArrayForEach(e, arr)
			{
				strbuf sh = STRBUF_INIT;
				const cJSON *x;
				int nd = 0;
				sb_adds(&sh, "[");
				cJSON_ArrayForEach(x, cJSON_GetObjectItem(e, "shape"))
				    sb_addf(&sh, "%s%.0f", nd++ ? ", " : "", x->valuedouble);
				sb_adds(&sh, "]");
				const char *kind =
				    cJSON_GetStringValue(cJSON_GetObjectItem(e, "kind"));
				char tag[16];
				snprintf(tag, sizeof tag, "%s[%d]", k ? "out" : "in", i++);
				printf("  %-7s  %-16s %-4s %s", tag,
				       cJSON_GetStringValue(cJSON_GetObjectItem(e, "name")),
				       cJSON_GetStringValue(cJSON_GetObjectItem(e, "dtype")),
				       sh.buf);
				if (kind)
					printf("%*s%s", sh.len < 20 ? (int)(20 - sh.len) : 1, "",
					       !strcmp(kind, "input") ? "forward() input" : kind);
				printf("\n");
				sb_free(&sh);
			}
		}
		const char *zc = cJSON_GetStringValue(cJSON_GetObjectItem(d, "compute"));
		if (zc)
			printf("  compute  %s (the dtypes reaching its matrix products and "
			       "convolutions: its roofline's compute floor)\n",
			       zc);
		const cJSON *sz = cJSON_GetObjectItem(d, "sizes"), *e;
		if (cJSON_IsObject(sz) && sz->child) {
			printf("  sizes  ");
			cJSON_ArrayForEach(e, sz)
			{
				char *a = json_text(cJSON_GetArrayItem(e, 0), 0);
				char *b = json_text(cJSON_GetArrayItem(e, 1), 0);
				printf("%s%s %s -> %s", e == sz->child ? "" : ", ", e->string,
				       a ? a : "?", b ? b : "?");
				free(a);
				free(b);
			}
			printf("\n");
		}
		const cJSON *init = cJSON_GetObjectItem(d, "init");
		if (cJSON_GetArraySize(init) > 0) {
			printf("  init   ");
			cJSON_ArrayForEach(e, init)
			{
				const cJSON *v = cJSON_GetObjectItem(e, "value");
				char *a = v ? json_text(v, 0) : NULL;
				char *name = term_clean(json_str(e, "name", "?"), 0);
				printf("%s%s = %s (%s)", e == init->child ? "" : ", ", name,
				       a ? a : "not a number", json_str(e, "type", "?"));
				free(name);
				free(a);
			}
			printf("\n  (get_init_inputs(): a ModelNew's self.X set from __init__'s "
			       "parameter, and an extension's number parameters in order, take "
			       "these)\n");
		}
		printf(
		    "  in[] is forward()'s inputs, then the parameters (a module's own before its "
		    "submodules') and buffers: docs/TORCH_REFERENCE.md\n");
	}
	cJSON_Delete(d);
	config_free(&cfg);
	return rc;
}

static int exec_tasks(int argc, char **argv)
{
	struct flags f;
	int usage = flags_parse(&cmd_tasks_entry, FL_TASKS, argc, argv, 0, 1, &f);
	if (usage)
		return usage;
	int json = f.json;
	size_t nArg = f.nPos ? strlen(f.azPos[0]) : 0;
	if (f.nPos && (nArg < 3 || strcmp(f.azPos[0] + nArg - 3, ".py"))) {
		/* a task directory or its task.json: not what the helper reads */
		fprintf(
		    stderr,
		    "kloop: tasks: %s is not a KernelBench problem file (PROBLEM.py); `kloop "
		    "tasks` alone lists the bundled tasks, and a task directory's in[] and out[] "
		    "are its task.json's \"inputs\" and \"outputs\" (docs/TASKS.md)\n",
		    f.azPos[0]);
		flags_free(&f);
		return 2;
	}
	if (f.nPos) {
		char zSize[32] = "";
		if (f.cfg.size > 0)
			snprintf(zSize, sizeof zSize, "%.17g", f.cfg.size);
		/* --timeout bounds the helper's description (default 300 s) */
		int rc =
		    show_problem(f.azPos[0], f.zShapes, zSize, f.cfg.zPython, f.timeoutS, json);
		flags_free(&f);
		return rc;
	}
	int bare = !f.zShapes && !f.cfg.size && !f.cfg.zPython;
	flags_free(&f);
	if (!bare)
		return cmd_usage(&cmd_tasks_entry);
	const char *dir = task_bundled_dir();
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "kloop: %s: cannot read the bundled tasks directory\n", dir);
		return 2;
	}
	char *names[256];
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) && n < 256) {
		if (de->d_name[0] == '.')
			continue;
		char *tj = xasprintf("%s/%s/task.json", dir, de->d_name);
		if (path_exists(tj))
			names[n++] = xstrdup(de->d_name);
		free(tj);
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof *names, cmp_str);
	cJSON *arr = cJSON_CreateArray();
	int rc = 0;
	for (int i = 0; i < n; i++) {
		char err[KL_ERRLEN];
		char *p = path_join(dir, names[i]);
		struct task *t = task_load(p, "host", NULL, err);
		if (!t) {
			fprintf(stderr, "kloop: %s\n", err);
			rc = 2;
			free(p);
			continue;
		}
		if (json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "name", t->zName);
			cJSON_AddStringToObject(o, "description", t->zDescription);
			cJSON_AddStringToObject(o, "dir", t->zDir);
			cJSON *sets = cJSON_AddObjectToObject(o, "shapes");
			for (int k = 0; k < t->nShapeSets; k++) {
				struct task *ts = task_load(p, NULL, t->azShapeSets[k], err);
				if (!ts)
					continue;
				cJSON *s = cJSON_AddObjectToObject(sets, t->azShapeSets[k]);
				cJSON_AddItemToObject(s, "inputs", tensors_json(ts->aIn, ts->nIn));
				cJSON_AddItemToObject(s, "outputs",
				                      tensors_json(ts->aOut, ts->nOut));
				task_free(ts);
			}
			cJSON *ref = cJSON_AddArrayToObject(o, "references");
			if (t->ref.zHost)
				cJSON_AddItemToArray(ref, cJSON_CreateString("host"));
			if (t->ref.zCuda)
				cJSON_AddItemToArray(ref, cJSON_CreateString("cuda"));
			if (t->ref.zTorch)
				cJSON_AddItemToArray(ref, cJSON_CreateString("torch"));
			cJSON_AddNumberToObject(o, "host_seeds", t->seeds.nHost);
			cJSON_AddNumberToObject(o, "cuda_seeds", t->seeds.nCuda);
			cJSON_AddItemToArray(arr, o);
		} else {
			printf("%-16s %s\n", t->zName, t->zDescription);
			for (int k = 0; k < t->nShapeSets; k++) {
				struct task *ts = task_load(p, NULL, t->azShapeSets[k], err);
				if (!ts)
					continue;
				printf("  shapes %s\n", t->azShapeSets[k]);
				print_tensors("in", ts->aIn, ts->nIn);
				print_tensors("out", ts->aOut, ts->nOut);
				task_free(ts);
			}
			printf("  reference %s%s%s; seeds: %d host, %d cuda\n",
			       t->ref.zHost ? "host " : "", t->ref.zCuda ? "cuda " : "",
			       t->ref.zTorch ? "torch" : "", t->seeds.nHost, t->seeds.nCuda);
		}
		task_free(t);
		free(p);
	}
	if (json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToObject(o, "tasks", arr);
		char *z = json_text(o, 1);
		printf("%s\n", z);
		free(z);
		cJSON_Delete(o);
	} else {
		cJSON_Delete(arr);
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	return rc;
}

const struct cmd_entry cmd_tasks_entry = {
    .name = "tasks",
    .usage = "[--json] | PROBLEM.py [--shapes NAME=V,...] [--size F] [--python PY] [--timeout S] "
             "[--json]",
    .help = "list the bundled tasks, or show a KernelBench problem's in[] and out[]",
    .exec = exec_tasks,
};
