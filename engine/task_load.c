/*
 * task_load.c - task.json read and validated (task_load): tensors, shape
 * sets, tolerances, the reference and the seeds.  Every error names the
 * file and the field.  A task found by name is task_find.c's.
 */
#include "task.h"

#include <cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "suggest.h"
#include "util.h"

struct ctx {
	const char *zFile; /* task.json path, for messages */
	char *err;
	cJSON *shapeset; /* the chosen shape set, or NULL */
	const char *zSet;
};

/*
 * A file named in task.json: relative to the task directory and inside it
 * (no absolute path, no ".." step, no symlink out of it), a regular file.
 * Returns the path, or NULL with err naming the field (zWhere) and the value.
 */
static char *task_file(struct ctx *c, const char *zDir, const char *zWhere, const char *z)
{
	if (z[0] == '/') {
		kl_err(c->err,
		       "%s: %s: '%s' is an absolute path; files of a task are named relative "
		       "to its directory",
		       c->zFile, zWhere, z);
		return NULL;
	}
	for (const char *p = z; *p;) {
		size_t k = strcspn(p, "/");
		if (k == 2 && !memcmp(p, "..", 2)) {
			kl_err(c->err,
			       "%s: %s: '%s' steps out of the task directory ('..'); files of a "
			       "task stay inside it",
			       c->zFile, zWhere, z);
			return NULL;
		}
		p += k + (p[k] == '/');
	}
	char *path = path_join(zDir, z);
	char e2[KL_ERRLEN];
	if (file_check_regular(path, e2) < 0) {
		kl_err(c->err, "%s: %s: %s", c->zFile, zWhere, e2);
		free(path);
		return NULL;
	}
	char *real = realpath(path, NULL), *dir = realpath(zDir, NULL);
	size_t nd = dir ? strlen(dir) : 0;
	int inside = real && dir && !strncmp(real, dir, nd) && real[nd] == '/';
	if (!inside)
		kl_err(c->err, "%s: %s: '%s' leads out of the task directory (through a symlink)",
		       c->zFile, zWhere, z);
	free(real);
	free(dir);
	if (!inside) {
		free(path);
		return NULL;
	}
	return path;
}

static int get_number(struct ctx *c, const cJSON *o, const char *key, const char *where, double *p)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!v)
		return 0;
	if (!cJSON_IsNumber(v))
		return kl_err(c->err, "%s: %s.%s: expected a number", c->zFile, where, key);
	if (!isfinite(v->valuedouble) || fabs(v->valuedouble) > TASK_VALUE_MAX)
		return kl_err(c->err, "%s: %s.%s: %g is out of range (at most %g in magnitude)",
		              c->zFile, where, key, v->valuedouble, TASK_VALUE_MAX);
	*p = v->valuedouble;
	return 0;
}

/* every key of object o is one of azKeys (NULL-terminated), or starts with
 * '_' (a note of the author's): a misspelt key ("tolerence") would
 * otherwise be ignored, and its default used without a word */
static int known_keys(struct ctx *c, const cJSON *o, const char *where, const char *const *azKeys)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, o)
	{
		int ok = e->string && e->string[0] == '_';
		for (int i = 0; !ok && azKeys[i]; i++)
			ok = e->string && !strcmp(e->string, azKeys[i]);
		if (ok)
			continue;
		strbuf sb = STRBUF_INIT;
		for (int i = 0; azKeys[i]; i++)
			sb_addf(&sb, "%s%s", i ? ", " : "", azKeys[i]);
		kl_err(c->err,
		       "%s: %s%s'%.60s': unknown key (expected %s; a key starting with '_' is a "
		       "note)",
		       c->zFile, where ? where : "", where ? ": " : "", e->string ? e->string : "?",
		       sb.buf);
		sb_free(&sb);
		return -1;
	}
	return 0;
}

