/*
 * flags.c - the flag table of every command (with the configuration's and
 * the search settings' flags, made from their tables) and its parser.
 */
#include "flags.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "proc.h"
#include "search_settings.h"
#include "suggest.h"
#include "util.h"

enum flag_type {
	FT_SWITCH, /* no value: sets an int to 1, or its key to zChoices */
	FT_STRING, /* any text */
	FT_CHOICE, /* one of zChoices ("a|b|c") */
	FT_INT,    /* a whole number in [lo, hi] */
	FT_NUM,    /* a finite number in [lo, hi] */
	FT_OPT,    /* a switch, or --flag=VALUE: the value ("" for the bare flag) */
	FT_ALIAS,  /* another name of the flag zChoices */
};

struct flag_def {
	const char *zName;    /* "--budget" */
	enum flag_type type;  /* what its value is */
	const char *zKey;     /* the configuration key it sets, or NULL */
	size_t off;           /* else: the struct flags member it sets */
	double lo, hi;        /* FT_INT, FT_NUM: the range */
	const char *zWhat;    /* FT_INT, FT_NUM: what is counted ("seconds"), for messages */
	const char *zChoices; /* FT_CHOICE: the words, '|' between; FT_SWITCH with a key:
	                       * the value it gives that key */
	unsigned cmds;        /* the commands that take it (FL_ bits) */
	const char *zSetting; /* else: the search setting it sets (search.h) */
};

#define SESSION_CMDS (FL_OPEN | FL_REPLAY | FL_EVAL | FL_IMPORT)
#define LLM_CMDS (FL_IDEAS | FL_IMPLEMENT)
#define SEARCH_CMDS (FL_SEARCH | FL_TRANSLATE)
#define ALL_CMDS (SESSION_CMDS | LLM_CMDS | SEARCH_CMDS)
#define BARE_CMDS (FL_SESSION | FL_TASKS)
/* the commands that read no configuration here */
#define NO_CONFIG_CMDS                                                                             \
	(BARE_CMDS | FL_DOCTOR | FL_EXPORT | FL_PROFILE | FL_OUTLINE | FL_ARCHIVE | FL_REPORT)
/* member x of struct flags, whose C type must be T (a compile error else:
 * the flag's kind and the member it sets cannot disagree) */
#define M(x, T) KL_MEMBER(struct flags, x, T)
/* a flag's kind with the member it sets */
#define F_STR(x) FT_STRING, NULL, M(x, const char *)
#define F_CHOICE(x) FT_CHOICE, NULL, M(x, const char *)
#define F_OPT(x) FT_OPT, NULL, M(x, const char *)
#define F_INT(x) FT_INT, NULL, M(x, int)
#define F_SWITCH(x) FT_SWITCH, NULL, M(x, int)
#define F_NUM(x) FT_NUM, NULL, M(x, double)
/* a string flag that sets member `member` of struct flags */
#define STR(name, member, cmds)                                                                    \
	{                                                                                          \
		name, F_STR(member), 0, 0, NULL, NULL, cmds, NULL                                  \
	}
/* the flag types of the settings' kinds */
#define FT_SK_INT FT_INT
#define FT_SK_NUM FT_NUM
#define FT_SK_WORD FT_CHOICE
/* the commands that take a setting (search_settings.h's SS_ bits) */
#define SET_CMDS(ss)                                                                               \
	(FL_SEARCH | ((ss)&SS_TRANSLATE ? FL_TRANSLATE : 0) |                                      \
	 ((ss)&SS_EVAL ? FL_EVAL | FL_IMPORT : 0))
