/*
 * config.c - the configuration table's rows (config.h), its defaults, and
 * reading the config file into struct config, with errors that name the
 * file, the line and the key.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suggest.h"
#include "util.h"

char *config_path(void)
{
	const char *x = getenv("XDG_CONFIG_HOME");
	if (x && *x)
		return xasprintf("%s/kloop/config", x);
	const char *h = getenv("HOME");
	return xasprintf("%s/.config/kloop/config", h && *h ? h : ".");
}

/* ---- the hooks of the table's rows ---- */

/* backend = auto is none said: NULL (a GPU where there is one) */
static int backend_hook(struct config *c, const char *v, char *err)
{
	(void)err;
	if (strcmp(v, "auto"))
		return 0;
	free(c->zBackend);
	c->zBackend = NULL;
	return 1;
}

/* atol or rtol: the other one stays the task's */
static int tol_hook(struct config *c, const char *v, char *err)
{
	(void)v, (void)err;
	if (!c->bTol)
		c->atol = c->rtol = -1;
	c->bTol = 1;
	return 0;
}

/* spares said (0 is none, not the worker's default) */
static int spares_hook(struct config *c, const char *v, char *err)
{
	(void)v, (void)err;
	c->bSpares = 1;
	return 0;
}

/* the member of kind K: its C type */
#define CT_CK_STR char *
#define CT_CK_WORD char *
#define CT_CK_ENUM int
#define CT_CK_INT int
#define CT_CK_NUM double
/* the default's field: text, or a number */
#define DEF_CK_STR(d) .zDef = d
#define DEF_CK_WORD(d) .zDef = d
#define DEF_CK_ENUM(d) .zDef = d
#define DEF_CK_INT(d) .def = d
#define DEF_CK_NUM(d) .def = d
const struct config_key config_keys[CFG_COUNT] = {
#define CFG_ROW(key, kind_, member, lo_, hi_, def_, words, hook_, flag, flagOff, what, cmds_,      \
                group, help)                                                                       \
	{.zKey = #key,                                                                             \
	 .kind = kind_,                                                                            \
	 .off = KL_MEMBER(struct config, member, CT_##kind_),                                      \
	 .lo = lo_,                                                                                \
	 .hi = hi_,                                                                                \
	 DEF_##kind_(def_),                                                                        \
	 .zWords = words,                                                                          \
	 .hook = hook_,                                                                            \
	 .zFlag = flag,                                                                            \
	 .zFlagOff = flagOff,                                                                      \
	 .zWhat = what,                                                                            \
	 .cmds = cmds_,                                                                            \
	 .zGroup = group,                                                                          \
	 .zHelp = help},
    CONFIG_KEYS(CFG_ROW)
#undef CFG_ROW
};

int config_key_find(const char *zKey)
{
	for (int i = 0; i < CFG_COUNT; i++)
		if (!strcmp(config_keys[i].zKey, zKey))
			return i;
	return -1;
}

/*
 * A number from text: finite, within [lo, hi], an integer when bInt.  NaN,
 * inf, "1e999", "3e9" for an int and trailing junk are refused with the key,
 * the value and the range in err.
 */
static int parse_num(const char *zKey, const char *v, double lo, double hi, int bInt, double *p,
                     char *err)
{
	errno = 0;
	double d = 0;
	const char *zWhat = bInt ? "an integer" : "a number";
	char *end;
	double any = strtod(v, &end);
	if (num_parse(v, &d) < 0 && (end == v || *end || isfinite(any)))
		return kl_err(err, "%s: '%s' is not %s (expected %s from %g to %g)", zKey, v, zWhat,
		              zWhat, lo, hi);
	if (!isfinite(any) || !isfinite(d) || errno == ERANGE)
		return kl_err(err, "%s: '%s' is not a finite number (expected %s from %g to %g)",
		              zKey, v, zWhat, lo, hi);
	if (d < lo || d > hi)
		return kl_err(err, "%s: %s is out of range (expected %s from %g to %g)", zKey, v,
		              zWhat, lo, hi);
	if (bInt && d != floor(d))
		return kl_err(err, "%s: %s is not an integer (expected %s from %g to %g)", zKey, v,
		              zWhat, lo, hi);
	*p = d;
	return 0;
}

/* store text v (NULL: none) into row t's member */
static void put_text(struct config *c, const struct config_key *t, const char *v)
{
	char **p = (char **)((char *)c + t->off);
	free(*p);
	*p = v ? xstrdup(v) : NULL;
}

