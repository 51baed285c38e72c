/*
 * cand_import.c - a batch of files told apart as candidates for `kloop
 * import` (cand_import.h): the files paths and directories name, what
 * each is (or why it is not a candidate), and their names in the session.
 */
#include "cand_import.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cand_export.h"
#include "compile.h"
#include "splice.h"

#define SOURCE_MAX (8u << 20)
#define DEPTH_MAX 8 /* directories below the one given */

static const char *base_of(const char *z)
{
	const char *s = strrchr(z, '/');
	return s ? s + 1 : z;
}

static int ends_with(const char *z, const char *suffix)
{
	size_t n = strlen(z), m = strlen(suffix);
	return n >= m && !strcmp(z + n - m, suffix);
}

static int same_file(const char *a, const char *b)
{
	struct stat x, y;
	return a && b && stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* a new entry of l for zPath (owned), shown as zShow (NULL: zPath), with
 * its error (owned; NULL: none yet) */
static int add(struct cand_import_list *l, char *zPath, const char *zShow, char *zError, char *err)
{
	if (l->n == CAND_IMPORT_MAX) {
		free(zPath);
		free(zError);
		return kl_err(err,
		              "more than %d files to import: give fewer files or a smaller "
		              "directory",
		              CAND_IMPORT_MAX);
	}
	l->a = xrealloc(l->a, (size_t)(l->n + 1) * sizeof *l->a);
	struct cand_import *x = &l->a[l->n++];
	memset(x, 0, sizeof *x);
	x->zPath = zPath;
	x->zShow = xstrdup(zShow ? zShow : zPath);
	x->zError = zError;
	x->lang = -1;
	return 0;
}

/* the files of directory zDir (zRoot's, depth below it) into l */
static int walk(struct cand_import_list *l, const char *zRoot, const char *zDir, int depth,
                const char *zSkip, char *err)
{
	DIR *d = opendir(zDir);
	if (!d)
		return add(l, xstrdup(zDir), NULL,
		           xasprintf("%s: cannot read the directory: %s", zDir, strerror(errno)),
		           err);
	char **az = NULL;
	size_t n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "__pycache__"))
			continue;
		az = xrealloc(az, (n + 1) * sizeof *az);
		az[n++] = xstrdup(e->d_name);
	}
	closedir(d);
	qsort(az, n, sizeof *az, by_name);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		char *p = path_join(zDir, az[i]);
		struct stat st;
		if (rc < 0 || lstat(p, &st) < 0) {
			free(p);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			if (depth < DEPTH_MAX)
				rc = walk(l, zRoot, p, depth + 1, zSkip, err);
			free(p);
		} else if (!torchext_known_name(az[i]) || (zSkip && same_file(p, zSkip))) {
			if (!zSkip || !same_file(p, zSkip)) {
				sb_addf(&l->skipped, "%s%s", l->nSkipped ? ", " : "", p);
				l->nSkipped++;
			}
			free(p);
		} else {
			/* shown as the path below the directory given */
			rc = add(l, p, p + strlen(zRoot) + (zRoot[strlen(zRoot) - 1] != '/'), NULL,
			         err);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(az[i]);
	free(az);
	return rc;
}

int cand_import_list(const char *const *azArg, int nArg, const char *zSkip,
                     struct cand_import_list *out, char *err)
{
	memset(out, 0, sizeof *out);
	for (int i = 0; i < nArg; i++) {
		struct stat st;
		int rc;
		if (stat(azArg[i], &st) < 0)
			rc = add(out, xstrdup(azArg[i]), NULL,
			         xasprintf("%s: %s", azArg[i], strerror(errno)), err);
		else if (S_ISDIR(st.st_mode))
			rc = walk(out, azArg[i], azArg[i], 0, zSkip, err);
		else
			rc = add(out, xstrdup(azArg[i]), NULL, NULL, err);
		if (rc < 0) {
			cand_import_list_free(out);
			return -1;
		}
	}
	return 0;
}

void cand_import_list_free(struct cand_import_list *l)
{
	for (int i = 0; i < l->n; i++) {
		free(l->a[i].zPath);
		free(l->a[i].zShow);
		free(l->a[i].zName);
		free(l->a[i].zSource);
		free(l->a[i].zError);
	}
	free(l->a);
	sb_free(&l->skipped);
	memset(l, 0, sizeof *l);
}

/* 1 when some line of z starts with `class NAME` (NAME a whole word) */
static int defines_class(const char *z, const char *zName)
{
	size_t m = strlen(zName);
	for (const char *p = z; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, "class", 5) || (p[5] != ' ' && p[5] != '\t'))
			continue;
		const char *q = p + 5;
		while (*q == ' ' || *q == '\t')
			q++;
		if (!strncmp(q, zName, m) && (q[m] == '(' || q[m] == ':' || q[m] == ' '))
			return 1;
	}
	return 0;
}

static int refuse(struct cand_import *x, const char *zFmt, const char *zWhy)
{
	free(x->zError);
	x->zError = xasprintf(zFmt, x->zPath, zWhy);
	return -1;
}

