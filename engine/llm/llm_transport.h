/*
 * llm_transport.h - the contract between the request queue (llm_queue.c)
 * and the transports that carry one attempt of a request: HTTP with streamed
 * Server-Sent Events (llm_http.c) and a local command's pipes
 * (llm_command.c).  The queue owns requests, their retries and their end;
 * a transport starts an attempt, feeds what arrives into the request's
 * parse state (llm_parse.c), and reports the attempt's end back with
 * llm_attempt_ok(), llm_attempt_failed() or llm_attempt_cancelled(),
 * through the table the queue gave the client.  Internal to the llm_*.c
 * files.
 */
#ifndef KL_LLM_TRANSPORT_H
#define KL_LLM_TRANSPORT_H

#include "llm.h"
#include "llm_provider.h"

enum llm_req_state { LLM_REQ_QUEUED, LLM_REQ_RUNNING, LLM_REQ_WAITING, LLM_REQ_DONE };

/* one request and its current attempt */
struct llm_req {
	int id;
	struct llm *c;
	char *zSystem, *zPrompt; /* owned copies */
	int maxTokens;
	struct llm_hooks h;
	void *arg;
	enum llm_req_state state;
	int cancelled;   /* llm_cancel() was called */
	int attempts;    /* attempts started */
	double t0;       /* submission time */
	double tFirst;   /* first text (-1: none yet) */
	long long timer; /* the retry delay (WAITING) */
	/* the current attempt */
	long long watchdog;     /* deadline and stall timer */
	double tStart;          /* the attempt's start */
	double tLast;           /* the last bytes received (set by the transport) */
	int decided;            /* the transport has heard the reply begin */
	long httpStatus;        /* the HTTP status (0: none) */
	struct llm_parse parse; /* the reply being read */
	int failed;             /* our own error ended the attempt (zErr) */
	int retryable;          /* ... and it may pass on a retry */
	char zErr[KL_ERRLEN];
	void *pAttempt; /* the transport's state of the attempt, or NULL */
	struct llm_req *next;
};

/* how an attempt's end reaches the queue: the queue's table (llm_new sets
 * it), which the transports call through llm_attempt_ok(), _cancelled()
 * and _failed() below, so that they call nothing of the queue's */
struct llm_attempt_end {
	void (*ok)(struct llm_req *r);
	void (*cancelled)(struct llm_req *r);
	void (*failed)(struct llm_req *r, int retryable, double retryAfter, const char *zWhy);
};

/* a client */
struct llm {
	struct loop *l;
	struct llm_config cfg; /* strings below are owned copies */
	char *zProvider, *zModel, *zBaseUrl, *zApiKey, *zCommand, *zEndpoint;
	const struct llm_provider *prov;
	const struct llm_attempt_end *end; /* the queue's, for the transports */
	void *pTransport;                  /* the transport's state for this client, or NULL */
	long long kick;                    /* pending pump (0: none) */
	struct llm_req *reqs;              /* every request not finished, in submission order */
	int nextId;
	int running;   /* attempts running */
	unsigned seed; /* jitter */
};

/* how a provider's attempts travel */
struct llm_transport {
	/* set up c->pTransport for a new client: 0, or -1 + err (may be NULL) */
	int (*init)(struct llm *c, char *err);
	/* free c->pTransport (may be NULL) */
	void (*fini)(struct llm *c);
	/* start an attempt of r (its parse state is reset): 0, or -1 + err */
	int (*start)(struct llm_req *r, char *err);
	/* stop r's attempt and free r->pAttempt, calling nothing back */
	void (*stop)(struct llm_req *r);
	/* an attempt that stalls or times out may pass on a retry (a network
	 * may; a local program would do the same again) */
	int retryStalls;
};

extern const struct llm_transport llm_http;
extern const struct llm_transport llm_command_transport;

/* the attempt ended with a complete reply: the request ends "ok" */
static inline void llm_attempt_ok(struct llm_req *r)
{
	r->c->end->ok(r);
}

/* the attempt ended because the request was cancelled */
static inline void llm_attempt_cancelled(struct llm_req *r)
{
	r->c->end->cancelled(r);
}

/*
 * The attempt failed with zWhy: retried (after retryAfter seconds when the
 * server asked for that) while retryable and attempts are left, else the
 * request ends with the error.
 */
static inline void llm_attempt_failed(struct llm_req *r, int retryable, double retryAfter,
                                      const char *zWhy)
{
	r->c->end->failed(r, retryable, retryAfter, zWhy);
}

#endif
