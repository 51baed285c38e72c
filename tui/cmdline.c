/*
 * cmdline.c - a one-line editor for the TUI, fed key by key from the event
 * loop: UTF-8 insert and delete, word and line kills, libedit's history
 * and completion of command names and candidate ids.
 */
#include "cmdline.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "screen.h"
#include "util.h"

char *cmdline_history_path(void)
{
	char *dir = driver_state_dir();
	char *p = path_join(dir, "history");
	free(dir);
	return p;
}

History *cmdline_history_open(const char *zPath)
{
	History *h = history_init();
	HistEvent ev;
	history(h, &ev, H_SETSIZE, 1000);
	history(h, &ev, H_SETUNIQUE, 1);
	if (zPath && path_exists(zPath))
		history(h, &ev, H_LOAD, zPath);
	return h;
}

void cmdline_history_add(History *h, const char *zPath, const char *zLine)
{
	HistEvent ev;
	if (!*zLine)
		return;
	history(h, &ev, H_ENTER, zLine);
	if (!zPath)
		return;
	const char *slash = strrchr(zPath, '/');
	if (slash) {
		char *dir = xstrndup(zPath, (size_t)(slash - zPath));
		char err[KL_ERRLEN];
		if (!path_exists(dir))
			mkdir_p(dir, err);
		free(dir);
	}
	history(h, &ev, H_SAVE, zPath);
}

void cmdline_init(struct cmdline *c, const char *zHistPath)
{
	memset(c, 0, sizeof *c);
	c->zCmdPath = zHistPath ? xstrdup(zHistPath) : NULL;
	c->zFilterPath = zHistPath ? xasprintf("%s-filter", zHistPath) : NULL;
	c->histCmd = cmdline_history_open(c->zCmdPath);
	c->histFilter = cmdline_history_open(c->zFilterPath);
	c->zSearchPath = zHistPath ? xasprintf("%s-search", zHistPath) : NULL;
	c->histSearch = cmdline_history_open(c->zSearchPath);
	c->hist = c->histCmd;
	c->zHistPath = c->zCmdPath;
}

void cmdline_free(struct cmdline *c)
{
	if (c->histCmd)
		history_end(c->histCmd);
	if (c->histFilter)
		history_end(c->histFilter);
	if (c->histSearch)
		history_end(c->histSearch);
	free(c->zCmdPath);
	free(c->zFilterPath);
	free(c->zSearchPath);
	memset(c, 0, sizeof *c);
}

void cmdline_open(struct cmdline *c, enum cmdline_kind kind, const char *zInitial,
                  const char *zHint)
{
	c->active = 1;
	c->kind = kind;
	snprintf(c->zPrompt, sizeof c->zPrompt, "%s", kind == CMDLINE_COMMAND ? ":" : "/");
	c->hist = kind == CMDLINE_FILTER   ? c->histFilter
	          : kind == CMDLINE_SEARCH ? c->histSearch
	                                   : c->histCmd;
	c->zHistPath = kind == CMDLINE_FILTER   ? c->zFilterPath
	               : kind == CMDLINE_SEARCH ? c->zSearchPath
	                                        : c->zCmdPath;
	snprintf(c->buf, sizeof c->buf, "%s", zInitial ? zInitial : "");
	c->len = c->cur = strlen(c->buf);
	c->browsing = 0;
	snprintf(c->zHint, sizeof c->zHint, "%s", zHint ? zHint : "");
}

static void set_text(struct cmdline *c, const char *z)
{
	snprintf(c->buf, sizeof c->buf, "%s", z);
	c->len = c->cur = strlen(c->buf);
}

/* byte offset of the character before / after position p */
static size_t prev_char(const struct cmdline *c, size_t p)
{
	if (p == 0)
		return 0;
	p--;
	while (p > 0 && ((unsigned char)c->buf[p] & 0xC0) == 0x80)
		p--;
	return p;
}

static size_t next_char(const struct cmdline *c, size_t p)
{
	if (p >= c->len)
		return c->len;
	p++;
	while (p < c->len && ((unsigned char)c->buf[p] & 0xC0) == 0x80)
		p++;
	return p;
}

static void cut(struct cmdline *c, size_t a, size_t b)
{
	memmove(c->buf + a, c->buf + b, c->len - b + 1);
	c->len -= b - a;
	c->cur = a;
}

static void insert(struct cmdline *c, const char *s, size_t n)
{
	if (c->len + n >= sizeof c->buf)
		return;
	memmove(c->buf + c->cur + n, c->buf + c->cur, c->len - c->cur + 1);
	memcpy(c->buf + c->cur, s, n);
	c->len += n;
	c->cur += n;
}

static void history_step(struct cmdline *c, int older)
{
	HistEvent ev;
	int rc;
	if (!c->browsing) {
		if (!older)
			return;
		snprintf(c->saved, sizeof c->saved, "%s", c->buf);
		rc = history(c->hist, &ev, H_FIRST);
		if (rc < 0)
			return;
		c->browsing = 1;
	} else {
		rc = history(c->hist, &ev, older ? H_NEXT : H_PREV);
		if (rc < 0) {
			if (!older) {
				c->browsing = 0;
				set_text(c, c->saved);
			}
			return;
		}
	}
	set_text(c, ev.str);
	/* libedit keeps the newline of loaded lines */
	while (c->len && (c->buf[c->len - 1] == '\n'))
		c->buf[--c->len] = 0, c->cur = c->len;
}