/* what the source (x->zSource, named x->zName) is, or why it is no candidate */
static int classify(struct cand_import *x, const char *zBackend)
{
	const char *z = x->zSource;
	size_t n = strlen(z);
	if (!torchext_known_name(x->zName))
		return refuse(x,
		              "%s: %snot a source kloop takes: a candidate is a .c, .cpp or .cu "
		              "file (defining kl_run, or a PyTorch extension) or a KernelBench "
		              "ModelNew .py",
		              x->exportId ? "its exported candidate's name has no such extension: "
		                          : "");
	x->form = torchext_form_of(x->zName, z, n);
	x->lang = torchext_lang_of(x->zName, z, n);
	if (x->form == TORCHEXT_MODELNEW && !defines_class(z, "ModelNew"))
		return refuse(
		    x, "%s: %s",
		    defines_class(z, "Model") && strstr(z, "def get_inputs")
		        ? "a KernelBench problem file (class Model, get_inputs), not a candidate: "
		          "give it with --problem"
		        : "defines no class ModelNew: not a KernelBench ModelNew module (a "
		          "candidate .py is one whose ModelNew calls a load_inline module's "
		          "function)");
	if (x->form == TORCHEXT_KERNEL) {
		struct splice_span s;
		char e2[KL_ERRLEN];
		int hasRun = splice_find(z, n, "kl_run", &s, e2) == 0;
		if (hasRun)
			splice_span_free(&s);
		else if (strstr(z, "torch/") || strstr(z, "ATen/"))
			return refuse(x, "%s: %s",
			              "includes PyTorch but names no function with PYBIND11_MODULE "
			              "or TORCH_LIBRARY, and defines no kl_run: kloop calls the "
			              "function an extension's module names");
		else
			return refuse(
			    x, "%s: %s",
			    "defines no kl_run and is no PyTorch extension (a torch header "
			    "and PYBIND11_MODULE or TORCH_LIBRARY): nothing kloop can call");
	}
	char err[KL_ERRLEN];
	if (torchext_check_backend(x->zName, z, n, zBackend, err) < 0) {
		/* its words after the name they start with */
		size_t k = strlen(x->zName);
		return refuse(x, "%s: %s", strncmp(err, x->zName, k) ? err : err + k + 2);
	}
	return 0;
}

int cand_import_read(struct cand_import *x, const char *zBackend)
{
	if (x->zError)
		return -1;
	char err[KL_ERRLEN];
	strbuf sb = STRBUF_INIT;
	if (read_file(x->zPath, &sb, SOURCE_MAX, err) < 0) {
		sb_free(&sb);
		x->zError = xstrdup(err);
		return -1;
	}
	if (!sb.len) {
		sb_free(&sb);
		return refuse(x, "%s: %s", "the file is empty");
	}
	if (looks_binary(sb.buf, sb.len)) {
		sb_free(&sb);
		return refuse(x, "%s: %s", "a binary file, not source");
	}
	struct cand_exported ex;
	int rc = ends_with(x->zPath, ".py") ? cand_export_read(sb.buf, sb.len, &ex, err) : 0;
	if (rc < 0) {
		sb_free(&sb);
		return refuse(x, "%s: %s", err);
	}
	if (rc > 0) {
		/* a module kloop export wrote: its candidate as it was */
		sb_free(&sb);
		x->zSource = ex.zSource;
		x->zName = ex.zName;
		x->exportId = ex.id > 0 ? ex.id : 1;
		x->edited = ex.edited;
		ex.zSource = ex.zName = NULL;
		cand_exported_free(&ex);
	} else {
		x->zSource = sb_detach(&sb);
		x->zName = xstrdup(base_of(x->zPath));
	}
	return classify(x, zBackend);
}

/* whether name z is taken in st or by l's entries before k */
static int taken(const struct cand_import_list *l, int k, const struct state *st, const char *z)
{
	for (int i = 0; i < st->nCand; i++)
		if (st->aCand[i].zName && !strcmp(st->aCand[i].zName, z))
			return 1;
	for (int i = 0; i < k; i++)
		if (!l->a[i].zError && !l->a[i].present && l->a[i].zName &&
		    !strcmp(l->a[i].zName, z))
			return 1;
	return 0;
}

/* the name of x's parent directory ("" for none) */
static char *parent_of(const char *zPath)
{
	const char *s = strrchr(zPath, '/');
	if (!s)
		return xstrdup("");
	const char *a = s;
	while (a > zPath && a[-1] != '/')
		a--;
	return xstrndup(a, (size_t)(s - a));
}

void cand_import_names(struct cand_import_list *l, const struct state *st)
{
	for (int k = 0; k < l->n; k++) {
		struct cand_import *x = &l->a[k];
		if (x->zError)
			continue;
		for (int i = 0; i < st->nCand && !x->present; i++)
			if (st->aCand[i].zSource && !strcmp(st->aCand[i].zSource, x->zSource))
				x->present = st->aCand[i].id;
		if (x->present || !taken(l, k, st, x->zName))
			continue;
		char *dir = parent_of(x->zPath);
		char *name = *dir && strcmp(dir, ".") && strcmp(dir, "..")
		                 ? xasprintf("%s-%s", dir, x->zName)
		                 : xstrdup(x->zName);
		free(dir);
		char *first = xstrdup(name);
		const char *dot = strrchr(first, '.');
		size_t stem = dot ? (size_t)(dot - first) : strlen(first);
		for (int j = 2; taken(l, k, st, name); j++) {
			free(name);
			name = xasprintf("%.*s-%d%s", (int)stem, first, j, first + stem);
		}
		free(first);
		free(x->zName);
		x->zName = name;
	}
}

void cand_import_form(const struct cand_import *x, char *buf, size_t n)
{
	static const char *const langs[] = {"C", "C++", "CUDA"};
	const char *form = x->form == TORCHEXT_EXTENSION  ? "extension"
	                   : x->form == TORCHEXT_MODELNEW ? "ModelNew"
	                                                  : "kernel";
	if (x->lang >= 0 && x->lang < 3)
		snprintf(buf, n, "%s %s", form, langs[x->lang]);
	else
		snprintf(buf, n, "%s", form);
}
