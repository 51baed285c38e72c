/*
 * torchref_task.c - the PyTorch problem: described by the helper (its
 * inputs and outputs), made a task or checked against one, and every set's
 * inputs and reference outputs written by it into the harness's buffers.
 */
#include "torchref_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "precision.h"
#include "json.h"
#include "proc.h"

/* the last line of z that starts with '{' (the helper's JSON line), or NULL */
static char *json_line(const char *z)
{
	const char *best = NULL;
	for (const char *p = z; p && *p;) {
		if (*p == '{')
			best = p;
		const char *nl = strchr(p, '\n');
		p = nl ? nl + 1 : NULL;
	}
	if (!best)
		return NULL;
	const char *e = strchr(best, '\n');
	return xstrndup(best, e ? (size_t)(e - best) : strlen(best));
}

cJSON *torchref_describe(const char *zPython, const char *zProblem, const char *zShapes,
                         const char *zSize, double timeoutS, char *err)
{
	if (timeoutS <= 0)
		timeoutS = TORCHREF_DESCRIBE_S;
	const char *py = zPython ? zPython : "python3";
	if (!path_exists(zProblem))
		return kl_err(err, "%s: no such problem file", zProblem), NULL;
	const char *argv[16] = {py, torchref_script(), "--describe", "--problem", zProblem};
	int n = 5;
	if (zShapes && *zShapes) {
		argv[n++] = "--shapes";
		argv[n++] = zShapes;
	}
	if (zSize && *zSize) {
		argv[n++] = "--size";
		argv[n++] = zSize;
	}
	argv[n] = NULL;
	char *out = NULL;
	int timedOut = 0;
	int st = proc_capture_timeout((char *const *)argv, &out, 1 << 20, timeoutS, &timedOut);
	if (timedOut) {
		free(out);
		return kl_err(err,
		              "%s: the PyTorch helper did not describe the problem within %g s "
		              "(get_init_inputs(), get_inputs() or forward() may never return); it "
		              "was stopped",
		              zProblem, timeoutS),
		       NULL;
	}
	if (st < 0 || (WIFEXITED(st) && WEXITSTATUS(st) == 127)) {
		free(out);
		return kl_err(err,
		              "the Python interpreter '%s' cannot be run (set it with --python or "
		              "python= in the config)",
		              py),
		       NULL;
	}
	char *line = json_line(out ? out : "");
	cJSON *d = line ? cJSON_Parse(line) : NULL;
	free(line);
	const char *ev = d ? cJSON_GetStringValue(cJSON_GetObjectItem(d, "ev")) : NULL;
	if (!ev || strcmp(ev, "describe")) {
		const char *m = d ? cJSON_GetStringValue(cJSON_GetObjectItem(d, "message")) : NULL;
		char *l = m ? NULL : torchref_last_line(out ? out : "");
		char how[128] = "";
		/* the problem's own code ended the helper: a crash, or exit() */
		if (!m && (WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0)))
			proc_describe_status(st, how, sizeof how);
		if (*how)
			kl_err(err, "%s: the PyTorch helper running the problem %s%s%s", zProblem,
			       how, *l ? "; its last line: " : " (it printed nothing)", l);
		else
			kl_err(err, "%s: %s", zProblem,
			       m    ? m
			       : *l ? l
			            : "the PyTorch helper failed");
		free(l);
		cJSON_Delete(d);
		free(out);
		return NULL;
	}
	free(out);
	cJSON_DeleteItemFromObject(d, "ev");
	return d;
}

char *torchref_tensors_text(const cJSON *desc)
{
	strbuf sb = STRBUF_INIT;
	for (int k = 0; k < 2; k++) {
		const cJSON *e;
		int i = 0;
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(desc, k ? "outputs" : "inputs"))
		{
			const cJSON *x;
			int nd = 0;
			const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(e, "kind"));
			sb_addf(&sb, "%s[%d] %s: %s [", k ? "out" : "in", i++,
			        cJSON_GetStringValue(cJSON_GetObjectItem(e, "name")),
			        cJSON_GetStringValue(cJSON_GetObjectItem(e, "dtype")));
			cJSON_ArrayForEach(x, cJSON_GetObjectItem(e, "shape"))
			    sb_addf(&sb, "%s%.0f", nd++ ? ", " : "", x->valuedouble);
			sb_adds(&sb, "]");
			if (kind)
				sb_addf(&sb, " (%s)",
				        !strcmp(kind, "input") ? "forward() input" : kind);
			sb_adds(&sb, "\n");
		}
	}
	return sb_detach(&sb);
}

