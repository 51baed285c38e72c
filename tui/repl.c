/*
 * repl.c - the line REPL: libedit on a terminal (its character reader runs
 * the event loop while it waits for a key), plain lines from a pipe (each
 * command's jobs waited for), answers printed as text.
 */
#include "repl.h"

#include <errno.h>
#include <histedit.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "actions.h"
#include "cmdline.h"
#include "editor.h"
#include "jobs.h"
#include "popview.h"

struct repl {
	struct loop *l;         /* the event loop */
	struct driver *lv;      /* the session */
	struct popview pv;      /* sort and filter for `list` */
	struct actions_front f; /* the hooks */
	EditLine *el;           /* libedit, on a terminal */
	History *hist;          /* its history */
	char *zHist;            /* the history file */
	int inPrompt;           /* libedit is showing the prompt */
	int stdinReady;         /* a key is waiting */
	int quit;               /* leave */
	int askQuit;            /* the next line answers "quit anyway?" */
	int nFailed;            /* commands that failed */
	int editRc;             /* what the command that waited for the editor came to */
};

/* print a line that arrived while the user may be typing */
static void print_async(struct repl *r, FILE *f, const char *zText)
{
	if (r->inPrompt && r->el) {
		term_ctl(stdout, "\r\033[K");
	}
	char *z = term_clean(zText, TERM_KEEP_NL | TERM_KEEP_TAB);
	fprintf(f, "%s\n", z);
	free(z);
	fflush(f);
	if (r->inPrompt && r->el)
		el_set(r->el, EL_REFRESH);
}

static void on_live(void *arg, const struct driver_note *n)
{
	struct repl *r = arg;
	if (n->kind == DRIVER_CHANGED)
		return;
	strbuf sb = STRBUF_INIT;
	if (r->lv)
		driver_describe(r->lv, n, &sb);
	else if (n->zText)
		sb_addf(&sb, "%s", n->zText); /* a warning while the session opens */
	if (n->kind == DRIVER_MESSAGE) {
		char *m = xasprintf("kloop: %s", sb.buf ? sb.buf : "");
		size_t k = strlen(m);
		while (k && m[k - 1] == '\n')
			m[--k] = 0;
		print_async(r, stderr, m);
		free(m);
	} else if (sb.len) {
		print_async(r, stdout, sb.buf);
	}
	sb_free(&sb);
}

static void hook_say(void *arg, const char *zText, int bError)
{
	struct repl *r = arg;
	char *z = term_clean(zText, TERM_KEEP_NL | TERM_KEEP_TAB);
	if (bError) {
		r->nFailed++;
		fprintf(stderr, "error: %s\n", z);
		fflush(stderr);
	} else {
		printf("%s\n", z);
	}
	free(z);
	fflush(stdout);
}

static void hook_page(void *arg, const char *zTitle, const char *zText, int cand)
{
	(void)arg, (void)zTitle, (void)cand;
	char *z = term_clean(zText, TERM_KEEP_NL | TERM_KEEP_TAB);
	fputs(z, stdout);
	free(z);
	if (*zText && zText[strlen(zText) - 1] != '\n')
		fputc('\n', stdout);
	fflush(stdout);
}

/* the editor ended: the command that started it goes on */
static void on_edited(void *arg, int rc, const char *zErr)
{
	struct repl *r = arg;
	r->editRc = actions_edited(&r->f, rc, zErr);
}

static int hook_edit(void *arg, const char *zPath, char *err)
{
	struct repl *r = arg;
	fflush(stdout);
	return editor_start(r->l, zPath, on_edited, r, err);
}

/* run line zLine: what it came to (actions_run_line); a command that
 * handed a file to the editor goes on when the editor ends, and the next
 * line is read after that (the loop turns meanwhile) */
static int run_line(struct repl *r, const char *zLine)
{
	int rc = actions_run_line(&r->f, zLine);
	if (!actions_editing(&r->f))
		return rc;
	while (actions_editing(&r->f))
		loop_once(r->l, -1);
	return r->editRc;
}