static void complete(struct cmdline *c, commands_words_fn words, void *arg)
{
	char **m;
	size_t start;
	char save = c->buf[c->cur];
	c->buf[c->cur] = 0;
	int n = commands_complete(c->buf, c->cur, words, arg, &m, &start);
	c->buf[c->cur] = save;
	c->zHint[0] = 0;
	if (n == 0) {
		snprintf(c->zHint, sizeof c->zHint, "(no completion)");
	} else {
		char *pre = commands_common_prefix(m, n);
		size_t have = c->cur - start;
		if (strlen(pre) > have)
			insert(c, pre + have, strlen(pre) - have);
		if (n == 1 && c->cur == c->len)
			insert(c, " ", 1);
		if (n > 1) {
			size_t o = 0;
			for (int i = 0; i < n && o + 2 < sizeof c->zHint; i++)
				o += (size_t)snprintf(c->zHint + o, sizeof c->zHint - o, "%s%s",
				                      i ? " " : "", m[i]);
		}
		free(pre);
	}
	commands_free_words(m, -1);
}

enum cmdline_result cmdline_key(struct cmdline *c, wint_t wch, int isKey, commands_words_fn words,
                                void *arg)
{
	if (wch != '\t')
		c->zHint[0] = 0;
	if (isKey) {
		switch (wch) {
		case KEY_ENTER:
			goto done;
		case KEY_LEFT:
			c->cur = prev_char(c, c->cur);
			break;
		case KEY_RIGHT:
			c->cur = next_char(c, c->cur);
			break;
		case KEY_HOME:
			c->cur = 0;
			break;
		case KEY_END:
			c->cur = c->len;
			break;
		case KEY_UP:
			history_step(c, 1);
			break;
		case KEY_DOWN:
			history_step(c, 0);
			break;
		case KEY_BACKSPACE:
			goto backspace;
		case KEY_DC:
			cut(c, c->cur, next_char(c, c->cur));
			break;
		}
		return CMDLINE_EDITING;
	}
	switch (wch) {
	case '\r':
	case '\n':
		goto done;
	case 27: /* Escape */
	case 3:  /* Ctrl-C */
	case 7:  /* Ctrl-G */
		c->active = 0;
		return CMDLINE_CANCEL;
	case 1: /* Ctrl-A */
		c->cur = 0;
		return CMDLINE_EDITING;
	case 5: /* Ctrl-E */
		c->cur = c->len;
		return CMDLINE_EDITING;
	case 2: /* Ctrl-B */
		c->cur = prev_char(c, c->cur);
		return CMDLINE_EDITING;
	case 6: /* Ctrl-F */
		c->cur = next_char(c, c->cur);
		return CMDLINE_EDITING;
	case 11: /* Ctrl-K */
		c->buf[c->cur] = 0;
		c->len = c->cur;
		return CMDLINE_EDITING;
	case 21: /* Ctrl-U */
		cut(c, 0, c->cur);
		return CMDLINE_EDITING;
	case 23: { /* Ctrl-W: the word before the cursor */
		size_t p = c->cur;
		while (p > 0 && c->buf[p - 1] == ' ')
			p--;
		while (p > 0 && c->buf[p - 1] != ' ')
			p--;
		cut(c, p, c->cur);
		return CMDLINE_EDITING;
	}
	case 16: /* Ctrl-P */
		history_step(c, 1);
		return CMDLINE_EDITING;
	case 14: /* Ctrl-N */
		history_step(c, 0);
		return CMDLINE_EDITING;
	case '\t':
		if (c->kind != CMDLINE_SEARCH) /* a search's text completes nothing */
			complete(c, words, arg);
		return CMDLINE_EDITING;
	case 8:
	case 127:
		goto backspace;
	}
	if (wch < 32)
		return CMDLINE_EDITING;
	char mb[8];
	mbstate_t ms;
	memset(&ms, 0, sizeof ms);
	size_t n = wcrtomb(mb, (wchar_t)wch, &ms);
	if (n != (size_t)-1)
		insert(c, mb, n);
	return CMDLINE_EDITING;
backspace:
	if (c->len == 0) {
		c->active = 0;
		return CMDLINE_CANCEL;
	}
	cut(c, prev_char(c, c->cur), c->cur);
	return CMDLINE_EDITING;
done:
	c->active = 0;
	cmdline_history_add(c->hist, c->zHistPath, c->buf);
	return CMDLINE_DONE;
}

void cmdline_draw(const struct cmdline *c, int y, int w)
{
	screen_fill(y, 0, w, 0);
	int pw = screen_put(y, 0, w, c->zPrompt, A_BOLD);
	/* scroll the text so that the cursor is visible */
	int before = screen_width(c->buf, c->cur);
	size_t from = 0;
	while (before - screen_width(c->buf, from) > w - pw - 2)
		from = next_char(c, from);
	int used = screen_putn(y, pw, w - pw, c->buf + from, c->len - from, 0);
	if (c->zHint[0] && pw + used + 3 < w)
		screen_put(y, pw + used + 2, w - pw - used - 2, c->zHint, screen_attr(SR_DIM));
	move(y, pw + before - screen_width(c->buf, from));
}