const cJSON *torchref_manifest(const struct torchref *r)
{
	return r->manifest;
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
		return kl_err(err, "%s %s has %d dimensions; at most 8 are supported", zWhere, name,
		              t->ndim);
	for (int i = 0; i < t->ndim; i++) {
		/* checked before the conversion: NaN or 1e300 into int64_t is undefined */
		double v = cJSON_GetNumberValue(cJSON_GetArrayItem(sh, i));
		if (!(v >= 1 && v <= TASK_DIM_MAX) || v != floor(v))
			return kl_err(
			    err, "%s %s: dimension %d is %g, not a positive integer of at most %g",
			    zWhere, name, i, v, TASK_DIM_MAX);
		t->shape[i] = (int64_t)v;
	}
	int64_t bytes;
	if (task_bytes_checked(t, &bytes) < 0 || bytes > TASK_BYTES_MAX)
		return kl_err(err, "%s %s: the tensor is over the limit of %lld bytes (16 GiB)",
		              zWhere, name, (long long)TASK_BYTES_MAX);
	/* a 0-dim tensor (a scalar) stays ndim 0: one element, shape [] */
	return 0;
}

/* what get_init_inputs() gives (the helper's "init"), the first
 * TASK_MAX_INIT, into t->aInit */
static void init_from(struct task *t, const cJSON *a)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, a)
	{
		if (t->nInit == TASK_MAX_INIT)
			break;
		struct task_init *v = &t->aInit[t->nInit++];
		const cJSON *x = cJSON_GetObjectItem(e, "value");
		const char *type = json_str(e, "type", "?");
		v->zName = xstrdup(json_str(e, "name", "?"));
		snprintf(v->zType, sizeof v->zType, "%s", type);
		if (cJSON_IsBool(x) && !strcmp(type, "bool")) {
			v->kind = TASK_INIT_BOOL;
			v->i = cJSON_IsTrue(x);
		} else if (cJSON_IsNumber(x) && !strcmp(type, "int") &&
		           x->valuedouble == floor(x->valuedouble) && fabs(x->valuedouble) < 9e18) {
			/* (cJSON keeps a number as a double: an int past 2^53 is
			 * rounded to it) */
			v->kind = TASK_INIT_INT;
			v->i = (long long)x->valuedouble;
		} else if (cJSON_IsNumber(x) && !strcmp(type, "float")) {
			v->kind = TASK_INIT_FLOAT;
			v->f = x->valuedouble;
		} else {
			v->kind = TASK_INIT_OTHER;
		}
	}
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
	task_use_kernelbench_tol(t); /* KernelBench's own allclose tolerances */
	const cJSON *ins = cJSON_GetObjectItem(r->manifest, "inputs");
	const cJSON *outs = cJSON_GetObjectItem(r->manifest, "outputs");
	int ni = cJSON_GetArraySize(ins), no = cJSON_GetArraySize(outs);
	if (ni > TASK_MAX_TENSORS || no > TASK_MAX_TENSORS || no < 1) {
		kl_err(
		    err,
		    "%s: %d inputs and %d outputs; kloop supports 0..%d inputs and 1..%d outputs",
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
	init_from(t, cJSON_GetObjectItem(r->manifest, "init"));
	t->bInitByName = cJSON_IsTrue(cJSON_GetObjectItem(r->manifest, "init_by_name"));
	/* the dtypes that reach its products (the helper traced a forward),
	 * else those of its inputs and parameters */
	const char *zc = cJSON_GetStringValue(cJSON_GetObjectItem(r->manifest, "compute"));
	if (zc && task_compute_parse(zc, &t->compute) == 0)
		t->zComputeFrom = "the dtypes reaching its products";
	else
		t->compute = task_compute_infer(t, 1, &t->zComputeFrom);
	/* its products' operations as PyTorch counts them (PyTorch 2.1 on):
	 * the roofline's compute floor */
	double flops = json_num(r->manifest, "flops", 0);
	if (flops > 0 && isfinite(flops))
		t->flops = flops;
	return t;
}

static int match(const cJSON *arr, const struct task_tensor *a, int n, const char *zWhat,
                 const struct task *t, char *err)
{
	if (cJSON_GetArraySize(arr) != n)
		return kl_err(err, "%s/task.json: %s: the task has %d, reference.py gives %d",
		              t->zDir, zWhat, n, cJSON_GetArraySize(arr));
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
			kl_err(err,
			       "%s/task.json: %s[%d] (%s): the task says %s %s for shape set '%s', "
			       "reference.py gives %s %s (%s); pick the matching --shapes or "
			       "--reference",
			       t->zDir, zWhat, i, a[i].zName, task_dtype_name(a[i].dtype), want,
			       t->zShapeSet, task_dtype_name(m.dtype), got, m.zName);
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
	return match(cJSON_GetObjectItem(r->manifest, "outputs"), t->aOut, t->nOut, "outputs", t,
	             err);
}

/* (torchref_priv.h) */
cJSON *torchref_target(struct torchref *r, struct backend *b, void *dev, size_t n, size_t *pOff,
                       char *err)
{
	cJSON *o = cJSON_CreateObject();
	if (r->memfd >= 0) {
		cJSON_AddNumberToObject(o, "memfd", r->memfd);
		cJSON_AddNumberToObject(o, "offset", (double)*pOff);
		*pOff += (n + 63) & ~(size_t)63;
		return o;
	}
	char hex[130];
	if (!b->share_handle) {
		cJSON_Delete(o);
		return kl_err(err, "the %s backend cannot share its buffers", b->zName), NULL;
	}
	if (b->share_handle(b, dev, hex, err) < 0) {
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_AddStringToObject(o, "ipc", hex);
	return o;
}

/* the host backend's shared memory, sized once for a set of every tensor,
 * each output as large as its float64 copy would be (torchref_fill64) */
int torchref_map_sets(struct torchref *r, const struct task *t, char *err)
{
	if (r->memfd < 0 || r->map)
		return 0;
	size_t need = 64;
	for (int i = 0; i < t->nIn; i++)
		need += (task_tensor_bytes(&t->aIn[i]) + 63) & ~(size_t)63;
	for (int j = 0; j < t->nOut; j++) {
		size_t n = task_tensor_bytes(&t->aOut[j]),
		       n64 = (size_t)task_numel(&t->aOut[j]) * 8;
		need += ((n > n64 ? n : n64) + 63) & ~(size_t)63;
	}
	if (ftruncate(r->memfd, (off_t)need) < 0)
		return kl_err(err, "sizing the shared memory (%zu bytes): %s", need,
		              strerror(errno));
	r->map = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_SHARED, r->memfd, 0);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		return kl_err(err, "mapping the shared memory (%zu bytes): %s", need,
		              strerror(errno));
	}
	r->mapLen = need;
	return 0;
}

