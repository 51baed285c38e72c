/*
 * cand_export.c - a candidate written out for people outside kloop: its
 * plain source, or a KernelBench ModelNew module (the problem's Model whose
 * forward() runs the candidate, compiled on first use and called through
 * ctypes; a ModelNew candidate as it is, an extension through load_inline;
 * docs/EXPORT.md).  One implementation for `kloop export` and the
 * `export` command of the TUI and the REPL.
 */
#include "cand_export.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compile.h"
#include "json.h"
#include "sha256.h"
#include "task.h"
#include "torchext.h"
#include "torchref.h"
#include "util.h"

static int ends_with(const char *z, const char *suffix)
{
	size_t n = strlen(z), m = strlen(suffix);
	return n >= m && !strcmp(z + n - m, suffix);
}

/* the module body template, beside torchref.py */
static char *body_path(void)
{
	return torchref_sibling("kbexport.py", "KLOOP_EXPORT_BODY");
}

/* NAME = "json string" (a valid Python literal) */
static void py_str(strbuf *sb, const char *zName, const char *z)
{
	cJSON *s = cJSON_CreateString(z);
	char *q = json_text(s, 0);
	sb_addf(sb, "%s = %s\n", zName, q);
	free(q);
	cJSON_Delete(s);
}

static void py_list(strbuf *sb, const char *zName, char **az, int n)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(az[i]));
	char *q = json_text(a, 0);
	sb_addf(sb, "%s = %s\n", zName, q);
	free(q);
	cJSON_Delete(a);
}

/*
 * The compile flags kloop used for the candidate (its result's
 * compile.command without the compiler, the output, the source and kloop's
 * include directory), split into those before the source and those after
 * (libraries); kloop's defaults when it has no result.  A staged CUDA build
 * shows its steps (compile_argv_show: "nvcc FLAGS -c seed.cu -o kl_host.o &&
 * (its fatbinary padded ...) && nvcc FLAGS -shared kl_host.o -o out.so", or
 * -fatbin with no link): its first step's flags are the whole build's, as
 * one command with -shared, the libraries after the source.
 */
static void flags_of(const struct cand *c, int cuda, char ***pPre, int *pnPre, char ***pPost,
                     int *pnPost)
{
	const char *cmd = c->v.comp.zCommand;
	char **pre = xcalloc(64, sizeof *pre), **post = xcalloc(64, sizeof *post);
	int np = 0, nq = 0;
	if (cmd && *cmd) {
		char *buf = xstrdup(cmd), *save;
		char *inc = xasprintf("-I%s", compile_include_dir());
		int after = 0, first = 1, staged = strstr(cmd, " && ") != NULL, shared = 0;
		for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
			if (first) {
				first = 0;
				continue;
			}
			if (!strcmp(w, "&&"))
				break; /* a staged build's later steps */
			if (!strcmp(w, "-o")) {
				strtok_r(NULL, " ", &save);
				continue;
			}
			if (!strcmp(w, inc) ||
			    (staged && (!strcmp(w, "-c") || !strcmp(w, "-fatbin"))))
				continue;
			if (!after && c->zName && !strcmp(w, c->zName)) {
				after = 1;
				continue;
			}
			/* after the source: what came after it, and a staged
			 * build's libraries */
			int late =
			    after || (staged && (!strncmp(w, "-l", 2) || !strncmp(w, "-L", 2)));
			shared |= !strcmp(w, "-shared");
			if (late && nq < 63)
				post[nq++] = xstrdup(w);
			else if (!late && np < 62)
				pre[np++] = xstrdup(w);
		}
		if (staged && !shared)
			pre[np++] = xstrdup("-shared");
		free(inc);
		free(buf);
	} else if (cuda) {
		const char *d[] = {"-O3",   "-std=c++17", "-shared", "-Xcompiler",
		                   "-fPIC", "--cudart",   "shared"};
		for (size_t i = 0; i < sizeof d / sizeof *d; i++)
			pre[np++] = xstrdup(d[i]);
	} else {
		const char *d[] = {"-std=gnu11", "-O3", "-march=native", "-fPIC", "-shared"};
		for (size_t i = 0; i < sizeof d / sizeof *d; i++)
			pre[np++] = xstrdup(d[i]);
		post[nq++] = xstrdup("-lm");
	}
	*pPre = pre, *pnPre = np, *pPost = post, *pnPost = nq;
}