static int parse_init(struct ctx *c, const cJSON *jt, const char *where, struct task_tensor *t)
{
	int isint =
	    t->dtype == KL_I32 || t->dtype == KL_I64 || t->dtype == KL_I8 || t->dtype == KL_U8;
	t->dist = isint ? DIST_RANDINT : DIST_UNIFORM;
	t->a = isint ? (t->dtype == KL_U8 ? 0 : -8) : -1;
	t->b = isint ? 8 : 1;
	const cJSON *init = cJSON_GetObjectItemCaseSensitive(jt, "init");
	if (!init)
		return 0;
	if (!cJSON_IsObject(init))
		return kl_err(c->err,
		              "%s: %s.init: expected an object like {\"dist\": \"uniform\", "
		              "\"lo\": -1, \"hi\": 1}",
		              c->zFile, where);
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(init, "dist");
	const char *zd = cJSON_IsString(d) ? d->valuestring : "uniform";
	if (d && !cJSON_IsString(d))
		return kl_err(c->err, "%s: %s.init.dist: expected a string", c->zFile, where);
	char iw[96];
	snprintf(iw, sizeof iw, "%s.init", where);
	/* "vary": false keeps the distribution in the checked sets that vary
	 * the others (docs/TASKS.md, "Inputs a statistic cannot guess") */
	const cJSON *vary = cJSON_GetObjectItemCaseSensitive(init, "vary");
	if (vary && !cJSON_IsBool(vary))
		return kl_err(c->err, "%s: %s.vary: expected true or false", c->zFile, iw);
	t->fixed = cJSON_IsFalse(vary);
	if (!strcmp(zd, "uniform")) {
		t->dist = DIST_UNIFORM;
		t->a = -1, t->b = 1;
		if (known_keys(c, init, iw,
		               (const char *const[]){"dist", "lo", "hi", "vary", NULL}) ||
		    get_number(c, init, "lo", iw, &t->a) || get_number(c, init, "hi", iw, &t->b))
			return -1;
	} else if (!strcmp(zd, "normal")) {
		t->dist = DIST_NORMAL;
		t->a = 0, t->b = 1;
		if (known_keys(c, init, iw,
		               (const char *const[]){"dist", "mean", "std", "vary", NULL}) ||
		    get_number(c, init, "mean", iw, &t->a) || get_number(c, init, "std", iw, &t->b))
			return -1;
	} else if (!strcmp(zd, "randint")) {
		t->dist = DIST_RANDINT;
		if (known_keys(c, init, iw,
		               (const char *const[]){"dist", "lo", "hi", "vary", NULL}) ||
		    get_number(c, init, "lo", iw, &t->a) || get_number(c, init, "hi", iw, &t->b))
			return -1;
	} else {
		return kl_err(c->err,
		              "%s: %s.init.dist: '%s' is not one of uniform, normal, randint",
		              c->zFile, where, zd);
	}
	if (t->dist == DIST_RANDINT && (t->a != floor(t->a) || t->b != floor(t->b) ||
	                                fabs(t->a) > 0x1p53 || fabs(t->b) > 0x1p53))
		return kl_err(c->err,
		              "%s: %s.init: randint lo (%g) and hi (%g) must be integers of at "
		              "most 2^53 in magnitude",
		              c->zFile, where, t->a, t->b);
	if (t->dist != DIST_NORMAL && t->b < t->a)
		return kl_err(c->err, "%s: %s.init: hi (%g) is below lo (%g)", c->zFile, where,
		              t->b, t->a);
	if (t->dist == DIST_NORMAL && t->b < 0)
		return kl_err(c->err, "%s: %s.init.std: must not be negative", c->zFile, where);
	return 0;
}

