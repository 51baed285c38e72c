/*
 * fuzz_task.c - libFuzzer target for the task loader: the input is a
 * task.json in a scratch task directory that holds ref.c, seed.c, a
 * subdirectory and a symlink leading out of it.  task_load() runs for the
 * host backend and, when the task has shape sets, for each set by name.
 * Checks what a loaded task promises: counted elements and bytes within
 * the limits (never a wrapped count), finite init bounds and tolerances,
 * and every file it names a regular file inside the task directory.
 * Build and run: make fuzz.
 */
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "task.h"
#include "util.h"

#define REQUIRE(c)                                                                                 \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "REQUIRE failed at %s:%d: %s\n", __FILE__, __LINE__, #c);  \
			__builtin_trap();                                                          \
		}                                                                                  \
	} while (0)

static char *dir, *json;
static size_t nDir;

static void setup(void)
{
	char tmpl[] = "/tmp/kloop-fuzz-task.XXXXXX";
	REQUIRE(mkdtemp(tmpl));
	dir = realpath(tmpl, NULL);
	nDir = strlen(dir);
	json = path_join(dir, "task.json");
	char *p = path_join(dir, "ref.c");
	REQUIRE(write_file_atomic(p, "int x;\n", 7, NULL) == 0);
	free(p);
	p = path_join(dir, "seed.c");
	REQUIRE(write_file_atomic(p, "int y;\n", 7, NULL) == 0);
	free(p);
	p = path_join(dir, "sub");
	mkdir(p, 0700);
	free(p);
	p = path_join(dir, "out.c");
	REQUIRE(symlink("/etc/hostname", p) == 0);
	free(p);
}

static void inside(const char *z)
{
	if (!z)
		return;
	struct stat st;
	REQUIRE(stat(z, &st) == 0 && S_ISREG(st.st_mode));
	char *real = realpath(z, NULL);
	REQUIRE(real && !strncmp(real, dir, nDir) && real[nDir] == '/');
	free(real);
}

static void tensors_ok(const struct task_tensor *a, int n)
{
	for (int i = 0; i < n; i++) {
		int64_t numel, bytes;
		/* ndim 0: a scalar, "shape": [] (docs/TASKS.md), one element */
		REQUIRE(a[i].ndim >= 0 && a[i].ndim <= 8);
		REQUIRE(task_numel_checked(&a[i], &numel) == 0 && numel >= 1);
		REQUIRE(task_bytes_checked(&a[i], &bytes) == 0 && bytes <= TASK_BYTES_MAX);
		REQUIRE(task_numel(&a[i]) == numel);
		REQUIRE(isfinite(a[i].a) && isfinite(a[i].b));
	}
}

static void check(const struct task *t)
{
	tensors_ok(t->aIn, t->nIn);
	tensors_ok(t->aOut, t->nOut);
	for (int d = 0; d < TASK_NDTYPE; d++)
		REQUIRE(isfinite(t->aTol[d].atol) && t->aTol[d].atol >= 0 &&
		        isfinite(t->aTol[d].rtol) && isfinite(t->aTol[d].rel_l2));
	inside(t->ref.zHost);
	inside(t->ref.zCuda);
	inside(t->ref.zTorch);
	for (int i = 0; i < t->seeds.nHost; i++)
		inside(t->seeds.azHost[i]);
	for (int i = 0; i < t->seeds.nCuda; i++)
		inside(t->seeds.azCuda[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir)
		setup();
	/* the same file rewritten in place: no temp file and rename per run */
	static int fd = -1;
	if (fd < 0)
		fd = open(json, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	REQUIRE(fd >= 0 && ftruncate(fd, 0) == 0 && pwrite(fd, data, size, 0) == (ssize_t)size);
	char err[KL_ERRLEN];
	struct task *t = task_load(dir, "host", NULL, err);
	if (!t) {
		REQUIRE(strstr(err, "task.json") != NULL); /* every error names the file */
		return 0;
	}
	check(t);
	for (int i = 0; i < t->nShapeSets && i < 4; i++) {
		struct task *u = task_load(dir, "cuda", t->azShapeSets[i], err);
		if (u) {
			check(u);
			REQUIRE(!strcmp(u->zShapeSet, t->azShapeSets[i]));
		}
		task_free(u);
	}
	char *z = task_shape_str(&t->aOut[0]);
	free(z);
	task_free(t);
	return 0;
}
