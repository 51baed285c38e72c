/*
 * prompt.c - prompt templates: finding them (the user's, else the bundled
 * ones), rendering their {{placeholders}} and sections, and the values that
 * describe a task, a candidate and its latest results to a model.
 */
#include "prompt.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "describe.h"
#include "diagfold.h"
#include "json.h"
#include "result.h"

#define LOG_MAX 4096
#define TEMPLATE_MAX (1u << 20)
#define REFERENCE_MAX (256u << 10)

void prompt_set(struct prompt_vars *v, const char *zKey, const char *zVal)
{
	size_t n = zVal ? strlen(zVal) : 0;
	while (n && (zVal[n - 1] == '\n' || zVal[n - 1] == '\r'))
		n--;
	char *val = xstrndup(zVal ? zVal : "", n);
	for (int i = 0; i < v->n; i++)
		if (!strcmp(v->azKey[i], zKey)) {
			free(v->azVal[i]);
			v->azVal[i] = val;
			return;
		}
	size_t a = v->nAlloc;
	xgrow((void **)&v->azKey, &a, (size_t)v->n + 1, sizeof *v->azKey);
	xgrow((void **)&v->azVal, &v->nAlloc, (size_t)v->n + 1, sizeof *v->azVal);
	v->azKey[v->n] = xstrdup(zKey);
	v->azVal[v->n++] = val;
}

void prompt_setf(struct prompt_vars *v, const char *zKey, const char *zFmt, ...)
{
	strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, zFmt);
	sb_vaddf(&sb, zFmt, ap);
	va_end(ap);
	prompt_set(v, zKey, sb.buf);
	sb_free(&sb);
}

const char *prompt_get(const struct prompt_vars *v, const char *zKey)
{
	for (int i = 0; i < v->n; i++)
		if (!strcmp(v->azKey[i], zKey))
			return v->azVal[i];
	return NULL;
}

void prompt_vars_free(struct prompt_vars *v)
{
	for (int i = 0; i < v->n; i++) {
		free(v->azKey[i]);
		free(v->azVal[i]);
	}
	free(v->azKey);
	free(v->azVal);
	memset(v, 0, sizeof *v);
}

/* ---- rendering ---- */

struct render {
	const char *z; /* the template */
	size_t n;      /* its length */
	const char *zFile;
	const struct prompt_vars *v;
	strbuf *out;
	char *err;
};

static unsigned line_at(const struct render *r, size_t pos)
{
	unsigned line = 1;
	for (size_t i = 0; i < pos && i < r->n; i++)
		line += r->z[i] == '\n';
	return line;
}

static int fail(const struct render *r, size_t pos, const char *zWhat, const char *zName)
{
	return kl_err(r->err, "%s:%u: %s%s%s%s", r->zFile, line_at(r, pos), zWhat,
	              zName ? " {{" : "", zName ? zName : "", zName ? "}}" : "");
}

static int is_blank(const char *z, size_t a, size_t b)
{
	for (size_t i = a; i < b; i++)
		if (z[i] != ' ' && z[i] != '\t' && z[i] != '\r')
			return 0;
	return 1;
}

/*
 * Render from *pPos until the end or the tag closing section zName (NULL at
 * the top), writing only when on.  Leaves *pPos after the closing tag.
 */
