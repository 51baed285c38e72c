/*
 * diagfold.c - splits a compiler's log into diagnostics (a head line and the
 * lines that belong to it) and other lines, counts the diagnostics by what
 * they say, and writes each repeated one once; cuts a log for a prompt.
 */
#include "diagfold.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* room for diag_cap's line saying what it cut */
#define CUT_NOTE_MAX 200

enum kind { K_NONE, K_WARNING, K_ERROR, K_NOTE, K_PRE };

struct line {
	const char *p;
	size_t n;       /* its length, without the newline */
	enum kind kind; /* what its head says (K_NONE: no head) */
	size_t locLen;  /* a head: the length of its place ("f.c:3:7", "f.cu(12)") */
};

/* a diagnostic: lines [first, last], its head at head */
struct diag {
	int first, head, last;
	int group; /* its group (diagnostics that fold together) */
};

struct group {
	char *zKey;
	int count;
	int first; /* the diagnostic that is its first */
};

static const struct {
	const char *z;
	enum kind k;
} kWords[] = {{"warning", K_WARNING},   {"remark", K_WARNING},           {"error", K_ERROR},
              {"fatal error", K_ERROR}, {"catastrophic error", K_ERROR}, {"note", K_NOTE}};

static int starts(const char *p, size_t n, const char *z)
{
	size_t k = strlen(z);
	return n >= k && !memcmp(p, z, k);
}

/* what line l is: a diagnostic's head (its kind and place), the context
 * before one (K_PRE), or neither */
static void classify(struct line *l)
{
	const char *p = l->p;
	size_t n = l->n;
	l->kind = K_NONE;
	if (!n || p[0] == ' ' || p[0] == '\t')
		return;
	if (starts(p, n, "In file included from "))
		l->kind = K_PRE;
	/* the place: up to the first ": ", one word */
	size_t i = 0;
	while (i + 1 < n && !(p[i] == ':' && p[i + 1] == ' ') && p[i] != ' ' && p[i] != '\t')
		i++;
	if (l->kind || !i || i + 1 >= n || p[i] != ':')
		return;
	const char *t = p + i + 2;
	size_t m = n - i - 2;
	for (size_t w = 0; w < sizeof kWords / sizeof *kWords; w++) {
		size_t k = strlen(kWords[w].z);
		if (m > k && !memcmp(t, kWords[w].z, k) &&
		    (t[k] == ':' || (t[k] == ' ' && k + 1 < m && t[k + 1] == '#'))) {
			l->kind = kWords[w].k;
			l->locLen = i;
			return;
		}
	}
	/* gcc's context: "f.c: In function 'f':", "f.c: At global scope:",
	 * "f.cpp:8:4:   required from here" */
	if (((starts(t, m, "In ") || starts(t, m, "At ")) && p[n - 1] == ':') || starts(t, m, "  "))
		l->kind = K_PRE;
}

/* a caret line: blanks, '^', '~' and gcc's gutter '|', with a '^' or '~' */
static int caret(const struct line *l)
{
	int mark = 0;
	for (size_t i = 0; i < l->n; i++) {
		char c = l->p[i];
		if (c == '^' || c == '~')
			mark = 1;
		else if (c != ' ' && c != '\t' && c != '|')
			return 0;
	}
	return mark;
}

/* the lines of zLog (*pn of them) */
static struct line *split(const char *zLog, int *pn)
{
	size_t nAlloc = 0;
	struct line *a = NULL;
	int n = 0;
	for (const char *p = zLog; *p;) {
		size_t k = strcspn(p, "\n");
		xgrow((void **)&a, &nAlloc, (size_t)n + 1, sizeof *a);
		a[n].p = p;
		a[n].n = k;
		classify(&a[n]);
		n++;
		p += k + (p[k] == '\n');
	}
	*pn = n;
	return a;
}

static uint64_t hash(const char *z, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)z[i]) * 1099511628211ull;
	return h;
}

/* the groups by key: an open-addressed table of indices into ag */
struct table {
	int *slot; /* -1: empty */
	size_t nSlot;
	struct group *ag;
	size_t nGroup, nAlloc;
};

