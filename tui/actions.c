/*
 * actions.c - the commands' effects, shared by the TUI and the REPL: they
 * read the state, emit events through sessions/runner.c, and answer through
 * the front end's hooks.
 */
#include "actions.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive_view.h"
#include "compile.h"
#include "editor.h"
#include "pipeline.h"
#include "pool.h"
#include "report.h"
#include "search.h"

const struct state *actions_state(const struct actions_front *f)
{
	return f->lv ? runner_state(f->lv) : f->rp ? &f->rp->st : NULL;
}

static int fail(struct actions_front *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int fail(struct actions_front *f, const char *fmt, ...)
{
	strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	f->h->say(f->arg, sb.buf, 1);
	sb_free(&sb);
	return -1;
}

static void say(struct actions_front *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(struct actions_front *f, const char *fmt, ...)
{
	strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	f->h->say(f->arg, sb.buf, 0);
	sb_free(&sb);
}

static const struct cand *cand_arg(struct actions_front *f, const struct commands_line *c, int i)
{
	const struct state *st = actions_state(f);
	const struct cand *cd = st ? state_cand(st, (int)c->aNum[i]) : NULL;
	if (!cd)
		fail(f, "%s: there is no candidate %ld (%d in the session)", c->def->name,
		     c->aNum[i], st ? st->nCand : 0);
	return cd;
}

/* commands that change the session need a live one */
static int need_live(struct actions_front *f, const struct commands_line *c)
{
	if (f->lv)
		return 0;
	return fail(
	    f, "%s: a replay is read-only; `continue` (or c) goes on from here as a new session",
	    c->def->name);
}

/* the LLM pipeline, or the reason there is none, said as the command's error */
static int need_llm(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	if (need_live(f, c) < 0)
		return -1;
	if (!f->cfg || !f->cfg->zProvider)
		return fail(
		    f,
		    "%s: no LLM provider is configured (give --provider openai|anthropic|command "
		    "with --model and --base-url, or set provider, model and base_url in "
		    "$XDG_CONFIG_HOME/kloop/config; `kloop doctor` checks it)",
		    c->def->name);
	if (runner_llm(f->lv, err) < 0)
		return fail(f, "%s: %s", c->def->name, err);
	return 0;
}

/* the candidate ideas are about: the TUI's selection, else the fastest
 * correct one, else the first */
static int ideas_parent(const struct actions_front *f)
{
	const struct state *st = actions_state(f);
	if (f->selCand && state_cand(st, f->selCand))
		return f->selCand;
	int best = 0;
	double bs = -1;
	for (int i = 0; i < st->nCand; i++)
		if (state_cand_rankable(st, &st->aCand[i]) && st->aCand[i].speedup > bs)
			bs = st->aCand[i].speedup, best = st->aCand[i].id;
	return best ? best : st->nCand ? st->aCand[0].id : 0;
}

static const struct state_idea *idea_arg(struct actions_front *f, const struct commands_line *c)
{
	const struct state *st = actions_state(f);
	const struct state_idea *d = state_idea(st, (int)c->aNum[0]);
	if (!d)
		fail(f, "%s: there is no idea %ld (%d in the session)", c->def->name, c->aNum[0],
		     st->nIdea);
	return d;
}

/* revise: "TITLE\n\nDESCRIPTION" in $EDITOR, or TEXT (its first line the title) */
static int revise(struct actions_front *f, const struct state_idea *d,
                  const struct commands_line *c)
{
	char err[KL_ERRLEN];
	strbuf text = STRBUF_INIT;
	if (c->nArg > 1) {
		for (int i = 1; i < c->nArg; i++)
			sb_addf(&text, "%s%s", i > 1 ? " " : "", c->azArg[i]);
	} else {
		char *orig = xasprintf("%s\n\n%s\n", d->zTitle, d->zDescription);
		char *path = editor_tempfile("idea.txt", orig, err);
		int rc = path ? f->h->edit(f->arg, path, err) : -1;
		if (rc == 0 && read_file(path, &text, 1 << 20, err) < 0)
			rc = -1;
		if (path)
			editor_cleanup(path);
		free(path);
		int same = rc == 0 && text.buf && !strcmp(text.buf, orig);
		free(orig);
		if (rc != 0 || same) {
			sb_free(&text);
			if (rc > 0)
				return fail(f,
				            "revise: the editor exited with status %d; idea %d is "
				            "unchanged",
				            rc, d->id);
			if (rc < 0)
				return fail(f, "revise: %s", err);
			say(f, "idea %d is unchanged", d->id);
			return 0;
		}
	}
	/* the title is the first line, the description the rest (or all of it) */
	char *t = text.buf ? text.buf : "";
	while (*t == '\n' || *t == ' ')
		t++;
	size_t k = strcspn(t, "\n");
	char *title = xstrndup(t, k > 80 ? 80 : k);
	const char *rest = t + k;
	while (*rest == '\n' || *rest == ' ')
		rest++;
	char *desc = xstrdup(*rest ? rest : t);
	size_t n = strlen(desc);
	while (n && (desc[n - 1] == '\n' || desc[n - 1] == ' '))
		desc[--n] = 0;
	int rc = 0;
	if (!*title)
		rc = fail(f, "revise: the text is empty; idea %d is unchanged", d->id);
	else if (runner_idea_revise(f->lv, d->id, title, desc, err) < 0)
		rc = fail(f, "revise: %s", err);
	else
		say(f, "idea %d revised: %s", d->id, title);
	free(title);
	free(desc);
	sb_free(&text);
	return rc;
}

/* implement every accepted idea that has no candidate yet, B branches each */
static int implement(struct actions_front *f, const struct commands_line *c)
{
	const struct state *st = actions_state(f);
	int b = c->nArg ? (int)c->aNum[0] : 1, n = 0;
	char err[KL_ERRLEN];
	for (int i = 0; i < st->nIdea; i++) {
		const struct state_idea *d = &st->aIdea[i];
		int done = 0;
		for (int k = 0; k < st->nCand && !done; k++)
			done = st->aCand[k].ideaId == d->id;
		if (d->status != IDEA_ACCEPTED || done)
			continue;
		int parent = d->parent && state_cand(st, d->parent) ? d->parent : ideas_parent(f);
		if (runner_implement(f->lv, d->id, parent, b, err) < 0)
			return fail(f, "implement: idea %d: %s", d->id, err);
		n++;
	}
	if (!n)
		return fail(
		    f, "implement: no accepted idea waits for code (accept one first: accept ID)");
	say(f, "implementing %d idea%s, %d branch%s each", n, n == 1 ? "" : "s", b,
	    b == 1 ? "" : "es");
	return 0;
}

static int do_llm(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	if (need_llm(f, c) < 0)
		return -1;
	const struct state_idea *d = NULL;
	if (c->def->id != CMD_IDEAS && c->def->id != CMD_IMPLEMENT && !(d = idea_arg(f, c)))
		return -1;
	switch (c->def->id) {
	case CMD_IDEAS: {
		int n = c->nArg ? (int)c->aNum[0] : 3, parent = ideas_parent(f);
		if (!parent)
			return fail(f, "ideas: there is no candidate to improve yet");
		if (runner_ideas(f->lv, parent, n, err) < 0)
			return fail(f, "ideas: %s", err);
		say(f, "asking the LLM for %d idea%s to improve candidate %d", n, n == 1 ? "" : "s",
		    parent);
		return 0;
	}
	case CMD_ACCEPT:
		if (runner_idea_accept(f->lv, d->id, err) < 0)
			return fail(f, "accept: %s", err);
		say(f, "idea %d accepted: %s (implement writes its code)", d->id, d->zTitle);
		return 0;
	case CMD_REJECT:
		if (runner_idea_reject(f->lv, d->id, err) < 0)
			return fail(f, "reject: %s", err);
		say(f, "idea %d rejected", d->id);
		return 0;
	case CMD_REVISE:
		return revise(f, d, c);
	default:
		return implement(f, c);
	}
}

/* ---- the journal's LLM traffic: prompt ID, reply ID ---- */

/* each event of the session's journal (live) or the replay's, parsed, to
 * fn until it returns nonzero; returns that value (0: none did) */
static int each_event(struct actions_front *f, int (*fn)(const cJSON *e, void *arg), void *arg)
{
	strbuf text = STRBUF_INIT;
	const char *z = NULL;
	if (f->rp) {
		z = f->rp->text.buf;
	} else if (f->lv) {
		char err[KL_ERRLEN];
		if (read_file(f->lv->ses->zPath, &text, 1u << 30, err) == 0)
			z = text.buf;
	}
	int rc = 0;
	for (const char *p = z; p && *p && !rc;) {
		size_t k = strcspn(p, "\n");
		/* only the LLM's events and candidates are wanted: skip the others unparsed */
		if (memmem(p, k, "\"llm_re", 7) || memmem(p, k, "\"candidate_added\"", 17)) {
			cJSON *e = cJSON_ParseWithLength(p, k);
			if (e)
				rc = fn(e, arg);
			cJSON_Delete(e);
		}
		p += k + (p[k] == '\n');
	}
	sb_free(&text);
	return rc;
}

struct llm_find {
	int cand;       /* the candidate */
	int request;    /* its request (found first) */
	cJSON *req;     /* the llm_request event (a copy) */
	cJSON *resp;    /* the llm_response */
	char *zChanges; /* the candidate's "changes" (the model's explanation) */
};

static int find_llm(const cJSON *e, void *arg)
{
	struct llm_find *q = arg;
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(e, "type"));
	const cJSON *rq = cJSON_GetObjectItem(e, "request");
	if (!type)
		return 0;
	if (!strcmp(type, "candidate_added")) {
		const cJSON *id = cJSON_GetObjectItem(e, "id");
		if (cJSON_IsNumber(id) && id->valueint == q->cand && cJSON_IsNumber(rq)) {
			q->request = rq->valueint;
			const char *ch = cJSON_GetStringValue(cJSON_GetObjectItem(e, "changes"));
			free(q->zChanges);
			q->zChanges = ch && *ch ? xstrdup(ch) : NULL;
		}
		return 0;
	}
	if (!cJSON_IsNumber(rq) || q->cand > 0) /* the first pass wants the candidate only */
		return 0;
	cJSON **slot = !strcmp(type, "llm_request")    ? &q->req
	               : !strcmp(type, "llm_response") ? &q->resp
	                                               : NULL;
	if (slot) {
		/* the last request with that id before the candidate (ids may repeat
		 * after a continued replay): keep the latest */
		cJSON_Delete(*slot);
		*slot = cJSON_Duplicate(e, 1);
	}
	return 0;
}

/* the llm_request and llm_response of one request id */
struct llm_pick {
	int request;
	struct llm_find *q;
};

static int find_llm_request(const cJSON *e, void *arg)
{
	struct llm_pick *pk = arg;
	const cJSON *rq = cJSON_GetObjectItem(e, "request");
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(e, "type"));
	if (!type || !cJSON_IsNumber(rq) || rq->valueint != pk->request ||
	    !strncmp(type, "candidate", 9))
		return 0;
	return find_llm(e, pk->q);
}