/* the fill's reply (torchref_await) */
static int fill_reply(struct torchref *r, cJSON *a, char *err);

/*
 * Ask for the fill's next set s of h, made by the helper from the seed of
 * set `from`: "fill" (in[] and the outputs) or "fill64" (the outputs in
 * float64 of the model in float64, its float inputs varied as vary says,
 * then with its parameters rounded to `bits` mantissa bits where bits > 0,
 * truncated to -bits where bits < 0; the sets of r->fill64Of the source).
 */
static int fill_send(struct torchref *r, char *err)
{
	struct harness *h = r->fillH;
	const struct task *t = harness_task(h);
	int s = r->fillSet, b64 = r->fill64Of != NULL, bits = 0, from = s, vary;
	if (b64) {
		from = precision_source(h, r->fill64Of, s, &bits);
		/* varied as h's set was (what the helper applied there) */
		vary = bits ? 0 : harness_vary_applied(r->fill64Of, from);
	} else {
		vary = harness_vary_of(h, s);
	}
	cJSON *q = cJSON_CreateObject();
	cJSON_AddStringToObject(q, "op", b64 ? "fill64" : "fill");
	cJSON_AddNumberToObject(q, "set", s);
	cJSON_AddNumberToObject(q, "seed", (double)(r->o.seed + 1 + (uint64_t)from));
	cJSON_AddNumberToObject(q, "vary", vary);
	if (b64) {
		cJSON_AddNumberToObject(q, "round", bits < 0 ? -bits : bits);
		cJSON_AddBoolToObject(q, "truncate", bits < 0);
	}
	cJSON *ins = cJSON_AddArrayToObject(q, "inputs");
	cJSON *outs = cJSON_AddArrayToObject(q, "outputs");
	size_t off = 0;
	for (int k = b64; k < 2; k++) {
		int n = k ? t->nOut : t->nIn;
		for (int i = 0; i < n; i++) {
			const struct task_tensor *tt = k ? &t->aOut[i] : &t->aIn[i];
			void *dev = k ? harness_expected_buf(h, s, i) : harness_input_buf(h, s, i);
			(k ? r->offOut : r->offIn)[i] = off;
			cJSON *o =
			    torchref_target(r, r->fillB, dev, task_tensor_bytes(tt), &off, err);
			if (!o) {
				cJSON_Delete(q);
				return -1;
			}
			if (b64)
				cJSON_AddStringToObject(o, "dtype", task_dtype_name(tt->dtype));
			cJSON_AddItemToArray(k ? outs : ins, o);
		}
	}
	if (torchref_send(r, q, err) < 0)
		return -1;
	char what[64];
	snprintf(what, sizeof what, "computing set %d (the forward%s)", s,
	         b64 ? " in float64" : "");
	torchref_await(r, STEP_FILL, fill_reply, r->o.timeoutS, what);
	return 0;
}