/* a search setting's flag and its alias (zName NULL: none), from its row */
#define SET_FLAGS(key, kind, lo, hi, def, words, flag, alias, what, cmds, group, help)             \
	{flag, FT_##kind, NULL, 0, lo, hi, what, words, SET_CMDS(cmds), #key},                     \
	    {alias, FT_##kind, NULL, 0, lo, hi, what, words, SET_CMDS(cmds), #key},
/* the flag types of the configuration's kinds (an enum's flags are switches) */
#define FT_CK_STR FT_STRING
#define FT_CK_WORD FT_CHOICE
#define FT_CK_ENUM FT_SWITCH
#define FT_CK_INT FT_INT
#define FT_CK_NUM FT_NUM
/* what a configuration flag gives: a word of words, or an enum's switch "on" */
#define FW_CK_STR(words) words
#define FW_CK_WORD(words) words
#define FW_CK_ENUM(words) "on"
#define FW_CK_INT(words) words
#define FW_CK_NUM(words) words
/* the commands that take a configuration flag (config.h's CFG_ bits) */
#define CFG_CMDS(c)                                                                                \
	(((c)&CFG_RUN ? ALL_CMDS : 0) | ((c)&CFG_ASK ? LLM_CMDS | SEARCH_CMDS : 0) |               \
	 ((c)&CFG_SEARCH ? SEARCH_CMDS : 0) | ((c)&CFG_OPEN ? FL_OPEN : 0) |                       \
	 ((c)&CFG_TASKS ? FL_TASKS : 0) | ((c)&CFG_DOCTOR ? FL_DOCTOR : 0) |                       \
	 ((c)&CFG_EVAL ? FL_EVAL : 0))
/* a configuration key's flag and its "off" switch (zName NULL: none), from its row */
#define CFG_FLAGS(key, kind, member, lo, hi, def, words, hook, flag, flagOff, what, cmds, group,   \
                  help)                                                                            \
	{flag, FT_##kind, #key, 0, lo, hi, what, FW_##kind(words), CFG_CMDS(cmds), NULL},          \
	    {flagOff, FT_SWITCH, #key, 0, lo, hi, what, "off", CFG_CMDS(cmds), NULL},
/* another name, for commands cmds, of the flag zFlag (it takes zFlag's
 * value; find() makes the row) */
#define ALIAS(name, flag, cmds)                                                                    \
	{                                                                                          \
		name, FT_ALIAS, NULL, 0, 0, 0, NULL, flag, cmds, NULL                              \
	}

static const struct flag_def table[] = {
    {"--session", F_STR(zSession), 0, 0, NULL, NULL, ALL_CMDS | FL_PROFILE, NULL},
    {"--shapes", F_STR(zShapes), 0, 0, NULL, NULL, ALL_CMDS | FL_TASKS, NULL},
    {"--reference", F_CHOICE(zReference), 0, 0, NULL, "host|cuda|torch", ALL_CMDS, NULL},
    {"--at", F_INT(at), 0, 1e8, "events", NULL, FL_REPLAY, NULL},
    {"--json", F_SWITCH(json), 0, 0, NULL, NULL,
     FL_EVAL | FL_IMPORT | LLM_CMDS | BARE_CMDS | SEARCH_CMDS | FL_DOCTOR | FL_PROFILE |
         FL_OUTLINE | FL_ARCHIVE,
     NULL},
    {"--no-eval", F_SWITCH(noEval), 0, 0, NULL, NULL, LLM_CMDS, NULL},
    {"--from", F_STR(zFrom), 0, 0, NULL, NULL, LLM_CMDS | FL_SEARCH, NULL},
    {"-n", F_INT(n), 1, 64, "ideas", NULL, FL_IDEAS, NULL},
    {"-b", F_INT(b), 1, 64, "branches", NULL, FL_IMPLEMENT, NULL},
    {"--idea", F_STR(zIdea), 0, 0, NULL, NULL, FL_IMPLEMENT, NULL},
    {"--with", F_STR(zWith), 0, 0, NULL, NULL, FL_IMPLEMENT, NULL},
    /* profile (kloop eval's flags are passed on to the eval it profiles) */
    STR("--parse", zParse, FL_PROFILE),
    STR("--ncu", zNcu, FL_PROFILE),
    /* export */
    STR("--kernelbench", zKernelbench, FL_EXPORT),
    STR("--problem", zProblem, FL_EXPORT | FL_IMPORT),
    STR("--cuda", zCuda, FL_EXPORT),
    STR("--source", zSource, FL_EXPORT),
    /* report */
    STR("-o", zOutput, FL_REPORT),
    STR("--output", zOutput, FL_REPORT),
    /* archive */
    STR("--db", zDb, FL_ARCHIVE),
    STR("--task", zTask, FL_ARCHIVE | FL_IMPORT),
    STR("--gpu", zGpu, FL_ARCHIVE),
    {"--kind", F_CHOICE(zKind), 0, 0, NULL, "win|dead_end", FL_ARCHIVE, NULL},
    {"-n", F_INT(limit), 0, 1e6, "results", NULL, FL_ARCHIVE, NULL},
    /* doctor (it reads the configuration itself and reports on it) */
    {"--workers", F_OPT(zWorkers), 0, 0, NULL, NULL, FL_DOCTOR, NULL},
    STR("--provider", zProvider, FL_DOCTOR),
    STR("--model", zModel, FL_DOCTOR),
    STR("--base-url", zBaseUrl, FL_DOCTOR),
    {"--timeout", F_NUM(timeoutS), 0.1, 600, "seconds", NULL, FL_DOCTOR, NULL},
    {"--peaks", F_SWITCH(peaks), 0, 0, NULL, NULL, FL_DOCTOR, NULL},
    /* tasks PROBLEM.py: how long the PyTorch helper may take to describe it */
    {"--timeout", F_NUM(timeoutS), 0.1, 7 * CONFIG_DAY, "seconds", NULL, FL_TASKS, NULL},
    /* the search's settings (search.h checks them again) */
    {"--sweep-only", F_SWITCH(sweepOnly), 0, 0, NULL, NULL, FL_SEARCH, NULL},
    {"--no-crossover", F_SWITCH(noCrossover), 0, 0, NULL, NULL, FL_SEARCH, NULL},
    /* translate's -b T is its --translations */
    ALIAS("-b", "--translations", FL_TRANSLATE),
};
#define N_FLAGS (sizeof table / sizeof *table)

/* the configuration's flags, from its table (config.h) */
static const struct flag_def configs[] = {CONFIG_KEYS(CFG_FLAGS)};
#define N_CONFIGS (sizeof configs / sizeof *configs)

/* the search settings' flags, from their table (search_settings.h) */
static const struct flag_def settings[] = {SEARCH_SETTINGS(SET_FLAGS)};
#define N_SETTINGS (sizeof settings / sizeof *settings)

/* every flag: this file's own, the configuration's, the search settings' */
static const struct {
	const struct flag_def *t;
	size_t n;
} tables[] = {{table, N_FLAGS}, {configs, N_CONFIGS}, {settings, N_SETTINGS}};
#define N_TABLES (sizeof tables / sizeof *tables)

int flags_number(const char *zFlag, const char *z, double lo, double hi, int bInt,
                 const char *zWhat, double *pOut, char *err)
{
	double d = 0;
	int bad = num_parse(z, &d) < 0 || isnan(d) || isinf(d) || d < lo || d > hi ||
	          (bInt && d != floor(d));
	if (bad)
		return kl_err(err, "%s: expected %s (%s) from %.15g to %.15g, got '%s'", zFlag,
		              bInt ? "a whole number" : "a number", zWhat, lo, hi, z);
	*pOut = d;
	return 0;
}

/* check value v of flag d (a word, a number in range), its number in *pNum; 0 or -1 + err */
static int check_value(const struct flag_def *d, const char *v, double *pNum, char *err)
{
	if (d->type == FT_CHOICE && words_find(d->zChoices, v) < 0) {
		char words[200]; /* "host, cuda or torch" */
		words_say(d->zChoices, words, sizeof words);
		return kl_err(err, "%s: expected %s, got '%s'", d->zName, words, v);
	}
	if ((d->type == FT_INT || d->type == FT_NUM) &&
	    flags_number(d->zName, v, d->lo, d->hi, d->type == FT_INT, d->zWhat, pNum, err) < 0)
		return -1;
	return 0;
}

/* apply flag d with value v (NULL for a switch); 0 or -1 + err */
static int apply(struct flags *f, const struct flag_def *d, const char *v, char *err)
{
	double num = 0;
	if (check_value(d, v, &num, err) < 0)
		return -1;
	if (d->zKey) {
		char e2[KL_ERRLEN];
		if (config_set(&f->cfg, d->zKey, d->type == FT_SWITCH ? d->zChoices : v, e2) < 0)
			return kl_err(err, "%s: %s", d->zName, e2);
		f->providerFlag |= !strcmp(d->zKey, "provider");
		f->commandFlag |= !strcmp(d->zKey, "command");
		/* --command CMD alone means the command provider */
		if (!strcmp(d->zKey, "command") && !f->providerFlag &&
		    config_set(&f->cfg, "provider", "command", e2) < 0)
			return kl_err(err, "%s: %s", d->zName, e2);
		return 0;
	}
	if (d->zSetting) {
		char e2[KL_ERRLEN];
		if (!f->settings)
			f->settings = cJSON_CreateObject();
		if (search_setting_parse(f->settings, d->zSetting, v, e2) < 0)
			return kl_err(err, "%s: %s", d->zName, e2);
		return 0;
	}
	char *at = (char *)f + d->off;
	if (d->type == FT_SWITCH)
		*(int *)at = 1;
	else if (d->type == FT_INT)
		*(int *)at = (int)num;
	else if (d->type == FT_NUM)
		*(double *)at = num;
	else
		*(const char **)at = v;
	return 0;
}

/* the entry for flag a (its first n bytes) in rows t (n of them) that one of cmds takes */
static const struct flag_def *find_in(const struct flag_def *t, size_t nT, const char *a, size_t n,
                                      unsigned cmds)
{
	for (size_t k = 0; k < nT; k++)
		if (t[k].zName && (t[k].cmds & cmds) && strlen(t[k].zName) == n &&
		    !strncmp(a, t[k].zName, n))
			return &t[k];
	return NULL;
}

/* the entry for flag a (its first n bytes) that one of cmds takes, or NULL */
static const struct flag_def *find(const char *a, size_t n, unsigned cmds)
{
	const struct flag_def *d = NULL;
	for (size_t i = 0; i < N_TABLES && !d; i++)
		d = find_in(tables[i].t, tables[i].n, a, n, cmds);
	if (!d || d->type != FT_ALIAS)
		return d;
	/* an alias: its flag's row under its own name (for messages) */
	static struct flag_def alias;
	const char *z = d->zName;
	if (!(d = find(d->zChoices, strlen(d->zChoices), cmds)))
		return NULL;
	alias = *d;
	alias.zName = z;
	return &alias;
}

/* the flag of cmds nearest to a typo of one (its first n bytes), or NULL */
static const char *nearest_flag(const char *a, size_t n, unsigned cmds)
{
	const char *az[N_FLAGS + N_CONFIGS + N_SETTINGS];
	size_t m = 0;
	for (size_t i = 0; i < N_TABLES; i++)
		for (size_t k = 0; k < tables[i].n; k++)
			az[m++] = tables[i].t[k].cmds & cmds ? tables[i].t[k].zName : NULL;
	char word[64];
	snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1), a);
	return suggest_nearest(word, az, m);
}

static int parse(const struct cmd_entry *e, unsigned cmd, int argc, char **argv, struct flags *f)
{
	char err[KL_ERRLEN];
	if (!(cmd & NO_CONFIG_CMDS) && config_load(&f->cfg, err) < 0) {
		fprintf(stderr, "kloop: %s\n", err);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || !a[1]) {
			if (f->nPos == FLAGS_MAX_POS) {
				fprintf(stderr, "kloop: %s: too many arguments\n", e->name);
				return cmd_usage(e);
			}
			f->azPos[f->nPos++] = a;
			continue;
		}
		const char *v = NULL, *eq = strchr(a, '=');
		const struct flag_def *d = find(a, strlen(a), cmd);
		/* profile passes kloop eval's flags on to the eval it profiles, checked here */
		int pass = !d && (cmd & FL_PROFILE) && (d = find(a, strlen(a), FL_EVAL)) != NULL;
		if (d && d->type == FT_OPT) {
			v = ""; /* the bare flag */
		} else if (!d && eq) {
			d = find(a, (size_t)(eq - a), cmd);
			if (d && d->type != FT_OPT)
				d = NULL;      /* only an optional value is given with '=' */
			v = d ? eq + 1 : NULL; /* --workers=SPEC */
		}
		if (!d) {
			const char *near = nearest_flag(a, eq ? (size_t)(eq - a) : strlen(a), cmd);
			if (near)
				fprintf(stderr, "kloop: %s: unknown option %s: did you mean %s?\n",
				        e->name, a, near);
			else
				fprintf(stderr, "kloop: %s: unknown option %s\n", e->name, a);
			return cmd_usage(e);
		}
		if (d->type != FT_SWITCH && !v && !(v = i + 1 < argc ? argv[++i] : NULL)) {
			fprintf(stderr, "kloop: %s: %s needs a value\n", e->name, a);
			return cmd_usage(e);
		}
		double num;
		int rc = pass ? check_value(d, v, &num, err) : apply(f, d, v, err);
		if (rc < 0) {
			fprintf(stderr, "kloop: %s\n", err);
			return 2;
		}
		if (pass) {
			if (f->nPass + 2 > FLAGS_MAX_PASS) {
				fprintf(stderr, "kloop: %s: too many flags to pass on\n", e->name);
				return cmd_usage(e);
			}
			f->azPass[f->nPass++] = a;
			if (d->type != FT_SWITCH)
				f->azPass[f->nPass++] = v;
		}
	}
	return 0;
}

