/*
 * torchext_modelnew.c - a KernelBench ModelNew module made one extension
 * source: modelnew.py reads it (python3 -I -S, ast only: nothing of the
 * module runs, in kloop or anywhere), and its load_inline sources, the
 * bindings load_inline would generate and the call its forward makes (the
 * stand-in's plan) are written out as one C++ or CUDA file.
 */
#include "torchext.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compile.h"
#include "json.h"
#include "proc.h"
#include "torchref.h"
#include "util.h"

/* how long reading a module may take (a parse: well under a second) */
#define MODELNEW_TIMEOUT_S 30

const char *torchext_script(void)
{
	static char *p;
	return p ? p : (p = torchref_sibling("modelnew.py", "KLOOP_MODELNEW"));
}

void torchext_src_free(struct torchext_src *s)
{
	free(s->zSource);
	free(s->zName);
	memset(s, 0, sizeof *s);
}

/* the JSON line modelnew.py printed (its last line that is an object) */
static cJSON *answer(const char *zOut)
{
	const char *last = NULL;
	for (const char *p = zOut; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (*p == '{')
			last = p;
	if (!last)
		return NULL;
	const char *nl = strchr(last, '\n');
	char *line = nl ? xstrndup(last, (size_t)(nl - last)) : xstrdup(last);
	cJSON *o = cJSON_Parse(line);
	free(line);
	return o;
}

/* run modelnew.py on z; its answer, or NULL + err */
static cJSON *read_module(const char *zPython, const char *zName, const char *z, size_t n,
                          char *err)
{
	const char *tmp = getenv("TMPDIR");
	char *path = xasprintf("%s/kloop-modelnew-XXXXXX.py", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemps(path, 3);
	if (fd < 0 || write_all(fd, z, n) < 0) {
		kl_err(err, "%s: cannot write it for reading: %s", zName, strerror(errno));
		if (fd >= 0)
			close(fd), unlink(path);
		free(path);
		return NULL;
	}
	close(fd);
	char *argv[] = {(char *)zPython,           "-I", "-S", "-W", "ignore",
	                (char *)torchext_script(), path, NULL};
	char *out = NULL;
	int timedOut = 0;
	int st = proc_capture_timeout(argv, &out, 16u << 20, MODELNEW_TIMEOUT_S, &timedOut);
	unlink(path);
	free(path);
	cJSON *o = st >= 0 && !timedOut ? answer(out) : NULL;
	if (!o) {
		char why[160];
		if (timedOut)
			snprintf(why, sizeof why, "it did not finish within %d s",
			         MODELNEW_TIMEOUT_S);
		else if (st < 0)
			snprintf(why, sizeof why, "it could not be started");
		else
			proc_describe_status(st, why, sizeof why);
		/* its output on one line */
		for (char *q = out; q && *q; q++)
			if (*q == '\n')
				*q = q[1] ? ' ' : 0;
		char *tail = str_abbrev(out ? out : "", 300);
		kl_err(err, "%s: kloop's reader of ModelNew modules (%s %s) failed: %s%s%s", zName,
		       zPython, torchext_script(), why, *tail ? ": " : "", tail);
		free(tail);
	}
	free(out);
	return o;
}

/* a source piece, with a #line saying where it is in the module */
static void add_pieces(strbuf *sb, const cJSON *a, const char *zBase, const char *zWhat)
{
	int i = 0;
	const cJSON *p;
	cJSON_ArrayForEach(p, a)
	{
		const char *text = cJSON_GetStringValue(cJSON_GetObjectItem(p, "text"));
		int line = (int)json_num(p, "line", 0);
		if (!text)
			continue;
		if (line > 0)
			sb_addf(sb, "#line %d \"%s\"\n", line, zBase);
		else
			sb_addf(sb, "#line 1 \"%s: %s[%d]\"\n", zBase, zWhat, i);
		sb_adds(sb, text);
		sb_adds(sb, "\n");
		i++;
	}
}

/* the value of get_init_inputs() that __init__'s parameter a names
 * (forward passes self.X set from it): by name where the problem gave a
 * dict, else by position; NULL when it gives none */
static const struct task_init *init_of(const struct task *t, const cJSON *a)
{
	const char *name = json_str(a, "init", "");
	const cJSON *pos = cJSON_GetObjectItem(a, "position");
	for (int i = 0; i < t->nInit; i++)
		if (t->bInitByName ? !strcmp(t->aInit[i].zName, name)
		                   : cJSON_IsNumber(pos) && pos->valueint == i)
			return &t->aInit[i];
	return NULL;
}

/* the number forward passes as self.X set from __init__'s parameter (a) as
 * the plan's initialiser into sb; 0 or -1 + err */
static int plan_init(strbuf *sb, const cJSON *a, const struct task *t, const char *zBase, int line,
                     char *err)
{
	const char *name = json_str(a, "init", "?"), *attr = json_str(a, "attr", "?");
	const struct task_init *v = init_of(t, a);
	const cJSON *dflt = cJSON_GetObjectItem(a, "default");
	if (!v && (cJSON_IsNumber(dflt) || cJSON_IsBool(dflt))) {
		/* the constructor's own default, which get_init_inputs() leaves */
		if (cJSON_IsBool(dflt))
			sb_addf(sb, "{::kl_torch::ARG_BOOL, %d, 0}", cJSON_IsTrue(dflt));
		else if (dflt->valuedouble == floor(dflt->valuedouble) &&
		         fabs(dflt->valuedouble) < 9e18)
			sb_addf(sb, "{::kl_torch::ARG_INT, %.0fLL, 0}", dflt->valuedouble);
		else
			sb_addf(sb, "{::kl_torch::ARG_FLOAT, 0, %.17g}", dflt->valuedouble);
		return 0;
	}
	if (!v) {
		const cJSON *pos = cJSON_GetObjectItem(a, "position");
		strbuf what = STRBUF_INIT;
		if (t->bInitByName || !cJSON_IsNumber(pos))
			sb_addf(&what, "no value named %s", name);
		else
			sb_addf(&what, "%d value%s, none at position %d", t->nInit,
			        t->nInit == 1 ? "" : "s", pos->valueint + 1);
		kl_err(err,
		       "%s:%d: forward passes self.%s, which __init__ sets from its parameter %s; "
		       "the problem's get_init_inputs() gives %s (kloop builds ModelNew as "
		       "KernelBench does: ModelNew(*get_init_inputs()))",
		       zBase, line, attr, name, what.buf);
		sb_free(&what);
		return -1;
	}
	switch (v->kind) {
	case TASK_INIT_BOOL:
		sb_addf(sb, "{::kl_torch::ARG_BOOL, %lld, 0}", v->i);
		break;
	case TASK_INIT_INT:
		sb_addf(sb, "{::kl_torch::ARG_INT, %lldLL, 0}", v->i);
		break;
	case TASK_INIT_FLOAT:
		sb_addf(sb, "{::kl_torch::ARG_FLOAT, 0, %.17g}", v->f);
		break;
	default:
		return kl_err(err,
		              "%s:%d: forward passes self.%s, which __init__ sets from its "
		              "parameter %s; the problem's get_init_inputs() gives it a %s: kloop "
		              "passes numbers (int, float, bool) from get_init_inputs(), no other "
		              "values",
		              zBase, line, attr, name, v->zType);
	}
	return 0;
}

/* forward's argument a as the plan's initialiser into sb; 0 or -1 + err */
static int plan_arg(strbuf *sb, const cJSON *a, const struct task *t, int nForward,
                    const char *zBase, int line, char *err)
{
	const cJSON *v;
	int nIn = t->nIn;
	if (cJSON_GetObjectItem(a, "init"))
		return plan_init(sb, a, t, zBase, line, err);
	if ((v = cJSON_GetObjectItem(a, "input"))) {
		int k = v->valueint;
		if (k >= nIn)
			return kl_err(err,
			              "%s:%d: forward's parameter %d maps to input %d, but the "
			              "problem has %d input%s (forward's parameters take the "
			              "problem's inputs in order)",
			              zBase, line, k + 1, k, nIn, nIn == 1 ? "" : "s");
		sb_addf(sb, "{::kl_torch::ARG_INPUT, %d, 0}", k);
	} else if ((v = cJSON_GetObjectItem(a, "param"))) {
		const char *name = cJSON_GetStringValue(v);
		int k = -1;
		for (int i = 0; name && i < nIn && k < 0; i++)
			if (!strcmp(t->aIn[i].zName, name))
				k = i;
		if (k < 0) {
			strbuf names = STRBUF_INIT;
			for (int i = 0; i < nIn; i++)
				sb_addf(&names, "%s%s", i ? ", " : "", t->aIn[i].zName);
			kl_err(err,
			       "%s:%d: forward passes self.%s, which is none of the problem's "
			       "inputs (%s): kloop maps self.NAME onto the problem's parameter or "
			       "buffer of that name",
			       zBase, line, name ? name : "?", names.buf ? names.buf : "");
			sb_free(&names);
			return -1;
		}
		if (k < nForward)
			return kl_err(
			    err,
			    "%s:%d: forward passes self.%s, but forward's own parameter %d "
			    "takes that input",
			    zBase, line, name, k + 1);
		sb_addf(sb, "{::kl_torch::ARG_INPUT, %d, 0}", k);
	} else if ((v = cJSON_GetObjectItem(a, "bool"))) {
		sb_addf(sb, "{::kl_torch::ARG_BOOL, %d, 0}", cJSON_IsTrue(v));
	} else if ((v = cJSON_GetObjectItem(a, "int")) && cJSON_IsNumber(v)) {
		sb_addf(sb, "{::kl_torch::ARG_INT, %.0fLL, 0}", v->valuedouble);
	} else if ((v = cJSON_GetObjectItem(a, "float")) && cJSON_IsNumber(v)) {
		sb_addf(sb, "{::kl_torch::ARG_FLOAT, 0, %.17g}", v->valuedouble);
	} else {
		return kl_err(err, "%s:%d: an argument kloop's reader did not describe", zBase,
		              line);
	}
	return 0;
}

/* the bindings load_inline would generate for functions, and the plan of
 * the call forward makes, into sb; 0 or -1 + err */
static int bindings(strbuf *sb, const cJSON *o, const struct task *t, const char *zBase, char *err)
{
	const cJSON *fns = cJSON_GetObjectItem(o, "functions"), *f;
	const char *fn = json_str(o, "function", "");
	int line = (int)json_num(o, "line", 0);
	sb_addf(sb, "#line 1 \"%s: kloop's bindings\"\n", zBase);
	if (cJSON_IsArray(fns)) {
		sb_adds(sb, "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)\n{\n");
		cJSON_ArrayForEach(f, fns)
		{
			const char *z = cJSON_GetStringValue(f);
			if (z)
				sb_addf(
				    sb,
				    "\tm.def(\"%s\", torch::wrap_pybind_function(%s), \"%s\");\n",
				    z, z, z);
		}
		sb_adds(sb, "}\n");
	}
	/* what forward passes fn: the stand-in's plan (kloop_torch/kl_torch_run.h) */
	const cJSON *args = cJSON_GetObjectItem(o, "args"), *a;
	int nForward = cJSON_GetArraySize(cJSON_GetObjectItem(o, "forward")), n = 0, nIn = t->nIn;
	if (nForward > nIn)
		return kl_err(err,
		              "%s:%d: forward takes %d parameters, but the problem has %d input%s "
		              "(forward's parameters take the problem's inputs in order)",
		              zBase, line, nForward, nIn, nIn == 1 ? "" : "s");
	sb_adds(sb, "static const ::kl_torch::plan_arg kl_torch_plan_args_[] = {");
	cJSON_ArrayForEach(a, args)
	{
		sb_adds(sb, n++ ? ", " : "");
		if (plan_arg(sb, a, t, nForward, zBase, line, err) < 0)
			return -1;
	}
	sb_addf(sb, "%s{0, 0, 0}};\n", n ? ", " : "");
	sb_addf(sb,
	        "static ::kl_torch::plan_registrar kl_torch_plan_(\"%s\", kl_torch_plan_args_, "
	        "%d);\n",
	        fn, n);
	return 0;
}

int torchext_modelnew(const char *zPython, const char *zName, const char *z, size_t n,
                      const struct task *t, struct torchext_src *out, char *err)
{
	memset(out, 0, sizeof *out);
	const char *base = strrchr(zName, '/') ? strrchr(zName, '/') + 1 : zName;
	cJSON *o = read_module(zPython ? zPython : "python3", base, z, n, err);
	if (!o)
		return -1;
	if (!cJSON_IsTrue(cJSON_GetObjectItem(o, "ok"))) {
		int line = (int)json_num(o, "line", 0);
		const char *why = json_str(o, "error", "kloop's reader gave no reason");
		if (line > 0)
			kl_err(err, "%s:%d: %s", base, line, why);
		else
			kl_err(err, "%s: %s", base, why);
		cJSON_Delete(o);
		return -1;
	}
	int cuda = !strcmp(json_str(o, "lang", "cpp"), "cuda");
	strbuf sb = STRBUF_INIT;
	sb_addf(&sb,
	        "/* %s made one %s source by kloop (torchext_modelnew.c): its load_inline "
	        "module's cpp_sources, then its cuda_sources, then the bindings load_inline "
	        "would generate and the call forward makes; on kloop's ATen stand-in */\n",
	        base, cuda ? "CUDA" : "C++");
	sb_adds(&sb, "#include <torch/extension.h>\n");
	add_pieces(&sb, cJSON_GetObjectItem(o, "cpp"), base, "cpp_sources");
	if (cuda) {
		sb_addf(&sb, "#line 1 \"%s: load_inline's cuda.cu\"\n", base);
		sb_adds(&sb, "#include <cuda.h>\n#include <cuda_runtime.h>\n");
		add_pieces(&sb, cJSON_GetObjectItem(o, "cuda"), base, "cuda_sources");
	}
	if (bindings(&sb, o, t, base, err) < 0) {
		sb_free(&sb);
		cJSON_Delete(o);
		return -1;
	}
	out->lang = cuda ? LANG_CUDA : LANG_CPP;
	out->nSource = sb.len;
	out->zSource = sb_detach(&sb);
	out->zName = torchext_compile_name(base, out->lang);
	snprintf(out->zEntry, sizeof out->zEntry, "%s", json_str(o, "function", ""));
	const cJSON *notes = cJSON_GetObjectItem(o, "notes"), *e;
	strbuf nb = STRBUF_INIT;
	cJSON_ArrayForEach(e, notes) if (cJSON_GetStringValue(e))
	    sb_addf(&nb, "%s%s", nb.len ? "; " : "", cJSON_GetStringValue(e));
	snprintf(out->zNotes, sizeof out->zNotes, "%s", nb.buf ? nb.buf : "");
	sb_free(&nb);
	cJSON_Delete(o);
	return 0;
}
