/*
 * screen.c - curses set-up and teardown, signal handlers that only set
 * flags (or restore the terminal with async-safe writes and re-raise),
 * colours, the pane layout and UTF-8 aware drawing helpers.
 */
#include "screen.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <term.h>
#include <termios.h>
#include <unistd.h>
#include <wchar.h>

#include "util.h"

static volatile sig_atomic_t gotWinch, gotInt;
static int wake[2] = {-1, -1};
static struct termios savedTio;
static int haveTio, active, colors;
/* what the fatal-signal handler writes: leave the alternate screen, show
 * the cursor, reset attributes, stop mouse reporting */
static char restoreSeq[512];
static size_t nRestore;
static int aAttr[SR_NROLES];

static void on_flag(int sig)
{
	if (sig == SIGWINCH)
		gotWinch = 1;
	else
		gotInt = 1;
	screen_wake();
}

static void on_fatal(int sig)
{
	/* async-signal-safe only: tcsetattr, write, signal, raise */
	if (haveTio)
		tcsetattr(STDIN_FILENO, TCSANOW, &savedTio);
	if (nRestore)
		(void)!write(STDOUT_FILENO, restoreSeq, nRestore);
	signal(sig, SIG_DFL);
	raise(sig);
}

static const int fatalSigs[] = {SIGTERM, SIGQUIT, SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};

static void handlers(int install)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = install ? on_flag : SIG_DFL;
	sa.sa_flags = install ? SA_RESTART : 0;
	sigaction(SIGWINCH, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = install ? on_fatal : SIG_DFL;
	sa.sa_flags = install ? (SA_RESETHAND | SA_NODEFER) : 0;
	for (size_t i = 0; i < sizeof fatalSigs / sizeof *fatalSigs; i++)
		sigaction(fatalSigs[i], &sa, NULL);
}

static void add_cap(const char *name)
{
	char *s = tigetstr((char *)name);
	if (!s || s == (char *)-1)
		return;
	size_t n = strlen(s);
	if (nRestore + n < sizeof restoreSeq) {
		memcpy(restoreSeq + nRestore, s, n);
		nRestore += n;
	}
}

static void init_roles(void)
{
	static const struct {
		enum screen_role r;
		short fg;
		int attr;     /* with colours */
		int attrMono; /* without */
	} t[] = {
	    {SR_TITLE, COLOR_BLACK, A_BOLD, A_REVERSE | A_BOLD},
	    {SR_BORDER, -1, A_DIM, 0},
	    {SR_FOCUS, COLOR_CYAN, A_BOLD, A_BOLD},
	    {SR_HEADER, -1, A_BOLD | A_UNDERLINE, A_BOLD | A_UNDERLINE},
	    {SR_SELECTED, -1, A_REVERSE, A_REVERSE},
	    {SR_GOOD, COLOR_GREEN, 0, 0},
	    {SR_BAD, COLOR_RED, 0, A_BOLD},
	    {SR_BUSY, COLOR_YELLOW, 0, 0},
	    {SR_DIM, -1, A_DIM, A_DIM},
	    {SR_KEYWORD, COLOR_YELLOW, A_BOLD, A_BOLD},
	    {SR_TYPE, COLOR_GREEN, 0, 0},
	    {SR_STRING, COLOR_RED, 0, 0},
	    {SR_COMMENT, COLOR_BLUE, 0, A_DIM},
	    {SR_NUMBER, COLOR_MAGENTA, 0, 0},
	    {SR_FUNCTION, COLOR_CYAN, 0, 0},
	    {SR_PREPROC, COLOR_MAGENTA, A_BOLD, 0},
	    {SR_CUDA, COLOR_RED, A_BOLD, A_BOLD},
	    {SR_ADDED, COLOR_GREEN, 0, A_BOLD},
	    {SR_REMOVED, COLOR_RED, 0, A_DIM},
	    {SR_HUNK, COLOR_CYAN, 0, A_UNDERLINE},
	    {SR_CHART, COLOR_GREEN, 0, 0},
	    {SR_MATCH, COLOR_YELLOW, A_REVERSE | A_BOLD, A_REVERSE},
	};
	memset(aAttr, 0, sizeof aAttr);
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		if (!colors) {
			aAttr[t[i].r] = t[i].attrMono;
			continue;
		}
		int a = t[i].attr;
		if (t[i].fg >= 0 || t[i].r == SR_TITLE) {
			short pair = (short)(i + 1);
			init_pair(pair, t[i].fg, t[i].r == SR_TITLE ? COLOR_CYAN : -1);
			a |= COLOR_PAIR(pair);
		}
		aAttr[t[i].r] = a;
	}
}