int flags_parse(const struct cmd_entry *e, unsigned cmd, int argc, char **argv, int nMin, int nMax,
                struct flags *f)
{
	memset(f, 0, sizeof *f);
	f->at = -1;
	f->n = 5;
	f->b = 2;
	int rc = parse(e, cmd, argc, argv, f);
	/* --command is the command provider's: with another --provider it
	 * would be ignored */
	if (!rc && f->commandFlag && f->providerFlag && f->cfg.zProvider &&
	    strcmp(f->cfg.zProvider, "command")) {
		fprintf(stderr,
		        "kloop: %s: --command CMD selects the command provider; it cannot go with "
		        "--provider %s (drop one of them)\n",
		        e->name, f->cfg.zProvider);
		rc = 2;
	}
	if (!rc && f->nPos > nMax) {
		/* name what was not expected (a flag's value given apart from a
		 * flag that takes none, a second task) */
		fprintf(stderr, "kloop: %s: unexpected argument '%s' (%s)\n", e->name,
		        f->azPos[nMax],
		        nMax == 0   ? "it takes no arguments besides flags"
		        : nMax == 1 ? "one is expected"
		                    : "too many");
		rc = cmd_usage(e);
	} else if (!rc && f->nPos < nMin) {
		rc = cmd_usage(e);
	}
	if (rc)
		flags_free(f);
	return rc;
}