static void free_list(char **a, int n)
{
	for (int i = 0; i < n; i++)
		free(a[i]);
	free(a);
}

/* the PyTorch problem of the session: --problem, the session's .py, or its
 * task's reference.torch; a fresh path or NULL + err */
static char *problem_of(const struct state *st, const char *zGiven, char *err)
{
	if (zGiven) {
		/* a KernelBench problem: FILE.py with a Model (the exported module
		 * imports it) */
		struct stat sb;
		strbuf txt = STRBUF_INIT;
		char e2[KL_ERRLEN];
		int ok = 0;
		if (stat(zGiven, &sb) < 0)
			kl_err(err, "%s: no such problem file", zGiven);
		else if (!S_ISREG(sb.st_mode) || !ends_with(zGiven, ".py"))
			kl_err(err,
			       "%s is not a KernelBench problem file (FILE.py, with class Model)",
			       zGiven);
		else if (read_file(zGiven, &txt, 16 << 20, e2) < 0)
			kl_err(err, "%s", e2);
		else if (!txt.buf || !strstr(txt.buf, "class Model"))
			kl_err(err, "%s defines no class Model: not a KernelBench problem file",
			       zGiven);
		else
			ok = 1;
		sb_free(&txt);
		return ok ? xstrdup(zGiven) : NULL;
	}
	if (st->zTaskDir && ends_with(st->zTaskDir, ".py"))
		return xstrdup(st->zTaskDir);
	if (st->zTaskDir) {
		struct task *t = task_load(st->zTaskDir, st->zBackend, st->zShapes, err);
		char *p = t && t->ref.zTorch ? xstrdup(t->ref.zTorch) : NULL;
		if (t && !p)
			kl_err(err,
			       "the session's task %s has no PyTorch reference (reference.torch); "
			       "give the problem with --problem FILE.py",
			       t->zName);
		task_free(t);
		return p;
	}
	return kl_err(err, "the session names no task; give the problem with --problem FILE.py"),
	       NULL;
}

/* the line saying which candidate an export holds, for `kloop import` to
 * read back (cand_export_read()): "# kloop-candidate: {JSON}\n" */
static void mark(strbuf *out, const struct cand *c, enum torchext_form form)
{
	const char *src = c->zSource ? c->zSource : "";
	struct sha256 h;
	char hex[65];
	sha256_init(&h);
	sha256_update(&h, src, strlen(src));
	sha256_hex(&h, hex);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", c->id);
	cJSON_AddStringToObject(o, "name", c->zName ? c->zName : "");
	cJSON_AddStringToObject(o, "form", torchext_form_name(form));
	cJSON_AddStringToObject(o, "status", c->zStatus ? c->zStatus : "");
	cJSON_AddNumberToObject(o, "bytes", (double)strlen(src));
	cJSON_AddStringToObject(o, "sha256", hex);
	char *z = json_text(o, 0);
	sb_addf(out, "%s%s\n", CAND_EXPORT_MARK, z);
	free(z);
	cJSON_Delete(o);
}

/*
 * The field's forms for KernelBench (torchext.h), into out: a ModelNew
 * module as it is, then the problem's source (Model, get_inputs and
 * get_init_inputs beside ModelNew in one file, which kloop reads again as
 * the same candidate); an extension built by load_inline, called by a
 * ModelNew that is the problem's Model with forward's inputs, then its
 * parameters and buffers, as kloop calls it.
 */
