/*
 * test_task.c - task.json loading: the bundled tasks load with their shape
 * sets, and every kind of bad task.json gets an error naming file and field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "task.h"
#include "util.h"

static char dir[256];

/* write body as DIR/task.json (plus the reference file it names) and load it */
static struct task *load_text(const char *body, const char *shapes, char *err)
{
	char *p = xasprintf("%s/task.json", dir);
	write_file_atomic(p, body, strlen(body), NULL);
	free(p);
	return task_load(dir, "host", shapes, err);
}

#define BASE_OK                                                                                     \
	"{\"name\": \"t\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"n\"]}], "   \
	"\"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"n\"]}], "                    \
	"\"shapes\": {\"host\": {\"n\": 8}, \"cuda\": {\"n\": 1024}}, \"reference\": {\"host\": \"ref.c\"}"

static void expect_error(const char *body, const char *zNeedle, const char *zWhat)
{
	char err[KL_ERRLEN] = "";
	struct task *t = load_text(body, NULL, err);
	CHECK(!t && strstr(err, zNeedle) && strstr(err, "task.json"), "%s: error mentions '%s' (got: %s)",
	      zWhat, zNeedle, err);
	task_free(t);
}

int main(void)
{
	char err[KL_ERRLEN];
	/* every bundled task loads for both backends */
	const char *names[] = {"softmax", "layernorm", "matmul", "hgemm", "gemm_bias_relu"};
	setenv("KLOOP_TASKS", "tasks", 1);
	for (size_t i = 0; i < 5; i++) {
		char *p = task_resolve(names[i], err);
		struct task *h = p ? task_load(p, "host", NULL, err) : NULL;
		struct task *c = p ? task_load(p, "cuda", NULL, err) : NULL;
		CHECK(h && c, "bundled task %s loads (%s)", names[i], h && c ? "" : err);
		if (h && c) {
			CHECK(!strcmp(h->zShapeSet, "host") && !strcmp(c->zShapeSet, "cuda"),
			      "%s: the backend picks its shape set", names[i]);
			CHECK(task_numel(&c->aOut[0]) > task_numel(&h->aOut[0]),
			      "%s: the cuda shapes are larger than the host shapes", names[i]);
			CHECK(h->ref.zHost && h->ref.zCuda && h->ref.zTorch && h->seeds.nHost >= 1 &&
				      h->seeds.nCuda >= 1,
			      "%s: has C, CUDA and PyTorch references and host and cuda seeds", names[i]);
		}
		task_free(h);
		task_free(c);
		free(p);
	}
	char *p = task_resolve("no_such_task", err);
	CHECK(!p && strstr(err, "unknown task 'no_such_task'") && strstr(err, "softmax"),
	      "an unknown task name lists the bundled tasks (%s)", err);

	strcpy(dir, "/tmp/kloop-test-task.XXXXXX");
	CHECK(mkdtemp(dir) != NULL, "temporary task directory");
	char *ref = xasprintf("%s/ref.c", dir);
	write_file_atomic(ref, "int x;\n", 7, NULL);
	free(ref);

	struct task *t = load_text(BASE_OK "}", NULL, err);
	CHECK(t && t->aIn[0].shape[0] == 8 && t->nIn == 1 && t->nOut == 1, "a minimal task loads (%s)",
	      t ? "" : err);
	CHECK(t && t->aTol[KL_F32].atol == 1e-5 && t->aTol[KL_F32].rel_l2 == 1e-4 &&
		      t->aTol[KL_F16].rtol == 1e-2,
	      "default tolerances per dtype");
	task_free(t);
	t = load_text(BASE_OK ", \"tolerance\": {\"f32\": {\"atol\": 0.5}}}", "cuda", err);
	CHECK(t && t->aIn[0].shape[0] == 1024 && t->aTol[KL_F32].atol == 0.5 && t->aTol[KL_F32].rtol == 1e-4,
	      "--shapes picks a set; a tolerance override keeps the other defaults");
	task_free(t);

	expect_error("{\"name\": ", "not valid JSON", "truncated JSON");
	expect_error("[1, 2]", "top level", "not an object");
	expect_error("{\"inputs\": []}", "name", "missing name");
	expect_error("{\"name\": \"t\", \"outputs\": [], \"reference\": {\"host\": \"ref.c\"}}", "outputs",
		     "no outputs");
	expect_error("{\"name\": \"t\", \"outputs\": [{\"name\": \"y\", \"dtype\": \"f31\", \"shape\": [4]}], "
		     "\"reference\": {\"host\": \"ref.c\"}}",
		     "outputs[0].dtype", "unknown dtype");
	expect_error("{\"name\": \"t\", \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [0]}], "
		     "\"reference\": {\"host\": \"ref.c\"}}",
		     "outputs[0].shape[0]", "zero extent");
	expect_error("{\"name\": \"t\", \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"m\"]}], "
		     "\"shapes\": {\"host\": {\"n\": 4}}, \"reference\": {\"host\": \"ref.c\"}}",
		     "dimension 'm' is not given", "undefined dimension");
	expect_error("{\"name\": \"t\", \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [4]}], "
		     "\"reference\": {\"host\": \"missing.c\"}}",
		     "reference.host", "missing reference file");
	expect_error("{\"name\": \"t\", \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [4]}], "
		     "\"reference\": {}}",
		     "reference", "no reference at all");
	expect_error(BASE_OK ", \"tolerance\": {\"f32\": {\"atol\": -1}}}", "tolerance.f32.atol",
		     "negative tolerance");
	expect_error(BASE_OK ", \"tolerance\": {\"f32\": {\"eps\": 1}}}", "unknown key", "unknown tolerance key");
	expect_error(BASE_OK ", \"seeds\": {\"host\": [\"nope.c\"]}}", "seeds.host[0]", "missing seed file");
	expect_error("{\"name\": \"t\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [4]},"
		     "{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [4]}], \"outputs\": [{\"name\": \"y\", "
		     "\"dtype\": \"f32\", \"shape\": [4]}], \"reference\": {\"host\": \"ref.c\"}}",
		     "used twice", "duplicate tensor names");
	t = load_text(BASE_OK "}", "gpu", err);
	CHECK(!t && strstr(err, "no shape set named 'gpu'") && strstr(err, "host, cuda"),
	      "an unknown shape set lists the sets (%s)", err);
	char *missing = xasprintf("%s/nothing", dir);
	t = task_load(missing, "host", NULL, err);
	CHECK(!t && strstr(err, "cannot open"), "a missing task.json is reported (%s)", err);
	free(missing);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(system(cmd) == 0, "cleanup");
	return check_done();
}
