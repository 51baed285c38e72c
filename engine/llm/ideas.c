/*
 * ideas.c - reading the ideas out of an LLM reply: JSON where the model
 * followed the prompt, a numbered Markdown list where it did not; each idea
 * gets a title, a description and a category from kloop's fixed set.
 */
#include "ideas.h"

#include <cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fence.h"
#include "suggest.h"
#include "util.h"

const char *const ideas_categories[] = {
    "memory access",
    "asynchrony and latency hiding",
    "precision",
    "compute and instructions",
    "parallelism and occupancy",
    "fusion",
    "algorithm",
    NULL,
};

/* words that name a category (matched against a category the model gave) */
static const char *const names[][6] = {
    {"memory", "coalesc", "bandwidth", NULL},
    {"async", "latency", "pipelin", "overlap", NULL},
    {"precision", "fp16", "bf16", "half", "quantiz", NULL},
    {"compute", "instruction", "arithmetic", "math", NULL},
    {"parallel", "occupancy", "launch", "thread", NULL},
    {"fusion", "fuse", "fusing", NULL},
    {"algorithm", "algorithmic", NULL},
};

/* words that suggest a category in an idea's text, in the order tried */
static const struct {
	int cat;
	const char *words[14];
} guesses[] = {
    {5,
     {"fuse", "fusion", "fusing", "single pass", "one pass", "single kernel", "one kernel", NULL}},
    {1,
     {"async", "prefetch", "double buffer", "double-buffer", "pipelin", "overlap", "latency",
      "cp.async", NULL}},
    {2,
     {"fp16", "bf16", "half precision", "tf32", "fp8", "int8", "quantiz", "mixed precision",
      "lower precision", NULL}},
    {0,
     {"coalesc", "vectoriz", "float4", "shared memory", "bank conflict", "cache", "memory", "load",
      "bandwidth", "l2", NULL}},
    {4,
     {"occupancy", "block size", "threads per", "grid", "parallel", "openmp", "work per",
      "multithread", "split", NULL}},
    {3,
     {"instruction", "intrinsic", "fast math", "fast-math", "__expf", "exp2", "fma", "shuffle",
      "unroll", "tensor core", "mma", "simd", "branch", NULL}},
    {6, {"algorithm", "online", "tiling", "tile", "reformulat", "recurrence", "log-sum-exp", NULL}},
};

static char *lower(const char *z)
{
	char *s = xstrdup(z);
	for (char *p = s; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return s;
}

const char *ideas_category_named(const char *zName)
{
	if (!zName)
		return NULL;
	while (*zName == ' ')
		zName++;
	char *s = lower(zName);
	size_t n = strlen(s);
	while (n && s[n - 1] == ' ')
		s[--n] = 0;
	for (char *p = s; *p; p++)
		if (*p == '_' || *p == '-')
			*p = ' ';
	const char *found = NULL;
	int nFound = 0;
	for (int i = 0; n && i <= (int)(sizeof ideas_categories / sizeof *ideas_categories) - 1;
	     i++) {
		const char *c = ideas_categories[i] ? ideas_categories[i] : "other";
		if (!strcmp(s, c)) {
			found = c, nFound = 1;
			break;
		}
		if (!strncmp(s, c, n))
			found = c, nFound++;
	}
	free(s);
	return nFound == 1 ? found : NULL;
}

const char *ideas_category_list(void)
{
	return "memory access, asynchrony and latency hiding, precision, compute and "
	       "instructions, parallelism and occupancy, fusion, algorithm, other";
}

const char *ideas_category_nearest(const char *zName)
{
	if (!zName || ideas_category_named(zName))
		return NULL;
	/* each category's name and each of its words, with the category it is of */
	enum { N_CAT = sizeof ideas_categories / sizeof *ideas_categories };
	char *az[N_CAT * 8];
	const char *aCat[N_CAT * 8];
	size_t n = 0;
	for (size_t i = 0; i < N_CAT; i++) {
		const char *c = ideas_categories[i] ? ideas_categories[i] : "other";
		az[n] = xstrdup(c), aCat[n++] = c;
		for (const char *p = c; *p && n < N_CAT * 8;) {
			size_t w = strcspn(p, " ");
			if (w > 3 && w < strlen(c))
				az[n] = xstrndup(p, w), aCat[n++] = c;
			p += w + (p[w] == ' ');
		}
	}
	const char *near = suggest_nearest(zName, (const char *const *)az, n);
	const char *zCat = NULL;
	for (size_t i = 0; i < n; i++) {
		if (az[i] == near)
			zCat = aCat[i];
		free(az[i]);
	}
	return zCat;
}

const char *ideas_category(const char *zName, const char *zText)
{
	if (zName && *zName) {
		char *s = lower(zName);
		for (char *p = s; *p; p++)
			if (*p == '_' || *p == '-')
				*p = ' ';
		for (int i = 0; ideas_categories[i]; i++)
			if (!strcmp(s, ideas_categories[i])) {
				free(s);
				return ideas_categories[i];
			}
		for (size_t i = 0; i < sizeof names / sizeof *names; i++)
			for (int k = 0; names[i][k]; k++)
				if (strstr(s, names[i][k])) {
					free(s);
					return ideas_categories[i];
				}
		free(s);
	}
	if (zText && *zText) {
		char *s = lower(zText);
		for (size_t i = 0; i < sizeof guesses / sizeof *guesses; i++)
			for (int k = 0; guesses[i].words[k]; k++)
				if (strstr(s, guesses[i].words[k])) {
					free(s);
					return ideas_categories[guesses[i].cat];
				}
		free(s);
	}
	return "other";
}

/* a copy of z[0..n) without surrounding white space */
static char *trimmed(const char *z, size_t n)
{
	while (n && isspace((unsigned char)*z))
		z++, n--;
	while (n && isspace((unsigned char)z[n - 1]))
		n--;
	return xstrndup(z, n);
}

/* drop Markdown bold markers (**) from s, in place (not __: CUDA names hold it) */
static void unemphasize(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '*' && r[1] == '*') {
			r++;
			continue;
		}
		*w++ = *r;
	}
	*w = 0;
}

