/*
 * test_worker_warm.c - the name of a warm worker's socket (worker_warm.h):
 * a hash of everything the worker's state depends on, so that an eval
 * attaches only to a worker that is what a fresh one would be.  The same
 * launch, task and environment give the same name; another worker binary,
 * kloop's GPU kernels or PyTorch helper beside it rebuilt, a task file
 * changed, a setting the worker reads (PyTorch's compiler cache, CUTLASS's
 * place, the library path) each give another; a variable it does not read
 * gives the same.  A runtime directory of another user is not used.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "util.h"
#include "worker_warm.h"

static char *argv0;

static char *name(const char *zTask)
{
	char err[KL_ERRLEN];
	char *argv[] = {argv0, "--backend", "cuda", NULL};
	char *p = worker_warm_path(argv, "{\"op\":\"task\"}", zTask, err);
	if (!p)
		printf("# worker_warm_path: %s\n", err);
	return p ? p : xstrdup("");
}

static void put(const char *zPath, const char *z)
{
	write_file_atomic(zPath, z, strlen(z), NULL);
}

/* zWhat changed the name from *pLast (want 1) or not (0); *pLast now the new one */
static void changed(char **pLast, const char *zTask, int want, const char *zWhat)
{
	char *p = name(zTask);
	CHECK(*p && (strcmp(p, *pLast) != 0) == want, "%s: %s (%s, before %s)", zWhat,
	      want ? "another worker" : "the same worker", *p ? strrchr(p, '/') + 1 : "no name",
	      **pLast ? strrchr(*pLast, '/') + 1 : "no name");
	free(*pLast);
	*pLast = p;
}

int main(void)
{
	char tmp[] = "/tmp/kloop-warm-name.XXXXXX";
	if (!mkdtemp(tmp))
		return 1;
	char *run = path_join(tmp, "run"), *bin = path_join(tmp, "bin"),
	     *task = path_join(tmp, "task"), *lib = path_join(tmp, "bin/libkloop-cuda.so"),
	     *tf = path_join(tmp, "task/task.json");
	mkdir(run, 0700);
	mkdir(bin, 0755);
	mkdir(task, 0755);
	setenv("XDG_RUNTIME_DIR", run, 1);
	unsetenv("TORCHINDUCTOR_CACHE_DIR");
	unsetenv("CUTLASS_DIR");
	argv0 = path_join(tmp, "bin/kloop-worker");
	put(argv0, "a worker");
	put(lib, "kernels");
	put(tf, "{}");
	char *last = name(task);
	CHECK(*last && !strncmp(last, run, strlen(run)), "a name in the runtime directory (%s)",
	      last);
	changed(&last, task, 0, "the same launch, task and environment");
	put(lib, "kernels rebuilt");
	changed(&last, task, 1, "libkloop-cuda.so beside the worker rebuilt");
	put(argv0, "a worker rebuilt");
	changed(&last, task, 1, "the worker's binary rebuilt");
	put(tf, "{ }");
	changed(&last, task, 1, "a task file changed");
	setenv("TORCHINDUCTOR_CACHE_DIR", "/tmp/elsewhere", 1);
	changed(&last, task, 1, "TORCHINDUCTOR_CACHE_DIR set (torch.compile's cache)");
	setenv("CUTLASS_DIR", "/opt/cutlass", 1);
	changed(&last, task, 1, "CUTLASS_DIR set (where the compiles find CUTLASS)");
	setenv("LIBRARY_PATH", "/opt/lib", 1);
	changed(&last, task, 1, "LIBRARY_PATH set");
	setenv("SOME_UNRELATED_VARIABLE", "1", 1);
	changed(&last, task, 0, "a variable the worker does not read");
	free(last);
	/* a runtime directory not this user's (root under sudo -E): not used */
	char *other = path_join(tmp, "other"), err[KL_ERRLEN];
	mkdir(other, 0700);
	if (getuid() == 0 && chown(other, 65534, 65534) == 0) {
		setenv("XDG_RUNTIME_DIR", other, 1);
		char *d = worker_warm_dir(err), *want = xasprintf("/tmp/kloop-warm-%u", getuid());
		CHECK(d && !strcmp(d, want),
		      "XDG_RUNTIME_DIR owned by another user: the warm workers are in %s (%s)",
		      want, d ? d : err);
		free(d);
		free(want);
	} else {
		printf("skip - a runtime directory of another user: not root here\n");
	}
	free(other);
	char *cmd = xasprintf("rm -rf '%s'", tmp);
	CHECK(system(cmd) == 0, "the test's directory removed");
	free(cmd);
	free(run);
	free(bin);
	free(task);
	free(lib);
	free(tf);
	free(argv0);
	return check_done();
}
