/*
 * config.h - kloop's configuration: built-in defaults, then the file
 * $XDG_CONFIG_HOME/kloop/config (or ~/.config/kloop/config), then flags.
 * The file holds `key = value` lines; `#` starts a comment.
 */
#ifndef KL_CONFIG_H
#define KL_CONFIG_H

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
	double llmTimeoutS;    /* wall-clock limit of one LLM request attempt (600) */
	double llmStallS;      /* an attempt that receives nothing for this long fails (120) */
	int llmRetries;        /* retries on 429, 5xx and connection errors (3) */
	int llmMaxInFlight;    /* LLM requests at once (4) */
	int llmMaxTokens;      /* max_tokens sent (0: the provider's default) */
	double llmTemperature; /* temperature sent (-1: none) */
	double priceIn;        /* USD per million input tokens (-1: unknown) */
	double priceOut;       /* USD per million output tokens (-1: unknown) */
	int fixAttempts;       /* fix prompts per implementation branch (1) */
	int noSandbox;         /* candidates run without bubblewrap (sandbox = off) */
	double atol, rtol;     /* tolerance overrides for float outputs (-1: the task's) */
	int bTol;              /* atol or rtol was set (a zeroed config has neither) */
	double size;           /* size factor of a KernelBench problem's dimensions (0: none) */
	char *zLibs;           /* libraries for candidates ("cublas cudnn"), or NULL */
	int mps;     /* MPS for the local GPUs: auto 0, on 1, off 2 (mps.h's enum mps_mode) */
	char *zPath; /* the config file read, or NULL */
};

/* the config file's path (fresh string) */
char *config_path(void);

/* defaults, then the config file if it exists.  0, or -1 with err naming the
 * file, the line and what was wrong (the defaults stay in place). */
int config_load(struct config *c, char *err);
void config_free(struct config *c);

/* the worker launch command split on spaces (a NULL-terminated argv the
 * caller frees with config_argv_free()), or NULL when none is configured */
char **config_worker_argv(const struct config *c);
void config_argv_free(char **argv);

/* set one key from text (as in the file); 0 or -1 + err */
int config_set(struct config *c, const char *zKey, const char *zValue, char *err);

#endif
