/*
 * torchref.c - runs the Python helper for PyTorch references and reads its
 * manifest and raw tensor files into the harness.
 */
#include "torchref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "proc.h"
#include "sha256.h"
#include "util.h"

struct torchref {
	char *zDir;      /* the cache directory holding manifest.json and the .bin files */
	cJSON *manifest; /* parsed manifest */
};

const char *torchref_script(void)
{
	static char *p;
	if (p)
		return p;
	const char *env = getenv("KLOOP_TORCHREF");
	if (env && *env)
		return p = xstrdup(env);
	const char *cands[] = {"../engine/torchref.py", "../share/kloop/torchref.py"};
	for (size_t i = 0; i < 2; i++) {
		char *q = path_join(exe_dir(), cands[i]);
		if (path_exists(q))
			return p = q;
		free(q);
	}
	return p = path_join(exe_dir(), "../engine/torchref.py");
}

/* the last non-empty line of z */
static char *last_line(const char *z)
{
	const char *end = z + strlen(z);
	while (end > z && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	const char *s = end;
	while (s > z && s[-1] != '\n')
		s--;
	return xstrndup(s, (size_t)(end - s));
}

void torchref_free(struct torchref *r)
{
	if (!r)
		return;
	free(r->zDir);
	cJSON_Delete(r->manifest);
	free(r);
}

static cJSON *read_json(const char *zPath, char *err)
{
	strbuf sb = STRBUF_INIT;
	if (read_file(zPath, &sb, 64 << 20, err) < 0) {
		sb_free(&sb);
		return NULL;
	}
	cJSON *o = cJSON_Parse(sb.buf);
	sb_free(&sb);
	if (!o)
		kl_err(err, "%s: not valid JSON", zPath);
	return o;
}

struct torchref *torchref_prepare(const char *zProblem, const struct torchref_opts *o, char *err)
{
	const char *py = o->zPython ? o->zPython : "python3";
	const char *script = torchref_script();
	if (!path_exists(script))
		return kl_err(err, "the PyTorch helper %s is missing (set KLOOP_TORCHREF)", script), NULL;
	char *out = NULL;
	char *argvCheck[] = {(char *)py, (char *)script, "--check", NULL};
	int st = proc_capture(argvCheck, &out, 1 << 16);
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) == 127) {
		free(out);
		return kl_err(err, "the Python interpreter '%s' cannot be run (set it with --python or "
				   "python= in the config)", py),
		       NULL;
	}
	char *line = last_line(out ? out : "");
	cJSON *chk = cJSON_Parse(line);
	free(line);
	const char *torchVer = chk ? cJSON_GetStringValue(cJSON_GetObjectItem(chk, "torch")) : NULL;
	const char *devName = chk ? cJSON_GetStringValue(cJSON_GetObjectItem(chk, "device")) : NULL;
	if (!torchVer) {
		const char *why = chk ? cJSON_GetStringValue(cJSON_GetObjectItem(chk, "error")) : NULL;
		if (why && *why)
			kl_err(err, "%s", why);
		else
			kl_err(err, "PyTorch is not installed for %s", py);
		cJSON_Delete(chk);
		free(out);
		return NULL;
	}
	if (!strcmp(o->zDevice, "cuda") && !cJSON_IsTrue(cJSON_GetObjectItem(chk, "cuda"))) {
		kl_err(err, "PyTorch %s for %s cannot use CUDA here", torchVer, py);
		cJSON_Delete(chk);
		free(out);
		return NULL;
	}
	free(out);
	/* the cache key: problem text, torch version, device, trials and seed */
	strbuf src = STRBUF_INIT;
	if (read_file(zProblem, &src, 16 << 20, err) < 0) {
		cJSON_Delete(chk);
		sb_free(&src);
		return NULL;
	}
	struct sha256 s;
	char key[65];
	char *meta = xasprintf("torchref-v1|%s|%s|%s|%d|%llu|%d", torchVer,
			       strcmp(o->zDevice, "cuda") ? "cpu" : (devName ? devName : "cuda"), o->zDevice,
			       o->nTrials, (unsigned long long)o->seed, o->bTime);
	sha256_init(&s);
	sha256_update(&s, meta, strlen(meta) + 1);
	sha256_update(&s, src.buf, src.len);
	sha256_hex(&s, key);
	free(meta);
	sb_free(&src);
	cJSON_Delete(chk);
	struct torchref *r = xcalloc(1, sizeof *r);
	r->zDir = xasprintf("%s/torch/%s", o->zCacheDir, key);
	char *man = path_join(r->zDir, "manifest.json");
	if (path_exists(man)) {
		r->manifest = read_json(man, err);
		free(man);
		if (r->manifest)
			return r;
		torchref_free(r);
		return NULL;
	}
	if (mkdir_p(r->zDir, err) < 0) {
		free(man);
		torchref_free(r);
		return NULL;
	}
	char trials[32], seed[32], budget[32];
	snprintf(trials, sizeof trials, "%d", o->nTrials);
	snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
	snprintf(budget, sizeof budget, "%.0f", o->budgetS * 1000);
	char *argv[] = {(char *)py, (char *)script, "--problem", (char *)zProblem, "--out", r->zDir,
			"--trials", trials, "--seed", seed, "--device", (char *)o->zDevice,
			o->bTime ? "--time" : NULL, "--time-budget-ms", budget, NULL};
	out = NULL;
	st = proc_capture(argv, &out, 1 << 20);
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char *l = last_line(out ? out : "");
		kl_err(err, "%s", *l ? l : "the PyTorch helper failed");
		free(l);
		free(out);
		free(man);
		torchref_free(r);
		return NULL;
	}
	free(out);
	r->manifest = read_json(man, err);
	free(man);
	if (!r->manifest) {
		torchref_free(r);
		return NULL;
	}
	return r;
}

