/*
 * config.h - kloop's configuration: built-in defaults, then the file
 * $XDG_CONFIG_HOME/kloop/config (or ~/.config/kloop/config), then flags.
 * The file holds `key = value` lines; `#` starts a comment.
 *
 * Every setting is one row of CONFIG_KEYS below: its key, kind, range,
 * member, default, flag and help.  The file's parser, the defaults, the
 * command line's flags (cli/flags.c) and `kloop CMD --help` all read the
 * row, so a key, a range or a default is written in this one place.
 */
#ifndef KL_CONFIG_H
#define KL_CONFIG_H

#include <stddef.h>

struct config {
	char *zBackend;        /* "host", "cuda" or NULL (auto: cuda where a GPU is present) */
	char *zPython;         /* interpreter for PyTorch references ("python3") */
	char *zWorker;         /* worker launch command, split on spaces (NULL: built in) */
	char *zWorkers;        /* the worker pool (pool.h's specification; NULL: local) */
	double timeoutS;       /* wall-clock limit of one candidate's check and timing */
	double budgetS;        /* timing budget per candidate (0: the backend's default) */
	int nTrials;           /* correctness trials (0: default 5) */
	int jobs;              /* parallel compiles (0: all cores) */
	int spares;            /* spare runners each worker keeps started ahead (bSpares) */
	int bSpares;           /* spares was set (else: the worker's default) */
	char *zProvider;       /* LLM provider: openai, anthropic, command */
	char *zModel;          /* LLM model name */
	char *zBaseUrl;        /* LLM base URL */
	char *zApiKeyEnv;      /* environment variable holding the API key */
	char *zCommand;        /* program for the command provider */
	double llmTimeoutS;    /* wall-clock limit of one LLM request attempt */
	double llmStallS;      /* an attempt that receives nothing for this long fails */
	int llmRetries;        /* retries on 429, 5xx and connection errors */
	int llmMaxInFlight;    /* LLM requests at once */
	int llmMaxTokens;      /* max_tokens sent (0: the provider's default) */
	double llmTemperature; /* temperature sent (-1: none) */
	double priceIn;        /* USD per million input tokens (-1: unknown) */
	double priceOut;       /* USD per million output tokens (-1: unknown) */
	int fixAttempts;       /* fix prompts per implementation branch */
	int noSandbox;         /* candidates run without bubblewrap (sandbox = off) */
	double atol, rtol;     /* tolerance overrides for float outputs (-1: the task's) */
	int bTol;              /* atol or rtol was set (a zeroed config has neither) */
	double size;           /* size factor of a KernelBench problem's dimensions (0: none) */
	char *zLibs;           /* libraries for candidates ("cublas cudnn"), or NULL */
	int mps;               /* MPS for the local GPUs: the index of the word, on 0, off 1, auto 2
	                        * (mps.h's enum mps_mode) */
	double warmS;          /* the worker of kloop eval or the workbench kept warm this
	                          long (-1: the default, flags_warm_seconds) */
	char *zPath;           /* the config file read, or NULL */
};

/* a setting's kind: what its text may be, and the C type of its member */
enum config_kind {
	CK_STR,  /* char *: any text (a fresh copy) */
	CK_WORD, /* char *: one of its words ("a|b|c") */
	CK_ENUM, /* int: the index of one of its words, which start "on|off" */
	CK_INT,  /* int: a whole number in [lo, hi] */
	CK_NUM,  /* double: a finite number in [lo, hi] */
};

/* the commands whose flag sets a setting (cli/flags.c maps them onto its own);
 * CFG_RUN: those that run candidates (open, shell, replay, eval, ideas,
 * implement, search, translate) */
#define CFG_RUN 1u
#define CFG_ASK 2u     /* those that ask an LLM themselves: ideas, implement, search, translate */
#define CFG_SEARCH 4u  /* search and translate */
#define CFG_OPEN 8u    /* the workbench (open, shell) */
#define CFG_TASKS 16u  /* tasks (which reads no configuration, only this flag) */
#define CFG_DOCTOR 32u /* doctor (which reads the configuration itself) */
#define CFG_EVAL 64u   /* eval */