int screen_init(int bNoColor, char *err)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return kl_err(err,
		              "the full-screen interface needs a terminal on stdin and stdout");
	if (tcgetattr(STDIN_FILENO, &savedTio) == 0)
		haveTio = 1;
	if (wake[0] < 0) {
		if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) < 0)
			return kl_err(err, "pipe: %s", strerror(errno));
	}
	if (!getenv("ESCDELAY"))
		set_escdelay(25);
	term_unguard(); /* ncurses writes the real stdout; screen_putn sanitises */
	if (!newterm(NULL, stdout, stdin))
		return kl_err(err, "cannot use the terminal (TERM=%s)",
		              getenv("TERM") ? getenv("TERM") : "");
	active = 1;
	cbreak();
	noecho();
	nonl();
	intrflush(stdscr, FALSE);
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED | BUTTON4_PRESSED |
	              BUTTON5_PRESSED,
	          NULL);
	mouseinterval(0);
	colors = !bNoColor && has_colors();
	if (colors) {
		start_color();
		use_default_colors();
	}
	init_roles();
	nRestore = 0;
	add_cap("sgr0");
	add_cap("cnorm");
	add_cap("rmkx");
	add_cap("rmcup");
	static const char mouseOff[] = "\033[?1000l\033[?1002l\033[?1003l\033[?1006l";
	if (nRestore + sizeof mouseOff < sizeof restoreSeq) {
		memcpy(restoreSeq + nRestore, mouseOff, sizeof mouseOff - 1);
		nRestore += sizeof mouseOff - 1;
	}
	handlers(1);
	return 0;
}

void screen_end(void)
{
	if (!active)
		return;
	active = 0;
	mousemask(0, NULL);
	endwin();
	handlers(0);
	if (haveTio)
		tcsetattr(STDIN_FILENO, TCSANOW, &savedTio);
}

void screen_suspend(void)
{
	def_prog_mode();
	endwin();
}

void screen_resume(void)
{
	reset_prog_mode();
	clearok(curscr, TRUE);
	refresh();
}

void screen_wake(void)
{
	int e = errno;
	if (wake[1] >= 0)
		(void)!write(wake[1], "", 1);
	errno = e;
}

int screen_wakeup_fd(void)
{
	return wake[0];
}

void screen_drain(void)
{
	char buf[64];
	while (wake[0] >= 0 && read(wake[0], buf, sizeof buf) > 0) {
	}
}

int screen_take_resize(void)
{
	if (!gotWinch)
		return 0;
	gotWinch = 0;
	struct winsize ws;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
		resizeterm(ws.ws_row, ws.ws_col);
	return 1;
}

int screen_take_interrupt(void)
{
	if (!gotInt)
		return 0;
	gotInt = 0;
	return 1;
}

int screen_attr(enum screen_role r)
{
	return r >= 0 && r < SR_NROLES ? aAttr[r] : 0;
}

enum screen_role screen_role_of_capture(const char *z)
{
	static const struct {
		const char *prefix;
		enum screen_role r;
	} m[] = {
	    {"keyword.cuda", SR_CUDA},    {"punctuation.launch", SR_CUDA},
	    {"function.kernel", SR_CUDA}, {"variable.builtin.cuda", SR_CUDA},
	    {"keyword", SR_KEYWORD},      {"type", SR_TYPE},
	    {"string", SR_STRING},        {"character", SR_STRING},
	    {"comment", SR_COMMENT},      {"number", SR_NUMBER},
	    {"constant", SR_NUMBER},      {"function", SR_FUNCTION},
	    {"preproc", SR_PREPROC},      {"include", SR_PREPROC},
	    {"attribute", SR_CUDA},       {"operator", SR_NORMAL},
	};
	for (size_t i = 0; i < sizeof m / sizeof *m; i++)
		if (!strncmp(z, m[i].prefix, strlen(m[i].prefix)))
			return m[i].r;
	return SR_NORMAL;
}

int screen_population_width(int w)
{
	/* the table's columns up to the speedup take 52 columns, the frame 2;
	 * the idea column gets what a wide screen can spare, up to 30 */
	int need = 54 + 8, spare = w - need - SCREEN_CODE_MIN - 20;
	return need + (spare < 0 ? 0 : spare > 24 ? 24 : spare);
}