static int parse_tensor(struct ctx *c, const cJSON *jt, const char *where, struct task_tensor *t)
{
	if (!cJSON_IsObject(jt))
		return kl_err(c->err, "%s: %s: expected an object with name, dtype and shape",
		              c->zFile, where);
	if (known_keys(c, jt, where, (const char *const[]){"name", "dtype", "shape", "init", NULL}))
		return -1;
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(jt, "name");
	if (!cJSON_IsString(n) || !task_valid_name(n->valuestring))
		return kl_err(c->err, "%s: %s.name: expected an identifier string", c->zFile,
		              where);
	t->zName = xstrdup(n->valuestring);
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(jt, "dtype");
	if (!cJSON_IsString(d) || task_dtype_parse(d->valuestring, &t->dtype) < 0)
		return kl_err(
		    c->err,
		    "%s: %s.dtype: expected one of f32, f16, bf16, f64, i32, i64, i8, u8, e4m3",
		    c->zFile, where);
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(jt, "shape");
	int nd = cJSON_IsArray(s) ? cJSON_GetArraySize(s) : -1;
	if (nd < 0 || nd > 8)
		return kl_err(
		    c->err,
		    "%s: %s.shape: expected an array of 0 to 8 dimensions ([] for a scalar)",
		    c->zFile, where);
	t->ndim = nd;
	for (int i = 0; i < nd; i++) {
		const cJSON *e = cJSON_GetArrayItem(s, i);
		double v;
		if (cJSON_IsString(e)) {
			t->azDim[i] = xstrdup(e->valuestring);
			const cJSON *dv =
			    c->shapeset
			        ? cJSON_GetObjectItemCaseSensitive(c->shapeset, e->valuestring)
			        : NULL;
			if (!dv)
				return kl_err(c->err,
				              "%s: %s.shape[%d]: dimension '%s' is not given in "
				              "shape set '%s'",
				              c->zFile, where, i, e->valuestring,
				              c->zSet ? c->zSet : "(none)");
			if (!cJSON_IsNumber(dv))
				return kl_err(c->err,
				              "%s: shapes.%s.%s: expected a positive integer",
				              c->zFile, c->zSet, e->valuestring);
			v = dv->valuedouble;
		} else if (cJSON_IsNumber(e)) {
			v = e->valuedouble;
		} else {
			return kl_err(
			    c->err,
			    "%s: %s.shape[%d]: expected a positive integer or a dimension name",
			    c->zFile, where, i);
		}
		/* the range first: converting a NaN, an inf or 1e300 to int64_t is undefined */
		if (!(v >= 1 && v <= TASK_DIM_MAX) || v != floor(v))
			return kl_err(c->err,
			              "%s: %s.shape[%d]: %g is not a positive integer of at most "
			              "%g",
			              c->zFile, where, i, v, TASK_DIM_MAX);
		t->shape[i] = (int64_t)v;
	}
	int64_t numel, bytes;
	char *zShape = task_shape_str(t);
	int over = task_numel_checked(t, &numel) < 0;
	if (over || task_bytes_checked(t, &bytes) < 0 || bytes > TASK_BYTES_MAX) {
		if (over)
			kl_err(c->err,
			       "%s: %s: shape %s: the element count overflows 64 bits (the limit "
			       "is %lld bytes)",
			       c->zFile, where, zShape, (long long)TASK_BYTES_MAX);
		else
			kl_err(c->err,
			       "%s: %s: shape %s of %s: %lld elements of %zu bytes are over the "
			       "limit of %lld bytes (16 GiB)",
			       c->zFile, where, zShape, task_dtype_name(t->dtype), (long long)numel,
			       task_dtype_size(t->dtype), (long long)TASK_BYTES_MAX);
		free(zShape);
		return -1;
	}
	free(zShape);
	return parse_init(c, jt, where, t);
}

static int parse_tensors(struct ctx *c, const cJSON *root, const char *key, struct task_tensor *a,
                         int *pn, int required)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, key);
	if (!arr && !required)
		return 0;
	if (!cJSON_IsArray(arr))
		return kl_err(c->err, "%s: %s: expected an array of tensors", c->zFile, key);
	int n = cJSON_GetArraySize(arr);
	if (required && n < 1)
		return kl_err(c->err, "%s: %s: expected at least one tensor", c->zFile, key);
	if (n > TASK_MAX_TENSORS)
		return kl_err(c->err, "%s: %s: %d tensors, at most %d are supported", c->zFile, key,
		              n, TASK_MAX_TENSORS);
	for (int i = 0; i < n; i++) {
		char where[64];
		snprintf(where, sizeof where, "%s[%d]", key, i);
		if (parse_tensor(c, cJSON_GetArrayItem(arr, i), where, &a[i]) < 0) {
			*pn = i + 1;
			return -1;
		}
		*pn = i + 1;
		for (int j = 0; j < i; j++)
			if (!strcmp(a[j].zName, a[i].zName))
				return kl_err(c->err, "%s: %s.name: '%s' is used twice", c->zFile,
				              where, a[i].zName);
	}
	return 0;
}