static void kernelbench_torch(strbuf *out, const struct cand *c, enum torchext_form form,
                              const char *zProb, const char *zProbSrc)
{
	const char *src = c->zSource ? c->zSource : "";
	size_t n = strlen(src);
	sb_addf(
	    out,
	    "# Generated by `kloop export --kernelbench`: candidate %d (%s) of a kloop session,\n"
	    "# %s for the problem %s, which follows it as it is\n"
	    "# (Model, get_inputs, get_init_inputs).\n",
	    c->id, c->zName ? c->zName : "?",
	    form == TORCHEXT_MODELNEW
	        ? "a KernelBench ModelNew module as it is,"
	        : "a PyTorch extension built by load_inline, as KernelBench's "
	          "ModelNew",
	    zProb);
	/* (a ModelNew's source starts right after it) */
	mark(out, c, form);
	if (form == TORCHEXT_MODELNEW) {
		sb_add(out, src, n);
		sb_addf(out, "%s\n\n# --- the problem %s ---\n",
		        n && src[n - 1] != '\n' ? "\n" : "", zProb);
		sb_adds(out, zProbSrc);
		return;
	}
	char entry[64], kinds[64];
	torchext_entry_of(src, n, entry, sizeof entry);
	const char *fn = entry[0] ? entry : "forward";
	int known = torchext_entry_params(src, n, fn, kinds, sizeof kinds) == 0;
	int cuda = torchext_lang_of(c->zName ? c->zName : "e.cpp", src, n) == LANG_CUDA;
	sb_addf(out, "import torch\nfrom torch.utils.cpp_extension import load_inline\n\n"
	             "# --- the problem ---\n");
	sb_adds(out, zProbSrc);
	sb_adds(out, "\n\n# --- the candidate, and ModelNew calling it ---\n");
	py_str(out, "_KLOOP_SOURCE", src);
	/* its parameters as kloop fills them: t a tensor, n a number */
	if (known)
		py_str(out, "_KLOOP_PARAMS", kinds);
	else
		sb_adds(out, "_KLOOP_PARAMS = None\n");
	/* a bare extension (no module of its own): load_inline writes one */
	char bare[256];
	char *functions = torchext_bare_entry(src, n, bare, sizeof bare) > 0
	                      ? xasprintf(", functions=[\"%s\"]", fn)
	                      : xstrdup("");
	sb_addf(out,
	        "_kloop_ext = load_inline(name=\"kloop_candidate_%d\", cpp_sources=%s, "
	        "cuda_sources=%s%s)\n\n\n"
	        "class ModelNew(Model):\n"
	        "    \"\"\"The problem's Model; forward calls the extension's %s with forward's\n"
	        "    inputs, then the module's parameters and buffers (kloop's in[]) in its\n"
	        "    tensor parameters, and the values of get_init_inputs() in its number\n"
	        "    parameters, in order.\"\"\"\n\n"
	        "    def __init__(self, *args, **kwargs):\n"
	        "        super().__init__(*args, **kwargs)\n"
	        "        self._kloop_numbers = list(args) + list(kwargs.values())\n"
	        "        self._kloop_out = None\n\n"
	        "    def forward(self, *inputs):\n"
	        "        seen, tensors = set(), [x.contiguous() for x in inputs]\n"
	        "        for _, t in list(self.named_parameters()) + list(self.named_buffers()):\n"
	        "            if t is not None and id(t) not in seen:\n"
	        "                seen.add(id(t))\n"
	        "                tensors.append(t.detach().contiguous())\n"
	        "        if _KLOOP_PARAMS is None:\n"
	        "            return _kloop_ext.%s(*tensors)\n"
	        "        outs = []\n"
	        "        n_out = _KLOOP_PARAMS.count(\"t\") - len(tensors)\n"
	        "        if n_out > 0:\n"
	        "            # it writes its outputs (tensor parameters after the inputs): their\n"
	        "            # shapes and dtypes are the Model's, from one forward on first use\n"
	        "            if self._kloop_out is None:\n"
	        "                with torch.no_grad():\n"
	        "                    ys = super().forward(*inputs)\n"
	        "                ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]\n"
	        "                self._kloop_out = [(y.shape, y.dtype) for y in ys]\n"
	        "            outs = [torch.empty(s, dtype=d, device=tensors[0].device)\n"
	        "                    for s, d in self._kloop_out[:n_out]]\n"
	        "        ts, ns = iter(tensors + outs), iter(self._kloop_numbers)\n"
	        "        r = _kloop_ext.%s(*[next(ts) if k == \"t\" else next(ns) for k in "
	        "_KLOOP_PARAMS])\n"
	        "        if outs:\n"
	        "            return outs[0] if len(outs) == 1 else tuple(outs)\n"
	        "        return r\n",
	        c->id, cuda ? "\"\"" : "_KLOOP_SOURCE", cuda ? "_KLOOP_SOURCE" : "None", functions,
	        fn, fn, fn);
	free(functions);
}