void screen_layout(int w, int h, int zoom, struct ui_rect *out)
{
	memset(out, 0, sizeof *out * UI_NRECTS);
	int bh = h - 2; /* between the title bar and the command line */
	if (bh < 4 || w < 20)
		return;
	if (zoom >= 0 && zoom < UI_NRECTS) {
		out[zoom] = (struct ui_rect){1, 0, bh, w};
		return;
	}
	int lw = screen_population_width(w);
	if (w - lw >= SCREEN_CODE_MIN && bh >= 16) {
		/* wide: Population (as wide as its columns) over Ideas on the
		 * left, Code (the rest) over Results on the right, Activity and
		 * the chart below */
		int ah = bh / 5;
		ah = ah < 5 ? 5 : ah > 10 ? 10 : ah;
		int th = bh - ah;
		int ph = th * 3 / 5, ch = th * 3 / 5;
		out[UI_POPULATION] = (struct ui_rect){1, 0, ph, lw};
		out[UI_IDEAS] = (struct ui_rect){1 + ph, 0, th - ph, lw};
		out[UI_CODE] = (struct ui_rect){1, lw, ch, w - lw};
		out[UI_RESULTS] = (struct ui_rect){1 + ch, lw, th - ch, w - lw};
		int cw = w / 3 < 24 ? 24 : w / 3 > 60 ? 60 : w / 3;
		out[UI_ACTIVITY] = (struct ui_rect){1 + th, 0, ah, w - cw};
		out[UI_CHART] = (struct ui_rect){1 + th, w - cw, ah, cw};
	} else {
		/* narrow: the panes stack; Code takes the whole width in the
		 * middle band, Population and Ideas share the top one, Results,
		 * Activity (and the chart when there is room) the bottom one */
		int top = bh * 3 / 10, mid = bh * 4 / 10;
		top = top < 5 ? 5 : top;
		mid = mid < 5 ? 5 : mid;
		int bot = bh - top - mid;
		if (bot < 4) {
			bot = 4;
			mid = bh - top - bot;
		}
		/* Population to its speedup column (54), Ideas the rest */
		int pw = lw < w - 24 ? lw : w - 24;
		if (pw < w / 2)
			pw = w / 2;
		out[UI_POPULATION] = (struct ui_rect){1, 0, top, pw};
		out[UI_IDEAS] = (struct ui_rect){1, pw, top, w - pw};
		out[UI_CODE] = (struct ui_rect){1 + top, 0, mid, w};
		int cw = w >= 96 ? w / 4 : 0, rw = (w - cw) / 2;
		out[UI_RESULTS] = (struct ui_rect){1 + top + mid, 0, bot, rw};
		out[UI_ACTIVITY] = (struct ui_rect){1 + top + mid, rw, bot, w - cw - rw};
		if (cw)
			out[UI_CHART] = (struct ui_rect){1 + top + mid, w - cw, bot, cw};
	}
	/* a pane of height 0 is not shown */
	for (int i = 0; i < UI_NRECTS; i++)
		if (out[i].h <= 0 || out[i].w <= 0)
			out[i] = (struct ui_rect){0, 0, 0, 0};
}

/* text drawn as it is shown: control characters escaped (term_sanitize,
 * tabs kept for the drawing to turn into a space).  NULL when s is clean. */
static char *shown(const char *s, size_t *pn)
{
	size_t n = strnlen(s, *pn);
	if (term_is_clean(s, n, TERM_KEEP_TAB))
		return NULL;
	strbuf sb = STRBUF_INIT;
	term_sanitize(&sb, s, n, TERM_KEEP_TAB);
	*pn = sb.len;
	return sb_detach(&sb);
}

int screen_width(const char *s0, size_t n)
{
	char *esc = shown(s0, &n);
	const char *s = esc ? esc : s0;
	mbstate_t ms;
	memset(&ms, 0, sizeof ms);
	int cols = 0;
	size_t i = 0;
	while (i < n && s[i]) {
		wchar_t wc;
		size_t k = mbrtowc(&wc, s + i, n - i, &ms);
		if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
			memset(&ms, 0, sizeof ms);
			cols++, i++;
			continue;
		}
		int cw = wcwidth(wc);
		cols += cw < 0 ? 1 : cw;
		i += k;
	}
	free(esc);
	return cols;
}