/* set row t from text v: checked by its kind, then its hook, then stored */
static int key_set(struct config *c, const struct config_key *t, const char *v, char *err)
{
	char *at = (char *)c + t->off;
	double d = 0;
	int word = -1;
	if (t->kind == CK_WORD || t->kind == CK_ENUM) {
		if ((word = words_find(t->zWords, v)) < 0) {
			char words[200];
			words_say(t->zWords, words, sizeof words);
			return kl_err(err, "%s: expected %s, got '%s'", t->zKey, words, v);
		}
	} else if (t->kind != CK_STR &&
	           parse_num(t->zKey, v, t->lo, t->hi, t->kind == CK_INT, &d, err) < 0) {
		return -1;
	}
	int rc = t->hook ? t->hook(c, v, err) : 0;
	if (rc)
		return rc < 0 ? -1 : 0;
	switch (t->kind) {
	case CK_STR:
	case CK_WORD:
		put_text(c, t, v);
		break;
	case CK_ENUM:
		*(int *)at = word;
		break;
	case CK_INT:
		*(int *)at = (int)d;
		break;
	case CK_NUM:
		*(double *)at = d;
		break;
	}
	return 0;
}

int config_set(struct config *c, const char *k, const char *v, char *err)
{
	int id = config_key_find(k);
	if (id >= 0)
		return key_set(c, &config_keys[id], v, err);
	const char *az[CFG_COUNT];
	strbuf sb = STRBUF_INIT;
	for (int i = 0; i < CFG_COUNT; i++)
		sb_addf(&sb, "%s%s", i ? ", " : "", az[i] = config_keys[i].zKey);
	const char *near = suggest_nearest(k, az, CFG_COUNT);
	if (near)
		kl_err(err, "unknown key '%s': did you mean '%s'? (known: %s)", k, near, sb.buf);
	else
		kl_err(err, "unknown key '%s' (known: %s)", k, sb.buf);
	sb_free(&sb);
	return -1;
}

void config_defaults(struct config *c)
{
	memset(c, 0, sizeof *c);
	char e[KL_ERRLEN];
	for (int i = 0; i < CFG_COUNT; i++) {
		const struct config_key *t = &config_keys[i];
		char *at = (char *)c + t->off;
		if (t->kind == CK_INT)
			*(int *)at = (int)t->def;
		else if (t->kind == CK_NUM)
			*(double *)at = t->def;
		else if (t->kind == CK_ENUM)
			*(int *)at = words_find(t->zWords, t->zDef);
		else if (t->zDef && !(t->hook && t->hook(c, t->zDef, e) == 1))
			put_text(c, t, t->zDef); /* a word as if given (backend's auto: NULL) */
	}
}

void config_key_describe(enum config_id id, char *buf, size_t n)
{
	const struct config_key *t = &config_keys[id];
	int none =
	    t->kind == CK_INT || t->kind == CK_NUM ? t->def < t->lo || t->def > t->hi : !t->zDef;
	char def[64];
	if (none)
		snprintf(def, sizeof def, "none");
	else if (t->kind == CK_INT || t->kind == CK_NUM)
		snprintf(def, sizeof def, "%.15g", t->def);
	else
		snprintf(def, sizeof def, "%s", t->zDef);
	if (t->kind == CK_INT || t->kind == CK_NUM)
		snprintf(buf, n, "%s%s%.15g..%.15g, default %s", t->zWhat ? t->zWhat : "",
		         t->zWhat ? ", " : "", t->lo, t->hi, def);
	else if (t->zWords)
		snprintf(buf, n, "%s, default %s", t->zWords, def);
	else
		snprintf(buf, n, "default %s", def);
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

int config_load(struct config *c, char *err)
{
	config_defaults(c);
	char *path = config_path();
	strbuf sb = STRBUF_INIT;
	if (!path_exists(path)) {
		free(path);
		return 0;
	}
	if (read_file(path, &sb, 1 << 20, err) < 0) {
		free(path);
		sb_free(&sb);
		return -1;
	}
	c->zPath = path;
	int line = 0, rc = 0;
	for (char *l = sb.buf, *next; l && *l; l = next) {
		next = strchr(l, '\n');
		if (next)
			*next++ = 0;
		line++;
		char *hash = strchr(l, '#');
		if (hash)
			*hash = 0;
		char *s = trim(l);
		if (!*s)
			continue;
		char *eq = strchr(s, '=');
		if (!eq) {
			rc = kl_err(err, "%s:%d: expected 'key = value'", path, line);
			break;
		}
		*eq = 0;
		char e2[KL_ERRLEN];
		if (config_set(c, trim(s), trim(eq + 1), e2) < 0) {
			rc = kl_err(err, "%s:%d: %s", path, line, e2);
			break;
		}
	}
	sb_free(&sb);
	return rc;
}

void config_free(struct config *c)
{
	for (int i = 0; i < CFG_COUNT; i++)
		if (config_keys[i].kind == CK_STR || config_keys[i].kind == CK_WORD)
			put_text(c, &config_keys[i], NULL);
	free(c->zPath);
	memset(c, 0, sizeof *c);
}

char **config_worker_argv(const struct config *c)
{
	if (!c->zWorker)
		return NULL;
	const char *z = c->zWorker;
	char **v = xcalloc(strlen(z) / 2 + 2, sizeof(char *));
	int n = 0;
	const char *p = z;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		size_t k = strcspn(p, " ");
		v[n++] = xstrndup(p, k);
		p += k;
	}
	return v;
}

void config_argv_free(char **argv)
{
	for (int i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}
