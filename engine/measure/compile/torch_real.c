/*
 * torch_real.c - PyTorch's own headers and libraries, found once
 * (torch_real.h).
 */
#include "torch_real.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "proc.h"

/* the C++ API's header in one of t's include directories */
static int has_headers(const struct torch_real *t)
{
	for (int i = 0; i < t->nInc; i++) {
		char *p = path_join(t->azInc[i], "torch/all.h");
		int ok = path_is_file(p);
		free(p);
		if (ok)
			return 1;
	}
	return 0;
}

static int has_lib(const char *zDir, const char *zName)
{
	char *p = xasprintf("%s/%s", zDir, zName);
	int ok = path_is_file(p);
	free(p);
	return ok;
}

static void add_inc(struct torch_real *t, const char *zDir)
{
	/* /usr/include is the compiler's own: as -isystem it breaks
	 * libstdc++'s #include_next */
	if (t->nInc < TORCH_REAL_MAX_INC && path_is_dir(zDir) && strcmp(zDir, "/usr/include") &&
	    strcmp(zDir, "/usr/include/"))
		t->azInc[t->nInc++] = xstrdup(zDir);
}

/* the found state, when its headers and libtorch are there */
static int settle(struct torch_real *t)
{
	t->ok = has_headers(t) && t->zLibDir && has_lib(t->zLibDir, "libtorch.so");
	if (t->ok)
		t->cuda = has_lib(t->zLibDir, "libtorch_cuda.so");
	return t->ok;
}

static void reset(struct torch_real *t)
{
	for (int i = 0; i < t->nInc; i++)
		free(t->azInc[i]);
	t->nInc = 0;
	free(t->zLibDir);
	t->zLibDir = NULL;
	for (int i = 0; i < t->nDep; i++)
		free(t->azDep[i]);
	t->nDep = 0;
	for (int i = 0; i < t->nDir; i++)
		free(t->azDir[i]);
	t->nDir = 0;
	t->abi = -1;
	t->ok = 0;
}

/* "1.13.0" from the C++ API's torch/version.h under one of t's include
 * directories (TORCH_VERSION_MAJOR, _MINOR, _PATCH), else "?" */
static void read_version(struct torch_real *t)
{
	int v[3] = {-1, -1, -1};
	for (int i = 0; i < t->nInc && v[0] < 0; i++) {
		char *p = path_join(t->azInc[i], "torch/version.h");
		FILE *f = fopen(p, "r");
		free(p);
		char line[256];
		while (f && fgets(line, sizeof line, f)) {
			static const char *const k[] = {"MAJOR", "MINOR", "PATCH"};
			for (int j = 0; j < 3; j++) {
				char want[64];
				snprintf(want, sizeof want, "#define TORCH_VERSION_%s %%d", k[j]);
				sscanf(line, want, &v[j]);
			}
		}
		if (f)
			fclose(f);
	}
	if (v[0] >= 0 && v[1] >= 0)
		snprintf(t->zVersion, sizeof t->zVersion, "%d.%d.%d", v[0], v[1],
		         v[2] < 0 ? 0 : v[2]);
	else
		snprintf(t->zVersion, sizeof t->zVersion, "?");
}

/* $KLOOP_LIBTORCH=DIR: libtorch's own layout (include/, lib/) */
static int from_dir(struct torch_real *t, const char *zDir)
{
	char *inc = path_join(zDir, "include");
	char *api = path_join(zDir, "include/torch/csrc/api/include");
	add_inc(t, inc);
	add_inc(t, api);
	free(inc);
	free(api);
	t->zLibDir = path_join(zDir, "lib");
	read_version(t);
	snprintf(t->zWhere, sizeof t->zWhere, "libtorch %s in %s ($KLOOP_LIBTORCH)", t->zVersion,
	         zDir);
	return settle(t);
}

/* what zPython's torch says of itself (the worker waits for it, once: an
 * import of torch takes a second or two).  'deps': the libraries torch's
 * own need that the loader does not find by itself (ldd's "not found"),
 * where import torch found them: a pip wheel's torch preloads its CUDA
 * libraries (libcusparseLt, ...) from the nvidia packages beside it, which
 * a runner that loads the extension without Python must be pointed at.
 * 'dirs': the directories of every library import torch loaded from outside
 * the system's, which libtorch_cuda's own rpath ($ORIGIN/../../nvidia/...)
 * reaches: the runner's sandbox shows them (compiler_lib_dirs) */
