/*
 * libs.c - finding the libraries and headers a task names, and the flags
 * that give them to the compiler and to the dynamic loader (an rpath, so the
 * candidate's shared object loads without LD_LIBRARY_PATH).
 */
#include "libs.h"

#include <dirent.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *const libs_known[] = {"cublas", "cublasLt", "cudnn", "cutlass", NULL};

/* the CUDA toolkit's root: $CUDA_HOME, $CUDA_PATH, nvcc's, /usr/local/cuda */
static char *cuda_root(void)
{
	const char *env[] = {"CUDA_HOME", "CUDA_PATH"};
	for (size_t i = 0; i < 2; i++) {
		const char *v = getenv(env[i]);
		if (v && *v && path_is_dir(v))
			return xstrdup(v);
	}
	char *nv = path_search("nvcc");
	if (nv) {
		*strrchr(nv, '/') = 0; /* its directory */
		char *root = path_join(nv, "..");
		char *r = realpath(root, NULL);
		free(root);
		free(nv);
		return r;
	}
	return xstrdup("/usr/local/cuda");
}

/* a growing NULL-terminated list of fresh strings */
struct dirlist {
	char **v;
	size_t n, alloc;
};

static void dl_add(struct dirlist *d, char *z)
{
	xgrow((void **)&d->v, &d->alloc, d->n + 2, sizeof *d->v);
	d->v[d->n++] = z;
	d->v[d->n] = NULL;
}

/* the directories SUB of the NVIDIA wheels Python installs (nvidia/cublas/lib,
 * nvidia/cudnn/include, ...): where PyTorch's own cuBLAS and cuDNN live when
 * the CUDA toolkit has only link stubs of them, as in NVIDIA's container images */
static void wheel_dirs(struct dirlist *d, const char *zSub)
{
	const char *venv = getenv("VIRTUAL_ENV"), *home = getenv("HOME");
	char *pats[] = {
	    venv && *venv ? xasprintf("%s/lib/python3*/site-packages/nvidia/*/%s", venv, zSub)
	                  : NULL,
	    home && *home
	        ? xasprintf("%s/.local/lib/python3*/site-packages/nvidia/*/%s", home, zSub)
	        : NULL,
	    xasprintf("/usr/local/lib/python3*/dist-packages/nvidia/*/%s", zSub),
	    xasprintf("/usr/local/lib/python3*/site-packages/nvidia/*/%s", zSub),
	    xasprintf("/usr/lib/python3/dist-packages/nvidia/*/%s", zSub),
	    xasprintf("/opt/conda/lib/python3*/site-packages/nvidia/*/%s", zSub)};
	for (size_t i = 0; i < sizeof pats / sizeof *pats; i++) {
		glob_t g = {0};
		if (pats[i] && glob(pats[i], GLOB_ONLYDIR, NULL, &g) == 0)
			for (size_t k = 0; k < g.gl_pathc; k++)
				dl_add(d, xstrdup(g.gl_pathv[k]));
		globfree(&g);
		free(pats[i]);
	}
}

/* library directories, in search order; a NULL-terminated array of fresh strings */
static char **lib_dirs(void)
{
	struct dirlist d = {0};
	const char *lp = getenv("LIBRARY_PATH");
	if (lp && *lp) {
		char *p = xstrdup(lp);
		for (char *save, *s = strtok_r(p, ":", &save); s; s = strtok_r(NULL, ":", &save))
			dl_add(&d, xstrdup(s));
		free(p);
	}
	char *cr = cuda_root();
	dl_add(&d, xasprintf("%s/lib64", cr));
	dl_add(&d, xasprintf("%s/lib", cr));
	dl_add(&d, xasprintf("%s/targets/x86_64-linux/lib", cr));
	dl_add(&d, xasprintf("%s/targets/sbsa-linux/lib", cr));
	free(cr);
	const char *sys[] = {"/usr/local/lib",
	                     "/usr/lib/x86_64-linux-gnu",
	                     "/lib/x86_64-linux-gnu",
	                     "/usr/lib/aarch64-linux-gnu",
	                     "/usr/lib64",
	                     "/usr/lib",
	                     "/lib64",
	                     "/lib"};
	for (size_t i = 0; i < sizeof sys / sizeof *sys; i++)
		dl_add(&d, xstrdup(sys[i]));
	wheel_dirs(&d, "lib");
	return d.v;
}

