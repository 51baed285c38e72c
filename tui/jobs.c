/*
 * jobs.c - the work in flight: the evaluations and LLM requests (`jobs`,
 * the Activity pane's lines), the pool's workers, `cancel`, and what a
 * batch of work came to once it is done.
 */
#include "jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "verbs.h"
#include "pipeline.h"
#include "pool.h"
#include "report.h"

int verb_cancel(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	const char *z = c->azArg[0];
	if (actions_need_live(f, c) < 0)
		return -1;
	if (!strcmp(z, "all")) {
		int n = 0;
		struct pipeline_request a[64];
		struct pipeline *p = driver_pipeline(f->lv);
		int nr = pipeline_requests(p, a, 64);
		for (int i = 0; i < nr; i++)
			if (a[i].request && pipeline_cancel(p, a[i].request, err) == 0)
				n++;
		const struct driver_job *j;
		while (driver_evals(f->lv, &j) && driver_cancel_eval(f->lv, j[0].cand, err) == 0)
			n++;
		if (!n)
			return actions_fail(f, "cancel: nothing is running");
		actions_say(f, "cancelled %d job%s", n, n == 1 ? "" : "s");
		return 0;
	}
	char *end;
	int isReq = z[0] == 'r' || z[0] == 'R';
	long id = strtol(z + (isReq || z[0] == '#'), &end, 10);
	if (*end || end == z + (isReq || z[0] == '#') || id <= 0)
		return actions_fail(
		    f,
		    "cancel: '%s' is not a candidate id, rN (an LLM request, as `jobs` "
		    "lists it) or all",
		    z);
	if (isReq) {
		if (pipeline_cancel(driver_pipeline(f->lv), (int)id, err) < 0)
			return actions_fail(f, "cancel: %s", err);
		actions_say(f, "LLM request %ld cancelled", id);
		return 0;
	}
	if (driver_cancel_eval(f->lv, (int)id, err) < 0)
		return actions_fail(f, "cancel: %s", err);
	actions_say(f, "evaluation of candidate %ld cancelled", id);
	return 0;
}

int jobs_summary(const struct state *st, int fromId, int nEvals, strbuf *sb)
{
	int n = 0, nOk = 0, nIdea = 0, seen[64] = {0};
	const struct cand *best = NULL;
	for (int i = 0; i < st->nCand; i++) {
		const struct cand *c = &st->aCand[i];
		if (c->id < fromId)
			continue;
		n++;
		if (c->status == STATUS_CORRECT) {
			nOk++;
			if (c->speedup >= 0 && (!best || c->speedup > best->speedup))
				best = c;
		}
		int dup = 0;
		for (int k = 0; k < nIdea && k < 64; k++)
			dup |= seen[k] == c->ideaId;
		if (c->ideaId && !dup && nIdea < 64)
			seen[nIdea++] = c->ideaId;
	}
	if (!n && !nEvals)
		return 0;
	if (nIdea)
		sb_addf(sb, "implemented %d idea%s: ", nIdea, nIdea == 1 ? "" : "s");
	else if (!n)
		sb_addf(sb, "evaluated %d candidate%s", nEvals, nEvals == 1 ? "" : "s");
	if (n) {
		sb_addf(sb, "%d candidate%s, %d correct", n, n == 1 ? "" : "s", nOk);
		/* the batch's fastest by its median; the best is the session's */
		if (best)
			sb_addf(sb, ", fastest %.3gx (#%d)", best->speedup, best->id);
	}
	/* the session's best (state_best(), as the header says it) */
	if (report_best(st, NULL) && n) {
		char bt[160];
		report_best_text(st, bt, sizeof bt);
		sb_addf(sb, "; overall %s", bt);
	}
	return 1;
}