/* spare runners a worker may keep started ahead (cand.h's CAND_MAX_SPARES: its array) */
#define CONFIG_SPARES_MAX 8

#define CONFIG_DAY 86400.0 /* seconds */

/* the help's groups of `kloop CMD --help` */
#define CONFIG_WHERE "where candidates run"
#define CONFIG_CHECK "checking and timing"
#define CONFIG_PROBLEM "the problem"
#define CONFIG_LLM "the LLM"

/*
 * X(key, kind, member, lo, hi, def, words, hook, flag, flagOff, what, cmds, group, help):
 *   key      the file's key (`key = value`), and CFG_key its id
 *   kind     CK_*: what the value may be, and the C type of member
 *   member   the member of struct config it fills (a type that disagrees with the kind
 *            fails to compile)
 *   lo, hi   CK_INT, CK_NUM: the range, both ends allowed
 *   def      the default: a number (one outside lo..hi is "none": the help says what
 *            then), or text (NULL: none; CK_WORD, CK_ENUM: one of the words)
 *   words    CK_WORD, CK_ENUM: "a|b|c"
 *   hook     NULL, or a function of config.c called with the value once its kind has
 *            checked it, before it is stored (config_hook_fn)
 *   flag     the command line's flag, or NULL; of CK_ENUM a switch giving "on"
 *   flagOff  CK_ENUM: the switch giving "off", or NULL
 *   what     a number's unit ("seconds"), for the flag's messages and help
 *   cmds     CFG_ bits: the commands whose flag sets it
 *   group, help   its line of `kloop CMD --help`
 * The ranges: from the smallest that makes sense to the largest the code
 * downstream handles or a person could mean (a week of timeout).
 */