static char *title_from(const char *z);

void ideas_add(struct idea_list *l, const char *zTitle, const char *zDescription,
               const char *zCategory)
{
	if (l->n >= IDEAS_MAX)
		return;
	char *t0 = trimmed(zTitle, strlen(zTitle));
	unemphasize(t0);
	char *title = trimmed(t0, strlen(t0)); /* "** **" leaves a blank */
	free(t0);
	char *desc =
	    trimmed(zDescription ? zDescription : "", zDescription ? strlen(zDescription) : 0);
	if (!*title) { /* a title of blanks or emphasis only: the description's first words */
		free(title);
		title = title_from(desc);
		unemphasize(title);
	}
	if (!*title) { /* nothing to show: not an idea */
		free(title);
		free(desc);
		return;
	}
	/* a title is one line */
	for (char *p = title; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	xgrow((void **)&l->a, &l->nAlloc, (size_t)l->n + 1, sizeof *l->a);
	struct idea *d = &l->a[l->n++];
	d->zTitle = title;
	d->zDescription = desc;
	char *text = xasprintf("%s %s", d->zTitle, d->zDescription);
	d->zCategory = ideas_category(zCategory, text);
	free(text);
}

void ideas_free(struct idea_list *l)
{
	for (int i = 0; i < l->n; i++) {
		free(l->a[i].zTitle);
		free(l->a[i].zDescription);
	}
	free(l->a);
	memset(l, 0, sizeof *l);
}

/* ---- JSON ---- */

static const char *field(const cJSON *o, const char *const *keys)
{
	for (; *keys; keys++) {
		const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(o, *keys));
		if (v && *v)
			return v;
	}
	return NULL;
}

/* a title from the first sentence of a description (fresh string) */
static char *title_from(const char *z)
{
	size_t n = strcspn(z, ".\n:");
	if (n > 80)
		n = 80;
	return trimmed(z, n);
}

static int from_json(const cJSON *j, struct idea_list *out)
{
	static const char *const kTitle[] = {"title", "name", "idea", "summary", NULL};
	static const char *const kDesc[] = {"description", "details", "detail", "rationale",
	                                    "explanation", "how",     NULL};
	static const char *const kCat[] = {"category", "type", "kind", NULL};
	const cJSON *arr = j;
	if (cJSON_IsObject(j)) {
		arr = cJSON_GetObjectItem(j, "ideas");
		if (!cJSON_IsArray(arr) && field(j, kTitle)) {
			ideas_add(out, field(j, kTitle), field(j, kDesc), field(j, kCat));
			return out->n;
		}
	}
	if (!cJSON_IsArray(arr))
		return 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
	{
		if (cJSON_IsString(it) && *it->valuestring) {
			char *t = title_from(it->valuestring);
			ideas_add(out, *t ? t : it->valuestring, it->valuestring, NULL);
			free(t);
		} else if (cJSON_IsObject(it)) {
			const char *t = field(it, kTitle), *d = field(it, kDesc);
			if (!t && !d)
				continue;
			char *tt = t ? NULL : title_from(d);
			ideas_add(out, t ? t : tt, d, field(it, kCat));
			free(tt);
		}
	}
	return out->n;
}

