/*
 * verbs_view.c - the commands that change or show the view rather than the
 * session: sort, filter, list, quit, and a replay's step, goto and
 * continue (help, which lists the table, is the table's: command_table.c).
 */
#include "actions.h"

#include "verbs.h"
#include "report.h"

static void table_text(const struct state *st, struct popview *pv, strbuf *sb)
{
	popview_refresh(pv, st);
	int roof = report_table_has_roof(st, pv->aIdx, pv->nIdx);
	report_table_header_cols(sb, roof);
	sb_adds(sb, "\n");
	/* marked as the Population pane marks them: the one best, suspects,
	 * unverified and reduced times */
	const struct cand *best = state_best(st, NULL, NULL);
	for (int i = 0; i < pv->nIdx; i++) {
		const struct cand *c = &st->aCand[pv->aIdx[i]];
		report_table_row_cols(c, NULL, report_mark(st, c, best), roof, sb);
		sb_adds(sb, "\n");
	}
	sb_addf(sb, "%d of %d candidates; ", pv->nIdx, st->nCand);
	popview_describe(pv, sb);
	sb_adds(sb, "\n");
	if (best)
		sb_addf(sb, "the best: #%d (%s)\n", best->id, best->zName);
	sb_addf(sb, "marks: %s\n", report_mark_legend());
}

int verb_sort(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	if (popview_set_sort(f->pv, c->azArg[0], c->nArg > 1 ? c->azArg[1] : NULL, err) < 0)
		return actions_fail(f, "%s", err);
	strbuf sb = STRBUF_INIT;
	popview_describe(f->pv, &sb);
	f->h->say(f->arg, sb.buf, 0);
	sb_free(&sb);
	return 0;
}

int verb_filter(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	const struct state *st = actions_state(f);
	if (popview_set_filter(f->pv, c->azArg, c->nArg, err) < 0)
		return actions_fail(f, "%s", err);
	popview_refresh(f->pv, st);
	if (f->pv->nTerm)
		actions_say(f, "filter: %s (%d of %d candidates shown)", f->pv->zFilter,
		            f->pv->nIdx, st->nCand);
	else
		actions_say(f, "no filter (%d candidates shown)", st->nCand);
	return 0;
}

int verb_list(struct actions_front *f, const struct commands_line *c)
{
	(void)c;
	strbuf sb = STRBUF_INIT;
	table_text(actions_state(f), f->pv, &sb);
	f->h->page(f->arg, "population", sb.buf, 0);
	sb_free(&sb);
	return 0;
}

int verb_quit(struct actions_front *f, const struct commands_line *c)
{
	f->h->quit(f->arg, c->bang);
	return 0;
}

/* ---- a replay's steps ---- */

static int need_replay(struct actions_front *f, const struct commands_line *c)
{
	if (f->rp)
		return 0;
	return actions_fail(f, "%s: only while replaying a journal (kloop replay SESSION)",
	                    c->def->name);
}

/* the replay at event k, said */
static int seek(struct actions_front *f, int k)
{
	struct replay *rp = f->rp;
	replay_seek(rp, k);
	char d[240];
	replay_describe(rp, rp->k - 1, d, sizeof d);
	actions_say(f, "event %d of %d%s%s", rp->k, rp->nEv, rp->k ? ": " : " (the start)",
	            rp->k ? d : "");
	return 0;
}

int verb_step(struct actions_front *f, const struct commands_line *c)
{
	if (need_replay(f, c) < 0)
		return -1;
	return seek(f, f->rp->k + (c->nArg ? (int)c->aNum[0] : 1));
}

int verb_goto(struct actions_front *f, const struct commands_line *c)
{
	if (need_replay(f, c) < 0)
		return -1;
	return seek(f, (int)c->aNum[0]);
}

int verb_continue(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	if (need_replay(f, c) < 0)
		return -1;
	if (f->h->cont(f->arg, c->nArg ? c->azArg[0] : NULL, err) < 0)
		return actions_fail(f, "continue: %s", err);
	return 0;
}