const cJSON *torchref_timing(const struct torchref *r)
{
	const cJSON *t = cJSON_GetObjectItem(r->manifest, "timing");
	return cJSON_IsObject(t) ? t : NULL;
}

static int tensor_from(const cJSON *e, struct task_tensor *t, const char *zWhere, char *err)
{
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(e, "name"));
	const char *dt = cJSON_GetStringValue(cJSON_GetObjectItem(e, "dtype"));
	const cJSON *sh = cJSON_GetObjectItem(e, "shape");
	if (!name || !dt || task_dtype_parse(dt, &t->dtype) < 0 || !cJSON_IsArray(sh))
		return kl_err(err, "the PyTorch manifest's %s entry is malformed", zWhere);
	t->zName = xstrdup(name);
	t->ndim = cJSON_GetArraySize(sh);
	if (t->ndim > 8)
		return kl_err(err, "%s %s has %d dimensions; at most 8 are supported", zWhere, name, t->ndim);
	for (int i = 0; i < t->ndim; i++)
		t->shape[i] = (int64_t)cJSON_GetNumberValue(cJSON_GetArrayItem(sh, i));
	if (t->ndim == 0) { /* a scalar is a tensor of one element */
		t->ndim = 1;
		t->shape[0] = 1;
	}
	return 0;
}

struct task *torchref_make_task(const struct torchref *r, const char *zProblem, char *err)
{
	struct task *t = xcalloc(1, sizeof *t);
	const char *slash = strrchr(zProblem, '/');
	const char *base = slash ? slash + 1 : zProblem;
	const char *dot = strrchr(base, '.');
	t->zName = xstrndup(base, dot ? (size_t)(dot - base) : strlen(base));
	t->zDir = slash ? xstrndup(zProblem, (size_t)(slash - zProblem)) : xstrdup(".");
	t->zDescription = xasprintf("KernelBench problem %s", base);
	t->zShapeSet = xstrdup("");
	t->ref.zTorch = xstrdup(zProblem);
	for (int d = 0; d < 8; d++)
		t->aTol[d] = task_default_tol((kl_dtype)d);
	const cJSON *ins = cJSON_GetObjectItem(r->manifest, "inputs");
	const cJSON *outs = cJSON_GetObjectItem(r->manifest, "outputs");
	int ni = cJSON_GetArraySize(ins), no = cJSON_GetArraySize(outs);
	if (ni > TASK_MAX_TENSORS || no > TASK_MAX_TENSORS || no < 1) {
		kl_err(err, "%s: %d inputs and %d outputs; kloop supports 0..%d inputs and 1..%d outputs",
		       zProblem, ni, no, TASK_MAX_TENSORS, TASK_MAX_TENSORS);
		task_free(t);
		return NULL;
	}
	for (int i = 0; i < ni; i++, t->nIn++)
		if (tensor_from(cJSON_GetArrayItem(ins, i), &t->aIn[i], "input", err) < 0) {
			t->nIn++;
			task_free(t);
			return NULL;
		}
	for (int i = 0; i < no; i++, t->nOut++)
		if (tensor_from(cJSON_GetArrayItem(outs, i), &t->aOut[i], "output", err) < 0) {
			t->nOut++;
			task_free(t);
			return NULL;
		}
	return t;
}