static int fill_reply(struct torchref *r, cJSON *a, char *err)
{
	struct harness *h = r->fillH;
	const struct task *t = harness_task(h);
	int s = r->fillSet, b64 = r->fill64Of != NULL;
	if (!b64) /* how its inputs were varied, and what was out of the problem's domain */
	{
		const cJSON *va = cJSON_GetObjectItem(a, "varied"),
		            *un = cJSON_GetObjectItem(a, "unsound");
		harness_note_vary(h, s, cJSON_IsNumber(va) ? va->valueint : 0,
		                  cJSON_IsNumber(un) ? un->valueint : 0);
	}
	cJSON_Delete(a);
	/* the host backend: copy the set out of the shared memory */
	for (int i = 0; r->memfd >= 0 && !b64 && i < t->nIn; i++)
		if (harness_set_input(h, s, i, r->map + r->offIn[i], err) < 0)
			return -1;
	for (int j = 0; r->memfd >= 0 && j < t->nOut; j++)
		if (harness_set_expected(h, s, j, r->map + r->offOut[j], err) < 0)
			return -1;
	if (++r->fillSet == harness_nsets(h))
		return 1;
	return fill_send(r, err) < 0 ? -1 : 0;
}

/* begin filling h's sets: "fill", or "fill64" from src's sets */
static int fill_begin(struct torchref *r, struct harness *h, const struct harness *src,
                      struct backend *b, char *err)
{
	if (torchref_map_sets(r, harness_task(h), err) < 0)
		return -1;
	r->fillH = h;
	r->fill64Of = src;
	r->fillB = b;
	r->fillSet = 0;
	if (!harness_nsets(h))
		return 1;
	return fill_send(r, err) < 0 ? -1 : 0;
}

int torchref_fill_begin(struct torchref *r, struct harness *h, struct backend *b, char *err)
{
	return fill_begin(r, h, NULL, b, err);
}

int torchref_fill64_begin(struct torchref *r, struct harness *h64, const struct harness *h,
                          struct backend *b, char *err)
{
	return fill_begin(r, h64, h, b, err);
}