static int group_of(struct table *t, char *zKey, int iDiag)
{
	if ((t->nGroup + 1) * 2 > t->nSlot) {
		size_t ns = t->nSlot ? t->nSlot * 2 : 64;
		int *s = xmalloc(ns * sizeof *s);
		for (size_t i = 0; i < ns; i++)
			s[i] = -1;
		for (size_t g = 0; g < t->nGroup; g++) {
			size_t h = hash(t->ag[g].zKey, strlen(t->ag[g].zKey)) & (ns - 1);
			while (s[h] >= 0)
				h = (h + 1) & (ns - 1);
			s[h] = (int)g;
		}
		free(t->slot);
		t->slot = s;
		t->nSlot = ns;
	}
	size_t h = hash(zKey, strlen(zKey)) & (t->nSlot - 1);
	while (t->slot[h] >= 0) {
		struct group *g = &t->ag[t->slot[h]];
		if (!strcmp(g->zKey, zKey)) {
			free(zKey);
			g->count++;
			return t->slot[h];
		}
		h = (h + 1) & (t->nSlot - 1);
	}
	xgrow((void **)&t->ag, &t->nAlloc, t->nGroup + 1, sizeof *t->ag);
	t->ag[t->nGroup] = (struct group){zKey, 1, iDiag};
	t->slot[h] = (int)t->nGroup;
	return (int)t->nGroup++;
}

/* what a diagnostic folds by: a warning's kind and text, without its place;
 * an error's lines, all of them (its blank lines at the end aside) */
static char *key_of(const struct line *a, const struct diag *d)
{
	const struct line *h = &a[d->head];
	if (h->kind == K_WARNING)
		return xasprintf("w%.*s", (int)(h->n - h->locLen), h->p + h->locLen);
	int last = d->last;
	while (last > d->head && !a[last].n)
		last--;
	strbuf sb = STRBUF_INIT;
	sb_adds(&sb, "e");
	for (int i = d->first; i <= last; i++)
		sb_addf(&sb, "%.*s\n", (int)a[i].n, a[i].p);
	return sb_detach(&sb);
}

/* the diagnostics of a (nLine lines), in order: *pn of them */
static struct diag *diagnostics(const struct line *a, int nLine, int *pn)
{
	size_t nAlloc = 0;
	struct diag *ad = NULL;
	int n = 0, pre = -1, open = 0, lastHead = -1;
	for (int i = 0; i < nLine; i++) {
		const struct line *l = &a[i];
		if (l->kind == K_WARNING || l->kind == K_ERROR) {
			xgrow((void **)&ad, &nAlloc, (size_t)n + 1, sizeof *ad);
			ad[n++] = (struct diag){pre >= 0 ? pre : i, i, i, -1};
			pre = -1;
			open = 1;
			lastHead = i;
			continue;
		}
		if (l->kind == K_PRE) {
			if (pre < 0)
				pre = i;
			open = 0;
			continue;
		}
		if (pre >= 0 && l->n && (l->p[0] == ' ' || l->p[0] == '\t'))
			continue; /* "                 from f.h:3," */
		pre = -1;
		/* a note, an indented line, a blank one, clang's source line
		 * above its caret: the open diagnostic's */
		int cont = l->kind == K_NOTE || !l->n || l->p[0] == ' ' || l->p[0] == '\t' ||
		           (i == lastHead + 1 && i + 1 < nLine && caret(&a[i + 1]));
		if (open && cont) {
			ad[n - 1].last = i;
			if (l->kind == K_NOTE)
				lastHead = i;
		} else {
			open = 0;
		}
	}
	*pn = n;
	return ad;
}

static void add_lines(strbuf *sb, const struct line *a, int from, int to)
{
	for (int i = from; i <= to; i++)
		sb_addf(sb, "%.*s\n", (int)a[i].n, a[i].p);
}

/* lines between diagnostics: nvcc's "Remark: The warnings can be
 * suppressed with ..." once (it may follow each pass's first warning), a
 * blank line after one dropped with it; *pRemark is the first kept */
static void add_plain(strbuf *sb, const struct line *a, int from, int to,
                      const struct line **pRemark)
{
	for (int i = from; i <= to; i++) {
		const struct line *l = &a[i];
		if (starts(l->p, l->n, "Remark: ")) {
			if (*pRemark && (*pRemark)->n == l->n &&
			    !memcmp((*pRemark)->p, l->p, l->n)) {
				i += i < to && !a[i + 1].n;
				continue;
			}
			if (!*pRemark)
				*pRemark = l;
		}
		sb_addf(sb, "%.*s\n", (int)l->n, l->p);
	}
}

