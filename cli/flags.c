/*
 * flags.c - the flag table of every command and its parser.
 */
#include "flags.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
#define M(x, T)                                                                                    \
	(offsetof(struct flags, x) +                                                               \
	 0 * sizeof(char[_Generic(((struct flags *)0)->x, T : 1, default                           \
	                          : -1)]))
/* a flag's kind with the member it sets */
#define F_STR(x) FT_STRING, NULL, M(x, const char *)
#define F_CHOICE(x) FT_CHOICE, NULL, M(x, const char *)
#define F_OPT(x) FT_OPT, NULL, M(x, const char *)
#define F_INT(x) FT_INT, NULL, M(x, int)
#define F_SWITCH(x) FT_SWITCH, NULL, M(x, int)
#define F_NUM(x) FT_NUM, NULL, M(x, double)
#define DAY 86400.0
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
/* another name, for commands cmds, of the flag zFlag (it takes zFlag's
 * value; find() makes the row) */
#define ALIAS(name, flag, cmds)                                                                    \
	{                                                                                          \
		name, FT_ALIAS, NULL, 0, 0, 0, NULL, flag, cmds, NULL                              \
	}

static const struct flag_def table[] = {
    {"--backend", FT_CHOICE, "backend", 0, 0, 0, NULL, "host|cuda|auto", ALL_CMDS, NULL},
    {"--trials", FT_INT, "trials", 0, 1, 1e6, "trials", NULL, ALL_CMDS, NULL},
    {"--budget", FT_NUM, "budget", 0, 0.01, DAY, "seconds", NULL, ALL_CMDS, NULL},
    /* at least 0.1 s: the engine's timer keeps milliseconds, and a timeout's
     * message gives the limit as given ("no result after 0.1 s") */
    {"--timeout", FT_NUM, "timeout", 0, 0.1, 7 * DAY, "seconds", NULL, ALL_CMDS, NULL},
    {"--jobs", FT_INT, "jobs", 0, 1, 4096, "parallel compiles", NULL, ALL_CMDS, NULL},
    {"--spares", FT_INT, "spares", 0, 0, 8, "spare runners", NULL, ALL_CMDS, NULL},
    {"--python", FT_STRING, "python", 0, 0, 0, NULL, NULL, ALL_CMDS | FL_TASKS | FL_DOCTOR, NULL},
    {"--worker", FT_STRING, "worker", 0, 0, 0, NULL, NULL, ALL_CMDS, NULL},
    {"--workers", FT_STRING, "workers", 0, 0, 0, NULL, NULL, ALL_CMDS, NULL},
    /* candidates run without bubblewrap: explicit, and quiet (issue 14); --sandbox
     * says the default (sandbox = on) */
    {"--no-sandbox", FT_SWITCH, "sandbox", 0, 0, 0, NULL, "off", ALL_CMDS, NULL},
    {"--sandbox", FT_SWITCH, "sandbox", 0, 0, 0, NULL, "on", ALL_CMDS, NULL},
    /* MPS for the local GPUs (engine/measure/mps.h; config mps = on|off|auto) */
    {"--mps", FT_SWITCH, "mps", 0, 0, 0, NULL, "on", ALL_CMDS, NULL},
    {"--no-mps", FT_SWITCH, "mps", 0, 0, 0, NULL, "off", ALL_CMDS, NULL},
    {"--provider", FT_CHOICE, "provider", 0, 0, 0, NULL, "openai|anthropic|command", ALL_CMDS,
     NULL},
    {"--model", FT_STRING, "model", 0, 0, 0, NULL, NULL, ALL_CMDS, NULL},
    {"--base-url", FT_STRING, "base_url", 0, 0, 0, NULL, NULL, ALL_CMDS, NULL},
    {"--llm-timeout", FT_NUM, "llm_timeout", 0, 0.1, DAY, "seconds", NULL, LLM_CMDS | SEARCH_CMDS,
     NULL},
    {"--atol", FT_NUM, "atol", 0, 0, 1e6, "absolute tolerance", NULL, ALL_CMDS, NULL},
    {"--rtol", FT_NUM, "rtol", 0, 0, 1e6, "relative tolerance", NULL, ALL_CMDS, NULL},
    {"--size", FT_NUM, "size", 0, 1e-6, 1000, "size factor", NULL, ALL_CMDS, NULL},
    {"--size", F_NUM(size), 1e-6, 1000, "size factor", NULL, FL_TASKS, NULL},
    {"--libs", FT_STRING, "libs", 0, 0, 0, NULL, NULL, ALL_CMDS, NULL},
    {"--fix", FT_INT, "fix_attempts", 0, 0, 16, "fix prompts", NULL, LLM_CMDS | SEARCH_CMDS, NULL},
    /* the command provider's program: wherever an LLM can be asked (the
     * workbench's :ideas and :implement too) */
    {"--command", FT_STRING, "command", 0, 0, 0, NULL, NULL, FL_OPEN | LLM_CMDS | SEARCH_CMDS,
     NULL},
    {"--price-input", FT_NUM, "price_input", 0, 0, 1e6, "dollars", NULL, SEARCH_CMDS, NULL},
    {"--price-output", FT_NUM, "price_output", 0, 0, 1e6, "dollars", NULL, SEARCH_CMDS, NULL},
    {"--max-in-flight", FT_INT, "llm_max_in_flight", 0, 1, 4096, "requests", NULL, SEARCH_CMDS,
     NULL},
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
    {"--timeout", F_NUM(timeoutS), 0.1, 7 * DAY, "seconds", NULL, FL_TASKS, NULL},
    /* the search's settings (search.h checks them again) */
    {"--sweep-only", F_SWITCH(sweepOnly), 0, 0, NULL, NULL, FL_SEARCH, NULL},
    {"--no-crossover", F_SWITCH(noCrossover), 0, 0, NULL, NULL, FL_SEARCH, NULL},
    /* translate's -b T is its --translations */
    ALIAS("-b", "--translations", FL_TRANSLATE),
};
#define N_FLAGS (sizeof table / sizeof *table)