/* try z[0..n) as JSON, then each '{' or '[' in it as the start of a value */
static int try_json(const char *z, size_t n, struct idea_list *out)
{
	int tries = 0;
	for (size_t i = 0; i < n && tries < 64; i++) {
		if (z[i] != '{' && z[i] != '[')
			continue;
		tries++;
		/* the value may be followed by prose: parse up to its end */
		const char *end = NULL;
		cJSON *j = cJSON_ParseWithLengthOpts(z + i, n - i, &end, 0);
		if (j) {
			int k = from_json(j, out);
			cJSON_Delete(j);
			if (k > 0)
				return k;
		}
	}
	return 0;
}

/* ---- numbered lists ---- */

/* if line l (n bytes) opens a numbered item ("1. ", "2) ", "### 3. ", "**4.** "),
 * the offset of its text, else 0 */
static size_t item_start(const char *l, size_t n)
{
	size_t i = 0;
	while (i < n && (l[i] == ' ' || l[i] == '\t'))
		i++;
	while (i < n && l[i] == '#')
		i++;
	while (i < n && l[i] == ' ')
		i++;
	size_t b = i;
	if (i + 1 < n && l[i] == '*' && l[i + 1] == '*')
		i += 2;
	size_t d = i;
	while (i < n && isdigit((unsigned char)l[i]))
		i++;
	if (i == d || i - d > 3 || i >= n || (l[i] != '.' && l[i] != ')'))
		return 0;
	i++;
	if (i + 1 < n && l[i] == '*' && l[i + 1] == '*' && b != d)
		i += 2;
	if (i >= n || (l[i] != ' ' && l[i] != '\t'))
		return 0;
	while (i < n && (l[i] == ' ' || l[i] == '\t'))
		i++;
	return i < n ? i : 0;
}

/* take "Category: X" out of s (in place); returns X (fresh) or NULL */
static char *take_category(char *s)
{
	char *low = lower(s);
	char *c = strstr(low, "category");
	char *res = NULL;
	if (c) {
		size_t at = (size_t)(c - low), k = at + 8;
		while (s[k] == '*' || s[k] == '_' || s[k] == ' ')
			k++;
		if (s[k] == ':') {
			k++;
			while (s[k] == '*' || s[k] == '_' || s[k] == ' ')
				k++;
			size_t e = k + strcspn(s + k, "\n;.)]");
			res = trimmed(s + k, e - k);
			unemphasize(res);
			/* cut the "Category: X" out, with the markers and brackets around it */
			size_t a = at;
			while (a > 0 && strchr("*_([ -", s[a - 1]))
				a--;
			while (s[e] && strchr(".;)]*_", s[e]))
				e++;
			memmove(s + a, s + e, strlen(s + e) + 1);
		}
	}
	free(low);
	return res;
}

/* take a leading or trailing [tag] or (tag) naming a category out of s */
static char *take_tag(char *s)
{
	size_t n = strlen(s);
	const char *open = NULL, *close = NULL;
	if (s[0] == '[' || s[0] == '(') {
		open = s;
		close = strchr(s, s[0] == '[' ? ']' : ')');
	} else if (n && (s[n - 1] == ']' || s[n - 1] == ')')) {
		close = s + n - 1;
		open = strrchr(s, *close == ']' ? '[' : '(');
	}
	if (!open || !close || close < open)
		return NULL;
	char *tag = xstrndup(open + 1, (size_t)(close - open - 1));
	unemphasize(tag);
	if (!strcmp(ideas_category(tag, NULL), "other")) {
		free(tag);
		return NULL;
	}
	memmove((char *)open, close + 1, strlen(close + 1) + 1);
	return tag;
}