static const char kAsk[] =
    "import json, os, subprocess, torch, torch.utils.cpp_extension as c\n"
    "lib = os.path.join(torch.__path__[0], 'lib')\n"
    "miss = set()\n"
    "for n in ('libc10.so', 'libtorch.so', 'libtorch_cpu.so', 'libc10_cuda.so',\n"
    "          'libtorch_cuda.so'):\n"
    "  p = os.path.join(lib, n)\n"
    "  try:\n"
    "    o = subprocess.run(['ldd', p], capture_output=True, text=True, timeout=20).stdout\n"
    "  except Exception:\n"
    "    o = ''\n"
    "  miss |= {l.split()[0] for l in o.splitlines() if '=> not found' in l}\n"
    "maps = {}\n"
    "for l in open('/proc/self/maps'):\n"
    "  f = l.split()\n"
    "  if len(f) >= 6 and f[5].startswith('/'):\n"
    "    maps.setdefault(os.path.basename(f[5]), f[5])\n"
    "sysd = ('/usr/', '/lib', '/bin/', '/sbin/', '/etc/', lib + '/')\n"
    "dirs = sorted({os.path.dirname(p) for p in maps.values()\n"
    "               if '.so' in os.path.basename(p) and not p.startswith(sysd)\n"
    "               and '.cpython-' not in p and '.abi3.' not in p})\n"
    "print(json.dumps({'inc': c.include_paths(), 'lib': c.library_paths(),\n"
    "  'abi': int(torch._C._GLIBCXX_USE_CXX11_ABI), 'version': torch.__version__,\n"
    "  'dir': torch.__path__[0], 'deps': sorted(maps[m] for m in miss if m in maps),\n"
    "  'dirs': dirs}))\n";

void torch_real_ask_argv(const char *zPython, char *argv[5])
{
	argv[0] = (char *)zPython;
	argv[1] = "-I";
	argv[2] = "-c";
	argv[3] = (char *)kAsk;
	argv[4] = NULL;
}

/* zPython's answer to kAsk (its output zOut, its wait status rc, whether
 * it ran out of time): 1 when its torch has the headers and libtorch */
static int from_python(struct torch_real *t, const char *zPython, const char *zOut, int rc,
                       int timedOut, char *zWhy, size_t nWhy)
{
	const char *nl = zOut ? strrchr(zOut, '{') : NULL;
	cJSON *o = rc == 0 && nl ? cJSON_Parse(nl) : NULL;
	if (!o) {
		snprintf(zWhy, nWhy, "%s has no torch (%s)", zPython,
		         timedOut ? "it did not answer in 30 s" : "import torch failed");
		return 0;
	}
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(o, "inc"))
	    add_inc(t, cJSON_GetStringValue(e) ? cJSON_GetStringValue(e) : "");
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(o, "lib"))
	{
		const char *z = cJSON_GetStringValue(e);
		if (!t->zLibDir && z && has_lib(z, "libtorch.so"))
			t->zLibDir = xstrdup(z);
	}
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(o, "deps"))
	{
		const char *z = cJSON_GetStringValue(e);
		if (z && z[0] == '/' && t->nDep < TORCH_REAL_MAX_DEP && path_is_file(z))
			t->azDep[t->nDep++] = xstrdup(z);
	}
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(o, "dirs"))
	{
		const char *z = cJSON_GetStringValue(e);
		if (z && z[0] == '/' && t->nDir < TORCH_REAL_MAX_DIR && path_is_dir(z))
			t->azDir[t->nDir++] = xstrdup(z);
	}
	const cJSON *abi = cJSON_GetObjectItem(o, "abi");
	t->abi = cJSON_IsNumber(abi) ? abi->valueint : -1;
	const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(o, "version"));
	const char *d = cJSON_GetStringValue(cJSON_GetObjectItem(o, "dir"));
	snprintf(t->zVersion, sizeof t->zVersion, "%s", v ? v : "?");
	snprintf(t->zWhere, sizeof t->zWhere, "PyTorch %s of %s (%s)", t->zVersion, zPython,
	         d ? d : "?");
	cJSON_Delete(o);
	if (!settle(t))
		snprintf(zWhy, nWhy, "%s's torch (%s) has no C++ headers or libtorch.so", zPython,
		         t->zVersion);
	return t->ok;
}

/* Debian's libtorch-dev: the headers in /usr/include, libtorch in the
 * multiarch directory */
static int from_system(struct torch_real *t)
{
	static const char *const libs[] = {"/usr/lib/x86_64-linux-gnu",
	                                   "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"};
	if (!path_is_file("/usr/include/torch/csrc/api/include/torch/all.h"))
		return 0;
	add_inc(t, "/usr/include/torch/csrc/api/include");
	for (size_t i = 0; i < sizeof libs / sizeof *libs && !t->zLibDir; i++)
		if (has_lib(libs[i], "libtorch.so"))
			t->zLibDir = xstrdup(libs[i]);
	/* its headers are in /usr/include, the compiler's own */
	int ok = t->zLibDir != NULL;
	if (ok) {
		t->ok = 1;
		t->cuda = has_lib(t->zLibDir, "libtorch_cuda.so");
		read_version(t);
		snprintf(t->zWhere, sizeof t->zWhere, "PyTorch %s of the system (libtorch-dev: %s)",
		         t->zVersion, t->zLibDir);
	}
	return ok;
}