/* the search settings' flags, from their table (search_settings.h) */
static const struct flag_def settings[] = {SEARCH_SETTINGS(SET_FLAGS)};
#define N_SETTINGS (sizeof settings / sizeof *settings)

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

static int choice_ok(const char *zChoices, const char *z)
{
	size_t n = strlen(z);
	for (const char *p = zChoices; *p;) {
		size_t k = strcspn(p, "|");
		if (k == n && !strncmp(p, z, n))
			return 1;
		p += k + (p[k] == '|');
	}
	return 0;
}

/* check value v of flag d (a word, a number in range), its number in *pNum; 0 or -1 + err */
static int check_value(const struct flag_def *d, const char *v, double *pNum, char *err)
{
	if (d->type == FT_CHOICE && !choice_ok(d->zChoices, v)) {
		/* "host, cuda or torch" */
		char words[200];
		size_t w = 0;
		for (const char *p = d->zChoices; *p && w + 5 < sizeof words; p++) {
			if (*p != '|') {
				words[w++] = *p;
				continue;
			}
			const char *sep = strchr(p + 1, '|') ? ", " : " or ";
			for (const char *q = sep; *q && w + 1 < sizeof words; q++)
				words[w++] = *q;
		}
		words[w] = 0;
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
	const struct flag_def *d = find_in(table, N_FLAGS, a, n, cmds);
	if (!d)
		return find_in(settings, N_SETTINGS, a, n, cmds);
	if (d->type != FT_ALIAS)
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
	const char *az[N_FLAGS + N_SETTINGS];
	for (size_t k = 0; k < N_FLAGS; k++)
		az[k] = table[k].cmds & cmds ? table[k].zName : NULL;
	for (size_t k = 0; k < N_SETTINGS; k++)
		az[N_FLAGS + k] = settings[k].cmds & cmds ? settings[k].zName : NULL;
	char word[64];
	snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1), a);
	return suggest_nearest(word, az, N_FLAGS + N_SETTINGS);
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

/* what a flag does, for the commands cmds (0: every command that takes
 * it), in a group; a flag of the table with no line here is listed bare */
