/*
 * ui.c - the TUI's shared view state: the activity log and the selection
 * that the code and results panes follow.
 */
#include "ui.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ui_log(struct ui *u, const char *fmt, ...)
{
	char stamp[16];
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(stamp, sizeof stamp, "%H:%M:%S", &tm);
	strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s ", stamp);
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	for (char *p = sb.buf; *p; p++)
		if (*p == '\n' || *p == '\t')
			*p = ' ';
	if (u->nLog == UI_LOG_MAX) {
		free(u->azLog[0]);
		memmove(u->azLog, u->azLog + 1, (UI_LOG_MAX - 1) * sizeof *u->azLog);
		u->nLog--;
	}
	u->azLog[u->nLog++] = sb_detach(&sb);
}

void ui_free(struct ui *u)
{
	for (int i = 0; i < u->nLog; i++)
		free(u->azLog[i]);
	u->nLog = 0;
	free(u->zFind);
	u->zFind = NULL;
	popview_free(&u->pv);
}

const struct cand *ui_selected(const struct ui *u)
{
	return u->selCand ? state_cand(u->st, u->selCand) : NULL;
}

void ui_select(struct ui *u, int id)
{
	if (u->selCand != id) {
		u->codeTop = 0;
		u->resTop = 0;
	}
	u->selCand = id;
	popview_refresh(&u->pv, u->st);
	int row = popview_row(&u->pv, u->st, id);
	if (row >= 0 && row < u->popTop)
		u->popTop = row;
	int rows = u->aRect[UI_POPULATION].h - 3; /* frame and header */
	if (row >= 0 && rows > 0 && row >= u->popTop + rows)
		u->popTop = row - rows + 1;
}

int ui_following(const struct ui *u)
{
	if (u->follow == UI_FOLLOW_OFF)
		return 0;
	return u->followAlways || (u->st && u->st->search.state == SEARCH_RUNNING);
}

int ui_follow_target(const struct ui *u, int mode)
{
	const struct state *st = u->st;
	if (!st)
		return 0;
	if (mode == UI_FOLLOW_BEST) {
		const struct cand *b = state_best(st, NULL, NULL);
		return b ? b->id : 0;
	}
	/* the newest that the filter shows */
	for (int i = st->nCand - 1; i >= 0; i--)
		if (popview_row(&u->pv, st, st->aCand[i].id) >= 0)
			return st->aCand[i].id;
	return 0;
}

void ui_follow(struct ui *u)
{
	if (!ui_following(u))
		return;
	popview_refresh(&u->pv, u->st);
	int id = ui_follow_target(u, u->follow);
	if (id && id != u->selCand)
		ui_select(u, id);
}

const char *ui_stage_text(const char *zStage, int k, char *buf, size_t n)
{
	const char *unit = !strcmp(zStage, "a/b")                                    ? "pair"
	                   : strstr(zStage, "timing")                                ? "run"
	                   : strstr(zStage, "shapes") || !strcmp(zStage, "checking") ? "trial"
	                                                                             : "";
	if (k > 0)
		snprintf(buf, n, "%s, %s%s%d", zStage, unit, *unit ? " " : "", k);
	else
		snprintf(buf, n, "%s", zStage);
	return buf;
}

int ui_setup_beside(const struct ui *u, int id)
{
	for (int i = 0; i < u->nSetupCand; i++)
		if (u->aSetupCand[i] == id)
			return 1;
	return 0;
}
