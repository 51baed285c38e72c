/*
 * archive_signature.c - the task signature (the operations of a PyTorch
 * reference's forward(), then its tensors or sizes) and a session's id.
 */
#include "archive_priv.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "task.h"

static void add_op(strbuf *ops, const char *z, size_t n)
{
	char w[64];
	if (!n || n >= sizeof w)
		return;
	for (size_t i = 0; i < n; i++)
		w[i] = (char)tolower((unsigned char)z[i]);
	w[n] = 0;
	/* already there? (ops is " a b c ") */
	char key[68];
	snprintf(key, sizeof key, " %s ", w);
	if (ops->buf && strstr(ops->buf, key))
		return;
	if (!ops->len)
		sb_adds(ops, " ");
	sb_addf(ops, "%s ", w);
}

int archive_ident(int c)
{
	return isalnum(c) || c == '_';
}

/* the body of `def NAME(` in a Python source: the lines indented deeper
 * than the def; a fresh string, or NULL */
static char *py_body(const char *z, const char *zDef)
{
	const char *d = strstr(z, zDef);
	if (!d)
		return NULL;
	const char *ls = d;
	while (ls > z && ls[-1] != '\n')
		ls--;
	size_t indent = (size_t)(d - ls);
	const char *p = strchr(d, '\n');
	if (!p)
		return NULL;
	const char *end = ++p;
	while (*end) {
		const char *nl = strchr(end, '\n');
		size_t len = nl ? (size_t)(nl - end) : strlen(end);
		size_t k = 0;
		while (k < len && (end[k] == ' ' || end[k] == '\t'))
			k++;
		if (k < len && end[k] != '#' && k <= indent)
			break;
		end += len + (nl != NULL);
	}
	return xstrndup(p, (size_t)(end - p));
}

/* the nn module type assigned to self.NAME in __init__ (lowercased into
 * out), or 0 */
static int module_type(const char *zInit, const char *zName, size_t nName, char *out, size_t n)
{
	for (const char *p = zInit; p && (p = strstr(p, "self.")); p += 5) {
		const char *q = p + 5;
		if (strncmp(q, zName, nName) || archive_ident((unsigned char)q[nName]))
			continue;
		q += nName;
		while (*q == ' ')
			q++;
		if (*q != '=' || q[1] == '=')
			continue;
		q++;
		while (*q == ' ')
			q++;
		const char *dot = NULL, *e = q;
		while (archive_ident((unsigned char)*e) || *e == '.')
			if (*e++ == '.')
				dot = e;
		const char *b = dot ? dot : q;
		if (*e != '(' || e == b || (size_t)(e - b) >= n)
			continue;
		snprintf(out, n, "%.*s", (int)(e - b), b);
		return 1;
	}
	return 0;
}

/* the operations of forward() in a PyTorch source, appended to ops */
static void py_ops(const char *zSrc, strbuf *ops)
{
	char *fwd = py_body(zSrc, "def forward(");
	char *init = py_body(zSrc, "def __init__(");
	if (!fwd) {
		free(init);
		return;
	}
	/* comments and strings out */
	for (char *p = fwd; *p; p++) {
		if (*p == '#')
			while (*p && *p != '\n')
				*p++ = ' ';
		if (*p == '"' || *p == '\'') {
			char q = *p;
			*p++ = ' ';
			while (*p && *p != q && *p != '\n')
				*p++ = ' ';
			if (*p == q)
				*p = ' ';
		}
		if (!*p)
			break;
	}
	static const struct {
		const char *z;
		const char *op;
	} arith[] = {{" @ ", "matmul"}, {" * ", "mul"}, {" + ", "add"}, {" - ", "sub"},
	             {" / ", "div"},    {" > ", "gt"},  {" < ", "lt"},  {" ** ", "pow"}};
	for (const char *p = fwd; *p; p++) {
		if (!archive_ident((unsigned char)*p) ||
		    (p > fwd && (archive_ident((unsigned char)p[-1]) || p[-1] == '.')))
			continue;
		/* a dotted name followed by '(' */
		const char *e = p, *last = p;
		while (archive_ident((unsigned char)*e) ||
		       (*e == '.' && archive_ident((unsigned char)e[1]))) {
			if (*e == '.')
				last = e + 1;
			e++;
		}
		const char *after = e;
		while (*after == ' ')
			after++;
		if (*after == '(' && last != p) {
			size_t nFirst = strcspn(p, ".");
			char ty[64];
			if (nFirst == 4 && !strncmp(p, "self", 4)) {
				const char *nm = p + 5;
				size_t nn = strcspn(nm, ".( ");
				if (init && module_type(init, nm, nn, ty, sizeof ty))
					add_op(ops, ty, strlen(ty));
				else
					add_op(ops, last, (size_t)(e - last));
			} else {
				add_op(ops, last, (size_t)(e - last));
			}
		} else if (*after == '(' && strncmp(p, "super", 5) && strncmp(p, "return", 6)) {
			add_op(ops, p, (size_t)(e - p)); /* a plain call: relu(x), print() */
		}
		p = e - 1;
	}
	for (size_t i = 0; i < sizeof arith / sizeof *arith; i++)
		if (strstr(fwd, arith[i].z))
			add_op(ops, arith[i].op, strlen(arith[i].op));
	free(fwd);
	free(init);
}