static int parse_tolerance(struct ctx *c, const cJSON *root, struct task *t)
{
	for (int d = 0; d < TASK_NDTYPE; d++)
		t->aTol[d] = task_default_tol((kl_dtype)d);
	t->zTolFrom = "default";
	const cJSON *tol = cJSON_GetObjectItemCaseSensitive(root, "tolerance");
	if (!tol)
		return 0;
	if (cJSON_IsString(tol) && !strcmp(tol->valuestring, "kernelbench")) {
		task_use_kernelbench_tol(t);
		return 0;
	}
	if (!cJSON_IsObject(tol))
		return kl_err(c->err,
		              "%s: tolerance: expected \"kernelbench\" or an object of dtype -> "
		              "{atol, rtol, rel_l2}",
		              c->zFile);
	t->zTolFrom = "task.json";
	const cJSON *e;
	cJSON_ArrayForEach(e, tol)
	{
		kl_dtype d;
		if (task_dtype_parse(e->string, &d) < 0)
			return kl_err(c->err,
			              "%s: tolerance.%s: not a dtype (f32, f16, bf16, f64, i32, "
			              "i64, i8, u8, e4m3)",
			              c->zFile, e->string);
		if (!cJSON_IsObject(e))
			return kl_err(
			    c->err, "%s: tolerance.%s: expected an object with atol, rtol, rel_l2",
			    c->zFile, e->string);
		const cJSON *k;
		cJSON_ArrayForEach(k, e)
		{
			double *p = !strcmp(k->string, "atol")     ? &t->aTol[d].atol
			            : !strcmp(k->string, "rtol")   ? &t->aTol[d].rtol
			            : !strcmp(k->string, "rel_l2") ? &t->aTol[d].rel_l2
			                                           : NULL;
			if (!p)
				return kl_err(c->err,
				              "%s: tolerance.%s.%s: unknown key (expected atol, "
				              "rtol or rel_l2)",
				              c->zFile, e->string, k->string);
			if (!cJSON_IsNumber(k) || !(k->valuedouble >= 0) ||
			    !(k->valuedouble <= TASK_VALUE_MAX))
				return kl_err(c->err,
				              "%s: tolerance.%s.%s: expected a finite non-negative "
				              "number of at most %g",
				              c->zFile, e->string, k->string, TASK_VALUE_MAX);
			*p = k->valuedouble;
		}
	}
	return 0;
}

static int source_field(struct ctx *c, const cJSON *o, const char *where, const char *key,
                        const char *zDir, char **pz)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!v)
		return 0;
	if (!cJSON_IsString(v) || !*v->valuestring)
		return kl_err(c->err, "%s: %s.%s: expected a file name", c->zFile, where, key);
	char zWhere[128];
	snprintf(zWhere, sizeof zWhere, "%s.%s", where, key);
	return (*pz = task_file(c, zDir, zWhere, v->valuestring)) ? 0 : -1;
}

/* seed entry e (a file name, or {"file": NAME, "needs": "cutlass"}): its
 * path into *pz and what it needs into *pNeeds (NULL: nothing) */
static int seed_entry(struct ctx *c, const cJSON *e, const char *zWhere, const char *zDir,
                      char **pz, char **pNeeds)
{
	const cJSON *f = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "file") : e,
	            *nd = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "needs") : NULL;
	*pNeeds = NULL;
	if (!cJSON_IsString(f) || !*f->valuestring)
		return kl_err(c->err, "%s: %s: expected %s", c->zFile, zWhere,
		              f == e ? "a file name" : "{\"file\": NAME, \"needs\": \"cutlass\"}");
	if (nd && (!cJSON_IsString(nd) ||
	           (strcmp(nd->valuestring, "cutlass") && strcmp(nd->valuestring, "cute"))))
		return kl_err(
		    c->err,
		    "%s: %s.needs: expected \"cutlass\" (a seed used where kloop finds CUTLASS)",
		    c->zFile, zWhere);
	if (!(*pz = task_file(c, zDir, zWhere, f->valuestring)))
		return -1;
	*pNeeds = nd ? xstrdup("cutlass") : NULL;
	return 0;
}