static int write_kernelbench(const struct state *st, const struct cand *c, const char *zOut,
                             const char *zProblem, char *err)
{
	char *prob = problem_of(st, zProblem, err);
	if (!prob)
		return -1;
	const char *z = c->zSource ? c->zSource : "";
	enum torchext_form form = torchext_form_of(c->zName ? c->zName : "", z, strlen(z));
	if (form != TORCHEXT_KERNEL) {
		strbuf src = STRBUF_INIT, out = STRBUF_INIT;
		int rc = read_file(prob, &src, 16 << 20, err);
		if (rc == 0) {
			kernelbench_torch(&out, c, form, prob, src.buf ? src.buf : "");
			rc = write_file_atomic(zOut, out.buf, out.len, err);
		}
		sb_free(&src);
		sb_free(&out);
		free(prob);
		return rc;
	}
	int cuda = c->zName && ends_with(c->zName, ".cu");
	strbuf src = STRBUF_INIT, hdr = STRBUF_INIT, body = STRBUF_INIT, out = STRBUF_INIT;
	char *bp = body_path();
	char *abi = path_join(compile_include_dir(), "kloop.h");
	char *absProb = realpath(prob, NULL);
	int rc = -1;
	if (read_file(prob, &src, 16 << 20, err) < 0 || read_file(abi, &hdr, 1 << 20, err) < 0 ||
	    read_file(bp, &body, 1 << 20, err) < 0)
		goto out;
	char **pre, **post;
	int np, nq;
	flags_of(c, cuda, &pre, &np, &post, &nq);
	sb_addf(
	    &out,
	    "# Generated by `kloop export --kernelbench`: candidate %d (%s) of a kloop session,\n"
	    "# as KernelBench's ModelNew for the problem %s.\n"
	    "# Import it beside the problem's Model: ModelNew(*get_init_inputs()) has the same\n"
	    "# parameters and forward() signature; forward() runs the candidate (compiled on\n"
	    "# first use with the flags kloop used, cached under ~/.cache/kloop/export).\n",
	    c->id, c->zName ? c->zName : "?", prob);
	mark(&out, c, TORCHEXT_KERNEL);
	py_str(&out, "_LANG", cuda ? "cuda" : "c");
	py_str(&out, "_FILE", c->zName ? c->zName : (cuda ? "candidate.cu" : "candidate.c"));
	py_list(&out, "_FLAGS", pre, np);
	py_list(&out, "_LINK", post, nq);
	py_str(&out, "_PROBLEM_PATH", absProb ? absProb : prob);
	py_str(&out, "_PROBLEM_SOURCE", src.buf);
	py_str(&out, "_KLOOP_H", hdr.buf);
	py_str(&out, "_SOURCE", c->zSource ? c->zSource : "");
	sb_adds(&out, "\n");
	sb_add(&out, body.buf, body.len);
	free_list(pre, np);
	free_list(post, nq);
	rc = write_file_atomic(zOut, out.buf, out.len, err);
out:
	sb_free(&src);
	sb_free(&hdr);
	sb_free(&body);
	sb_free(&out);
	free(bp);
	free(abi);
	free(absProb);
	free(prob);
	return rc;
}

