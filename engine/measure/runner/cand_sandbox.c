/*
 * cand_sandbox.c - the runner's sandbox: whether bubblewrap works here,
 * and the command line that starts a runner in it (or without it).
 */
#include "cand_priv.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "mps.h"
#include "proc.h"
#include "sandbox.h"
#include "util.h"

static int probed, probeRc;
static char probeErr[KL_ERRLEN];

int cand_sandbox_probe(char *err)
{
	if (!probed) {
		probed = 1;
		char *argv[] = {"bwrap",
		                "--unshare-user",
		                "--unshare-pid",
		                "--unshare-net",
		                "--ro-bind",
		                "/",
		                "/",
		                "--proc",
		                "/proc",
		                "--dev",
		                "/dev",
		                "--die-with-parent",
		                "--clearenv",
		                "true",
		                NULL};
		char *out = NULL;
		int st = proc_capture(argv, &out, 4096);
		if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) == 127) {
			probeRc = kl_err(
			    probeErr, "bubblewrap (bwrap) is not installed: candidates run "
			              "unsandboxed (install the bubblewrap package; --no-sandbox "
			              "accepts this without the warning)");
		} else if (WEXITSTATUS(st) != 0) {
			char *nl = out ? strchr(out, '\n') : NULL;
			if (nl)
				*nl = 0;
			probeRc = kl_err(probeErr,
			                 "bubblewrap cannot create its namespaces here (%s): user "
			                 "namespaces are probably disabled (sysctl "
			                 "kernel.unprivileged_userns_clone or "
			                 "user.max_user_namespaces); candidates run unsandboxed "
			                 "(--no-sandbox accepts this without the warning)",
			                 out && *out ? out : "no message");
		}
		free(out);
	}
	if (probeRc < 0 && err)
		snprintf(err, KL_ERRLEN, "%s", probeErr);
	return probeRc;
}

void cand_argv_free(struct argv *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
}

static void av(struct argv *a, const char *z)
{
	xgrow((void **)&a->v, &a->alloc, a->n + 2, sizeof *a->v);
	a->v[a->n++] = z ? xstrdup(z) : NULL;
	a->v[a->n] = NULL;
}

static void av2(struct argv *a, const char *x, const char *y, const char *z)
{
	av(a, x);
	av(a, y);
	if (z)
		av(a, z);
}

/* directory zDir, read-only (sandbox.h) */
static void bind_ro_dir(struct argv *a, const char *zDir)
{
	char *v[6];
	int n = sandbox_dir_args(zDir, sandbox_system, sandbox_nSystem, v);
	for (int i = 0; i < n; i++) {
		av(a, v[i]);
		free(v[i]);
	}
}

/* the directory holding the CUDA runtime this process loaded, if any */
static void bind_cudart_dir(struct argv *a)
{
	void *h = dlopen("libcudart.so.13", RTLD_NOLOAD | RTLD_NOW);
	if (!h)
		h = dlopen("libcudart.so.12", RTLD_NOLOAD | RTLD_NOW);
	void *sym = h ? dlsym(h, "cudaMalloc") : NULL;
	Dl_info info;
	if (sym && dladdr(sym, &info) && info.dli_fname) {
		char *d = xstrdup(info.dli_fname), *slash = strrchr(d, '/');
		if (slash) {
			*slash = 0;
			bind_ro_dir(a, d);
		}
		free(d);
	}
}

/* keepPid: a buffer is shared with a legacy CUDA IPC handle, which names the
 * worker's pid and so cannot cross pid namespaces */