/* seeds.KEY: one entry, or an array of them */
static int seed_list(struct ctx *c, const cJSON *seeds, const char *key, const char *zDir,
                     char ***pa, char ***paNeeds, int *pn)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(seeds, key);
	if (!v)
		return 0;
	int one = cJSON_IsString(v) || cJSON_IsObject(v);
	if (!one && !cJSON_IsArray(v))
		return kl_err(c->err, "%s: seeds.%s: expected an array of file names", c->zFile,
		              key);
	int n = one ? 1 : cJSON_GetArraySize(v);
	*pa = xcalloc((size_t)n + 1, sizeof(char *));
	*paNeeds = xcalloc((size_t)n + 1, sizeof(char *));
	for (int i = 0; i < n; i++) {
		char zWhere[128];
		snprintf(zWhere, sizeof zWhere, one ? "seeds.%s" : "seeds.%s[%d]", key, i);
		if (seed_entry(c, one ? v : cJSON_GetArrayItem(v, i), zWhere, zDir, &(*pa)[i],
		               &(*paNeeds)[i]) < 0)
			return -1;
		*pn = i + 1;
	}
	return 0;
}

/* the value of dimension name z[0..n) in the shape set, or -1 */
static double dim_value(const struct ctx *c, const char *z, size_t n)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, c->shapeset) if (strlen(e->string) == n && !memcmp(e->string, z, n) &&
	                                       cJSON_IsNumber(e)) return e->valuedouble;
	return -1;
}

/*
 * "flops": a number, or a sum of products of numbers and the shape set's
 * dimension names ("2*M*N*K + M*N"), evaluated for the set in use.
 */
static int parse_flops(struct ctx *c, const cJSON *root, struct task *t)
{
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "flops");
	t->flops = 0;
	if (!f)
		return 0;
	if (cJSON_IsNumber(f)) {
		if (!(f->valuedouble > 0 && f->valuedouble <= TASK_VALUE_MAX))
			return kl_err(c->err, "%s: flops: expected a positive number, got %g",
			              c->zFile, f->valuedouble);
		t->flops = f->valuedouble;
		return 0;
	}
	if (!cJSON_IsString(f))
		return kl_err(c->err,
		              "%s: flops: expected a number or an expression of the shape set's "
		              "dimensions such as \"2*M*N*K\"",
		              c->zFile);
	const char *z = f->valuestring;
	double sum = 0, prod = 1;
	int want = 1; /* a factor is expected next */
	for (;;) {
		while (*z == ' ')
			z++;
		if (want) {
			char *end;
			double v;
			if ((*z >= '0' && *z <= '9') || *z == '.') {
				/* decimal only: strtod would read "0x10" as 16 */
				end = (char *)z + strspn(z, "0123456789.");
				if (*end == 'e' || *end == 'E') {
					const char *q = end + 1 + (end[1] == '+' || end[1] == '-');
					if (*q >= '0' && *q <= '9')
						end = (char *)q + strspn(q, "0123456789");
				}
				char num[64];
				snprintf(num, sizeof num, "%.*s", (int)(end - z), z);
				if (num_parse(num, &v) < 0)
					return kl_err(c->err, "%s: flops: '%s' is not a number",
					              c->zFile, num);
			} else if (isalpha((unsigned char)*z) || *z == '_') {
				end = (char *)z;
				while (isalnum((unsigned char)*end) || *end == '_')
					end++;
				v = c->shapeset ? dim_value(c, z, (size_t)(end - z)) : -1;
				if (v < 0)
					return kl_err(
					    c->err,
					    "%s: flops: '%.*s' is not a dimension of shape set "
					    "'%s'",
					    c->zFile, (int)(end - z), z,
					    c->zSet ? c->zSet : "(none)");
			} else {
				return kl_err(c->err,
				              "%s: flops: expected a number or a dimension name at "
				              "'%s' in \"%s\"",
				              c->zFile, z, f->valuestring);
			}
			prod *= v;
			z = end;
			want = 0;
		} else if (*z == '*') {
			z++, want = 1;
		} else if (*z == '+' || !*z) {
			sum += prod;
			prod = 1;
			if (!*z)
				break;
			z++, want = 1;
		} else {
			return kl_err(c->err,
			              "%s: flops: expected '*', '+' or the end at '%s' in \"%s\"",
			              c->zFile, z, f->valuestring);
		}
	}
	if (!(sum > 0 && sum <= TASK_VALUE_MAX))
		return kl_err(c->err, "%s: flops: \"%s\" comes to %g, not a positive count",
		              c->zFile, f->valuestring, sum);
	t->flops = sum;
	return 0;
}