int screen_putn(int y, int x, int w, const char *s0, size_t n, int attr)
{
	if (w <= 0 || y < 0 || y >= LINES || x >= COLS)
		return 0;
	char *esc = shown(s0, &n);
	const char *s = esc ? esc : s0;
	if (x + w > COLS)
		w = COLS - x;
	char buf[2048];
	size_t o = 0, i = 0;
	int cols = 0;
	mbstate_t ms;
	memset(&ms, 0, sizeof ms);
	while (i < n && s[i] && cols < w && o + 8 < sizeof buf) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f) {
			buf[o++] = c == '\t' ? ' ' : '?';
			cols++, i++;
			continue;
		}
		if (c < 0x80) {
			buf[o++] = (char)c;
			cols++, i++;
			continue;
		}
		wchar_t wc;
		size_t k = mbrtowc(&wc, s + i, n - i, &ms);
		int cw = (k == (size_t)-1 || k == (size_t)-2 || k == 0) ? -1 : wcwidth(wc);
		if (cw < 0) {
			memset(&ms, 0, sizeof ms);
			buf[o++] = '?';
			cols++, i++;
			continue;
		}
		if (cols + cw > w)
			break;
		memcpy(buf + o, s + i, k);
		o += k, i += k, cols += cw;
	}
	/* text cut short ends in an ellipsis, so that it does not pass for the
	 * whole of it */
	if (i < n && s[i] && w >= 2) {
		while (cols >= w && o > 0) {
			size_t back = o - 1;
			while (back > 0 && ((unsigned char)buf[back] & 0xc0) == 0x80)
				back--;
			cols -= screen_width(buf + back, o - back);
			o = back;
		}
		if (screen_utf8()) {
			memcpy(buf + o, "\xe2\x80\xa6", 3);
			o += 3;
		} else {
			buf[o++] = '~';
		}
		cols++;
	}
	buf[o] = 0;
	free(esc);
	attron(attr);
	mvaddstr(y, x, buf);
	attroff(attr);
	return cols;
}

int screen_put(int y, int x, int w, const char *s, int attr)
{
	return screen_putn(y, x, w, s, strlen(s), attr);
}

void screen_fill(int y, int x, int w, int attr)
{
	if (w <= 0 || y < 0 || y >= LINES)
		return;
	attron(attr);
	mvhline(y, x, ' ', w);
	attroff(attr);
}

void screen_frame(const struct ui_rect *r, const char *zTitle, int focused)
{
	if (r->h < 2 || r->w < 4)
		return;
	int a = screen_attr(focused ? SR_FOCUS : SR_BORDER);
	attron(a);
	mvaddch(r->y, r->x, ACS_ULCORNER);
	mvhline(r->y, r->x + 1, ACS_HLINE, r->w - 2);
	mvaddch(r->y, r->x + r->w - 1, ACS_URCORNER);
	mvvline(r->y + 1, r->x, ACS_VLINE, r->h - 2);
	mvvline(r->y + 1, r->x + r->w - 1, ACS_VLINE, r->h - 2);
	mvaddch(r->y + r->h - 1, r->x, ACS_LLCORNER);
	mvhline(r->y + r->h - 1, r->x + 1, ACS_HLINE, r->w - 2);
	mvaddch(r->y + r->h - 1, r->x + r->w - 1, ACS_LRCORNER);
	attroff(a);
	char t[256];
	snprintf(t, sizeof t, " %s%s ", zTitle, focused ? " *" : "");
	screen_put(r->y, r->x + 1, r->w - 2, t,
	           screen_attr(focused ? SR_FOCUS : SR_NORMAL) | A_BOLD);
}

int screen_utf8(void)
{
	const char *cs = nl_langinfo(CODESET);
	return cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
}

int screen_fit_fields(const char *const *az, const int *aPrio, int n, int cols, char *out,
                      size_t size)
{
	int keep = 0, worst = 0; /* fields with a priority above keep are left out */
	for (int i = 0; i < n; i++)
		worst = aPrio[i] > worst ? aPrio[i] : worst;
	for (keep = worst; keep >= 0; keep--) {
		size_t k = 0;
		out[0] = 0;
		for (int i = 0; i < n; i++) {
			if (!az[i] || !*az[i] || aPrio[i] > keep)
				continue;
			int m = snprintf(out + k, size - k, "%s%s", k ? " | " : "", az[i]);
			if (m < 0 || (size_t)m >= size - k)
				break;
			k += (size_t)m;
		}
		if (screen_width(out, strlen(out)) <= cols || keep == 0)
			return keep;
	}
	return 0;
}