static const char *js(const cJSON *o, const char *k)
{
	const char *z = cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
	return z ? z : "";
}

static int prompt_reply(struct actions_front *f, const struct commands_line *c,
                        const struct cand *cd)
{
	int bReply = c->def->id == CMD_REPLY;
	struct llm_find q = {.cand = cd->id};
	/* two passes: the candidate names its request; then that request */
	each_event(f, find_llm, &q);
	if (!q.request) {
		free(q.zChanges);
		return fail(f,
		            "%s: candidate %d (%s, origin %s) was not made by the LLM: no request "
		            "made it",
		            c->def->name, cd->id, cd->zName, cd->zOrigin);
	}
	struct llm_find q2 = {.cand = -1};
	strbuf sb = STRBUF_INIT;
	int want = q.request;
	struct llm_pick pick = {want, &q2};
	each_event(f, find_llm_request, &pick);
	if (!bReply) {
		if (!q2.req) {
			sb_free(&sb);
			free(q.zChanges);
			return fail(f, "prompt: the journal holds no llm_request %d", want);
		}
		sb_addf(&sb, "candidate #%d %s: LLM request %d (%s", cd->id, cd->zName, want,
		        js(q2.req, "purpose"));
		if (*js(q2.req, "model"))
			sb_addf(&sb, ", %s %s", js(q2.req, "provider"), js(q2.req, "model"));
		sb_adds(&sb, ")\n\nsystem\n");
		sb_adds(&sb, js(q2.req, "system"));
		sb_adds(&sb, "\n\nprompt\n");
		sb_adds(&sb, js(q2.req, "prompt"));
		sb_adds(&sb, "\n");
	} else {
		if (!q2.resp) {
			sb_free(&sb);
			free(q.zChanges);
			return fail(f, "reply: request %d has no response in the journal", want);
		}
		sb_addf(&sb, "candidate #%d %s: reply to LLM request %d (%s", cd->id, cd->zName,
		        want, js(q2.resp, "status"));
		double in = cJSON_GetNumberValue(cJSON_GetObjectItem(q2.resp, "input_tokens"));
		double out = cJSON_GetNumberValue(cJSON_GetObjectItem(q2.resp, "output_tokens"));
		double lat = cJSON_GetNumberValue(cJSON_GetObjectItem(q2.resp, "latency_s"));
		if (in >= 0 && out >= 0)
			sb_addf(&sb, ", %.0f tokens in, %.0f out", in, out);
		if (lat >= 0)
			sb_addf(&sb, ", %.1f s", lat);
		sb_adds(&sb, ")\n");
		/* the model's words: the reply outside its code fences */
		strbuf ex = STRBUF_INIT;
		int fenced = 0;
		for (const char *p = js(q2.resp, "text"); *p;) {
			size_t k = strcspn(p, "\n");
			const char *t = p;
			while (t < p + k && (*t == ' ' || *t == '\t'))
				t++;
			if (!strncmp(t, "```", 3))
				fenced = !fenced;
			else if (!fenced && (ex.len || t < p + k))
				sb_add(&ex, p, k), sb_adds(&ex, "\n");
			p += k + (p[k] == '\n');
		}
		while (ex.len && (ex.buf[ex.len - 1] == '\n' || ex.buf[ex.len - 1] == ' '))
			ex.buf[--ex.len] = 0;
		if (ex.len)
			sb_addf(&sb, "\nthe model's explanation\n%s\n", ex.buf);
		sb_free(&ex);
		if (q.zChanges)
			sb_addf(&sb, "\nwhat changed: %s\n", q.zChanges);
		sb_adds(&sb, "\nthe reply\n");
		sb_adds(&sb, js(q2.resp, "text"));
		sb_adds(&sb, "\n");
	}
	char title[64];
	snprintf(title, sizeof title, "%s #%d", c->def->name, cd->id);
	f->h->page(f->arg, title, sb.buf, cd->id);
	sb_free(&sb);
	free(q.zChanges);
	cJSON_Delete(q2.req);
	cJSON_Delete(q2.resp);
	return 0;
}