#define CONFIG_KEYS(X)                                                                             \
	X(backend, CK_WORD, zBackend, 0, 0, "auto", "host|cuda|auto", backend_hook, "--backend",   \
	  NULL, NULL, CFG_RUN, CONFIG_WHERE,                                                       \
	  "the host's CPU or the GPU (auto: the GPU where there is one)")                          \
	X(jobs, CK_INT, jobs, 1, 4096, 0, NULL, NULL, "--jobs", NULL, "parallel compiles",         \
	  CFG_RUN, CONFIG_WHERE, "compiles at once (none: one per core)")                          \
	X(spares, CK_INT, spares, 0, CONFIG_SPARES_MAX, -1, NULL, spares_hook, "--spares", NULL,   \
	  "spare runners", CFG_RUN, CONFIG_WHERE,                                                  \
	  "runners each worker keeps started ahead (none: GPU 2, CPU 0)")                          \
	X(worker, CK_STR, zWorker, 0, 0, NULL, NULL, NULL, "--worker", NULL, NULL, CFG_RUN,        \
	  CONFIG_WHERE, "the kloop-worker program to start (none: the one beside kloop)")          \
	X(workers, CK_STR, zWorkers, 0, 0, NULL, NULL, NULL, "--workers", NULL, NULL, CFG_RUN,     \
	  CONFIG_WHERE, "the workers: local, local:N, ssh:HOST, slurm:... (none: local)")          \
	X(sandbox, CK_ENUM, noSandbox, 0, 0, "on", "on|off", NULL, "--sandbox", "--no-sandbox",    \
	  NULL, CFG_RUN, CONFIG_WHERE,                                                             \
	  "run candidates in bubblewrap (off: without, said on every verdict)")                    \
	X(mps, CK_ENUM, mps, 0, 0, "auto", "on|off|auto", NULL, "--mps", "--no-mps", NULL,         \
	  CFG_RUN, CONFIG_WHERE,                                                                   \
	  "NVIDIA MPS for the local GPUs (on: a daemon, started where none runs; off: none, "      \
	  "even one that runs; auto: none until asked)")                                           \
	X(warm, CK_NUM, warmS, 0, CONFIG_DAY, -1, NULL, NULL, "--warm", NULL, "seconds",           \
	  CFG_EVAL | CFG_OPEN, CONFIG_WHERE,                                                       \
	  "seconds the worker of kloop eval or the workbench waits, warm, for the next of the "    \
	  "same task (0: it ends with kloop; none: 300 on the GPU, 0 on the CPU)")                 \
	X(libs, CK_STR, zLibs, 0, 0, NULL, NULL, NULL, "--libs", NULL, NULL, CFG_RUN,              \
	  CONFIG_WHERE, "libraries to link: cublas, cudnn, cutlass, -lNAME, a path")               \
	X(trials, CK_INT, nTrials, 1, 1e6, 0, NULL, NULL, "--trials", NULL, "trials", CFG_RUN,     \
	  CONFIG_CHECK, "checked trials before timing (none: the backend's)")                      \
	X(budget, CK_NUM, budgetS, 0.01, CONFIG_DAY, 0, NULL, NULL, "--budget", NULL, "seconds",   \
	  CFG_RUN, CONFIG_CHECK, "seconds of timing per candidate (none: the backend's)")          \
	/* at least 0.1 s: the engine's timer keeps milliseconds, and a timeout's                  \
	 * message gives the limit as given ("no result after 0.1 s") */                           \
	X(timeout, CK_NUM, timeoutS, 0.1, 7 * CONFIG_DAY, 120, NULL, NULL, "--timeout", NULL,      \
	  "seconds", CFG_RUN, CONFIG_CHECK, "seconds a candidate's run may take")                  \
	X(atol, CK_NUM, atol, 0, 1e6, -1, NULL, tol_hook, "--atol", NULL, "absolute tolerance",    \
	  CFG_RUN, CONFIG_CHECK, "absolute tolerance of the check (none: the task's)")             \
	X(rtol, CK_NUM, rtol, 0, 1e6, -1, NULL, tol_hook, "--rtol", NULL, "relative tolerance",    \
	  CFG_RUN, CONFIG_CHECK, "relative tolerance of the check (none: the task's)")             \
	X(python, CK_STR, zPython, 0, 0, "python3", NULL, NULL, "--python", NULL, NULL,            \
	  CFG_RUN | CFG_TASKS | CFG_DOCTOR, CONFIG_PROBLEM,                                        \
	  "the python3 with PyTorch for .py problems")                                             \
	X(size, CK_NUM, size, 1e-6, 1000, 0, NULL, NULL, "--size", NULL, "size factor",            \
	  CFG_RUN | CFG_TASKS, CONFIG_PROBLEM,                                                     \
	  "a KernelBench problem's sizes, scaled (none: as written)")                              \
	X(provider, CK_WORD, zProvider, 0, 0, NULL, "openai|anthropic|command", NULL,              \
	  "--provider", NULL, NULL, CFG_RUN, CONFIG_LLM, "the API the LLM speaks")                 \
	X(model, CK_STR, zModel, 0, 0, NULL, NULL, NULL, "--model", NULL, NULL, CFG_RUN,           \
	  CONFIG_LLM, "the model's name")                                                          \
	X(base_url, CK_STR, zBaseUrl, 0, 0, NULL, NULL, NULL, "--base-url", NULL, NULL, CFG_RUN,   \
	  CONFIG_LLM, "the endpoint (an OpenAI-compatible server, a proxy; none: the provider's)") \
	X(api_key_env, CK_STR, zApiKeyEnv, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, 0,            \
	  CONFIG_LLM, "the environment variable holding the API key (none: the provider's)")       \
	/* the command provider's program: wherever an LLM can be asked (the                       \
	 * workbench's :ideas and :implement too) */                                               \
	X(command, CK_STR, zCommand, 0, 0, NULL, NULL, NULL, "--command", NULL, NULL,              \
	  CFG_ASK | CFG_OPEN, CONFIG_LLM, "a program that answers prompts (the command provider)") \
	X(llm_timeout, CK_NUM, llmTimeoutS, 0.1, 7 * CONFIG_DAY, 600, NULL, NULL, "--llm-timeout", \
	  NULL, "seconds", CFG_ASK, CONFIG_LLM, "seconds a request may take")                      \
	X(llm_stall_timeout, CK_NUM, llmStallS, 0.1, 7 * CONFIG_DAY, 120, NULL, NULL, NULL, NULL,  \
	  "seconds", 0, CONFIG_LLM, "seconds a request may receive nothing before it fails")       \
	X(llm_retries, CK_INT, llmRetries, 0, 100, 3, NULL, NULL, NULL, NULL, "retries", 0,        \
	  CONFIG_LLM, "retries on 429, 5xx and connection errors")                                 \
	X(llm_max_in_flight, CK_INT, llmMaxInFlight, 1, 1024, 4, NULL, NULL, "--max-in-flight",    \
	  NULL, "requests", CFG_SEARCH, CONFIG_LLM, "requests at once")                            \
	X(max_tokens, CK_INT, llmMaxTokens, 1, 1e8, 0, NULL, NULL, NULL, NULL, "tokens", 0,        \
	  CONFIG_LLM, "the reply's token limit (none: the provider's)")                            \
	X(temperature, CK_NUM, llmTemperature, 0, 2, -1, NULL, NULL, NULL, NULL, "temperature", 0, \
	  CONFIG_LLM, "the temperature sent (none: none is sent)")                                 \
	X(price_input, CK_NUM, priceIn, 0, 1e6, -1, NULL, NULL, "--price-input", NULL, "dollars",  \
	  CFG_SEARCH, CONFIG_LLM,                                                                  \
	  "dollars per million input tokens (for the budget; none: unknown)")                      \
	X(price_output, CK_NUM, priceOut, 0, 1e6, -1, NULL, NULL, "--price-output", NULL,          \
	  "dollars", CFG_SEARCH, CONFIG_LLM, "dollars per million output tokens (none: unknown)")  \
	X(fix_attempts, CK_INT, fixAttempts, 0, 16, 1, NULL, NULL, "--fix", NULL, "fix prompts",   \
	  CFG_ASK, CONFIG_LLM, "fix prompts after a candidate fails")