static int render_from(struct render *r, size_t *pPos, const char *zName, size_t openAt, int on)
{
	size_t pos = *pPos, copy = pos;
	for (;;) {
		const char *t = r->n > pos ? memmem(r->z + pos, r->n - pos, "{{", 2) : NULL;
		if (!t) {
			if (zName)
				return fail(r, openAt, "section without its closing tag:", zName);
			if (on)
				sb_add(r->out, r->z + copy, r->n - copy);
			*pPos = r->n;
			return 0;
		}
		size_t ts = (size_t)(t - r->z);
		const char *e = memmem(t + 2, r->n - ts - 2, "}}", 2);
		if (!e)
			return fail(r, ts, "'{{' without its closing '}}'", NULL);
		size_t te = (size_t)(e - r->z) + 2;
		char kind = t[2];
		size_t ns = ts + 2 + (kind == '#' || kind == '^' || kind == '/' || kind == '!');
		size_t ne = te - 2;
		while (ns < ne && isspace((unsigned char)r->z[ns]))
			ns++;
		while (ne > ns && isspace((unsigned char)r->z[ne - 1]))
			ne--;
		char name[128];
		size_t nn = ne - ns < sizeof name - 1 ? ne - ns : sizeof name - 1;
		memcpy(name, r->z + ns, nn);
		name[nn] = 0;
		/* a section or comment tag alone on its line takes the line with it */
		size_t from = ts, next = te;
		if (kind == '#' || kind == '^' || kind == '/' || kind == '!') {
			size_t ls = ts;
			while (ls > 0 && r->z[ls - 1] != '\n')
				ls--;
			size_t le = te;
			while (le < r->n && r->z[le] != '\n')
				le++;
			if (ls >= copy && is_blank(r->z, ls, ts) && is_blank(r->z, te, le)) {
				from = ls;
				next = le < r->n ? le + 1 : r->n;
			}
		}
		if (on)
			sb_add(r->out, r->z + copy, from - copy);
		pos = copy = next;
		if (kind == '!')
			continue;
		if (kind != '#' && kind != '^' && kind != '/') {
			const char *val = prompt_get(r->v, name);
			if (!val)
				return fail(r, ts, "unknown placeholder", name);
			if (on)
				sb_adds(r->out, val);
			continue;
		}
		if (!*name)
			return fail(r, ts, "a section tag without a name", NULL);
		if (kind == '/') {
			if (!zName || strcmp(zName, name))
				return fail(r, ts,
				            zName ? "closing tag does not match the open section:"
				                  : "closing tag without an open section:",
				            name);
			*pPos = pos;
			return 0;
		}
		const char *val = prompt_get(r->v, name);
		if (!val)
			return fail(r, ts, "unknown placeholder", name);
		int inner = on && ((kind == '#') == (*val != 0));
		if (render_from(r, &pos, name, ts, inner) < 0)
			return -1;
		copy = pos;
	}
}

int prompt_render(const char *zTemplate, size_t n, const char *zFile, const struct prompt_vars *v,
                  strbuf *out, char *err)
{
	struct render r = {zTemplate, n, zFile, v, out, err};
	size_t pos = 0;
	size_t mark = out->len;
	if (render_from(&r, &pos, NULL, 0, 1) < 0) {
		out->len = mark;
		if (out->buf)
			out->buf[mark] = 0;
		return -1;
	}
	return 0;
}

/* ---- finding templates ---- */

char *prompt_path(const char *zName, char *err)
{
	const char *x = getenv("XDG_CONFIG_HOME");
	const char *h = getenv("HOME");
	char *user = x && *x
	                 ? xasprintf("%s/kloop/prompts/%s.md", x, zName)
	                 : xasprintf("%s/.config/kloop/prompts/%s.md", h && *h ? h : ".", zName);
	if (path_exists(user))
		return user;
	const char *env = getenv("KLOOP_PROMPTS");
	char *dir = env && *env ? xstrdup(env) : exe_data_dir("prompts");
	char *bundled = xasprintf("%s/%s.md", dir, zName);
	free(dir);
	if (path_exists(bundled)) {
		free(user);
		return bundled;
	}
	kl_err(err, "no prompt template '%s': looked for %s and %s", zName, user, bundled);
	free(user);
	free(bundled);
	return NULL;
}

int prompt_build(const char *zName, const struct prompt_vars *v, strbuf *out, char *err)
{
	char *path = prompt_path(zName, err);
	if (!path)
		return -1;
	strbuf t = STRBUF_INIT;
	int rc = read_file(path, &t, TEMPLATE_MAX, err);
	if (rc == 0)
		rc = prompt_render(t.buf ? t.buf : "", t.len, path, v, out, err);
	sb_free(&t);
	free(path);
	return rc;
}

/* ---- what the placeholders say ---- */

static const char *dist_name(const struct task_tensor *x, char *buf, size_t n)
{
	switch (x->dist) {
	case DIST_NORMAL:
		snprintf(buf, n, "normal, mean %g, std %g", x->a, x->b);
		break;
	case DIST_RANDINT:
		snprintf(buf, n, "random integers in [%g, %g]", x->a, x->b);
		break;
	default:
		snprintf(buf, n, "uniform in [%g, %g]", x->a, x->b);
	}
	return buf;
}