char *diag_fold(const char *zLog)
{
	if (!zLog)
		return xstrdup("");
	int nLine, nDiag;
	struct line *a = split(zLog, &nLine);
	struct diag *ad = diagnostics(a, nLine, &nDiag);
	struct table t = {0};
	for (int i = 0; i < nDiag; i++)
		ad[i].group = group_of(&t, key_of(a, &ad[i]), i);
	strbuf sb = STRBUF_INIT;
	sb_adds(&sb, "");
	int iLine = 0;
	const struct line *remark = NULL;
	for (int i = 0; i < nDiag; i++) {
		const struct diag *d = &ad[i];
		const struct group *g = &t.ag[d->group];
		add_plain(&sb, a, iLine, d->first - 1, &remark);
		iLine = d->last + 1;
		if (g->first != i)
			continue; /* folded into its first */
		const struct line *h = &a[d->head];
		if (g->count == 1) {
			add_lines(&sb, a, d->first, d->last);
		} else if (h->kind == K_WARNING) {
			sb_addf(&sb, "%.*s (%d times; first at %.*s)\n",
			        (int)(h->n - h->locLen - 2), h->p + h->locLen + 2, g->count,
			        (int)h->locLen, h->p);
			if (d->last > d->head && !a[d->last].n)
				sb_adds(&sb, "\n"); /* nvcc's blank line after each */
		} else {
			add_lines(&sb, a, d->first, d->head - 1);
			sb_addf(&sb, "%.*s (%d times)\n", (int)h->n, h->p, g->count);
			add_lines(&sb, a, d->head + 1, d->last);
		}
	}
	add_plain(&sb, a, iLine, nLine - 1, &remark);
	/* the log's own ending: no newline added where it had none */
	size_t n = strlen(zLog);
	if (sb.len && n && zLog[n - 1] != '\n')
		sb.buf[--sb.len] = 0;
	for (size_t i = 0; i < t.nGroup; i++)
		free(t.ag[i].zKey);
	free(t.ag);
	free(t.slot);
	free(ad);
	free(a);
	return sb_detach(&sb);
}

/* n bytes of p cut back to a whole UTF-8 character */
static size_t utf8_cut(const char *p, size_t n)
{
	while (n && ((unsigned char)p[n] & 0xC0) == 0x80)
		n--;
	return n;
}

char *diag_cap(const char *zLog, size_t nMax)
{
	size_t n = zLog ? strlen(zLog) : 0;
	if (n <= nMax)
		return xstrdup(zLog ? zLog : "");
	/* three quarters for the head, the rest for the errors past it */
	size_t keep = 0, budget = nMax / 4 * 3;
	while (keep < n) {
		size_t k = strcspn(zLog + keep, "\n");
		size_t next = keep + k + (zLog[keep + k] == '\n');
		if (next > budget)
			break;
		keep = next;
	}
	if (!keep) /* one long first line: cut inside it */
		keep = utf8_cut(zLog, budget);
	int nLine, nErr = 0, nShown = 0;
	struct line *a = split(zLog + keep, &nLine);
	strbuf errs = STRBUF_INIT;
	for (int i = 0; i < nLine; i++) {
		if (a[i].kind != K_ERROR)
			continue;
		nErr++;
		if (errs.len + a[i].n + 1 + CUT_NOTE_MAX <= nMax - budget) {
			sb_addf(&errs, "%.*s\n", (int)a[i].n, a[i].p);
			nShown++;
		}
	}
	strbuf sb = STRBUF_INIT;
	sb_add(&sb, zLog, keep);
	if (keep && zLog[keep - 1] != '\n')
		sb_adds(&sb, "\n");
	sb_addf(&sb, "[kloop: %zu more bytes (%d lines) of the compiler's output cut here",
	        n - keep, nLine);
	if (!nErr)
		sb_adds(&sb, "; no errors among them]\n");
	else if (nShown == nErr)
		sb_addf(&sb, "; the %d error line%s among them:]\n%s", nErr, nErr == 1 ? "" : "s",
		        errs.buf);
	else
		sb_addf(&sb, "; the first %d of the %d error lines among them:]\n%s", nShown, nErr,
		        errs.buf ? errs.buf : "");
	sb_free(&errs);
	free(a);
	return sb_detach(&sb);
}