/* the settings' ids: CFG_backend, CFG_jobs, ... */
enum config_id {
#define CFG_ID(key, ...) CFG_##key,
	CONFIG_KEYS(CFG_ID)
#undef CFG_ID
	    CFG_COUNT
};

struct config;
/* a row's hook: called with the value text once its kind has checked it,
 * before it is stored; 0 to store it, 1 when the hook stored it itself, -1
 * + err to refuse it */
typedef int config_hook_fn(struct config *c, const char *zValue, char *err);

/* a row of the table */
struct config_key {
	const char *zKey;
	enum config_kind kind;
	size_t off; /* the member's offset in struct config */
	double lo, hi;
	double def;           /* CK_INT, CK_NUM: the default */
	const char *zDef;     /* CK_STR, CK_WORD, CK_ENUM: the default text, or NULL */
	const char *zWords;   /* CK_WORD, CK_ENUM: "a|b|c" */
	config_hook_fn *hook; /* or NULL */
	const char *zFlag, *zFlagOff;
	const char *zWhat;
	unsigned cmds; /* CFG_ bits */
	const char *zGroup, *zHelp;
};

extern const struct config_key config_keys[CFG_COUNT];

/* the config file's path (fresh string) */
char *config_path(void);

/* the defaults (every member the table has; the rest zero) */
void config_defaults(struct config *c);

/* defaults, then the config file if it exists.  0, or -1 with err naming
 * the file, the line and what was wrong (the defaults stay in place). */
int config_load(struct config *c, char *err);
void config_free(struct config *c);

/* the worker launch command split on spaces (a NULL-terminated argv the
 * caller frees with config_argv_free()), or NULL when none is configured */
char **config_worker_argv(const struct config *c);
void config_argv_free(char **argv);

/* set one key from text (as in the file); 0 or -1 + err ("budget: -1 is out
 * of range (expected a number from 0.01 to 86400)"; an unknown key names the
 * nearest and the known ones) */
int config_set(struct config *c, const char *zKey, const char *zValue, char *err);

/* the id of key zKey, or -1 */
int config_key_find(const char *zKey);

/* what key id takes and its default, for help: "seconds, 0.01..86400,
 * default none", "host|cuda|auto, default auto", "default python3" */
void config_key_describe(enum config_id id, char *buf, size_t n);

#endif