/* ---- cancel ---- */

static int cancel(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	const char *z = c->azArg[0];
	if (need_live(f, c) < 0)
		return -1;
	if (!strcmp(z, "all")) {
		int n = 0;
		struct pipeline_request a[64];
		int nr = runner_requests(f->lv, a, 64);
		for (int i = 0; i < nr; i++)
			if (a[i].request && runner_cancel_request(f->lv, a[i].request, err) == 0)
				n++;
		while (f->lv->nJob && runner_cancel_eval(f->lv, f->lv->aJob[0].cand, err) == 0)
			n++;
		if (!n)
			return fail(f, "cancel: nothing is running");
		say(f, "cancelled %d job%s", n, n == 1 ? "" : "s");
		return 0;
	}
	char *end;
	int isReq = z[0] == 'r' || z[0] == 'R';
	long id = strtol(z + (isReq || z[0] == '#'), &end, 10);
	if (*end || end == z + (isReq || z[0] == '#') || id <= 0)
		return fail(f,
		            "cancel: '%s' is not a candidate id, rN (an LLM request, as `jobs` "
		            "lists it) or all",
		            z);
	if (isReq) {
		if (runner_cancel_request(f->lv, (int)id, err) < 0)
			return fail(f, "cancel: %s", err);
		say(f, "LLM request %ld cancelled", id);
		return 0;
	}
	if (runner_cancel_eval(f->lv, (int)id, err) < 0)
		return fail(f, "cancel: %s", err);
	say(f, "evaluation of candidate %ld cancelled", id);
	return 0;
}