int torch_real_begin(struct torch_real *t, const char *zPython)
{
	if (t->tried)
		return t->ok ? 0 : -1;
	t->tried = 1;
	t->abi = -1;
	const char *env = getenv("KLOOP_LIBTORCH");
	if (env && *env) {
		if (!strcmp(env, "off"))
			return kl_err(t->zErr, "KLOOP_LIBTORCH=off: kloop does not compile against "
			                       "PyTorch's own headers");
		if (from_dir(t, env))
			return 0;
		reset(t);
		return kl_err(t->zErr,
		              "KLOOP_LIBTORCH=%s is no libtorch: it needs include/torch/csrc/api/"
		              "include/torch/all.h and lib/libtorch.so",
		              env);
	}
	if (zPython && *zPython)
		return 1;
	return torch_real_answer(t, NULL, NULL, -1, 0);
}

int torch_real_answer(struct torch_real *t, const char *zPython, const char *zOut, int rc,
                      int timedOut)
{
	char why[KL_ERRLEN] = "";
	if (zPython && *zPython && from_python(t, zPython, zOut, rc, timedOut, why, sizeof why))
		return 0;
	reset(t);
	if (from_system(t))
		return 0;
	reset(t);
	return kl_err(t->zErr,
	              "PyTorch's C++ headers were not found%s%s: install libtorch-dev (Debian), "
	              "give --python a Python with torch, or set KLOOP_LIBTORCH to a libtorch "
	              "directory",
	              why[0] ? " (" : "", why[0] ? why : "");
}

int torch_real_find(struct torch_real *t, const char *zPython)
{
	int rc = torch_real_begin(t, zPython);
	if (rc != 1)
		return rc;
	char *argv[5], *out = NULL;
	int timedOut = 0;
	torch_real_ask_argv(zPython, argv);
	int st = proc_capture_timeout(argv, &out, 1 << 16, TORCH_REAL_ASK_S, &timedOut);
	rc = torch_real_answer(t, zPython, out, st, timedOut);
	free(out);
	return rc;
}

void torch_real_flags(const struct torch_real *t, int cuda, char **azOut, int *pn, int max)
{
	int n = *pn;
	for (int i = 0; i < t->nInc && n + 12 < max; i++) {
		azOut[n++] = xstrdup("-isystem");
		azOut[n++] = xstrdup(t->azInc[i]);
	}
	if (t->abi >= 0 && n < max)
		azOut[n++] = xasprintf("-D_GLIBCXX_USE_CXX11_ABI=%d", t->abi);
	if (!t->zLibDir || n + 9 >= max) {
		*pn = n;
		return;
	}
	azOut[n++] = xasprintf("-L%s", t->zLibDir);
	azOut[n++] = cuda ? xasprintf("-Xlinker=-rpath,%s", t->zLibDir)
	                  : xasprintf("-Wl,-rpath,%s", t->zLibDir);
	/* kept though nothing names them: libtorch_cuda registers the CUDA
	 * kernels of at::softmax and the rest when it loads, and a linker that
	 * drops unnamed libraries (Ubuntu's default) leaves the call with no
	 * CUDA kernel; PyTorch's own CMake config does the same */
	azOut[n++] = xstrdup(cuda ? "-Xlinker=--no-as-needed" : "-Wl,--no-as-needed");
	azOut[n++] = xstrdup("-lc10");
	azOut[n++] = xstrdup("-ltorch");
	azOut[n++] = xstrdup("-ltorch_cpu");
	if (cuda && t->cuda) {
		azOut[n++] = xstrdup("-lc10_cuda");
		azOut[n++] = xstrdup("-ltorch_cuda");
	}
	/* what import torch loaded for them: linked by name with an rpath, so
	 * the loader maps each (the extension's own need) before libtorch's
	 * need of it is looked for, which it then answers */
	for (int i = 0; i < t->nDep && n + 3 < max; i++) {
		char *dir = xstrdup(t->azDep[i]), *sl = strrchr(dir, '/');
		*sl = 0;
		azOut[n++] = xasprintf("-L%s", dir);
		azOut[n++] =
		    cuda ? xasprintf("-Xlinker=-rpath,%s", dir) : xasprintf("-Wl,-rpath,%s", dir);
		azOut[n++] = xasprintf("-l:%s", sl + 1);
		free(dir);
	}
	*pn = n;
}

void torch_real_free(struct torch_real *t)
{
	reset(t);
	t->tried = 0;
}
