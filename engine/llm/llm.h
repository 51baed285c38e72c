/*
 * llm.h - requests to a language model that never block the event loop.
 * Providers: "openai" (any OpenAI-compatible chat-completions endpoint),
 * "anthropic" (the Messages API), both streamed over libcurl's multi
 * interface, and "command" (a local program: the prompt on its stdin, the
 * reply on its stdout).  Each request has a wall-clock limit and a stall
 * limit per attempt; 429, 5xx and connection errors are retried with
 * exponential backoff and jitter (honouring Retry-After); at most a set
 * number of requests are in flight; any can be cancelled; token usage and
 * cost come back with the reply.  The API key is held here and nowhere
 * else: it is sent in a header and redacted from every text handed back.
 */
#ifndef KL_LLM_H
#define KL_LLM_H

#include <stddef.h>

#include "loop.h"
#include "util.h"

struct llm_config {
	const char *zProvider; /* "openai", "anthropic" or "command" */
	const char *zModel;    /* model name (the command provider sets $KLOOP_MODEL) */
	const char *zBaseUrl;  /* NULL: the provider's (https://api.openai.com/v1,
	                        * https://api.anthropic.com); kloop appends
	                        * /chat/completions or /v1/messages */
	const char *zApiKey;   /* the key (NULL or "": no key is sent) */
	const char *zCommand;  /* command provider: a shell command line */
	double timeoutS;       /* wall-clock limit of one attempt */
	double stallS;         /* an attempt that receives nothing for this long fails */
	int maxRetries;        /* attempts after the first (0: none) */
	double backoffS;       /* the first retry's delay, doubled each time, with jitter */
	double backoffMaxS;    /* the longest delay between attempts */
	int maxInFlight;       /* requests running at once; more wait in order */
	int maxTokens;         /* max_tokens to ask for (0: Anthropic 8192, OpenAI unset) */
	double temperature;    /* < 0: not sent */
	double priceIn;        /* USD per million input tokens (< 0: unknown) */
	double priceOut;       /* USD per million output tokens (< 0: unknown) */
	size_t maxReplyBytes;  /* a longer reply fails (0: 32 MiB) */
};

/* the defaults: the configuration's (config.h's table: the timeouts, the
 * retries, in flight, no temperature, prices unknown), retries from 1 s
 * doubling up to 60 s (implemented in llm_config.c) */
void llm_config_defaults(struct llm_config *lc);

struct llm_request {
	const char *zSystem; /* the system prompt, or NULL */
	const char *zPrompt; /* the user message */
	int maxTokens;       /* 0: the config's */
};

/* what a finished request gives back (valid only during the done call) */
struct llm_reply {
	int id;              /* the request */
	const char *zStatus; /* "ok", "error" or "cancelled" (the journal's name) */
	int ok;              /* 1 when zStatus is "ok": the reply came */
	const char *zText;   /* the reply's text ("" if none; on error, what arrived) */
	size_t nText;
	const char *zError; /* why it failed, for people (NULL when ok) */
	const char *zStop;  /* the stop reason given ("stop", "end_turn", "length") or "" */
	int httpStatus;     /* the last attempt's HTTP status (0: none) */
	long inTokens;      /* input tokens (-1: not reported) */
	long outTokens;     /* output tokens (-1: not reported) */
	double cost;        /* USD, when the prices and tokens are known, else -1 */
	double latencyS;    /* from submission to the end */
	double firstTokenS; /* from submission to the first text (-1: none) */
	int attempts;       /* attempts made */
};

/* a request's callbacks; all are called from the loop, never from inside
 * llm_submit() or llm_cancel() */
struct llm_hooks {
	/* text as it streams in (may be NULL) */
	void (*delta)(int id, const char *z, size_t n, void *arg);
	/* the attempt failed and another starts after delayS: the text streamed
	 * so far is void (may be NULL) */
	void (*retry)(int id, int attempt, double delayS, const char *zWhy, void *arg);
	/* the end, called exactly once (required) */
	void (*done)(int id, const struct llm_reply *r, void *arg);
};

struct llm;

/* a client on loop l (its configuration and key are copied).  Ignores
 * SIGPIPE if it is not handled (writes to a closed pipe or socket must fail,
 * not kill kloop).  NULL + err for an unknown provider. */
struct llm *llm_new(struct loop *l, const struct llm_config *lc, char *err);
/* cancel everything without calling back, and free the client */
void llm_free(struct llm *c);

/* queue a request (rq's strings are copied); returns its id (> 0), or -1 +
 * err when rq has no prompt */
int llm_submit(struct llm *c, const struct llm_request *rq, const struct llm_hooks *h, void *arg,
               char *err);
/* cancel request id: its done hook says "cancelled" (from the loop).  0, or
 * -1 when no such request is pending */
int llm_cancel(struct llm *c, int id);

/* end request id at once without calling its hooks (for a front end that
 * goes away; not from the request's own hooks).  0, or -1 when no such
 * request is pending */
int llm_drop(struct llm *c, int id);

/* requests not finished (queued, running or waiting to retry) */
int llm_pending(const struct llm *c);
/* attempts running now (at most the config's maxInFlight) */
int llm_running(const struct llm *c);
/* the config's maxInFlight: requests that run at once */
int llm_max_in_flight(const struct llm *c);

/* what a request of nPromptBytes (system and user message) may cost, in
 * USD, before its usage is known: about 4 bytes a token in, and out the
 * config's maxTokens, else outGuess (the longest reply seen), else 1024
 * tokens.  -1 when the prices are unknown */
double llm_cost_estimate(const struct llm *c, size_t nPromptBytes, long outGuess);

/* the configured max_tokens of every request, 0 where none is set */
int llm_max_tokens(const struct llm *c);

/* the provider's name, the model and the endpoint requests go to ("" for
 * the command provider); static or owned by c */
const char *llm_provider_name(const struct llm *c);
const char *llm_model(const struct llm *c);
const char *llm_endpoint(const struct llm *c);

/* replace every occurrence of the key in sb by "[redacted]" */
void llm_redact(const struct llm *c, strbuf *sb);

#endif
