/*
 * torchref_draw.c - given inputs drawn afresh for every run (issue 37):
 * the PyTorch helper draws a run's inputs with get_inputs() under the run's
 * seed, and makes a seed's reference outputs with the problem's forward,
 * as the harness's source (harness.h, harness_set_source).
 */
#include "torchref_priv.h"

#include <stdio.h>
#include <string.h>

#include "json.h"

/* seeds the helper takes: 52 bits and the 53rd set, exact as a JSON number
 * and apart from the sets' own (the base seed + 1 + s) */
static double helper_seed(uint64_t seed)
{
	return (double)((seed & ((1ull << 52) - 1)) | (1ull << 52));
}

/* the buffers the helper writes a run's set into, and their targets: the
 * shared memory's set layout on the host, buffers of their own on the GPU */
static int draw_setup(struct torchref *r, char *err)
{
	if (r->drawIns)
		return 0;
	const struct task *t = harness_task(r->srcH);
	struct backend *b = r->srcB;
	if (torchref_map_sets(r, t, err) < 0)
		return -1;
	cJSON *ins = cJSON_CreateArray(), *outs = cJSON_CreateArray();
	size_t off = 0;
	r->drawOwned = r->memfd < 0;
	for (int k = 0; k < 2; k++) {
		int n = k ? t->nOut : t->nIn;
		for (int i = 0; i < n; i++) {
			const struct task_tensor *tt = k ? &t->aOut[i] : &t->aIn[i];
			size_t bytes = task_tensor_bytes(tt);
			void **pp = k ? &r->apDrawOut[i] : &r->apDrawIn[i];
			size_t at = off;
			if (r->drawOwned && !(*pp = b->alloc(b, bytes ? bytes : 1, err)))
				goto fail;
			cJSON *o = torchref_target(r, b, *pp, bytes, &off, err);
			if (!o)
				goto fail;
			if (!r->drawOwned)
				*pp = r->map + at;
			cJSON_AddItemToArray(k ? outs : ins, o);
		}
	}
	r->drawIns = ins;
	r->drawOuts = outs;
	return 0;
fail:
	cJSON_Delete(ins);
	cJSON_Delete(outs);
	torchref_draw_free(r);
	return -1;
}

/* one request and its answer (zEv), within the helper's timeout; zTrace:
 * the step trace's name for it, split into the helper's own part (its
 * answer's "seconds") and the request's way there and back */
static int ask(struct torchref *r, cJSON *q, const char *zEv, const char *zWhat, const char *zTrace,
               char *err)
{
	double t0 = now_s();
	if (torchref_send(r, q, err) < 0)
		return -1;
	cJSON *a = torchref_recv_line(r, r->o.timeoutS, zWhat, err);
	if (!a)
		return -1;
	const char *ev = json_str(a, "ev", "");
	int ok = !strcmp(ev, zEv);
	if (!ok)
		kl_err(err, "the PyTorch helper answered %.40s to %s, not %s", ev, zWhat, zEv);
	if (ok && zTrace && step_tracing()) {
		double t = now_s(), own = json_num(a, "seconds", 0);
		char z[160];
		snprintf(z, sizeof z, "%s: the helper's own", zTrace);
		step_trace_span(z, t - own, t);
		snprintf(z, sizeof z, "%s: the request there and back", zTrace);
		step_trace_span(z, t0, t - own);
		/* the helper's parts, one after another from its start */
		const cJSON *parts = cJSON_GetObjectItem(a, "parts"), *e;
		double at = t - own;
		cJSON_ArrayForEach(e, parts)
		{
			if (!cJSON_IsNumber(e) || !e->string)
				continue;
			snprintf(z, sizeof z, "%s: the helper's %.40s", zTrace, e->string);
			step_trace_span(z, at, at + e->valuedouble);
			at += e->valuedouble;
		}
	}
	cJSON_Delete(a);
	return ok ? 0 : -1;
}

static int src_ready(void *arg)
{
	struct torchref *r = arg;
	/* its torch.compile compiles in the background: it reads no request */
	return r->pid > 0 && !torchref_compile_pending(r) && !r->held;
}

/* the parameters (the inputs after the forward's): the same in every set,
 * copied from the first */
static int copy_params(struct torchref *r, void *const *aDst, char *err)
{
	const struct task *t = harness_task(r->srcH);
	for (int i = r->nFwd; i < t->nIn; i++)
		if (r->srcB->copy(r->srcB, aDst[i], harness_input_buf(r->srcH, 0, i),
		                  task_tensor_bytes(&t->aIn[i]), err) < 0)
			return -1;
	return 0;
}