/* split an item's first line into title and the start of its description */
static void split_title(char *s, char **pTitle, char **pRest)
{
	char *t = s, *rest = NULL;
	if (!strncmp(s, "**", 2) && strstr(s + 2, "**")) {
		char *e = strstr(s + 2, "**");
		*e = 0;
		t = s + 2;
		rest = e + 2;
	} else {
		static const char *const seps[] = {": ", " - ", " — ", " – ", NULL};
		char *best = NULL;
		size_t len = 0;
		for (int i = 0; seps[i]; i++) {
			char *p = strstr(s, seps[i]);
			if (p && (!best || p < best) && p - s <= 100)
				best = p, len = strlen(seps[i]);
		}
		if (best) {
			*best = 0;
			rest = best + len;
		}
	}
	*pTitle = trimmed(t, strlen(t));
	size_t k = strlen(*pTitle);
	if (k && ((*pTitle)[k - 1] == ':' || (*pTitle)[k - 1] == '.'))
		(*pTitle)[k - 1] = 0;
	if (rest) {
		while (*rest == ':' || *rest == ' ' || *rest == '-')
			rest++;
	}
	*pRest = xstrdup(rest ? rest : "");
}

static void add_item(struct idea_list *out, const char *z, size_t n)
{
	char *s = xstrndup(z, n);
	char *cat = take_category(s);
	size_t first = strcspn(s, "\n");
	char *head = xstrndup(s, first);
	char *tag = cat ? NULL : take_tag(head);
	char *title, *rest;
	split_title(head, &title, &rest);
	if (!tag && !cat)
		tag = take_tag(title);
	strbuf d = STRBUF_INIT;
	sb_adds(&d, rest);
	/* continuation lines, without list markers */
	for (char *p = s + first; *p;) {
		p += *p == '\n';
		size_t k = strcspn(p, "\n");
		char *ln = trimmed(p, k);
		char *q = ln;
		if ((q[0] == '-' || q[0] == '*' || q[0] == '+') && q[1] == ' ')
			q += 2;
		if (*q) {
			if (d.len)
				sb_adds(&d, "\n");
			sb_adds(&d, q);
		}
		free(ln);
		p += k;
	}
	if (*title) {
		char *dd = d.len ? trimmed(d.buf, d.len) : xstrdup("");
		unemphasize(dd);
		ideas_add(out, title, dd, cat ? cat : tag);
		free(dd);
	} else if (d.len) {
		char *tt = title_from(d.buf);
		ideas_add(out, tt, d.buf, cat ? cat : tag);
		free(tt);
	}
	sb_free(&d);
	free(title);
	free(rest);
	free(head);
	free(tag);
	free(cat);
	free(s);
}

static int from_list(const char *z, size_t n, struct idea_list *out)
{
	strbuf item = STRBUF_INIT;
	int inItem = 0, blank = 0;
	for (size_t i = 0; i < n;) {
		size_t e = i;
		while (e < n && z[e] != '\n')
			e++;
		const char *l = z + i;
		size_t ln = e - i;
		if (ln && l[ln - 1] == '\r')
			ln--;
		size_t at = item_start(l, ln);
		int isBlank = 1;
		for (size_t k = 0; k < ln; k++)
			isBlank &= isspace((unsigned char)l[k]) != 0;
		if (at) {
			if (inItem)
				add_item(out, item.buf, item.len);
			sb_reset(&item);
			sb_add(&item, l + at, ln - at);
			inItem = 1;
			blank = 0;
		} else if (isBlank) {
			blank = 1;
		} else if (inItem) {
			/* after a blank line only indented text still belongs to the item */
			if (blank && l[0] != ' ' && l[0] != '\t') {
				add_item(out, item.buf, item.len);
				sb_reset(&item);
				inItem = 0;
			} else {
				sb_adds(&item, "\n");
				sb_add(&item, l, ln);
			}
			blank = 0;
		}
		i = e < n ? e + 1 : n;
	}
	if (inItem)
		add_item(out, item.buf, item.len);
	sb_free(&item);
	return out->n;
}

int ideas_parse(const char *z, size_t n, struct idea_list *out, char *err)
{
	memset(out, 0, sizeof *out);
	struct fence_block *b = NULL;
	size_t nb = fence_blocks(z, n, &b);
	int k = 0;
	for (size_t i = 0; i < nb && !k; i++)
		k = try_json(z + b[i].start, b[i].end - b[i].start, out);
	free(b);
	if (!k)
		k = try_json(z, n, out);
	if (!k)
		k = from_list(z, n, out);
	if (k > 0)
		return k;
	ideas_free(out);
	size_t show = n < 120 ? n : 120;
	char *start = trimmed(z, show);
	for (char *p = start; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	kl_err(err,
	       "no ideas in the reply: expected JSON {\"ideas\": [...]} or a numbered list, "
	       "got %zu bytes%s%s%s",
	       n, *start ? " starting \"" : "", start, *start ? (n > show ? "...\"" : "\"") : "");
	free(start);
	return -1;
}