/* a key given twice in one object, anywhere in the file: JSON parsers keep
 * one of them silently (cJSON the first), so a task that says "n": 4 and
 * then "n": 8 would run with a size its author did not mean */
/* the first \u0000 escape in JSON text z[0..n) (not an escaped backslash
 * followed by "u0000"), or NULL */
static const char *json_nul_escape(const char *z, size_t n)
{
	for (size_t i = 0; i + 6 <= n; i++) {
		if (z[i] != '\\')
			continue;
		if (z[i + 1] == 'u' && !memcmp(z + i + 2, "0000", 4))
			return z + i;
		i++; /* the escaped character: "\\\\u0000" is a backslash, then text */
	}
	return NULL;
}

static int duplicate_keys(struct ctx *c, const cJSON *o, strbuf *path)
{
	const cJSON *e;
	size_t len = path->len;
	int i = 0;
	cJSON_ArrayForEach(e, o)
	{
		if (cJSON_IsObject(o) && e->string)
			for (const cJSON *f = o->child; f != e; f = f->next)
				if (f->string && !strcmp(f->string, e->string)) {
					kl_err(c->err,
					       "%s: %s%s'%.60s' is given twice (JSON keeps one of "
					       "them silently: give it once)",
					       c->zFile, path->len ? path->buf : "",
					       path->len ? ": " : "", e->string);
					return -1;
				}
		if (cJSON_IsObject(e) || cJSON_IsArray(e)) {
			if (cJSON_IsObject(o))
				sb_addf(path, "%s%.60s", len ? "." : "",
				        e->string ? e->string : "?");
			else
				sb_addf(path, "[%d]", i);
			int rc = duplicate_keys(c, e, path);
			path->len = len;
			if (path->buf)
				path->buf[len] = 0;
			if (rc < 0)
				return -1;
		}
		i++;
	}
	return 0;
}