/* include directories for headers */
static char **inc_dirs(void)
{
	char **v = xcalloc(32, sizeof *v);
	int n = 0;
	const char *env[] = {"CUTLASS_DIR", "CUTLASS_PATH", "CUTLASS_HOME"};
	for (size_t i = 0; i < 3; i++) {
		const char *e = getenv(env[i]);
		if (e && *e) {
			v[n++] = xasprintf("%s/include", e);
			v[n++] = xstrdup(e);
		}
	}
	char *cr = cuda_root();
	v[n++] = xasprintf("%s/include", cr);
	v[n++] = xasprintf("%s/targets/x86_64-linux/include", cr);
	free(cr);
	const char *sys[] = {"/usr/local/cutlass/include", "/opt/cutlass/include"};
	for (size_t i = 0; i < sizeof sys / sizeof *sys; i++)
		v[n++] = xstrdup(sys[i]);
	/* a CUTLASS checkout in the home directory, or the one a kloop
	 * checkout keeps in its ignored .devdeps/ */
	const char *home = getenv("HOME");
	if (home && *home)
		v[n++] = xasprintf("%s/cutlass/include", home);
	v[n++] = xasprintf("%s/../.devdeps/cutlass/include", exe_dir());
	const char *sys2[] = {"/usr/local/include", "/usr/include/x86_64-linux-gnu",
	                      "/usr/include"};
	for (size_t i = 0; i < sizeof sys2 / sizeof *sys2; i++)
		v[n++] = xstrdup(sys2[i]);
	v[n] = NULL;
	struct dirlist d = {v, (size_t)n, 32};
	wheel_dirs(&d, "include");
	return d.v;
}