static int src_draw(void *arg, uint64_t seed, void *const *aDst, char *err)
{
	struct torchref *r = arg;
	const struct task *t = harness_task(r->srcH);
	if (draw_setup(r, err) < 0)
		return -1;
	/* the copy out of the draw's buffers queued for the run before is
	 * done before the helper writes them again */
	if (r->srcB->sync(r->srcB, err) < 0)
		return -1;
	cJSON *q = cJSON_CreateObject();
	cJSON_AddStringToObject(q, "op", "draw");
	cJSON_AddNumberToObject(q, "seed", helper_seed(seed));
	if (step_tracing())
		cJSON_AddTrueToObject(q, "parts");
	cJSON *ins = cJSON_AddArrayToObject(q, "inputs");
	for (int i = 0; i < r->nFwd; i++)
		cJSON_AddItemToArray(ins, cJSON_Duplicate(cJSON_GetArrayItem(r->drawIns, i), 1));
	if (ask(r, q, "drawn", "drawing a run's inputs", "a run's preparation: the draw", err) < 0)
		return -1;
	for (int i = 0; i < r->nFwd; i++)
		if (r->srcB->copy(r->srcB, aDst[i], r->apDrawIn[i], task_tensor_bytes(&t->aIn[i]),
		                  err) < 0)
			return -1;
	return copy_params(r, aDst, err);
}

static int src_expect(void *arg, uint64_t seed, void *const *aIn, void *const *aOut, char *err)
{
	struct torchref *r = arg;
	const struct task *t = harness_task(r->srcH);
	if (draw_setup(r, err) < 0 || r->srcB->sync(r->srcB, err) < 0)
		return -1;
	cJSON *q = cJSON_CreateObject();
	cJSON_AddStringToObject(q, "op", "fill");
	cJSON_AddNumberToObject(q, "set", -1);
	cJSON_AddNumberToObject(q, "seed", helper_seed(seed));
	cJSON_AddNumberToObject(q, "vary", 0);
	cJSON_AddItemToObject(q, "inputs", cJSON_Duplicate(r->drawIns, 1));
	cJSON_AddItemToObject(q, "outputs", cJSON_Duplicate(r->drawOuts, 1));
	if (ask(r, q, "filled", "the reference's outputs of a run checked after its call", NULL,
	        err) < 0)
		return -1;
	for (int i = 0; i < t->nIn; i++)
		if (r->srcB->copy(r->srcB, aIn[i], r->apDrawIn[i], task_tensor_bytes(&t->aIn[i]),
		                  err) < 0)
			return -1;
	for (int j = 0; j < t->nOut; j++)
		if (r->srcB->copy(r->srcB, aOut[j], r->apDrawOut[j], task_tensor_bytes(&t->aOut[j]),
		                  err) < 0)
			return -1;
	return 0;
}

int torchref_source(struct torchref *r, struct harness *h, struct backend *b,
                    struct harness_source *src, double costMs, char *err)
{
	const cJSON *ins = cJSON_GetObjectItem(r->manifest, "inputs"), *e;
	int n = 0;
	cJSON_ArrayForEach(e, ins) n += !strcmp(json_str(e, "kind", "input"), "input");
	if (n < 0 || n > harness_task(h)->nIn)
		return kl_err(err, "the PyTorch helper described %d forward inputs of %d", n,
		              harness_task(h)->nIn);
	r->srcH = h;
	r->srcB = b;
	r->nFwd = n;
	memset(src, 0, sizeof *src);
	src->ready = src_ready;
	src->draw = src_draw;
	src->expect = src_expect;
	src->arg = r;
	src->costMs = costMs;
	return 0;
}

/* the check's reply (torchref_await) */
static int check_reply(struct torchref *r, cJSON *o, char *err);

int torchref_check_begin(struct torchref *r, char *err)
{
	cJSON *q = cJSON_CreateObject();
	cJSON_AddStringToObject(q, "op", "check");
	if (torchref_send(r, q, err) < 0)
		return -1;
	torchref_await(r, STEP_CHECK, check_reply, r->o.timeoutS,
	               "checking the model's parameters");
	return 0;
}

static int check_reply(struct torchref *r, cJSON *o, char *err)
{
	(void)r;
	const char *ev = json_str(o, "ev", "");
	int ok = !strcmp(ev, "checked");
	if (!ok)
		kl_err(err, "the PyTorch helper answered %.40s to the check of its parameters", ev);
	cJSON_Delete(o);
	return ok ? 1 : -1;
}

int torchref_check_params(struct torchref *r, char *err)
{
	int rc = torchref_check_begin(r, err);
	return rc < 0 ? -1 : rc > 0 ? 0 : torchref_wait(r, err);
}