static void tensors_text(const struct task *t, strbuf *sb)
{
	char d[96];
	for (int i = 0; i < t->nIn + t->nOut; i++) {
		int out = i >= t->nIn;
		const struct task_tensor *x = out ? &t->aOut[i - t->nIn] : &t->aIn[i];
		char *shape = task_shape_str(x);
		sb_addf(sb, "%s[%d] %s: %s %s", out ? "out" : "in", out ? i - t->nIn : i, x->zName,
		        task_dtype_name(x->dtype), shape);
		if (!out)
			sb_addf(sb, " (inputs drawn %s)", dist_name(x, d, sizeof d));
		sb_adds(sb, "\n");
		free(shape);
	}
	if (t->zShapeSet && *t->zShapeSet)
		sb_addf(sb, "shape set: %s\n", t->zShapeSet);
	for (int i = 0; i < t->nOut; i++) {
		struct task_tol tol = t->aTol[t->aOut[i].dtype];
		sb_addf(sb,
		        "tolerance for %s: |out - ref| <= %g + %g * |ref| per element, relative L2 "
		        "error <= %g\n",
		        t->aOut[i].zName, tol.atol, tol.rtol, tol.rel_l2);
	}
}

static void set_file(struct prompt_vars *v, const char *zKey, const char *zPath, size_t max)
{
	strbuf sb = STRBUF_INIT;
	char err[KL_ERRLEN];
	if (zPath && read_file(zPath, &sb, max, err) < 0) {
		sb_reset(&sb);
		sb_addf(&sb, "(%s)", err);
	}
	prompt_set(v, zKey, sb.buf);
	sb_free(&sb);
}

void prompt_task_vars(struct prompt_vars *v, const struct task *t, const char *zProblem,
                      const char *zBackend)
{
	int cuda = zBackend && !strcmp(zBackend, "cuda");
	prompt_set(v, "task.backend", cuda ? "cuda" : "host");
	prompt_set(v, "task.cuda", cuda ? "yes" : "");
	prompt_set(v, "task.language",
	           cuda ? "CUDA C++ (compiled with nvcc into a shared object)"
	                : "C (compiled with cc -O3 -march=native into a shared object)");
	prompt_set(v, "task.file", cuda ? "candidate.cu" : "candidate.c");
	/* the innovation archive's section: empty unless the session fills it
	 * (sessions/archive/archive.h), so that every template may place it */
	prompt_set(v, "archive", "");
	const char *ref = NULL;
	if (t) {
		prompt_set(v, "task.name", t->zName);
		prompt_set(v, "task.description", t->zDescription);
		strbuf sb = STRBUF_INIT;
		tensors_text(t, &sb);
		prompt_set(v, "task.tensors", sb.buf);
		sb_free(&sb);
		ref = cuda ? t->ref.zCuda : t->ref.zHost;
		if (!ref)
			ref = t->ref.zTorch;
		if (!ref)
			ref = cuda ? t->ref.zHost : t->ref.zCuda;
	} else {
		const char *b = zProblem ? strrchr(zProblem, '/') : NULL;
		prompt_set(v, "task.name", b ? b + 1 : zProblem);
		prompt_set(v, "task.description", "a KernelBench problem (PyTorch module)");
		prompt_set(v, "task.tensors",
		           "the inputs are the tensors get_inputs() returns, then the module's "
		           "parameters and buffers; the outputs are what forward() returns\n");
		ref = zProblem;
	}
	const char *rb = ref ? strrchr(ref, '/') : NULL;
	prompt_set(v, "task.reference_name", rb ? rb + 1 : ref ? ref : "");
	set_file(v, "task.reference", ref, REFERENCE_MAX);
	char *abi = path_join(compile_include_dir(), "kloop.h");
	set_file(v, "task.abi", abi, REFERENCE_MAX);
	free(abi);
}

/* append "label:" and the text on the next lines, cut to LOG_MAX bytes (its
 * last ones when tail); nothing for an empty text */