/* module-level "name = integer" lines of a KernelBench file ("rows=4096") */
static void py_sizes(const char *zSrc, strbuf *out)
{
	for (const char *p = zSrc; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len && (isalpha((unsigned char)*p) || *p == '_')) {
			size_t k = 0;
			while (k < len && archive_ident((unsigned char)p[k]))
				k++;
			size_t v = k;
			while (v < len && p[v] == ' ')
				v++;
			if (v < len && p[v] == '=' && p[v + 1] != '=') {
				v++;
				while (v < len && p[v] == ' ')
					v++;
				size_t d = v;
				while (d < len && isdigit((unsigned char)p[d]))
					d++;
				if (d > v &&
				    (d == len || p[d] == ' ' || p[d] == '#' || p[d] == '\r'))
					sb_addf(out, "%s%.*s=%.*s", out->len ? " " : "", (int)k, p,
					        (int)(d - v), p + v);
			}
		}
		p += len + (nl != NULL);
	}
}

char *archive_signature(const char *zPy, const char *zTensors)
{
	strbuf ops = STRBUF_INIT, out = STRBUF_INIT, src = STRBUF_INIT;
	char err[KL_ERRLEN];
	if (zPy && read_file(zPy, &src, 1u << 20, err) == 0 && src.buf)
		py_ops(src.buf, &ops);
	if (ops.len > 2)
		sb_addf(&out, "ops:%.*s", (int)ops.len - 1, ops.buf);
	if (zTensors && *zTensors) {
		sb_addf(&out, "%s%s", out.len ? "; " : "", zTensors);
	} else if (src.buf) {
		strbuf sz = STRBUF_INIT;
		py_sizes(src.buf, &sz);
		if (sz.len)
			sb_addf(&out, "%ssizes: %s", out.len ? "; " : "", sz.buf);
		sb_free(&sz);
	}
	sb_free(&ops);
	sb_free(&src);
	if (!out.buf)
		return xstrdup("");
	return sb_detach(&out);
}

/* the signature of a folded session's task (loaded from its directory
 * where that still exists) */
char *archive_state_signature(const struct state *st)
{
	const char *dir = st->zTaskDir;
	if (!dir || !path_exists(dir))
		return xstrdup("");
	size_t n = strlen(dir);
	if (n > 3 && !strcmp(dir + n - 3, ".py"))
		return archive_signature(dir, NULL);
	char err[KL_ERRLEN];
	struct task *t = task_load(dir, st->zBackend ? st->zBackend : "host", st->zShapes, err);
	if (!t)
		return xstrdup("");
	strbuf tz = STRBUF_INIT;
	for (int i = 0; i < t->nIn + t->nOut; i++) {
		const struct task_tensor *x = i < t->nIn ? &t->aIn[i] : &t->aOut[i - t->nIn];
		char *shape = task_shape_str(x);
		sb_addf(&tz, "%s%s %s %s %s", i ? ", " : "", i < t->nIn ? "in" : "out", x->zName,
		        task_dtype_name(x->dtype), shape);
		free(shape);
	}
	char *sig = archive_signature(t->ref.zTorch, tz.buf ? tz.buf : "");
	sb_free(&tz);
	task_free(t);
	return sig;
}

char *archive_session_id(const struct state *st, const char *zJournal)
{
	if (st->tsStarted > 0)
		return xasprintf("%s@%.6f", st->zTask ? st->zTask : "?", st->tsStarted);
	char *real = zJournal ? realpath(zJournal, NULL) : NULL;
	char *id = xasprintf("path:%s", real ? real : zJournal ? zJournal : "?");
	free(real);
	return id;
}