void cand_build_argv(const struct cand_opts *o, const char *zExe, int keepPid,
                     unsigned long long asMb, int twin, const char *zOrder, struct argv *a)
{
	char dev[16];
	snprintf(dev, sizeof dev, "%d", o->dev);
	int cuda = !strcmp(o->zBackend, "cuda");
	char *mps[16];
	int nMps = 0, mpsNs = 0;
	if (o->sandbox)
		nMps = mps_runner_args(cuda, mps, 16, &mpsNs);
	keepPid = keepPid || mpsNs; /* KLOOP_MPS_NAMESPACES=share (mps.h) */
	if (o->sandbox) {
		av(a, "bwrap");
		av2(a, "--unshare-user", "--unshare-net", "--unshare-uts");
		av(a, "--unshare-cgroup-try");
		/* GPU buffers come as file descriptors (backend_cuda.c) and need
		 * neither; legacy CUDA IPC needs both the pid and the IPC namespace */
		if (!keepPid)
			av2(a, "--unshare-pid", "--unshare-ipc", NULL);
		av2(a, "--die-with-parent", "--new-session", "--clearenv");
		av2(a, "--setenv", "PATH", "/usr/bin:/bin");
		av2(a, "--setenv", "HOME", "/tmp");
		av2(a, "--setenv", "TMPDIR", "/tmp");
		for (size_t i = 0; i < sandbox_nSystem; i++)
			av2(a, "--ro-bind-try", sandbox_system[i], sandbox_system[i]);
		/* a fresh /proc needs a pid namespace of its own; without one, the
		 * host's, read-only (kloop and the worker are not dumpable, so their
		 * fds and environment stay closed to the candidate) */
		if (keepPid)
			av2(a, "--ro-bind", "/proc", "/proc");
		else
			av2(a, "--proc", "/proc", NULL);
		av2(a, "--dev", "/dev", NULL);
		/* a sized /tmp: its files are the candidate's memory too (and
		 * counted in its cgroup's) */
		if (o->tmpBytes) {
			char size[32];
			snprintf(size, sizeof size, "%llu", o->tmpBytes);
			av2(a, "--size", size, NULL);
		}
		av2(a, "--tmpfs", "/tmp", NULL);
		/* the libraries the runner itself was found with (cJSON outside
		 * the system's directories; the CUDA toolkit's): without them it
		 * cannot start, on any backend */
		const char *ld = getenv("LD_LIBRARY_PATH");
		if (ld && *ld) {
			av2(a, "--setenv", "LD_LIBRARY_PATH", ld);
			char *dup = xstrdup(ld), *save = NULL;
			for (char *d = strtok_r(dup, ":", &save); d; d = strtok_r(NULL, ":", &save))
				if (d[0] == '/')
					bind_ro_dir(a, d);
			free(dup);
		}
		if (cuda) {
			const char *vis = getenv("CUDA_VISIBLE_DEVICES");
			if (vis)
				av2(a, "--setenv", "CUDA_VISIBLE_DEVICES", vis);
			/* how the runs' kernels are timed (backend_cuda.c: the Range
			 * Profiler by default, activity records, events alone) */
			const char *cu = getenv("KLOOP_CUPTI");
			if (cu) {
				av2(a, "--setenv", "KLOOP_CUPTI", cu);
				if (cu[0] == '/') {
					char *dir = xstrdup(cu);
					*strrchr(dir, '/') = 0;
					bind_ro_dir(a, *dir ? dir : "/");
					free(dir);
				}
			}
			/* the profiler start's trace (cupti_range.cu), for benchmarks:
			 * that one file bound writable (a candidate could write it) */
			const char *tr = getenv("KLOOP_PROF_TRACE");
			int trFd =
			    tr && tr[0] == '/' ? open(tr, O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;
			if (trFd >= 0) {
				close(trFd);
				av2(a, "--setenv", "KLOOP_PROF_TRACE", tr);
				av2(a, "--bind-try", tr, tr);
			}
			bind_cudart_dir(a);
			av2(a, "--ro-bind-try", "/sys", "/sys");
			glob_t g;
			if (glob("/dev/nvidia*", 0, NULL, &g) == 0) {
				for (size_t i = 0; i < g.gl_pathc; i++)
					av2(a, "--dev-bind-try", g.gl_pathv[i], g.gl_pathv[i]);
				globfree(&g);
			}
			av2(a, "--dev-bind-try", "/dev/dri", "/dev/dri");
		}
		/* the libraries the task or --libs gave, found through their rpath */
		for (int i = 0; o->azLibDirs && o->azLibDirs[i]; i++)
			bind_ro_dir(a, o->azLibDirs[i]);
		/* MPS's pipe directory over the private /tmp, after the rest */
		for (int i = 0; i < nMps; i++)
			av(a, mps[i]), free(mps[i]);
		av2(a, "--ro-bind", zExe, "/run/kloop/kloop-worker");
		if (cuda) {
			/* kloop's own kernels, which the runner finds beside its
			 * program: without them its cache flush writes the buffer
			 * instead of reading it, and the L2 left dirty made every
			 * memory-bound candidate slower (softmax 9% on an H100) */
			const char *slash = strrchr(zExe, '/');
			char *lib = xasprintf("%.*s/libkloop-cuda.so",
			                      slash ? (int)(slash - zExe) : 1, slash ? zExe : ".");
			if (access(lib, R_OK) == 0)
				av2(a, "--ro-bind", lib, "/run/kloop/libkloop-cuda.so");
			free(lib);
		}
		av2(a, "--chdir", "/tmp", NULL);
		av(a, "--");
		av(a, "/run/kloop/kloop-worker");
	} else {
		av(a, zExe);
	}
	av2(a, "--runner", "--backend", o->zBackend);
	av2(a, "--device", dev, NULL);
	/* the clock's twin says so in its command line (ps, the tests) */
	if (twin)
		av(a, "--twin");
	/* its place in the host's start order, the lock at START_ORDER_FD */
	if (zOrder)
		av2(a, "--start-order", zOrder, NULL);
	/* no cgroup limits it as a whole: its one process is limited (host) */
	if (asMb) {
		char mb[32];
		snprintf(mb, sizeof mb, "%llu", asMb);
		av2(a, "--as-limit-mb", mb, NULL);
	}
}

char **cand_runner_argv(const struct cand_opts *o, const char *zExe, int keepPid)
{
	struct argv a = {0};
	cand_build_argv(o, zExe, keepPid, 0, 0, NULL, &a);
	return a.v;
}