static int parse_root(struct ctx *c, cJSON *root, struct task *t, const char *zBackend,
                      const char *zShapeSet)
{
	if (!cJSON_IsObject(root))
		return kl_err(c->err, "%s: expected a JSON object at the top level", c->zFile);
	strbuf path = STRBUF_INIT;
	int dup = duplicate_keys(c, root, &path);
	sb_free(&path);
	if (dup < 0)
		return -1;
	if (known_keys(c, root, NULL,
	               (const char *const[]){"name", "description", "inputs", "outputs", "shapes",
	                                     "tolerance", "reference", "seeds", "libs", "flops",
	                                     "compute", NULL}))
		return -1;
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(root, "name");
	if (!cJSON_IsString(n) || !task_valid_name(n->valuestring))
		return kl_err(c->err,
		              "%s: name: expected a string of letters, digits, '_', '-' or '.'",
		              c->zFile);
	t->zName = xstrdup(n->valuestring);
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "description");
	if (d && !cJSON_IsString(d))
		return kl_err(c->err, "%s: description: expected a string", c->zFile);
	t->zDescription = xstrdup(d ? d->valuestring : "");

	cJSON *shapes = cJSON_GetObjectItemCaseSensitive(root, "shapes");
	t->zShapeSet = xstrdup("");
	t->zDims = xstrdup("");
	if (shapes) {
		if (!cJSON_IsObject(shapes) || !shapes->child)
			return kl_err(c->err,
			              "%s: shapes: expected an object of shape sets (e.g. "
			              "\"host\": {\"rows\": 64})",
			              c->zFile);
		cJSON *e;
		int ns = cJSON_GetArraySize(shapes);
		t->azShapeSets = xcalloc((size_t)ns, sizeof(char *));
		cJSON_ArrayForEach(e, shapes)
		{
			if (!cJSON_IsObject(e))
				return kl_err(
				    c->err,
				    "%s: shapes.%s: expected an object of dimension -> size",
				    c->zFile, e->string);
			t->azShapeSets[t->nShapeSets++] = xstrdup(e->string);
		}
		cJSON *set = NULL;
		if (zShapeSet) {
			set = cJSON_GetObjectItemCaseSensitive(shapes, zShapeSet);
			if (!set) {
				strbuf sb = STRBUF_INIT;
				for (int i = 0; i < t->nShapeSets; i++)
					sb_addf(&sb, "%s%s", i ? ", " : "", t->azShapeSets[i]);
				kl_err(c->err,
				       "%s: shapes: no shape set named '%s' (the task has: %s)",
				       c->zFile, zShapeSet, sb.buf);
				sb_free(&sb);
				return -1;
			}
		} else {
			set = zBackend ? cJSON_GetObjectItemCaseSensitive(shapes, zBackend) : NULL;
			if (!set)
				set = shapes->child;
		}
		c->shapeset = set;
		c->zSet = set->string;
		free(t->zShapeSet);
		t->zShapeSet = xstrdup(set->string);
		/* "?": a reference.py without a constant of that name is run as
		 * it is (torchref.py's apply_sizes) */
		strbuf db = STRBUF_INIT;
		sb_adds(&db, "");
		const cJSON *dim;
		cJSON_ArrayForEach(dim, set)
		{
			double v = dim->valuedouble;
			if (cJSON_IsNumber(dim) && v >= 1 && v <= 1e15 && v == (double)(int64_t)v)
				sb_addf(&db, "%s?%s=%lld", db.len ? "," : "", dim->string,
				        (long long)v);
		}
		free(t->zDims);
		t->zDims = sb_detach(&db);
	} else if (zShapeSet) {
		return kl_err(c->err,
		              "%s: shapes: the task has no shape sets, so '%s' cannot be chosen",
		              c->zFile, zShapeSet);
	}

	if (parse_tensors(c, root, "inputs", t->aIn, &t->nIn, 0) < 0)
		return -1;
	if (parse_tensors(c, root, "outputs", t->aOut, &t->nOut, 1) < 0)
		return -1;
	if (parse_tolerance(c, root, t) < 0)
		return -1;
	const cJSON *libs = cJSON_GetObjectItemCaseSensitive(root, "libs");
	strbuf lb = STRBUF_INIT;
	sb_adds(&lb, "");
	if (libs) {
		const cJSON *e;
		if (!cJSON_IsArray(libs)) {
			sb_free(&lb);
			return kl_err(c->err,
			              "%s: libs: expected an array of library names or paths, e.g. "
			              "[\"cublas\", \"m\"]",
			              c->zFile);
		}
		cJSON_ArrayForEach(e, libs)
		{
			if (!cJSON_IsString(e) || !*e->valuestring ||
			    strpbrk(e->valuestring, " \t\n,")) {
				sb_free(&lb);
				return kl_err(
				    c->err,
				    "%s: libs: each entry must be one name or path without "
				    "spaces or commas",
				    c->zFile);
			}
			sb_addf(&lb, "%s%s", lb.len ? " " : "", e->valuestring);
		}
	}
	t->zLibs = sb_detach(&lb);
	if (parse_flops(c, root, t) < 0)
		return -1;
	const cJSON *cp = cJSON_GetObjectItemCaseSensitive(root, "compute");
	if (cp) {
		if (task_compute_parse(cJSON_GetStringValue(cp), &t->compute) < 0) {
			char *v = cJSON_PrintUnformatted(cp);
			kl_err(c->err,
			       "%s: compute: expected one of \"fp32\", \"tf32\", \"fp16\", "
			       "\"bf16\", \"fp8\", \"int8\" (the type its products run in), got "
			       "%.60s",
			       c->zFile, v ? v : "?");
			free(v);
			return -1;
		}
		t->zComputeFrom = "task.json";
	} else {
		t->compute = task_compute_infer(t, 0, &t->zComputeFrom);
	}

	const cJSON *ref = cJSON_GetObjectItemCaseSensitive(root, "reference");
	if (!cJSON_IsObject(ref))
		return kl_err(c->err,
		              "%s: reference: expected an object like {\"host\": \"reference.c\"}",
		              c->zFile);
	if (source_field(c, ref, "reference", "host", t->zDir, &t->ref.zHost) < 0 ||
	    source_field(c, ref, "reference", "cuda", t->zDir, &t->ref.zCuda) < 0 ||
	    source_field(c, ref, "reference", "torch", t->zDir, &t->ref.zTorch) < 0)
		return -1;
	if (!t->ref.zHost && !t->ref.zCuda && !t->ref.zTorch)
		return kl_err(c->err, "%s: reference: expected at least one of host, cuda, torch",
		              c->zFile);
	const cJSON *seeds = cJSON_GetObjectItemCaseSensitive(root, "seeds");
	if (seeds) {
		if (!cJSON_IsObject(seeds))
			return kl_err(c->err,
			              "%s: seeds: expected an object like {\"host\": [\"seed.c\"]}",
			              c->zFile);
		if (seed_list(c, seeds, "host", t->zDir, &t->seeds.azHost, &t->seeds.azHostNeeds,
		              &t->seeds.nHost) < 0 ||
		    seed_list(c, seeds, "cuda", t->zDir, &t->seeds.azCuda, &t->seeds.azCudaNeeds,
		              &t->seeds.nCuda) < 0)
			return -1;
	}
	return 0;
}