static const struct flag_help {
	const char *zName, *zGroup, *zHelp;
	unsigned cmds;
} helps[] = {
    {"--backend", "where candidates run",
     "the host's CPU or the GPU (auto: the GPU where there is one)", 0},
    {"--workers", "where candidates run", "the workers: local, local:N, ssh:HOST, slurm:...",
     ALL_CMDS},
    {"--workers", "checks", "also start the workers given (or the configuration's) and check them",
     FL_DOCTOR},
    {"--peaks", "checks",
     "measure the GPU's dense peaks per compute type now (cuBLASLt, a few hundred ms) and cache "
     "them for the workers",
     FL_DOCTOR},
    {"--worker", "where candidates run", "the kloop-worker program to start", 0},
    {"--jobs", "where candidates run", "compiles at once", 0},
    {"--spares", "where candidates run", "runners each worker keeps started ahead (GPU: 2, CPU: 0)",
     0},
    {"--no-sandbox", "where candidates run",
     "run candidates without bubblewrap (said on every verdict)", 0},
    {"--sandbox", "where candidates run", "run candidates in bubblewrap (the default)", 0},
    {"--mps", "where candidates run",
     "use NVIDIA MPS for the local GPUs, starting a daemon where none runs", 0},
    {"--no-mps", "where candidates run", "use no MPS daemon, even one that runs", 0},
    {"--libs", "where candidates run", "libraries to link: cublas, cudnn, cutlass, -lNAME, a path",
     0},
    {"--trials", "checking and timing", "checked trials before timing", 0},
    {"--budget", "checking and timing", "seconds of timing per candidate", 0},
    {"--timeout", "checking and timing", "seconds a candidate's run may take", ALL_CMDS},
    {"--timeout", "checks", "seconds to wait for an endpoint", FL_DOCTOR},
    {"--timeout", "the problem", "seconds the PyTorch helper may take to describe a problem",
     FL_TASKS},
    {"--atol", "checking and timing", "absolute tolerance of the check", 0},
    {"--rtol", "checking and timing", "relative tolerance of the check", 0},
    {"--shapes", "the problem", "the shape set: small, full, or a name the task defines", 0},
    {"--size", "the problem", "a KernelBench problem's sizes, scaled", 0},
    {"--reference", "the problem", "what computes the reference: C, CUDA or PyTorch", 0},
    {"--python", "the problem", "the python3 with PyTorch for .py problems", 0},
    {"--session", "the session", "the journal to write, or to resume", 0},
    {"--at", "the session", "open the replay at this event", 0},
    {"--provider", "the LLM", "the API the LLM speaks", 0},
    {"--model", "the LLM", "the model's name", 0},
    {"--base-url", "the LLM", "the endpoint (an OpenAI-compatible server, a proxy)", 0},
    {"--command", "the LLM", "a program that answers prompts (the command provider)", 0},
    {"--llm-timeout", "the LLM", "seconds a request may take", 0},
    {"--fix", "the LLM", "fix prompts after a candidate fails", 0},
    {"--price-input", "the LLM", "dollars per million input tokens (for the budget)", 0},
    {"--price-output", "the LLM", "dollars per million output tokens", 0},
    {"--max-in-flight", "the LLM", "requests at once", 0},
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

static const struct flag_help *help_of(const struct flag_def *d, unsigned cmd)
{
	for (size_t i = 0; i < N_HELPS; i++)
		if (!strcmp(helps[i].zName, d->zName) && (!helps[i].cmds || (helps[i].cmds & cmd)))
			return &helps[i];
	return NULL;
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

void flags_help(FILE *f, unsigned cmd)
{
	other_help(f, cmd);
	/* the groups in the order of the help table */
	for (size_t g = 0; g < N_HELPS; g++) {
		int first = 1;
		for (size_t k = 0; k < g; k++)
			first &= strcmp(helps[k].zGroup, helps[g].zGroup) != 0;
		if (!first)
			continue;
		int said = 0;
		for (size_t i = 0; i < N_FLAGS; i++) {
			const struct flag_def *d = &table[i];
			if (!(d->cmds & cmd) || d->type == FT_ALIAS)
				continue;
			const struct flag_help *h = help_of(d, cmd);
			if (!h || strcmp(h->zGroup, helps[g].zGroup))
				continue;
			/* a name the table has twice for this command: its first row */
			if (find(d->zName, strlen(d->zName), cmd) != d)
				continue;
			if (!said++)
				fprintf(f, "\n%s:\n", helps[g].zGroup);
			char name[80], v[64], range[96] = "";
			value_of(d, v, sizeof v);
			snprintf(name, sizeof name, "%s%s", d->zName, v);
			if ((d->type == FT_INT || d->type == FT_NUM) && d->zWhat)
				snprintf(range, sizeof range, " [%s, %.15g..%.15g]", d->zWhat,
				         d->lo, d->hi);
			/* a long name on a line of its own, its help under the column */
			if (strlen(name) > 24)
				fprintf(f, "  %s\n  %-24s %s%s\n", name, "", h->zHelp, range);
			else
				fprintf(f, "  %-24s %s%s\n", name, h->zHelp, range);
		}
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