void flags_free(struct flags *f)
{
	config_free(&f->cfg);
	cJSON_Delete(f->settings);
	f->settings = NULL;
}

/* ---- kloop CMD --help: each flag on its line ---- */

/* the groups of the help, in order (the configuration's flags name theirs in config.h) */
static const char *const groups[] = {
    CONFIG_WHERE,         "checks", CONFIG_CHECK, CONFIG_PROBLEM, "the session", CONFIG_LLM,
    "what to start from", "output", "profile",    "the archive"};
#define N_GROUPS (sizeof groups / sizeof *groups)

/* what a flag of this file's table does, for the commands cmds (0: every
 * command that takes it), in a group (the configuration's flags: config.h) */
static const struct flag_help {
	const char *zName, *zGroup, *zHelp;
	unsigned cmds;
} helps[] = {
    {"--workers", "checks", "also start the workers given (or the configuration's) and check them",
     FL_DOCTOR},
    {"--peaks", "checks",
     "measure the GPU's dense peaks per compute type now (cuBLASLt, a few hundred ms) and cache "
     "them for the workers",
     FL_DOCTOR},
    {"--timeout", "checks", "seconds to wait for an endpoint", FL_DOCTOR},
    {"--provider", "checks", "the LLM provider to check (else the configuration's)", FL_DOCTOR},
    {"--model", "checks", "the model to look for (else the configuration's)", FL_DOCTOR},
    {"--base-url", "checks", "the endpoint to try (else the configuration's)", FL_DOCTOR},
    {"--timeout", CONFIG_PROBLEM, "seconds the PyTorch helper may take to describe a problem",
     FL_TASKS},
    {"--shapes", CONFIG_PROBLEM, "the shape set: small, full, or a name the task defines", 0},
    {"--reference", CONFIG_PROBLEM, "what computes the reference: C, CUDA or PyTorch", 0},
    {"--session", "the session", "the journal to write, or to resume", 0},
    {"--at", "the session", "open the replay at this event", 0},
    {"--from", "what to start from",
     "a source file: the first candidate instead of the task's seeds", 0},
    {"--no-eval", "what to start from", "write the candidates, evaluate none", 0},
    {"-n", "what to start from", "ideas to ask for", FL_IDEAS},
    {"-n", "output", "results at most", FL_ARCHIVE},
    {"-b", "what to start from", "implementations of the idea", FL_IMPLEMENT},
    {"--idea", "what to start from", "the idea's id, or its text", 0},
    {"--with", "what to start from", "a second parent: a crossover", 0},
    {"--sweep-only", "what to start from", "no LLM: sweeps over tunables and crossover only", 0},
    {"--no-crossover", "what to start from", "no crossover (as --crossover 0)", 0},
    {"--json", "output", "one JSON object per line", 0},
    {"--parse", "profile", "read an Nsight Compute CSV instead of profiling", 0},
    {"--ncu", "profile", "the ncu program", 0},
    {"--problem", "the problem", "the KernelBench problem file the files are for", FL_IMPORT},
    {"--task", "the problem", "a bundled task (or a task directory) the files are for", FL_IMPORT},
    {"--kernelbench", "output", "a KernelBench module with ModelNew", 0},
    {"--problem", "output", "the KernelBench problem file it is for", 0},
    {"--cuda", "output", "the CUDA candidate's source", 0},
    {"--source", "output", "the candidate's source", 0},
    {"-o", "output", "the report's file", 0},
    {"--output", "output", "the report's file", 0},
    {"--db", "the archive", "the archive's database", 0},
    {"--task", "the archive", "only this task's entries", 0},
    {"--gpu", "the archive", "only this GPU's entries", 0},
    {"--kind", "the archive", "only wins, or only dead ends", 0},
};
#define N_HELPS (sizeof helps / sizeof *helps)