static void add_log(strbuf *sb, const char *zLabel, const char *z, int tail)
{
	size_t n = strlen(z);
	if (!n)
		return;
	sb_addf(sb, "%s:\n", zLabel);
	if (n > LOG_MAX)
		sb_adds(sb, tail ? "[...]\n" : "");
	sb_add(sb, tail && n > LOG_MAX ? z + n - LOG_MAX : z, n < LOG_MAX ? n : LOG_MAX);
	if (n > LOG_MAX && !tail)
		sb_adds(sb, "\n[...]");
	if (sb->buf[sb->len - 1] != '\n')
		sb_adds(sb, "\n");
}

/* a verdict's fact as the prompt says it: "label: text" */
static void prompt_line(void *arg, const char *zLabel, const char *zText, int alarm)
{
	(void)alarm;
	sb_addf(arg, "%s: %s\n", zLabel, zText);
}

void prompt_results(const cJSON *r, strbuf *sb)
{
	if (!r) {
		sb_adds(sb, "not evaluated yet\n");
		return;
	}
	struct verdict v;
	verdict_decode(r, &v);
	sb_addf(sb, "verdict: %s%s%s\n", v.zStatus, *v.zReason ? ": " : "", v.zReason);
	/* its diagnostics folded (a verdict kept before the worker folded
	 * them), then cut to LOG_MAX bytes, saying how much was cut and
	 * keeping the errors past the cut (diagfold.h) */
	char *folded = diag_fold(v.comp.zLog);
	char *capped = diag_cap(folded, LOG_MAX);
	add_log(sb, v.comp.present && !v.comp.ok ? "compiler output" : "compiler warnings", capped,
	        0);
	free(capped);
	free(folded);
	verdict_describe(&v, RD_ALL, prompt_line, sb);
	if (v.precision.reduced)
		sb_adds(sb, "Under the precision policy `faithful` (the default) this candidate "
		            "is not ranked: its results are less precise than the reference's "
		            "arithmetic allows. Compute in the "
		            "reference's precision (no TF32, f16 or bf16 arithmetic or storage, "
		            "no coarse approximations of math functions).\n");
	double base = v.baselineMs, sp = v.speedup;
	if (!isnan(base))
		sb_addf(sb, "baseline: %s %.4g ms%s", *v.zBaseline ? v.zBaseline : "reference",
		        base, isnan(sp) ? "\n" : "");
	if (!isnan(base) && !isnan(sp))
		sb_addf(sb, "; speedup %.3gx\n", sp);
	/* PyTorch's other baseline, where the reference is PyTorch */
	double bc = v.baselineCompileMs, spc = v.speedupCompile;
	if (!isnan(bc))
		sb_addf(sb, "torch.compile of the reference: %.4g ms%s", bc,
		        isnan(spc) ? "\n" : "");
	if (!isnan(bc) && !isnan(spc))
		sb_addf(sb, "; speedup %.3gx\n", spc);
	if (isnan(bc) && v.zBaselineCompileError && *v.zBaselineCompileError)
		add_log(sb, "torch.compile of the reference failed", v.zBaselineCompileError, 0);
	if (v.status == STATUS_CRASHED || v.status == STATUS_TIMEOUT)
		add_log(sb, "its last output", v.zStderrTail ? v.zStderrTail : "", 1);
}

void prompt_candidate_vars(struct prompt_vars *v, const char *zPrefix, const char *zName,
                           const char *zSource, const cJSON *result)
{
	char key[64];
	snprintf(key, sizeof key, "%s.name", zPrefix);
	prompt_set(v, key, zName);
	snprintf(key, sizeof key, "%s.source", zPrefix);
	prompt_set(v, key, zSource);
	snprintf(key, sizeof key, "%s.status", zPrefix);
	struct verdict vd;
	verdict_decode(result, &vd);
	prompt_set(v, key, result && *vd.zStatus ? vd.zStatus : "not evaluated");
	strbuf sb = STRBUF_INIT;
	prompt_results(result, &sb);
	snprintf(key, sizeof key, "%s.results", zPrefix);
	prompt_set(v, key, sb.buf);
	sb_free(&sb);
}
