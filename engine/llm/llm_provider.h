/*
 * llm_provider.h - the provider table: each provider ("openai",
 * "anthropic", "command") is one struct llm_provider saying what it needs
 * from the configuration, which transport carries it (llm_transport.h),
 * and, for HTTP, its wire format (request body, headers, events, errors).
 * Also the parse state the wire formats fill and the command provider's
 * child process.  Internal to the llm_*.c files.
 */
#ifndef KL_LLM_PROVIDER_H
#define KL_LLM_PROVIDER_H

#include <cJSON.h>
#include <curl/curl.h>
#include <stddef.h>
#include <sys/types.h>

#include "llm.h"
#include "loop.h"
#include "util.h"

/* a reply being read, filled by a provider's parser */
struct llm_parse {
	strbuf text;    /* the reply's text so far */
	long inTokens;  /* -1 until reported */
	long outTokens; /* -1 until reported */
	char zStop[32]; /* the stop reason, "" until given */
	int done;       /* the stream's end marker arrived ([DONE], message_stop) */
	int sawChoice;  /* OpenAI: an event carried a choice */
	int retryable;  /* the error the parser reported may pass on a retry */
	long nEvents;   /* events parsed */
	size_t maxText; /* a longer text is an error */
	/* called with each piece of text as it arrives */
	void (*delta)(void *arg, const char *z, size_t n);
	void *arg;
};

/* append text to p (and pass it on); 0, or -1 + err when over the limit */
int llm_parse_text(struct llm_parse *p, const char *z, size_t n, char *err);

/* set p's token counts from a usage object's fields zIn and zOut (those
 * that are numbers) */
void llm_parse_usage(struct llm_parse *p, const cJSON *u, const char *zIn, const char *zOut);

/* a chat message {"role", "content"} */
cJSON *llm_message(const char *zRole, const char *zContent);
/* add "temperature" (when set) and "stream": true to a request body o, print
 * it and free o; returns the text (caller frees) */
char *llm_body_finish(cJSON *o, const struct llm_config *lc);
/* append the JSON and event-stream headers and, when zKey is set, the key
 * header zKeyHeader + zKey (the scratch copy is wiped) */
struct curl_slist *llm_headers(struct curl_slist *h, const char *zKeyHeader, const char *zKey);

struct llm_transport;

/* a provider: one entry of the table */
struct llm_provider {
	const char *zName;                     /* "openai", "anthropic", "command" */
	const struct llm_transport *transport; /* how its attempts travel */
	int needsCommand;                      /* the config must give a command */
	int needsModel;                        /* the config must give a model */
	const char *zKeyEnv;                   /* the variable the key is read from by
	                                        * default (NULL: no key) */
	int keyRequired;                       /* a missing key is an error */
	const char *zDefaultBase;              /* HTTP: the base URL when none is configured */
	const char *zPath;                     /* HTTP: appended to the base URL */
	/* HTTP wire format (NULL for the command provider) */
	/* the request's JSON body (fresh string) */
	char *(*body)(const struct llm_config *lc, const struct llm_request *rq);
	/* the headers, the key among them (appended to h) */
	struct curl_slist *(*headers)(const struct llm_config *lc, struct curl_slist *h);
	/* one Server-Sent Event: 0, or -1 + err (a protocol or model error) */
	int (*event)(struct llm_parse *p, const char *zEvent, const char *zData, size_t nData,
	             char *err);
	/* a whole JSON reply (not streamed): 0 or -1 + err */
	int (*whole)(struct llm_parse *p, const char *z, size_t n, char *err);
	/* the message inside an error body, into buf (n bytes) */
	void (*error_message)(const char *z, size_t len, char *buf, size_t n);
	/* the stream ended: 0 when the reply is complete, else -1 + err */
	int (*finish)(struct llm_parse *p, char *err);
};

extern const struct llm_provider llm_openai;
extern const struct llm_provider llm_anthropic;
extern const struct llm_provider llm_command;

/* every provider, ended by NULL (llm_config.c) */
extern const struct llm_provider *const llm_providers[];
/* the provider named zName, or NULL */
const struct llm_provider *llm_provider_find(const char *zName);
/* fill err with "provider: expected openai, anthropic or command, got 'NAME'"; returns -1 */
int llm_provider_unknown(char *err, const char *zName);

/* fill err for JSON that does not parse: z (len bytes) was event n of the
 * stream, named zEvent (NULL or "message": unnamed), or the whole reply when
 * n is 0: "malformed JSON in event 3 (ping) of the stream: {..."; returns -1 */
int llm_bad_json(char *err, const char *zEvent, long n, const char *z, size_t len);

/* ---- the command provider (llm_command.c) ---- */

struct llm_cmd;

/* called with stdout's bytes as they come */
typedef void (*llm_cmd_out_fn)(void *arg, const char *z, size_t n);
/* called once the child has exited and its output is drained: its wait
 * status and the last lines of its stderr */
typedef void (*llm_cmd_end_fn)(void *arg, int status, const char *zStderr);

/*
 * Run `sh -c zCommand` on loop l with $KLOOP_MODEL set to zModel (may be
 * NULL), writing zInput (n bytes) to its stdin without blocking.  Returns
 * the child (free with llm_cmd_free()) or NULL + err when it cannot start.
 */
struct llm_cmd *llm_cmd_start(struct loop *l, const char *zCommand, const char *zModel,
                              const char *zInput, size_t n, llm_cmd_out_fn out, llm_cmd_end_fn end,
                              void *arg, char *err);
/* kill the child's process group (if running), close its pipes, free it;
 * end is not called */
void llm_cmd_free(struct llm_cmd *c);

#endif