/* flag d's group, help and, after them, what it takes (range, default), for command cmd; 0,
 * or -1 when it has no line */
static int help_of(const struct flag_def *d, unsigned cmd, const char **pzGroup,
                   const char **pzHelp, char *zTakes, size_t n)
{
	int id = d->zKey ? config_key_find(d->zKey) : -1;
	zTakes[0] = 0;
	if (id >= 0) {
		/* a configuration key: its row (config.h) */
		char what[160];
		config_key_describe(id, what, sizeof what);
		*pzGroup = config_keys[id].zGroup;
		*pzHelp = config_keys[id].zHelp;
		snprintf(zTakes, n, " [%s; config: %s%s%s]", what, d->zKey,
		         d->type == FT_SWITCH ? " = " : "",
		         d->type == FT_SWITCH ? d->zChoices : "");
		return 0;
	}
	for (size_t i = 0; i < N_HELPS; i++) {
		if (strcmp(helps[i].zName, d->zName) || (helps[i].cmds && !(helps[i].cmds & cmd)))
			continue;
		*pzGroup = helps[i].zGroup;
		*pzHelp = helps[i].zHelp;
		if ((d->type == FT_INT || d->type == FT_NUM) && d->zWhat)
			snprintf(zTakes, n, " [%s, %.15g..%.15g]", d->zWhat, d->lo, d->hi);
		return 0;
	}
	return -1;
}

