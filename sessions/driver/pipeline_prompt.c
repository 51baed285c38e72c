/*
 * pipeline_prompt.c - a step's prompt: the task's placeholders, the
 * parent's code and results, the idea, what was tried on the parent
 * before, the archive's wins and dead ends, and inspirations from the
 * session's best.
 */
#include "pipeline_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "ideas.h"
#include "status.h"

/* ---- prompts ---- */

static void inspirations(struct pipeline *p, const struct step *s, struct prompt_vars *v)
{
	const struct state *st = &p->pc.ses->st;
	int used[INSPIRATIONS] = {0};
	strbuf sb = STRBUF_INIT;
	for (int k = 0; k < INSPIRATIONS; k++) {
		const struct cand *best = NULL;
		for (int i = 0; i < st->nCand; i++) {
			const struct cand *c = &st->aCand[i];
			int skip = c->id == s->parent || c->id == s->parent2 || c->speedup <= 0 ||
			           strlen(c->zSource) > INSPIRATION_MAX;
			for (int u = 0; u < k; u++)
				skip |= used[u] == c->id;
			if (!skip && (!best || c->speedup > best->speedup))
				best = c;
		}
		if (!best)
			break;
		used[k] = best->id;
		sb_addf(&sb, "%s (correct, %.3gx the baseline%s%s):\n```\n%s%s```\n\n", best->zName,
		        best->speedup, best->zIdea ? "; idea: " : "",
		        best->zIdea ? best->zIdea : "", best->zSource,
		        *best->zSource && best->zSource[strlen(best->zSource) - 1] != '\n' ? "\n"
		                                                                           : "");
	}
	prompt_set(v, "inspirations", sb.buf);
	sb_free(&sb);
}

/* {{archive}}: wins archived from other tasks and sessions that match the
 * task (and the idea being implemented), and this task's known dead ends;
 * at most ARCHIVE_ENTRIES of each in ARCHIVE_MAX bytes */
static void archive_vars(struct pipeline *p, const struct step *s, struct prompt_vars *v)
{
	const struct state_idea *d = state_idea(&p->pc.ses->st, s->idea);
	char *q = d ? xasprintf("%s %s", d->zTitle, d->zDescription) : NULL;
	strbuf sb = STRBUF_INIT;
	archive_prompt(&p->pc.ses->st, q, ARCHIVE_ENTRIES, ARCHIVE_MAX, &sb);
	prompt_set(v, "archive", sb.buf);
	sb_free(&sb);
	free(q);
}

/* the ideas already tried on the parent's lineage (the parent and its
 * ancestors), each with its outcome, so that none is proposed twice */
static void tried(struct pipeline *p, int parent, struct prompt_vars *v)
{
	const struct state *st = &p->pc.ses->st;
	int line[64], nLine = 0;
	for (const struct cand *c = state_cand(st, parent); c && nLine < 64;
	     c = c->nParent ? state_cand(st, c->aParent[0]) : NULL)
		line[nLine++] = c->id;
	strbuf sb = STRBUF_INIT;
	for (int i = 0; i < st->nIdea; i++) {
		const struct state_idea *d = &st->aIdea[i];
		int on = 0;
		for (int k = 0; k < nLine; k++)
			on |= d->parent == line[k];
		if (!on || d->duplicateOf) /* a duplicate: its idea is listed */
			continue;
		const struct cand *best = NULL, *any = NULL;
		for (int k = 0; k < st->nCand; k++) {
			const struct cand *c = &st->aCand[k];
			if (c->ideaId != d->id)
				continue;
			any = c;
			if (c->speedup > 0 && (!best || c->speedup > best->speedup))
				best = c;
		}
		sb_addf(&sb, "- [%s] %s: ", d->zCategory, d->zTitle);
		if (best)
			sb_addf(&sb, "correct, %.3gx the baseline (%s)\n", best->speedup,
			        best->zName);
		else if (any)
			sb_addf(&sb, "%s (%s)\n", any->zStatus, any->zName);
		else if (!strcmp(state_idea_word(st, d), "nothing new"))
			sb_addf(&sb, "nothing new (%s)\n", state_idea_why(st, d).z);
		else
			sb_addf(&sb, "%s, not implemented\n", idea_status_name(d->status));
	}
	prompt_set(v, "tried", sb.buf);
	sb_free(&sb);
}

static void idea_vars(struct pipeline *p, int ideaId, struct prompt_vars *v)
{
	const struct state_idea *d = state_idea(&p->pc.ses->st, ideaId);
	prompt_set(v, "idea.title", d ? d->zTitle : "");
	prompt_set(v, "idea.description", d ? d->zDescription : "");
	prompt_set(v, "idea.category", d ? d->zCategory : "");
}

static void cand_vars(struct pipeline *p, const char *zPrefix, int id, struct prompt_vars *v)
{
	const struct cand *c = state_cand(&p->pc.ses->st, id);
	prompt_candidate_vars(v, zPrefix, c ? c->zName : "", c ? c->zSource : "",
	                      c ? c->result : NULL);
}

/* the prompt for step s's next request: template zName with everything the
 * templates may use */
int pipeline_build(struct pipeline *p, struct step *s, const char *zName, strbuf *out, char *err)
{
	struct prompt_vars v = {0};
	for (int i = 0; i < p->task.n; i++)
		prompt_set(&v, p->task.azKey[i], p->task.azVal[i]);
	cand_vars(p, "parent", s->parent, &v);
	cand_vars(p, "parent2", s->parent2, &v);
	cand_vars(p, "failed", s->zBadReply ? 0 : s->cand, &v);
	prompt_set(&v, "failed.reason", s->zBadReason);
	prompt_set(&v, "failed.reply", s->zBadReply);
	idea_vars(p, s->idea, &v);
	prompt_setf(&v, "n", "%d", s->n);
	prompt_setf(&v, "branch", "%d", s->branch);
	prompt_setf(&v, "branches", "%d", s->n);
	strbuf cats = STRBUF_INIT;
	for (int i = 0; ideas_categories[i]; i++)
		sb_addf(&cats, "%s%s", i ? ", " : "", ideas_categories[i]);
	prompt_set(&v, "categories", cats.buf);
	sb_free(&cats);
	inspirations(p, s, &v);
	archive_vars(p, s, &v);
	tried(p, s->parent, &v);
	int rc = prompt_build(zName, &v, out, err);
	prompt_vars_free(&v);
	return rc;
}
