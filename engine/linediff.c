/*
 * linediff.c - Myers' shortest edit script over lines, bounded by a
 * maximum number of edits, written as unified-diff hunks.
 */
#include "linediff.h"

#include <stdlib.h>
#include <string.h>

struct line {
	const char *p;   /* start */
	size_t n;        /* length without the newline */
	unsigned long h; /* hash, to compare quickly */
};

struct op {
	char kind; /* ' ', '-', '+' */
	int a, b;  /* line indices in a and b (the one that applies) */
};

static struct line *split(const char *s, int *pn)
{
	int n = 0, cap = 16;
	struct line *v = xmalloc((size_t)cap * sizeof *v);
	while (*s) {
		const char *e = strchr(s, '\n');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if (n == cap)
			v = xrealloc(v, (size_t)(cap *= 2) * sizeof *v);
		unsigned long h = 5381;
		for (size_t i = 0; i < len; i++)
			h = h * 33 + (unsigned char)s[i];
		v[n++] = (struct line){s, len, h};
		s += len + (e ? 1 : 0);
	}
	*pn = n;
	return v;
}

static int eq(const struct line *x, const struct line *y)
{
	return x->h == y->h && x->n == y->n && !memcmp(x->p, y->p, x->n);
}

/* the edit script from a to b, or NULL when it needs more than maxD edits */
static struct op *myers(const struct line *a, int n, const struct line *b, int m, int maxD,
                        int *pnOps)
{
	int max = n + m, off = max + 1;
	int *v = xcalloc((size_t)(2 * max + 3), sizeof *v);
	int **trace = xcalloc((size_t)maxD + 2, sizeof *trace);
	int D = -1;
	for (int d = 0; d <= max && d <= maxD; d++) {
		/* keep v[-d-1 .. d+1] as it was before this round */
		trace[d] = xmalloc((size_t)(2 * d + 3) * sizeof(int));
		memcpy(trace[d], &v[off - d - 1], (size_t)(2 * d + 3) * sizeof(int));
		for (int k = -d; k <= d; k += 2) {
			int x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
			            ? v[off + k + 1]
			            : v[off + k - 1] + 1;
			int y = x - k;
			while (x < n && y < m && eq(&a[x], &b[y]))
				x++, y++;
			v[off + k] = x;
			if (x >= n && y >= m) {
				D = d;
				break;
			}
		}
		if (D >= 0)
			break;
	}
	struct op *ops = NULL;
	if (D >= 0) {
		ops = xmalloc((size_t)(n + m + 1) * sizeof *ops);
		int nOps = 0, x = n, y = m;
		for (int d = D; d >= 0; d--) {
			const int *t = trace[d];
#define TV(k) t[(k) + d + 1]
			int k = x - y;
			int pk = (k == -d || (k != d && TV(k - 1) < TV(k + 1))) ? k + 1 : k - 1;
			int px = d ? TV(pk) : 0, py = px - pk;
#undef TV
			while (x > px && y > py) {
				x--, y--;
				ops[nOps++] = (struct op){' ', x, y};
			}
			if (d > 0) {
				if (x == px)
					ops[nOps++] = (struct op){'+', px, py};
				else
					ops[nOps++] = (struct op){'-', px, py};
			}
			x = px, y = py;
		}
		/* reverse into forward order */
		for (int i = 0, j = nOps - 1; i < j; i++, j--) {
			struct op tmp = ops[i];
			ops[i] = ops[j];
			ops[j] = tmp;
		}
		*pnOps = nOps;
	}
	for (int d = 0; d <= maxD + 1 && d <= max + 1; d++)
		free(trace[d]);
	free(trace);
	free(v);
	return ops;
}

static void put_line(strbuf *sb, char kind, const struct line *l)
{
	sb_add(sb, &kind, 1);
	sb_add(sb, l->p, l->n);
	sb_adds(sb, "\n");
}

int linediff_unified(const char *a, const char *b, int context, int maxEdits, strbuf *sb)
{
	int n, m, nOps = 0;
	struct line *la = split(a, &n), *lb = split(b, &m);
	struct op *ops = myers(la, n, lb, m, maxEdits, &nOps);
	int changed = 0;
	if (!ops) {
		sb_addf(sb, "(more than %d lines differ: %d lines before, %d after)\n", maxEdits, n,
		        m);
		free(la);
		free(lb);
		return maxEdits + 1;
	}
	for (int i = 0; i < nOps; i++)
		changed += ops[i].kind != ' ';
	/* hunks: runs of changes with up to 2*context equal lines between them */
	int i = 0;
	while (i < nOps) {
		while (i < nOps && ops[i].kind == ' ')
			i++;
		if (i >= nOps)
			break;
		int s = i - context < 0 ? 0 : i - context, e = i;
		for (;;) {
			while (e < nOps && ops[e].kind != ' ')
				e++;
			int eq = e;
			while (eq < nOps && ops[eq].kind == ' ')
				eq++;
			if (eq < nOps && eq - e <= 2 * context)
				e = eq;
			else
				break;
		}
		e = e + context > nOps ? nOps : e + context;
		/* the hunk's line numbers */
		int a0 = -1, b0 = -1, na = 0, nb = 0;
		for (int k = s; k < e; k++) {
			const struct op *o = &ops[k];
			int ai = o->kind == '+' ? -1 : o->a, bi = o->kind == '-' ? -1 : o->b;
			if (ai >= 0 && a0 < 0)
				a0 = ai;
			if (bi >= 0 && b0 < 0)
				b0 = bi;
			na += ai >= 0;
			nb += bi >= 0;
		}
		if (a0 < 0)
			a0 = ops[s].a;
		if (b0 < 0)
			b0 = ops[s].b;
		sb_addf(sb, "@@ -%d,%d +%d,%d @@\n", na ? a0 + 1 : a0, na, nb ? b0 + 1 : b0, nb);
		for (int k = s; k < e; k++) {
			const struct op *o = &ops[k];
			put_line(sb, o->kind, o->kind == '+' ? &lb[o->b] : &la[o->a]);
		}
		i = e;
	}
	free(ops);
	free(la);
	free(lb);
	return changed;
}