/* the value a flag takes, as its line shows it */
static void value_of(const struct flag_def *d, char *buf, size_t n)
{
	switch (d->type) {
	case FT_SWITCH:
		buf[0] = 0;
		break;
	case FT_CHOICE:
		snprintf(buf, n, " %s", d->zChoices);
		break;
	case FT_INT:
	case FT_NUM:
		snprintf(buf, n, " N");
		break;
	case FT_OPT:
		snprintf(buf, n, "[=SPEC]");
		break;
	default:
		snprintf(buf, n, " TEXT");
	}
}

static void other_help(FILE *f, unsigned cmd);

/* the lines of group zGroup of the flags of rows t (n of them) that cmd takes; *pSaid counts
 * the lines written (the group's title before the first) */
static void group_help(FILE *f, unsigned cmd, const char *zGroup, const struct flag_def *t,
                       size_t nT, int *pSaid)
{
	for (size_t i = 0; i < nT; i++) {
		const struct flag_def *d = &t[i];
		const char *g, *h;
		char takes[256];
		if (!d->zName || !(d->cmds & cmd) || d->type == FT_ALIAS ||
		    help_of(d, cmd, &g, &h, takes, sizeof takes) < 0 || strcmp(g, zGroup))
			continue;
		/* a name the tables have twice for this command: its first row */
		if (find(d->zName, strlen(d->zName), cmd) != d)
			continue;
		if (!(*pSaid)++)
			fprintf(f, "\n%s:\n", zGroup);
		char name[80], v[64];
		value_of(d, v, sizeof v);
		snprintf(name, sizeof name, "%s%s", d->zName, v);
		/* a long name on a line of its own, its help under the column */
		if (strlen(name) > 24)
			fprintf(f, "  %s\n  %-24s %s%s\n", name, "", h, takes);
		else
			fprintf(f, "  %-24s %s%s\n", name, h, takes);
	}
}