struct task *task_load(const char *zPath, const char *zBackend, const char *zShapeSet, char *err)
{
	struct stat st;
	char *zFile, *zDir;
	if (stat(zPath, &st) == 0 && S_ISDIR(st.st_mode)) {
		zDir = xstrdup(zPath);
		zFile = path_join(zPath, "task.json");
	} else {
		zFile = xstrdup(zPath);
		const char *slash = strrchr(zPath, '/');
		zDir = slash ? xstrndup(zPath, (size_t)(slash - zPath)) : xstrdup(".");
	}
	char real[PATH_MAX];
	if (realpath(zDir, real)) {
		free(zDir);
		zDir = xstrdup(real);
	}
	strbuf sb = STRBUF_INIT;
	if (read_file(zFile, &sb, 1 << 20, err) < 0) {
		free(zFile);
		free(zDir);
		sb_free(&sb);
		return NULL;
	}
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(sb.buf, sb.len, &end, 0);
	/* text after the object ("{...} garbage", two objects) is an error too */
	while (root && end && end < sb.buf + sb.len && strchr(" \t\r\n", *end) && *end)
		end++;
	const char *zWhy = "not valid JSON", *at = root ? NULL : cJSON_GetErrorPtr();
	if (root && end && end < sb.buf + sb.len) {
		cJSON_Delete(root);
		root = NULL;
		zWhy = "text after the JSON object", at = end;
	}
	const char *nul = root ? json_nul_escape(sb.buf, sb.len) : NULL;
	if (nul) {
		/* cJSON ends the string there: "a\u0000/../b" would be read as "a" */
		cJSON_Delete(root);
		root = NULL;
		zWhy = "a string holds \\u0000 (NUL), which no name, file or value may hold";
		at = nul;
	}
	if (!root) {
		int line = 1;
		for (const char *p = sb.buf; at && p < at && *p; p++)
			line += *p == '\n';
		kl_err(err, "%s:%d: %s", zFile, line, zWhy);
		free(zFile);
		free(zDir);
		sb_free(&sb);
		return NULL;
	}
	sb_free(&sb);
	struct task *t = xcalloc(1, sizeof *t);
	t->zDir = zDir;
	struct ctx c = {zFile, err, NULL, NULL};
	int rc = parse_root(&c, root, t, zBackend, zShapeSet);
	cJSON_Delete(root);
	free(zFile);
	if (rc < 0) {
		task_free(t);
		return NULL;
	}
	return t;
}