int actions_summary(const struct state *st, int fromId, int nEvals, strbuf *sb)
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
		if (best)
			sb_addf(sb, ", best %.3gx (#%d)", best->speedup, best->id);
	}
	/* the session's best (state_best(), as the header says it) */
	if (report_best(st, NULL) && n) {
		char bt[160];
		report_best_text(st, bt, sizeof bt);
		sb_addf(sb, "; overall %s", bt);
	}
	return 1;
}

int actions_worker_line(struct runner *lv, int i, char *buf, size_t n)
{
	int nw = lv && lv->pool ? pool_size(lv->pool) : 0;
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
	pool_info(lv->pool, i, &pi);
	char job[32] = "";
	for (int k = 0; pi.job && k < lv->nJob; k++)
		if (lv->aJob[k].job == pi.job)
			snprintf(job, sizeof job, " #%d", lv->aJob[k].cand);
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

int actions_jobs_count(struct runner *lv)
{
	if (!lv)
		return 0;
	struct pipeline_request a[64];
	int n = runner_requests(lv, a, 64);
	return runner_jobs(lv) + n;
}

void actions_jobs_text(struct runner *lv, strbuf *sb)
{
	double now = now_s();
	for (int i = 0; lv && i < lv->nJob; i++) {
		const struct runner_job *j = &lv->aJob[i];
		const struct cand *c = state_cand(runner_state(lv), j->cand);
		sb_addf(sb, "#%d %s: %s", j->cand, c ? c->zName : "?", j->zStage);
		if (j->k > 0)
			sb_addf(sb, " %d", j->k);
		sb_addf(sb, " (%.1f s)\n", now - j->tStart);
	}
	char line[256];
	int n = actions_request_lines(lv, 0, line, sizeof line);
	for (int i = 0; i < n; i++) {
		actions_request_lines(lv, i, line, sizeof line);
		sb_addf(sb, "%s\n", line);
	}
}

int actions_request_lines(struct runner *lv, int i, char *buf, size_t n)
{
	struct pipeline_request a[64];
	int nr = lv ? runner_requests(lv, a, 64) : 0;
	if (i < 0 || i >= nr)
		return nr;
	const struct pipeline_request *q = &a[i];
	const struct runner_stream *st;
	int ns = runner_streams(lv, &st);
	const struct runner_stream *s = NULL;
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

/* bench ID --on W (or --on=W): W, or -1 after saying what is wrong */
static int worker_arg(struct actions_front *f, const struct commands_line *c)
{
	const char *z = NULL;
	if (c->nArg == 3 && !strcmp(c->azArg[1], "--on"))
		z = c->azArg[2];
	else if (c->nArg == 2 && !strncmp(c->azArg[1], "--on=", 5))
		z = c->azArg[1] + 5;
	if (!z)
		return fail(
		    f, "bench: expected --on W or --ab OTHER after the id, got '%s' (usage: %s)",
		    c->azArg[1], c->def->usage);
	char *end;
	errno = 0;
	long w = strtol(z, &end, 10);
	if (!*z || *end || errno || w < 0 || w > 1000000)
		return fail(f, "bench: --on wants a worker number (0, 1, ...), got '%s'", z);
	return (int)w;
}

static void table_text(const struct state *st, struct popview *pv, strbuf *sb)
{
	popview_refresh(pv, st);
	report_table_header(sb);
	sb_adds(sb, "\n");
	for (int i = 0; i < pv->nIdx; i++) {
		report_table_row(&st->aCand[pv->aIdx[i]], NULL, sb);
		sb_adds(sb, "\n");
	}
	sb_addf(sb, "%d of %d candidates; ", pv->nIdx, st->nCand);
	popview_describe(pv, sb);
	sb_adds(sb, "\n");
}

int actions_edit(struct actions_front *f, int id, char *err)
{
	const struct cand *c = state_cand(runner_state(f->lv), id);
	if (!c)
		return kl_err(err, "there is no candidate %d", id);
	char *orig = xstrdup(c->zSource);
	char *path = editor_tempfile(c->zName, orig, err);
	if (!path) {
		free(orig);
		return -1;
	}
	int rc = f->h->edit(f->arg, path, err);
	strbuf sb = STRBUF_INIT;
	if (rc > 0)
		rc = kl_err(err, "the editor exited with status %d; nothing was added", rc);
	else if (rc == 0 && read_file(path, &sb, 8u << 20, err) < 0)
		rc = -1;
	if (rc == 0 && !sb.len)
		rc = kl_err(err, "the edited copy is empty; nothing was added");
	else if (rc == 0 && !strcmp(sb.buf, orig))
		rc = 0; /* unchanged: nothing to add */
	else if (rc == 0) {
		rc = runner_add(f->lv, "human", &id, 1, NULL, sb.buf, NULL, err);
		if (rc > 0 && runner_bench(f->lv, rc, err) < 0)
			rc = -1;
	}
	sb_free(&sb);
	editor_cleanup(path);
	free(path);
	free(orig);
	return rc;
}

static int do_replay(struct actions_front *f, const struct commands_line *c)
{
	if (!f->rp)
		return fail(f, "%s: only while replaying a journal (kloop replay SESSION)",
		            c->def->name);
	struct replay *rp = f->rp;
	if (c->def->id == CMD_CONTINUE) {
		char err[KL_ERRLEN];
		if (f->h->cont(f->arg, c->nArg ? c->azArg[0] : NULL, err) < 0)
			return fail(f, "continue: %s", err);
		return 0;
	}
	int k = c->def->id == CMD_GOTO ? (int)c->aNum[0] : rp->k + (c->nArg ? (int)c->aNum[0] : 1);
	replay_seek(rp, k);
	char d[240];
	replay_describe(rp, rp->k - 1, d, sizeof d);
	say(f, "event %d of %d%s%s", rp->k, rp->nEv, rp->k ? ": " : " (the start)", rp->k ? d : "");
	return 0;
}

/* ---- the search (sessions/search.h) ---- */

static void on_search(void *arg, const char *zLine, const cJSON *ev)
{
	struct actions_front *f = arg;
	(void)ev;
	if (zLine)
		f->h->say(f->arg, zLine, 0);
}

struct search *actions_search_open(struct actions_front *f, int bResume)
{
	if (!f->lv)
		return NULL;
	if (!f->search) {
		f->search = search_new(f->lv, on_search, f);
		const struct state_search *ss = &runner_state(f->lv)->search;
		char err[KL_ERRLEN];
		if (bResume && ss->started && ss->state == SEARCH_RUNNING &&
		    search_start(f->search, NULL, err) < 0)
			fail(f, "search: %s", err);
	}
	return f->search;
}

void actions_search_close(struct actions_front *f)
{
	search_free(f->search);
	f->search = NULL;
}

int actions_search_busy(const struct actions_front *f)
{
	if (!f->search || !f->lv)
		return 0;
	const struct state_search *ss = &runner_state(f->lv)->search;
	return ss->state == SEARCH_RUNNING && !search_waiting(f->search);
}

/* the search's rounds, each parent and why it was chosen */
static void search_text(const struct state *st, strbuf *sb)
{
	char line[300];
	search_status_state(st, line, sizeof line);
	sb_addf(sb, "%s\n", *line ? line : "no search has run in this session");
	const struct state_search *ss = &st->search;
	if (search_state_ended(ss->state) && ss->zWhy && *ss->zWhy)
		sb_addf(sb, "%s: %s\n", search_state_name(ss->state), ss->zWhy);
	for (int i = 0; i < ss->nRound; i++) {
		const struct state_round *r = &ss->aRound[i];
		const struct cand *b = state_cand(st, r->bestId);
		sb_addf(sb, "round %d%s", r->round, r->round ? "" : " (translation)");
		if (r->finished && b)
			sb_addf(sb, ": best #%d %s %.3gx", b->id, b->zName, b->speedup);
		sb_addf(sb, "%s\n", r->finished ? "" : " (running)");
		for (int k = 0; k < r->nParent; k++) {
			const struct cand *p = state_cand(st, r->aParent[k]);
			sb_addf(sb, "  parent #%d %s: %s\n", r->aParent[k], p ? p->zName : "?",
			        r->azReason[k]);
		}
	}
	for (int i = 0; i < ss->nSuspect; i++)
		sb_addf(sb, "suspect #%d (%.3gx)%s: %s\n", ss->aSuspect[i].cand,
		        ss->aSuspect[i].speedup, ss->aSuspect[i].cleared ? ", cleared" : "",
		        ss->aSuspect[i].zWhy);
}

static int do_search(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	strbuf arg = STRBUF_INIT;
	for (int i = c->def->id == CMD_SEARCH ? 1 : 0; i < c->nArg; i++)
		sb_addf(&arg, "%s%s", arg.len ? " " : "", c->azArg[i]);
	const char *z = arg.buf ? arg.buf : "";
	int rc = 0;
	if (c->def->id == CMD_SEARCH && !strcmp(c->azArg[0], "status")) {
		strbuf sb = STRBUF_INIT;
		search_text(actions_state(f), &sb);
		f->h->page(f->arg, "search", sb.buf, 0);
		sb_free(&sb);
	} else if (need_live(f, c) < 0) {
		rc = -1;
	} else {
		struct search *s = actions_search_open(f, 0);
		/* without an LLM provider, a search sweeps and crosses over only */
		cJSON *set = cJSON_CreateObject();
		if (!f->cfg || !f->cfg->zProvider)
			cJSON_AddNumberToObject(set, "sweep_only", 1);
		if (c->def->id == CMD_SEARCH) {
			const char *v = c->azArg[0];
			rc = !strcmp(v, "start")    ? search_start(s, set, err)
			     : !strcmp(v, "pause")  ? search_pause(s, err)
			     : !strcmp(v, "resume") ? search_resume(s, err)
			     : !strcmp(v, "stop")   ? search_stop(s, NULL, err)
			     : !strcmp(v, "step")   ? search_step(s, set, err)
			                            : kl_err(err,
			                                     "expected start, pause, resume, stop, "
			                                       "step or status, got '%s'",
			                                     v);
		} else {
			rc = search_steer(s, c->def->name, z, err);
		}
		cJSON_Delete(set);
		if (rc < 0)
			fail(f, "%s: %s", c->def->name, err);
	}
	sb_free(&arg);
	return rc;
}

int actions_run(struct actions_front *f, const struct commands_line *c)
{
	const struct state *st = actions_state(f);
	const struct cand *a, *b;
	char err[KL_ERRLEN];
	strbuf sb = STRBUF_INIT;
	int rc = 0;
	switch (c->def->id) {
	case CMD_IDEAS:
	case CMD_ACCEPT:
	case CMD_REJECT:
	case CMD_REVISE:
	case CMD_IMPLEMENT:
		return do_llm(f, c);
	case CMD_EDIT:
		if (need_live(f, c) < 0 || !(a = cand_arg(f, c, 0)))
			return -1;
		rc = actions_edit(f, a->id, err);
		if (rc < 0)
			return fail(f, "edit: %s", err);
		if (rc == 0)
			say(f, "edit: candidate %d is unchanged; nothing was added", a->id);
		else
			say(f, "candidate %d (human, from #%d) added; evaluating", rc, a->id);
		return 0;
	case CMD_ADD: {
		if (need_live(f, c) < 0)
			return -1;
		const char *path = c->azArg[0];
		if (compile_lang_from_name(path) < 0)
			return fail(f, "add: %s: not a .c, .cpp or .cu source", path);
		strbuf src = STRBUF_INIT;
		if (read_file(path, &src, 4 << 20, err) < 0) {
			sb_free(&src);
			return fail(f, "add: %s", err);
		}
		const char *base = strrchr(path, '/');
		int id =
		    runner_add(f->lv, "human", NULL, 0, base ? base + 1 : path, src.buf, NULL, err);
		sb_free(&src);
		if (id < 0 || runner_bench(f->lv, id, err) < 0)
			return fail(f, "add: %s", err);
		say(f, "candidate %d (%s, human) added from %s; evaluating", id,
		    base ? base + 1 : path, path);
		return 0;
	}
	case CMD_PROFILE:
		if (need_live(f, c) < 0 || !(a = cand_arg(f, c, 0)))
			return -1;
		if (runner_profile(f->lv, a->id, err) < 0)
			return fail(f, "profile: %s", err);
		say(f, "candidate %d (%s): Nsight Compute is running once on its kernels", a->id,
		    a->zName);
		return 0;
	case CMD_BENCH:
		if (need_live(f, c) < 0 || !(a = cand_arg(f, c, 0)))
			return -1;
		if (c->nArg == 3 && !strcmp(c->azArg[1], "--ab")) {
			const struct cand *o = state_cand(st, atoi(c->azArg[2]));
			if (!o)
				return fail(f, "bench: --ab wants a candidate id, got '%s'",
				            c->azArg[2]);
			if (runner_bench_ab(f->lv, a->id, o->id, err) < 0)
				return fail(f, "bench: %s", err);
			say(f, "candidate %d (%s): evaluating, then an A/B against #%d (%s)", a->id,
			    a->zName, o->id, o->zName);
			return 0;
		}
		if (c->nArg > 1) {
			int w = worker_arg(f, c);
			if (w < 0)
				return -1;
			if (runner_bench_on(f->lv, a->id, w, err) < 0)
				return fail(f, "bench: %s", err);
			say(f, "candidate %d (%s): evaluating on worker %d", a->id, a->zName, w);
			return 0;
		}
		if (runner_bench(f->lv, a->id, err) < 0)
			return fail(f, "bench: %s", err);
		say(f, "candidate %d (%s): evaluating", a->id, a->zName);
		return 0;
	case CMD_SHOW:
		if (!(a = cand_arg(f, c, 0)))
			return -1;
		report_show(st, a, &sb);
		{
			char title[64];
			snprintf(title, sizeof title, "show #%d", a->id);
			f->h->page(f->arg, title, sb.buf, a->id);
		}
		break;
	case CMD_DIFF:
		if (!(b = cand_arg(f, c, 0)))
			return -1;
		a = NULL;
		if (c->nArg > 1) {
			/* diff A B: what changed from A to B */
			a = b;
			if (!(b = cand_arg(f, c, 1)))
				return -1;
		}
		if (report_diff(st, a, b, &sb, err) < 0)
			return fail(f, "diff: %s", err);
		f->h->page(f->arg, "diff", sb.buf, b->id);
		break;
	case CMD_EXPORT:
		if (!(a = cand_arg(f, c, 0)))
			return -1;
		if (runner_export(st, a->id, c->azArg[1], err) < 0)
			return fail(f, "export: %s", err);
		say(f, "wrote candidate %d to %s (%zu bytes)", a->id, c->azArg[1],
		    strlen(a->zSource));
		return 0;
	case CMD_SORT:
		if (popview_set_sort(f->pv, c->azArg[0], c->nArg > 1 ? c->azArg[1] : NULL, err) < 0)
			return fail(f, "%s", err);
		popview_describe(f->pv, &sb);
		f->h->say(f->arg, sb.buf, 0);
		break;
	case CMD_FILTER:
		if (popview_set_filter(f->pv, c->azArg, c->nArg, err) < 0)
			return fail(f, "%s", err);
		popview_refresh(f->pv, st);
		if (f->pv->nTerm)
			say(f, "filter: %s (%d of %d candidates shown)", f->pv->zFilter,
			    f->pv->nIdx, st->nCand);
		else
			say(f, "no filter (%d candidates shown)", st->nCand);
		return 0;
	case CMD_LIST:
		table_text(st, f->pv, &sb);
		f->h->page(f->arg, "population", sb.buf, 0);
		break;
	case CMD_JOBS:
		actions_jobs_text(f->lv, &sb);
		if (!sb.len)
			say(f, "no jobs are running");
		else
			f->h->page(f->arg, "jobs", sb.buf, 0);
		/* and the workers that run the evaluations (issue 13) */
		sb_reset(&sb);
		{
			char line[512];
			int nw = actions_worker_line(f->lv, 0, line, sizeof line);
			for (int i = 0; i < nw; i++) {
				actions_worker_line(f->lv, i, line, sizeof line);
				sb_addf(&sb, "%s\n", line);
			}
		}
		if (sb.len)
			f->h->page(f->arg, "workers", sb.buf, 0);
		break;
	case CMD_ARCHIVE:
		return archive_view_run(f, c);
	case CMD_STEP:
	case CMD_GOTO:
	case CMD_CONTINUE:
		return do_replay(f, c);
	case CMD_HELP:
		if (commands_help(&sb, c->nArg ? c->azArg[0] : NULL, f->rp != NULL) < 0) {
			sb_free(&sb);
			return fail(f, "help: unknown command '%s'", c->azArg[0]);
		}
		f->h->page(f->arg, "help", sb.buf, 0);
		break;
	case CMD_QUIT:
		f->h->quit(f->arg, c->bang);
		break;
	case CMD_SEARCH:
	case CMD_PIN:
	case CMD_BAN:
	case CMD_UNBAN:
	case CMD_PREFER:
	case CMD_CLEAR:
	case CMD_IDEA:
	case CMD_GATE:
	case CMD_SET:
		return do_search(f, c);
	case CMD_CANCEL:
		return cancel(f, c);
	case CMD_COMPARE:
		if (!(a = cand_arg(f, c, 0)) || !(b = cand_arg(f, c, 1)))
			return -1;
		report_compare(st, a, b, &sb);
		{
			char title[64];
			snprintf(title, sizeof title, "compare #%d #%d", a->id, b->id);
			f->h->page(f->arg, title, sb.buf, 0);
		}
		break;
	case CMD_PROMPT:
	case CMD_REPLY:
		if (!(a = cand_arg(f, c, 0)))
			return -1;
		return prompt_reply(f, c, a);
	case CMD_COUNT:
		break;
	}
	sb_free(&sb);
	return rc;
}

int actions_run_line(struct actions_front *f, const char *zLine)
{
	struct commands_line c;
	char err[KL_ERRLEN];
	int rc = commands_parse(zLine, &c, err);
	if (rc < 0)
		return fail(f, "%s", err);
	if (rc == 0)
		return 1;
	rc = actions_run(f, &c);
	commands_line_free(&c);
	return rc;
}

const char *const *actions_words(enum commands_arg kind, void *arg)
{
	struct actions_front *f = arg;
	static char **ids;
	static size_t nAlloc;
	if (kind == ARG_COLUMN)
		return popview_columns;
	if (kind == ARG_COMMAND) {
		static const char *names[64];
		int n = 0;
		for (const struct commands_def *d = commands_table; d->name && n < 63; d++)
			names[n++] = d->name;
		names[n] = NULL;
		return names;
	}
	if (kind != ARG_CAND)
		return NULL;
	const struct state *st = actions_state(f);
	for (size_t i = 0; ids && ids[i]; i++)
		free(ids[i]);
	int n = st ? st->nCand : 0;
	xgrow((void **)&ids, &nAlloc, (size_t)n + 1, sizeof *ids);
	for (int i = 0; i < n; i++)
		ids[i] = xasprintf("%d", st->aCand[i].id);
	ids[n] = NULL;
	return (const char *const *)ids;
}
