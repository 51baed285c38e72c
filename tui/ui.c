/*
 * ui.c - the TUI's shared view state: the activity log and the selection
 * that the code and results panes follow.
 */
#include "ui.h"

#include "syntax.h"

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
	free(u->zViewTitle);
	free(u->zViewText);
	free(u->zViewLines);
	free(u->zViewSrc);
	syntax_free(u->viewDoc);
	u->viewDoc = NULL;
	u->zViewTitle = u->zViewText = u->zViewLines = u->zViewSrc = NULL;
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
