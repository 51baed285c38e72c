/*
 * verbs_llm.c - the commands that work with the LLM: ideas, accept,
 * reject, revise, implement, and what it was asked and answered for a
 * candidate (prompt, reply; read back from the journal).
 */
#include "actions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

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
		actions_fail(f, "%s: there is no idea %ld (%d in the session)", c->def->name,
		             c->aNum[0], st->nIdea);
	return d;
}

/* idea id revised to zText: its first line the title, the rest (or all
 * of it) the description */
static int revise_to(struct actions_front *f, struct pipeline *p, int id, const char *zText)
{
	char err[KL_ERRLEN];
	const char *t = zText ? zText : "";
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
		rc = actions_fail(f, "revise: the text is empty; idea %d is unchanged", id);
	else if (pipeline_idea_edit(p, id, title, desc, NULL, err) < 0)
		rc = actions_fail(f, "revise: %s", err);
	else
		actions_say(f, "idea %d revised: %s", id, title);
	free(title);
	free(desc);
	return rc;
}

/* the idea in the editor */
struct idea_edit {
	struct pipeline *p;
	int id;
};

/* the editor ended with the idea's text (rc: its exit status, or -1 +
 * zErr): the idea is revised to it, when changed */
static int idea_edited(struct actions_front *f, void *ctx, int rc, const char *zText, size_t nText,
                       int changed, const char *zErr)
{
	struct idea_edit e = *(struct idea_edit *)ctx;
	(void)nText;
	free(ctx);
	if (rc > 0)
		return actions_fail(
		    f, "revise: the editor exited with status %d; idea %d is unchanged", rc, e.id);
	if (rc < 0)
		return actions_fail(f, "revise: %s", zErr);
	if (!changed) {
		actions_say(f, "idea %d is unchanged", e.id);
		return 0;
	}
	return revise_to(f, e.p, e.id, zText);
}

/* revise: "TITLE\n\nDESCRIPTION" in $EDITOR, or TEXT (its first line the title) */
static int revise(struct actions_front *f, struct pipeline *p, const struct state_idea *d,
                  const struct commands_line *c)
{
	char err[KL_ERRLEN];
	if (c->nArg > 1) {
		strbuf text = STRBUF_INIT;
		commands_text(c, 1, &text);
		int rc = revise_to(f, p, d->id, text.buf);
		sb_free(&text);
		return rc;
	}
	struct idea_edit *e = xmalloc(sizeof *e);
	*e = (struct idea_edit){p, d->id};
	char *orig = xasprintf("%s\n\n%s\n", d->zTitle, d->zDescription);
	int rc = actions_edit_text(f, "idea.txt", orig, 1 << 20, idea_edited, e, err);
	free(orig);
	if (rc < 0) {
		free(e);
		return actions_fail(f, "revise: %s", err);
	}
	return 0;
}

/* implement every accepted idea that has no candidate yet and has not
 * made nothing new already, B branches each */
int verb_implement(struct actions_front *f, const struct commands_line *c)
{
	struct pipeline *p = actions_need_llm(f, c);
	if (!p)
		return -1;
	const struct state *st = actions_state(f);
	int b = c->nArg ? (int)c->aNum[0] : 1, n = 0;
	char err[KL_ERRLEN];
	for (int i = 0; i < st->nIdea; i++) {
		const struct state_idea *d = &st->aIdea[i];
		if (strcmp(state_idea_word(st, d), "accepted"))
			continue;
		int parent = d->parent && state_cand(st, d->parent) ? d->parent : ideas_parent(f);
		if (pipeline_implement(p, d->id, parent, 0, b, 0, err) < 0)
			return actions_fail(f, "implement: idea %d: %s", d->id, err);
		n++;
	}
	if (!n)
		return actions_fail(
		    f, "implement: no accepted idea waits for code (accept one first: accept ID)");
	actions_say(f, "implementing %d idea%s, %d branch%s each", n, n == 1 ? "" : "s", b,
	            b == 1 ? "" : "es");
	return 0;
}

int verb_ideas(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	struct pipeline *p = actions_need_llm(f, c);
	if (!p)
		return -1;
	int n = c->nArg ? (int)c->aNum[0] : 3, parent = ideas_parent(f);
	if (!parent)
		return actions_fail(f, "ideas: there is no candidate to improve yet");
	if (pipeline_ideas(p, parent, n, 0, err) < 0)
		return actions_fail(f, "ideas: %s", err);
	actions_say(f, "asking the LLM for %d idea%s to improve candidate %d", n, n == 1 ? "" : "s",
	            parent);
	return 0;
}

/* accept ID (bAccept) or reject ID */
static int decide(struct actions_front *f, const struct commands_line *c, int bAccept)
{
	char err[KL_ERRLEN];
	const struct state_idea *d;
	struct pipeline *p = actions_need_llm(f, c);
	if (!p || !(d = idea_arg(f, c)))
		return -1;
	if ((bAccept ? pipeline_idea_accept(p, d->id, err)
	             : pipeline_idea_reject(p, d->id, NULL, err)) < 0)
		return actions_fail(f, "%s: %s", c->def->name, err);
	if (bAccept)
		actions_say(f, "idea %d accepted: %s (implement writes its code)", d->id,
		            d->zTitle);
	else
		actions_say(f, "idea %d rejected", d->id);
	return 0;
}

int verb_accept(struct actions_front *f, const struct commands_line *c)
{
	return decide(f, c, 1);
}

int verb_reject(struct actions_front *f, const struct commands_line *c)
{
	return decide(f, c, 0);
}

int verb_revise(struct actions_front *f, const struct commands_line *c)
{
	const struct state_idea *d;
	struct pipeline *p = actions_need_llm(f, c);
	if (!p || !(d = idea_arg(f, c)))
		return -1;
	return revise(f, p, d, c);
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
		if (read_file(driver_path(f->lv), &text, 1u << 30, err) == 0)
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

static int prompt_reply(struct actions_front *f, const struct commands_line *c, int bReply)
{
	const struct cand *cd = actions_cand(f, c, 0);
	if (!cd)
		return -1;
	struct llm_find q = {.cand = cd->id};
	/* two passes: the candidate names its request; then that request */
	each_event(f, find_llm, &q);
	if (!q.request) {
		free(q.zChanges);
		return actions_fail(
		    f,
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
			return actions_fail(f, "prompt: the journal holds no llm_request %d", want);
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
			return actions_fail(f, "reply: request %d has no response in the journal",
			                    want);
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

int verb_prompt(struct actions_front *f, const struct commands_line *c)
{
	return prompt_reply(f, c, 0);
}

int verb_reply(struct actions_front *f, const struct commands_line *c)
{
	return prompt_reply(f, c, 1);
}