static int match(const cJSON *arr, const struct task_tensor *a, int n, const char *zWhat,
		 const struct task *t, char *err)
{
	if (cJSON_GetArraySize(arr) != n)
		return kl_err(err, "%s/task.json: %s: the task has %d, reference.py gives %d", t->zDir,
			      zWhat, n, cJSON_GetArraySize(arr));
	for (int i = 0; i < n; i++) {
		struct task_tensor m = {0};
		if (tensor_from(cJSON_GetArrayItem(arr, i), &m, zWhat, err) < 0) {
			free(m.zName);
			return -1;
		}
		int same = m.dtype == a[i].dtype && m.ndim == a[i].ndim;
		for (int k = 0; same && k < m.ndim; k++)
			same = m.shape[k] == a[i].shape[k];
		if (!same) {
			char *want = task_shape_str(&a[i]), *got = task_shape_str(&m);
			kl_err(err, "%s/task.json: %s[%d] (%s): the task says %s %s for shape set '%s', "
				    "reference.py gives %s %s (%s); pick the matching --shapes or --reference",
			       t->zDir, zWhat, i, a[i].zName, task_dtype_name(a[i].dtype), want, t->zShapeSet,
			       task_dtype_name(m.dtype), got, m.zName);
			free(want);
			free(got);
			free(m.zName);
			return -1;
		}
		free(m.zName);
	}
	return 0;
}

int torchref_check_task(const struct torchref *r, const struct task *t, char *err)
{
	if (match(cJSON_GetObjectItem(r->manifest, "inputs"), t->aIn, t->nIn, "inputs", t, err) < 0)
		return -1;
	return match(cJSON_GetObjectItem(r->manifest, "outputs"), t->aOut, t->nOut, "outputs", t, err);
}

static int load_bin(const struct torchref *r, const char *zFile, size_t nExpect, strbuf *sb,
		    char *err)
{
	char *p = path_join(r->zDir, zFile);
	sb_reset(sb);
	int rc = read_file(p, sb, nExpect + 1, err);
	if (rc == 0 && sb->len != nExpect)
		rc = kl_err(err, "%s: %zu bytes, expected %zu", p, sb->len, nExpect);
	free(p);
	return rc;
}

int torchref_fill(const struct torchref *r, struct harness *h, const struct task *t, char *err)
{
	const cJSON *trials = cJSON_GetObjectItem(r->manifest, "trials");
	int nSets = harness_nsets(h);
	if (cJSON_GetArraySize(trials) < nSets)
		return kl_err(err, "%s/manifest.json: %d trial sets, %d needed", r->zDir,
			      cJSON_GetArraySize(trials), nSets);
	strbuf sb = STRBUF_INIT;
	for (int s = 0; s < nSets; s++) {
		const cJSON *tr = cJSON_GetArrayItem(trials, s);
		const cJSON *ins = cJSON_GetObjectItem(tr, "inputs"), *outs = cJSON_GetObjectItem(tr, "outputs");
		if (cJSON_GetArraySize(ins) != t->nIn || cJSON_GetArraySize(outs) != t->nOut) {
			sb_free(&sb);
			return kl_err(err, "%s/manifest.json: trial %d lists the wrong number of files", r->zDir, s);
		}
		for (int i = 0; i < t->nIn; i++) {
			size_t n = (size_t)task_numel(&t->aIn[i]) * task_dtype_size(t->aIn[i].dtype);
			if (load_bin(r, cJSON_GetStringValue(cJSON_GetArrayItem(ins, i)), n, &sb, err) < 0) {
				sb_free(&sb);
				return -1;
			}
			if (harness_set_input(h, s, i, sb.buf, err) < 0) {
				sb_free(&sb);
				return -1;
			}
		}
		for (int j = 0; j < t->nOut; j++) {
			size_t n = (size_t)task_numel(&t->aOut[j]) * task_dtype_size(t->aOut[j].dtype);
			if (load_bin(r, cJSON_GetStringValue(cJSON_GetArrayItem(outs, j)), n, &sb, err) < 0) {
				sb_free(&sb);
				return -1;
			}
			if (harness_set_expected(h, s, j, sb.buf, err) < 0) {
				sb_free(&sb);
				return -1;
			}
		}
	}
	sb_free(&sb);
	return 0;
}