/* whether a and b name one existing file (through links too) */
static int same_file(const char *a, const char *b)
{
	struct stat x, y;
	return a && b && stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

/* an output that would overwrite what the export reads (the journal, the
 * problem file) or another output: said, and refused before anything is
 * written.  0 or -1 + err */
static int check_outputs(const struct state *st, const char *zSession, const char *zProblem,
                         const char *const *azOut, int nOut, char *err)
{
	char e2[KL_ERRLEN];
	char *prob = problem_of(st, zProblem, e2);
	int rc = 0;
	for (int i = 0; i < nOut && !rc; i++) {
		if (!azOut[i])
			continue;
		if (same_file(azOut[i], zSession))
			rc = kl_err(
			    err, "%s is the session journal being exported from: not overwritten",
			    azOut[i]);
		else if (same_file(azOut[i], prob))
			rc = kl_err(err,
			            "%s is the KernelBench problem file: not overwritten (give "
			            "another OUT.py)",
			            azOut[i]);
		for (int k = 0; k < i && !rc; k++)
			if (azOut[k] &&
			    (!strcmp(azOut[k], azOut[i]) || same_file(azOut[k], azOut[i])))
				rc = kl_err(err, "%s is given as two outputs", azOut[i]);
	}
	free(prob);
	return rc;
}

int cand_export_write(const struct state *st, const char *zJournal, const struct cand *c,
                      const struct cand_export *x, char *err)
{
	if (check_outputs(st, zJournal, x->zProblem,
	                  (const char *const[]){x->zCuda, x->zSource, x->zKernelbench}, 3, err) < 0)
		return -1;
	int cuda = c->zName && ends_with(c->zName, ".cu");
	if (x->zCuda && !cuda)
		return kl_err(err, "candidate %d (%s) is not CUDA; --source FILE writes its source",
		              c->id, c->zName ? c->zName : "?");
	const char *srcOut[] = {x->zCuda, x->zSource};
	for (int k = 0; k < 2; k++)
		if (srcOut[k] && write_file_atomic(srcOut[k], c->zSource ? c->zSource : "",
		                                   c->zSource ? strlen(c->zSource) : 0, err) < 0)
			return -1;
	if (x->zKernelbench && write_kernelbench(st, c, x->zKernelbench, x->zProblem, err) < 0)
		return -1;
	return 0;
}

void cand_export_said(const struct cand *c, const struct cand_export *x, int withNote, strbuf *sb)
{
	const char *const out[] = {x->zSource, x->zCuda, x->zKernelbench};
	size_t at = sb->len;
	for (int k = 0; k < 3; k++) {
		if (!out[k])
			continue;
		if (sb->len > at)
			sb_addf(sb, ", to %s", out[k]);
		else
			sb_addf(sb, "wrote candidate %d to %s", c->id, out[k]);
		if (k < 2)
			sb_addf(sb, " (%zu bytes)", strlen(c->zSource));
		else
			sb_adds(sb, " as a KernelBench ModelNew module");
	}
	if (withNote && c->status != STATUS_CORRECT)
		sb_addf(sb, "; note: its last verdict is %s", c->zStatus);
}

/* ---- an export read back (kloop import) ---- */

void cand_exported_free(struct cand_exported *x)
{
	free(x->zName);
	free(x->zSource);
	memset(x, 0, sizeof *x);
}

/* the line of z[0..n) that starts with zStart, among its first nLines (0:
 * any), or NULL; its end (the newline or z + n) in *pEnd */
static const char *line_starting(const char *z, size_t n, const char *zStart, int nLines,
                                 const char **pEnd)
{
	size_t m = strlen(zStart);
	for (const char *p = z, *e = z + n; p < e; nLines--) {
		if (nLines == 1)
			break;
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		const char *end = nl ? nl : e;
		if ((size_t)(end - p) >= m && !memcmp(p, zStart, m)) {
			*pEnd = end;
			return p;
		}
		p = nl ? nl + 1 : e;
	}
	return NULL;
}

/* the JSON string literal after zStart on its line (a Python assignment
 * kloop wrote): a fresh string, or NULL */
static char *string_line(const char *z, size_t n, const char *zStart)
{
	const char *end, *p = line_starting(z, n, zStart, 0, &end);
	if (!p)
		return NULL;
	char *line = xstrndup(p + strlen(zStart), (size_t)(end - p - strlen(zStart)));
	cJSON *v = cJSON_Parse(line);
	free(line);
	char *out = cJSON_IsString(v) ? xstrdup(v->valuestring) : NULL;
	cJSON_Delete(v);
	return out;
}

int cand_export_read(const char *z, size_t n, struct cand_exported *x, char *err)
{
	memset(x, 0, sizeof *x);
	const char *end, *p = line_starting(z, n, CAND_EXPORT_MARK, 16, &end);
	if (!p)
		return 0;
	size_t k = strlen(CAND_EXPORT_MARK);
	char *line = xstrndup(p + k, (size_t)(end - p - k));
	cJSON *o = cJSON_Parse(line);
	free(line);
	const char *name = json_str(o, "name", NULL), *form = json_str(o, "form", NULL);
	char sha[65];
	snprintf(sha, sizeof sha, "%s", json_str(o, "sha256", ""));
	double bytes = json_num(o, "bytes", -1);
	if (!cJSON_IsObject(o) || !name || !*name || !form) {
		cJSON_Delete(o);
		return kl_err(err, "its line '%s' is not the one kloop wrote", CAND_EXPORT_MARK);
	}
	x->id = (int)json_num(o, "id", 0);
	x->zName = xstrdup(name);
	snprintf(x->zForm, sizeof x->zForm, "%s", form);
	snprintf(x->zStatus, sizeof x->zStatus, "%s", json_str(o, "status", ""));
	char *src = NULL;
	if (!strcmp(x->zForm, "modelnew")) {
		/* the module as it was, right after the mark, then the problem */
		const char *a = end < z + n ? end + 1 : end;
		size_t left = (size_t)(z + n - a);
		if (bytes >= 0 && bytes <= (double)left)
			src = xstrndup(a, (size_t)bytes);
		struct sha256 h;
		char hex[65] = "";
		if (src) {
			sha256_init(&h);
			sha256_update(&h, src, strlen(src));
			sha256_hex(&h, hex);
		}
		if (!src || strcmp(hex, sha)) {
			/* edited since: the module up to the problem's heading */
			free(src);
			src = NULL;
			const char *q = memmem(a, left, "\n\n# --- the problem ", 20);
			if (q) {
				while (q > a && q[-1] == '\n')
					q--;
				src = xasprintf("%.*s\n", (int)(q - a), a);
			}
		}
	} else {
		src = string_line(
		    z, n, !strcmp(x->zForm, "extension") ? "_KLOOP_SOURCE = " : "_SOURCE = ");
	}
	cJSON_Delete(o);
	if (!src) {
		int mn = !strcmp(x->zForm, "modelnew");
		cand_exported_free(x);
		return kl_err(err,
		              "a module kloop export wrote, whose candidate's source cannot be "
		              "read back (%s)",
		              mn ? "the problem's heading after the ModelNew is gone"
		                 : "its source's line is no longer the JSON string kloop wrote");
	}
	struct sha256 h;
	char hex[65];
	sha256_init(&h);
	sha256_update(&h, src, strlen(src));
	sha256_hex(&h, hex);
	x->edited = strcmp(hex, sha) != 0;
	x->zSource = src;
	return 1;
}