static void hook_quit(void *arg, int bForce)
{
	struct repl *r = arg;
	int n = jobs_count(r->lv);
	if (!bForce && n > 0 && r->el) {
		printf("%d job%s running; quit anyway? [y/N] ", n, n == 1 ? " is" : "s are");
		fflush(stdout);
		r->askQuit = 1;
		return;
	}
	r->quit = 1;
}

static int hook_cont(void *arg, const char *zFile, char *err)
{
	(void)arg, (void)zFile;
	return kl_err(err, "only `kloop replay` continues a journal");
}

/* ---- libedit on a terminal ---- */

static void on_stdin(struct loop *l, int fd, int events, void *arg)
{
	struct repl *r = arg;
	(void)l, (void)fd, (void)events;
	r->stdinReady = 1;
}

/* libedit's character reader: turn the loop until a key arrives */
static int getcfn(EditLine *el, wchar_t *wc)
{
	struct repl *r;
	el_get(el, EL_CLIENTDATA, &r);
	mbstate_t ms;
	memset(&ms, 0, sizeof ms);
	for (;;) {
		r->stdinReady = 0;
		loop_add_fd(r->l, STDIN_FILENO, LOOP_READ, on_stdin, r);
		while (!r->stdinReady)
			loop_once(r->l, -1);
		loop_del_fd(r->l, STDIN_FILENO);
		char c;
		ssize_t n = read(STDIN_FILENO, &c, 1);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return n == 0 ? 0 : -1;
		size_t k = mbrtowc(wc, &c, 1, &ms);
		if (k == (size_t)-2)
			continue; /* more bytes of this character */
		if (k == (size_t)-1) {
			memset(&ms, 0, sizeof ms);
			*wc = (unsigned char)c;
		}
		return 1;
	}
}

static const char *prompt(EditLine *el)
{
	(void)el;
	return "kloop> ";
}

static unsigned char complete(EditLine *el, int ch)
{
	struct repl *r;
	(void)ch;
	el_get(el, EL_CLIENTDATA, &r);
	const LineInfo *li = el_line(el);
	char *line = xstrndup(li->buffer, (size_t)(li->lastchar - li->buffer));
	size_t cursor = (size_t)(li->cursor - li->buffer), start;
	char **m;
	int n = commands_complete(line, cursor, actions_words, &r->f, &m, &start);
	unsigned char rc = CC_REFRESH;
	if (n == 0) {
		rc = CC_REFRESH_BEEP;
	} else {
		char *pre = commands_common_prefix(m, n);
		size_t have = cursor - start;
		if (strlen(pre) > have)
			el_insertstr(el, pre + have);
		if (n == 1)
			el_insertstr(el, " ");
		else {
			fputc('\n', stdout);
			for (int i = 0; i < n; i++)
				printf("%s%s", i ? "  " : "", m[i]);
			fputc('\n', stdout);
			rc = CC_REDISPLAY;
		}
		free(pre);
	}
	commands_free_words(m, -1);
	free(line);
	return rc;
}

static void run_tty(struct repl *r)
{
	term_unguard(); /* libedit needs the real streams; the hooks sanitise */
	r->el = el_init("kloop", stdin, stdout, stderr);
	el_set(r->el, EL_CLIENTDATA, r);
	el_set(r->el, EL_EDITOR, "emacs");
	el_set(r->el, EL_SIGNAL, 1);
	el_set(r->el, EL_PROMPT, prompt);
	el_set(r->el, EL_HIST, history, r->hist);
	el_set(r->el, EL_GETCFN, getcfn);
	/* the wide call: libedit's narrow el_set keeps its own copies of the
	 * name and the help and never frees them */
	el_wset(r->el, EL_ADDFN, L"kl-complete", L"complete a command, candidate id or column",
	        complete);
	el_set(r->el, EL_BIND, "^I", "kl-complete", NULL);
	el_source(r->el, NULL); /* the user's ~/.editrc */
	printf("kloop shell: %s on %s, session %s (help lists the commands, Ctrl-D quits)\n",
	       driver_task_name(r->lv), driver_backend(r->lv), driver_path(r->lv));
	while (!r->quit) {
		int n;
		r->inPrompt = 1;
		const char *line = el_gets(r->el, &n);
		r->inPrompt = 0;
		if (!line) {
			putchar('\n');
			break;
		}
		char *z = xstrndup(line, (size_t)n);
		size_t k = strlen(z);
		while (k && (z[k - 1] == '\n' || z[k - 1] == '\r'))
			z[--k] = 0;
		if (r->askQuit) {
			r->askQuit = 0;
			r->quit = z[0] == 'y' || z[0] == 'Y';
		} else {
			cmdline_history_add(r->hist, r->zHist, z);
			run_line(r, z);
		}
		free(z);
	}
	el_end(r->el);
	r->el = NULL;
}