static void free_list(char **v)
{
	for (int i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* the first directory of dirs holding zRel; a fresh string or NULL */
static char *find_in(char **dirs, const char *zRel)
{
	for (int i = 0; dirs[i]; i++) {
		char *p = path_join(dirs[i], zRel);
		int ok = path_is_file(p);
		free(p);
		if (ok)
			return xstrdup(dirs[i]);
	}
	return NULL;
}

/* a directory of link stubs (the CUDA toolkit's lib64/stubs): libraries
 * there only satisfy the linker and fail when loaded */
static int is_stubs(const char *zDir)
{
	const char *s = strstr(zDir, "/stubs");
	return s && (s[6] == 0 || s[6] == '/');
}

/* find libNAME: libNAME.so, else the highest libNAME.so.N, else libNAME.a,
 * never in a directory of link stubs: 1, or 0 with the stub seen (if any)
 * in *pzStub */
static int find_lib(const char *zName, struct lib_item *it, char **pzStub)
{
	char **dirs = lib_dirs();
	int found = 0;
	for (int i = 0; dirs[i] && !found; i++) {
		if (is_stubs(dirs[i])) {
			char *so = xasprintf("%s/lib%s.so", dirs[i], zName);
			if (!*pzStub && path_is_file(so))
				*pzStub = so;
			else
				free(so);
			continue;
		}
		char *so = xasprintf("%s/lib%s.so", dirs[i], zName);
		char *pat = xasprintf("%s/lib%s.so.[0-9]*", dirs[i], zName);
		char *a = xasprintf("%s/lib%s.a", dirs[i], zName);
		glob_t g = {0};
		const char *hit = NULL;
		if (path_is_file(so))
			hit = so;
		else if (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc > 0)
			hit = g.gl_pathv[g.gl_pathc - 1];
		else if (path_is_file(a))
			hit = a;
		if (hit) {
			it->zLibDir = xstrdup(dirs[i]);
			it->zLibFile = xstrdup(strrchr(hit, '/') + 1);
			char *r = realpath(hit, NULL);
			it->zFound = r ? r : xstrdup(hit);
			found = 1;
		}
		globfree(&g);
		free(so);
		free(pat);
		free(a);
	}
	free_list(dirs);
	return found;
}

static int header_for(const char *zHeader, struct lib_item *it)
{
	char **dirs = inc_dirs();
	char *d = find_in(dirs, zHeader);
	free_list(dirs);
	if (!d)
		return 0;
	it->zIncDir = d;
	return 1;
}

int libs_cutlass_version(const char *zIncDir, char *zOut, size_t n)
{
	char *p = path_join(zIncDir, "cutlass/version.h");
	strbuf sb = STRBUF_INIT;
	int v[3] = {-1, -1, -1};
	const char *names[] = {"CUTLASS_MAJOR", "CUTLASS_MINOR", "CUTLASS_PATCH"};
	if (read_file(p, &sb, 1 << 20, NULL) == 0)
		for (int i = 0; i < 3; i++) {
			/* "#define CUTLASS_MAJOR 4" */
			for (const char *q = strstr(sb.buf, names[i]); q;
			     q = strstr(q + 1, names[i]))
				if (q > sb.buf && (q[-1] == ' ' || q[-1] == '\t') &&
				    (q[strlen(names[i])] == ' ' || q[strlen(names[i])] == '\t')) {
					v[i] = atoi(q + strlen(names[i]));
					break;
				}
		}
	sb_free(&sb);
	free(p);
	if (v[0] < 0 || v[1] < 0 || v[2] < 0)
		return -1;
	snprintf(zOut, n, "%d.%d.%d", v[0], v[1], v[2]);
	return 0;
}

/* CUTLASS's headers (cutlass, cute): its include/ and tools/util/include,
 * and what nvcc needs for CuTe */
static int resolve_cutlass(const char *zWord, struct lib_item *it, char *err)
{
	const char *hdr = !strcmp(zWord, "cute") ? "cute/tensor.hpp" : "cutlass/cutlass.h";
	const char *env = getenv("CUTLASS_DIR");
	if (env && *env) {
		/* where a person pointed: there or nowhere */
		char *dirs[] = {path_join(env, "include"), xstrdup(env), NULL};
		it->zIncDir = find_in(dirs, hdr);
		free(dirs[0]);
		free(dirs[1]);
		if (!it->zIncDir)
			return kl_err(
			    err,
			    "libs: %s: CUTLASS_DIR=%s holds no include/%s (point it at a "
			    "CUTLASS checkout: git clone https://github.com/NVIDIA/cutlass)",
			    zWord, env, hdr);
	} else if (!header_for(hdr, it)) {
		return kl_err(err,
		              "libs: %s: the CUTLASS headers (%s) were not found in the CUDA "
		              "toolkit, /usr/local/cutlass, /opt/cutlass, ~/cutlass, kloop's "
		              ".devdeps/cutlass, /usr/local/include or /usr/include: set "
		              "CUTLASS_DIR to a CUTLASS checkout (git clone "
		              "https://github.com/NVIDIA/cutlass), or give its include "
		              "directory itself",
		              zWord, hdr);
	}
	char *r = realpath(it->zIncDir, NULL);
	if (r) {
		free(it->zIncDir);
		it->zIncDir = r;
	}
	char *util = xasprintf("%s/../tools/util/include", it->zIncDir);
	r = realpath(util, NULL);
	free(util);
	if (r && path_is_dir(r))
		it->zIncDir2 = r;
	else
		free(r);
	/* CuTe's constexpr functions are called from device code */
	it->zNvccFlag = "--expt-relaxed-constexpr";
	char ver[64];
	if (libs_cutlass_version(it->zIncDir, ver, sizeof ver) < 0)
		snprintf(ver, sizeof ver, "(version unknown: no cutlass/version.h)");
	it->zFound = xasprintf("CUTLASS %s, headers in %s%s%s", ver, it->zIncDir,
	                       it->zIncDir2 ? " and " : "", it->zIncDir2 ? it->zIncDir2 : "");
	return 0;
}

static int resolve(const char *zWord, const char *zBaseDir, struct lib_item *it, char *err)
{
	it->zName = xstrdup(zWord);
	char *rel = zBaseDir && zWord[0] != '/' ? path_join(zBaseDir, zWord) : NULL;
	int there = rel && (path_is_dir(rel) || path_is_file(rel));
	free(rel);
	if (strchr(zWord, '/') || there) {
		char *p =
		    zWord[0] == '/' || !zBaseDir ? xstrdup(zWord) : path_join(zBaseDir, zWord);
		char *r = realpath(p, NULL);
		free(p);
		if (!r)
			return kl_err(err, "libs: %s: no such file or directory", zWord);
		if (path_is_dir(r)) {
			it->zIncDir = r;
			it->zFound = xasprintf("include directory %s", r);
			return 0;
		}
		size_t n = strlen(r);
		if ((n > 3 && !strcmp(r + n - 3, ".so")) || strstr(r, ".so.") ||
		    (n > 2 && !strcmp(r + n - 2, ".a"))) {
			it->zLibPath = r;
			it->zLibDir = xstrndup(r, (size_t)(strrchr(r, '/') - r));
			it->zFound = xstrdup(r);
			return 0;
		}
		free(r);
		return kl_err(
		    err, "libs: %s: neither a directory (headers) nor a .so or .a library", zWord);
	}
	if (!strcmp(zWord, "cutlass") || !strcmp(zWord, "cute"))
		return resolve_cutlass(zWord, it, err);
	const char *hdr = !strcmp(zWord, "cublas")     ? "cublas_v2.h"
	                  : !strcmp(zWord, "cublasLt") ? "cublasLt.h"
	                  : !strcmp(zWord, "cudnn")    ? "cudnn.h"
	                                               : NULL;
	char *stub = NULL;
	if (!find_lib(zWord, it, &stub)) {
		char *cr = cuda_root();
		if (stub)
			kl_err(err,
			       "libs: %s: only a link stub was found (%s), which fails when "
			       "loaded; the library itself is not in $LIBRARY_PATH, %s/lib64, "
			       "the system's library directories or Python's nvidia wheels "
			       "(install it, or give its .so)",
			       zWord, stub, cr);
		else
			kl_err(err,
			       "libs: %s: lib%s.so was not found in $LIBRARY_PATH, %s/lib64, "
			       "/usr/local/lib, the system's library directories or Python's "
			       "nvidia wheels",
			       zWord, zWord, cr);
		free(stub);
		free(cr);
		return -1;
	}
	if (hdr) {
		struct lib_item h = {0};
		if (!header_for(hdr, &h))
			return kl_err(err, "libs: %s: %s was found but not its header %s", zWord,
			              it->zFound, hdr);
		it->zIncDir = h.zIncDir;
		char *f = xasprintf("%s (%s in %s)", it->zFound, hdr, h.zIncDir);
		free(it->zFound);
		it->zFound = f;
	}
	return 0;
}

static void item_free(struct lib_item *it)
{
	free(it->zName);
	free(it->zIncDir);
	free(it->zIncDir2);
	free(it->zLibDir);
	free(it->zLibFile);
	free(it->zLibPath);
	free(it->zFound);
	memset(it, 0, sizeof *it);
}

int libs_add(struct libs *L, const char *zList, const char *zBaseDir, char *err)
{
	char *p = xstrdup(zList ? zList : "");
	int rc = 0;
	for (char *save, *w = strtok_r(p, " ,\t\n", &save); w;
	     w = strtok_r(NULL, " ,\t\n", &save)) {
		int dup = 0;
		for (int i = 0; i < L->n; i++)
			dup |= !strcmp(L->a[i].zName, w);
		if (dup)
			continue;
		if (L->n == LIBS_MAX) {
			rc = kl_err(err, "libs: more than %d libraries", LIBS_MAX);
			break;
		}
		if (resolve(w, zBaseDir, &L->a[L->n], err) < 0) {
			item_free(&L->a[L->n]);
			rc = -1;
			break;
		}
		L->n++;
	}
	free(p);
	return rc;
}

int libs_have_cutlass(const struct libs *L)
{
	for (int i = 0; i < L->n; i++)
		if (!strcmp(L->a[i].zName, "cutlass") || !strcmp(L->a[i].zName, "cute"))
			return 1;
	return 0;
}

void libs_free(struct libs *L)
{
	for (int i = 0; i < L->n; i++)
		item_free(&L->a[i]);
	L->n = 0;
}

void libs_flags(const struct libs *L, int cuda, char **azOut, int *pn, int max)
{
	int n = *pn;
	for (int i = 0; i < L->n && n + 8 < max; i++) {
		const struct lib_item *it = &L->a[i];
		if (it->zIncDir)
			azOut[n++] = xasprintf("-I%s", it->zIncDir);
		if (it->zIncDir2)
			azOut[n++] = xasprintf("-I%s", it->zIncDir2);
		/* a flag nvcc needs for it, once (cutlass and cute both ask) */
		int seen = 0;
		for (int k = 0; k < n && it->zNvccFlag; k++)
			seen |= !strcmp(azOut[k], it->zNvccFlag);
		if (cuda && it->zNvccFlag && !seen)
			azOut[n++] = xstrdup(it->zNvccFlag);
	}
	for (int i = 0; i < L->n && n + 8 < max; i++) {
		const struct lib_item *it = &L->a[i];
		if (!it->zLibDir)
			continue;
		if (it->zLibPath)
			azOut[n++] = xstrdup(it->zLibPath);
		else {
			azOut[n++] = xasprintf("-L%s", it->zLibDir);
			azOut[n++] = xasprintf("-l:%s", it->zLibFile);
		}
		/* the loader finds it where it was found */
		azOut[n++] = cuda ? xasprintf("-Xlinker=-rpath,%s", it->zLibDir)
		                  : xasprintf("-Wl,-rpath,%s", it->zLibDir);
	}
	*pn = n;
}

int libs_source_includes_cutlass(const char *zSrc)
{
	for (const char *p = zSrc; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *q = p + strspn(p, " \t");
		if (*q != '#')
			continue;
		q++;
		q += strspn(q, " \t");
		if (strncmp(q, "include", 7))
			continue;
		q += 7;
		q += strspn(q, " \t");
		if (*q != '"' && *q != '<')
			continue;
		q++;
		if (!strncmp(q, "cutlass/", 8) || !strncmp(q, "cute/", 5))
			return 1;
	}
	return 0;
}