void flags_help(FILE *f, unsigned cmd)
{
	other_help(f, cmd);
	for (size_t g = 0; g < N_GROUPS; g++) {
		int said = 0;
		group_help(f, cmd, groups[g], configs, N_CONFIGS, &said);
		group_help(f, cmd, groups[g], table, N_FLAGS, &said);
	}
}

/* the search settings a command other than search and translate takes
 * (eval's --precision), and the aliases of this command's flags */
static void other_help(FILE *f, unsigned cmd)
{
	int said = 0;
	for (size_t i = 0; i < N_SETTINGS && !(cmd & (FL_SEARCH | FL_TRANSLATE)); i++) {
		const struct flag_def *d = &settings[i];
		int id = d->zName ? search_setting_find(d->zSetting) : -1;
		if (!d->zName || !(d->cmds & cmd) || id < 0)
			continue;
		if (!said++)
			fprintf(f, "\nsearch settings it takes:\n");
		char name[80], v[64];
		value_of(d, v, sizeof v);
		snprintf(name, sizeof name, "%s%s", d->zName, v);
		fprintf(f, "  %-24s %s\n", name, search_setting_info[id].zHelp);
	}
	said = 0;
	for (size_t i = 0; i < N_FLAGS; i++) {
		const struct flag_def *d = &table[i];
		if (d->type != FT_ALIAS || !(d->cmds & cmd))
			continue;
		if (!said++)
			fprintf(f, "\nother names:\n");
		fprintf(f, "  %-24s as %s\n", d->zName, d->zChoices);
	}
}

unsigned flags_cmd_of(const char *zCommand)
{
	static const struct {
		const char *zName;
		unsigned cmd;
	} map[] = {
	    {"open", FL_OPEN},           {"shell", FL_OPEN},      {"replay", FL_REPLAY},
	    {"eval", FL_EVAL},           {"ideas", FL_IDEAS},     {"implement", FL_IMPLEMENT},
	    {"session", FL_SESSION},     {"tasks", FL_TASKS},     {"search", FL_SEARCH},
	    {"translate", FL_TRANSLATE}, {"doctor", FL_DOCTOR},   {"export", FL_EXPORT},
	    {"profile", FL_PROFILE},     {"outline", FL_OUTLINE}, {"archive", FL_ARCHIVE},
	    {"report", FL_REPORT},       {"import", FL_IMPORT}};
	for (size_t i = 0; i < sizeof map / sizeof *map; i++)
		if (!strcmp(map[i].zName, zCommand))
			return map[i].cmd;
	return 0;
}

double flags_warm_seconds(const struct flags *f, const char *zBackend)
{
	/* under a profiler (Nsight Compute around kloop) the worker must end
	 * with kloop: the profiler waits for every process it follows */
	if (proc_profiler_injected())
		return 0;
	if (f->cfg.warmS >= 0)
		return f->cfg.warmS;
	const char *z = getenv("KLOOP_WARM_S");
	char *end;
	double s = z && *z ? strtod(z, &end) : -1;
	if (z && *z && !*end && s >= 0 && s <= 86400)
		return s;
	if (!zBackend)
		zBackend = f->cfg.zBackend            ? f->cfg.zBackend
		           : backend_cuda_available() ? "cuda"
		                                      : "host";
	return !strcmp(zBackend, "cuda") ? 300 : 0;
}
