/*
 * jobs.h - the work in flight, for either front end: the evaluations and
 * LLM requests (`jobs`, the Activity pane's lines), the pool's workers, and
 * what a batch of work came to once it is done (jobs.c; the `jobs` and
 * `cancel` commands' handlers are in tui/verbs.h).
 */
#ifndef KL_JOBS_H
#define KL_JOBS_H

#include <stddef.h>

#include "driver.h"
#include "state.h"
#include "util.h"

/* the jobs in flight (evaluations, then LLM requests), one line each ("" when
 * none) into sb */
void jobs_text(struct driver *lv, strbuf *sb);

/*
 * What a batch of work came to, once it is done: "implemented 2 ideas: 4
 * candidates, 3 correct, fastest 1.8x (#7); overall best 1.6x (#3)" (the
 * batch's fastest by its median, the session's best) for the candidates from id fromId
 * on, or "evaluated N candidates" when none is new (nEvals evaluations
 * ended).  Returns 0 (nothing said) when there is nothing to say.
 */
int jobs_summary(const struct state *st, int fromId, int nEvals, strbuf *sb);

/* jobs in flight: evaluations plus LLM requests (sent or waiting to be) */
int jobs_count(struct driver *lv);

/* line i of the LLM requests in flight ("r3 LLM implement idea 1 branch 2:
 * streaming, ...") into buf of n bytes; returns how many there are */
int jobs_request_lines(struct driver *lv, int i, char *buf, size_t n);

/* line i of the pool's workers ("w0 local:0: busy #5, 3 done, 40% busy,
 * HOST, DEVICE": label, state, the candidate it evaluates, jobs done, the
 * share of its time it had work, host, device) into buf of n bytes;
 * returns how many workers there are */
int jobs_worker_line(struct driver *lv, int i, char *buf, size_t n);

#endif