/* ---- lines from a pipe ---- */

/* until the evaluations and the LLM work a command started are done */
static void wait_jobs(struct repl *r)
{
	while (driver_busy(r->lv) || actions_search_busy(&r->f))
		loop_once(r->l, actions_search_busy(&r->f) ? 0.1 : -1);
}

static void run_pipe(struct repl *r)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	wait_jobs(r);
	while (!r->quit && (n = getline(&line, &cap, stdin)) >= 0) {
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		int from = state_next_id(driver_state(r->lv)), evals = driver_finished(r->lv);
		int started = run_line(r, line) == 0 && jobs_count(r->lv) > 0;
		wait_jobs(r);
		/* the work a command started is done: say what it came to */
		strbuf sb = STRBUF_INIT;
		if (started &&
		    jobs_summary(driver_state(r->lv), from, driver_finished(r->lv) - evals, &sb))
			printf("done: %s\n", sb.buf);
		sb_free(&sb);
	}
	free(line);
	wait_jobs(r);
}

static const struct actions_hooks hooks = {
    .say = hook_say,
    .page = hook_page,
    .edit = hook_edit,
    .quit = hook_quit,
    .cont = hook_cont,
};

int repl_run(const struct config *cfg, const struct driver_opts *lo, int bBatch)
{
	struct repl *r = xcalloc(1, sizeof *r);
	char err[KL_ERRLEN];
	int rc = 0;
	signal(SIGPIPE, SIG_IGN);
	r->l = loop_new();
	popview_init(&r->pv);
	r->f = (struct actions_front){.pv = &r->pv, .cfg = cfg, .h = &hooks, .arg = r};
	r->lv = driver_open(r->l, cfg, lo, on_live, r, err);
	if (!r->lv) {
		fprintf(stderr, "kloop: %s\n", err);
		rc = 2;
		goto out;
	}
	r->f.lv = r->lv;
	actions_search_open(&r->f, 1); /* a search cut short goes on */
	if (bBatch) {
		printf("kloop: stdout is not a terminal, so no full-screen interface: evaluating "
		       "the seeds of %s "
		       "on the %s backend (session %s)\n",
		       driver_task_name(r->lv), driver_backend(r->lv), driver_path(r->lv));
		fflush(stdout);
		wait_jobs(r);
		const struct state *st = driver_state(r->lv);
		if (!st->nCand) {
			fprintf(
			    stderr,
			    "kloop: %s has no candidates to evaluate (a problem file comes without "
			    "seeds): evaluate one with `kloop eval %s FILE`, or open it in a "
			    "terminal "
			    "and add one with :add FILE\n",
			    driver_task_name(r->lv), driver_task_dir(r->lv));
			rc = 1;
			goto out;
		}
		actions_run_line(&r->f, "list");
		for (int i = 0; i < st->nCand; i++)
			if (st->aCand[i].status != STATUS_CORRECT)
				rc = 1;
		goto out;
	}
	r->zHist = cmdline_history_path();
	r->hist = cmdline_history_open(r->zHist);
	if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
		run_tty(r);
	else
		run_pipe(r);
	rc = r->nFailed ? 1 : 0;
	fflush(stdout);
	if (driver_saved(r->lv, stdout) < 0)
		rc = 2;
out:
	if (r->hist)
		history_end(r->hist);
	free(r->zHist);
	actions_search_close(&r->f);
	driver_close(r->lv);
	popview_free(&r->pv);
	loop_free(r->l);
	free(r);
	return rc;
}