int jobs_worker_line(struct driver *lv, int i, char *buf, size_t n)
{
	int nw = lv ? driver_workers(lv) : 0;
	if (i < 0 || i >= nw)
		return nw;
	static const char *const state[] = {
	    [POOL_W_WAITING] = "waiting for Slurm",
	    [POOL_W_STARTING] = "starting",
	    [POOL_W_IDLE] = "idle",
	    [POOL_W_BUSY] = "busy",
	    [POOL_W_BACKOFF] = "lost, retrying",
	    [POOL_W_DISABLED] = "disabled",
	};
	struct pool_info pi;
	int cand = driver_worker(lv, i, &pi);
	char job[32] = "";
	if (cand)
		snprintf(job, sizeof job, " #%d", cand);
	const char *st = pi.upS <= 0 && pi.state == POOL_W_IDLE ? "not started" : state[pi.state];
	/* the state first: a narrow pane cuts the host and the device */
	snprintf(buf, n, "w%d %s: %s%s, %d done, %.0f%% busy, %s, %s%s%s", i, pi.zLabel, st, job,
	         pi.nDone, pi.upS > 0 ? 100 * pi.busyS / pi.upS : 0.0,
	         pi.zHost && *pi.zHost ? pi.zHost : "host not known yet",
	         pi.zDevice && *pi.zDevice ? pi.zDevice : "device not known yet",
	         pi.zNote ? ": " : "", pi.zNote ? pi.zNote : "");
	/* a worker's host and device names came over its pipe: text only */
	for (unsigned char *p = (unsigned char *)buf; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			*p = '?';
	return nw;
}

int jobs_count(struct driver *lv)
{
	if (!lv)
		return 0;
	struct pipeline_request a[64];
	int n = pipeline_requests(driver_pipeline(lv), a, 64);
	return driver_jobs(lv) + n;
}

void jobs_text(struct driver *lv, strbuf *sb)
{
	double now = now_s();
	const struct driver_job *aj = NULL;
	int nj = lv ? driver_evals(lv, &aj) : 0;
	for (int i = 0; i < nj; i++) {
		const struct driver_job *j = &aj[i];
		const struct cand *c = state_cand(driver_state(lv), j->cand);
		sb_addf(sb, "#%d %s: %s", j->cand, c ? c->zName : "?", j->zStage);
		if (j->k > 0)
			sb_addf(sb, " %d", j->k);
		sb_addf(sb, " (%.1f s)\n", now - j->tStart);
	}
	char line[256];
	int n = jobs_request_lines(lv, 0, line, sizeof line);
	for (int i = 0; i < n; i++) {
		jobs_request_lines(lv, i, line, sizeof line);
		sb_addf(sb, "%s\n", line);
	}
}

int jobs_request_lines(struct driver *lv, int i, char *buf, size_t n)
{
	struct pipeline_request a[64];
	int nr = lv ? pipeline_requests(driver_pipeline(lv), a, 64) : 0;
	if (i < 0 || i >= nr)
		return nr;
	const struct pipeline_request *q = &a[i];
	const struct driver_stream *st;
	int ns = driver_streams(lv, &st);
	const struct driver_stream *s = NULL;
	for (int k = 0; k < ns; k++)
		if (st[k].request == q->request)
			s = &st[k];
	char what[64];
	if (q->idea)
		snprintf(what, sizeof what, "%s idea %d/b%d", q->zPurpose, q->idea, q->branch);
	else
		snprintf(what, sizeof what, "%s #%d", q->zPurpose, q->parent);
	double now = now_s();
	/* short: the Activity pane may be narrow */
	if (!q->request)
		snprintf(buf, n, "LLM %s: waits for #%d's result", what, q->parent);
	else if (s)
		snprintf(buf, n, "r%d LLM %s: ~%ld tokens, %.0f s", q->request, what,
		         (s->nChars + 3) / 4, now - q->tAsked);
	else
		snprintf(buf, n, "r%d LLM %s: waiting, %.0f s", q->request, what, now - q->tAsked);
	return nr;
}

int verb_jobs(struct actions_front *f, const struct commands_line *c)
{
	(void)c;
	strbuf sb = STRBUF_INIT;
	jobs_text(f->lv, &sb);
	if (!sb.len)
		actions_say(f, "no jobs are running");
	else
		f->h->page(f->arg, "jobs", sb.buf, 0);
	/* and the workers that run the evaluations (issue 13) */
	sb_reset(&sb);
	char line[512];
	int nw = jobs_worker_line(f->lv, 0, line, sizeof line);
	for (int i = 0; i < nw; i++) {
		jobs_worker_line(f->lv, i, line, sizeof line);
		sb_addf(&sb, "%s\n", line);
	}
	if (sb.len)
		f->h->page(f->arg, "workers", sb.buf, 0);
	sb_free(&sb);
	return 0;
}
