/*
 * test_editor.c - $EDITOR as a state of the loop (tui/editor.c): the
 * editor starts and the call returns before it ends; its end calls the
 * caller back from the loop with its exit status, the file as it left it,
 * and the loop's other work done meanwhile; an editor that cannot be run,
 * or is killed, is said as such.  Through a command's hand-over
 * (tui/actions.h: actions_edit_text): the front is editing until the
 * editor ends, then the command goes on with the text as the editor left
 * it (changed or not) and the copy is gone.
 */
#include <signal.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actions.h"
#include "check.h"
#include "editor.h"
#include "slurp.h"
#include "util.h"

struct ended {
	int n;       /* calls of the callback */
	int rc;      /* its status */
	char *zErr;  /* its message */
	int tickRan; /* the loop's timer ran before the editor ended */
};

/* the file the scripted editor waits for: made by the loop's timer */
static char *gGo;

static void on_done(void *arg, int rc, const char *zErr)
{
	struct ended *e = arg;
	e->n++;
	e->rc = rc;
	free(e->zErr);
	e->zErr = xstrdup(zErr);
}

static void on_tick(struct loop *l, long long id, void *arg)
{
	(void)l, (void)id;
	struct ended *e = arg;
	e->tickRan = !e->n;
	write_file_atomic(gGo, "", 0, NULL);
}

/* run the editor zEditor (as $EDITOR) on a copy of zText: what came of it,
 * the copy's text after it in *pzOut (caller frees) */
static struct ended edit(const char *zEditor, const char *zText, char **pzOut)
{
	struct ended e = {0};
	char err[KL_ERRLEN] = "";
	struct loop *l = loop_new();
	unsetenv("VISUAL");
	setenv("EDITOR", zEditor, 1);
	char *path = editor_tempfile("cand.c", zText, err);
	unlink(gGo);
	loop_add_timer(l, 0, on_tick, &e);
	int rc = editor_start(l, path, on_done, &e, err);
	CHECK(rc == 0 && e.n == 0,
	      "%s: the editor starts, and the call returns before it ends (%s)", zEditor, err);
	for (double end = now_s() + 60; rc == 0 && !e.n && now_s() < end;)
		loop_once(l, 1.0);
	CHECK(e.n == 1, "%s: its end calls the caller back once, from the loop", zEditor);
	*pzOut = slurp(path, NULL);
	editor_cleanup(path);
	free(path);
	loop_free(l);
	return e;
}

/* a front whose edit hook starts the editor on its loop and hands its end
 * back (actions_edited), as the TUI's and the REPL's do */
struct front {
	struct loop *l;
	struct actions_front f;
	char *zPath; /* the copy the hook was given */
	int rc;      /* what actions_edited() returned */
};

static void front_edited(void *arg, int rc, const char *zErr)
{
	struct front *fr = arg;
	fr->rc = actions_edited(&fr->f, rc, zErr);
}

static int front_edit(void *arg, const char *zPath, char *err)
{
	struct front *fr = arg;
	free(fr->zPath);
	fr->zPath = xstrdup(zPath);
	return editor_start(fr->l, zPath, front_edited, fr, err);
}

/* what the command's continuation was given, and what came of the hand-over */
struct went_on {
	int n, rc, changed;
	char *zText, *zErr;
	int editing; /* the front was editing once the command had returned */
	int gone;    /* the copy was removed by the time the command went on */
};

static int went_on(struct actions_front *f, void *ctx, int rc, const char *zText, size_t nText,
                   int changed, const char *zErr)
{
	(void)f, (void)nText;
	struct went_on *g = ctx;
	g->n++;
	g->rc = rc;
	g->changed = changed;
	g->zText = zText ? xstrdup(zText) : NULL;
	g->zErr = xstrdup(zErr);
	return rc == 0 ? 0 : -1;
}

/* zText handed by a command to the editor zEditor, and back */
static struct went_on hand_over(struct front *fr, const char *zEditor, const char *zText)
{
	struct went_on g = {0};
	struct ended tick = {0};
	char err[KL_ERRLEN] = "";
	setenv("EDITOR", zEditor, 1);
	unlink(gGo);
	loop_add_timer(fr->l, 0, on_tick, &tick);
	int rc = actions_edit_text(&fr->f, "cand.c", zText, 1 << 20, went_on, &g, err);
	g.editing = rc == 0 && actions_editing(&fr->f) && !g.n;
	for (double end = now_s() + 60; rc == 0 && actions_editing(&fr->f) && now_s() < end;)
		loop_once(fr->l, 1.0);
	g.gone = fr->zPath && !path_exists(fr->zPath);
	return g;
}

static void test_hand_over(const char *zEd, const char *zBad)
{
	static const struct actions_hooks hooks = {.edit = front_edit};
	struct front fr = {.l = loop_new()};
	fr.f = (struct actions_front){.h = &hooks, .arg = &fr};
	struct went_on g = hand_over(&fr, zEd, "return 2 * x;\n");
	CHECK(g.editing, "a command hands a text to the editor: the front is editing once it "
	                 "returned");
	CHECK(g.n == 1 && g.rc == 0 && g.changed && g.zText && !strcmp(g.zText, "return x + x;\n"),
	      "the editor's end goes on with the command: the text as the editor left it, "
	      "changed (%d, %d, %.*s)",
	      g.n, g.changed, g.zText ? (int)strcspn(g.zText, "\n") : 0, g.zText ? g.zText : "");
	CHECK(fr.rc == 0 && !actions_editing(&fr.f) && g.gone,
	      "... what it came to is actions_edited()'s, the front edits no more and the copy is "
	      "gone");
	free(g.zText);
	free(g.zErr);
	g = hand_over(&fr, zEd, "return x;\n");
	CHECK(g.n == 1 && g.rc == 0 && !g.changed, "a text the editor left as it was: not changed");
	free(g.zText);
	free(g.zErr);
	g = hand_over(&fr, zBad, "return x;\n");
	CHECK(g.n == 1 && g.rc == 3 && !g.zText && fr.rc == -1 && g.gone,
	      "an editor that exits 3: the command goes on with status 3 and no text, and fails");
	free(g.zText);
	free(g.zErr);
	free(fr.zPath);
	loop_free(fr.l);
}

int main(void)
{
	char tmpl[] = "/tmp/kloop-test-editor-XXXXXX";
	char *dir = mkdtemp(tmpl);
	char *ed = path_join(dir, "ed.sh"), *bad = path_join(dir, "exits3.sh"),
	     *killed = path_join(dir, "killed.sh");
	gGo = path_join(dir, "go");
	/* it edits its last argument once the loop's timer has run */
	char *zEd = xasprintf("#!/bin/sh\nwhile [ ! -e '%s' ]; do sleep 0.01; done\n"
	                      "for f; do :; done\nsed -i 's/2 \\* x/x + x/' \"$f\"\n",
	                      gGo);
	write_file_atomic(ed, zEd, strlen(zEd), NULL);
	free(zEd);
	write_file_atomic(bad, "#!/bin/sh\nexit 3\n", 17, NULL);
	write_file_atomic(killed, "#!/bin/sh\nkill -9 $$\n", 21, NULL);
	chmod(ed, 0755);
	chmod(bad, 0755);
	chmod(killed, 0755);
	char *out = NULL;

	struct ended e = edit(ed, "return 2 * x;\n", &out);
	CHECK(e.rc == 0 && !strcmp(e.zErr, ""), "an editor that exits 0: status 0 (%d, '%s')", e.rc,
	      e.zErr);
	CHECK(!strcmp(out, "return x + x;\n"),
	      "... the callback finds the copy as it left it (%.*s)", (int)strcspn(out, "\n"), out);
	CHECK(e.tickRan, "... and the loop went on with its timers while the editor ran (it "
	                 "waited for one)");
	free(out);
	free(e.zErr);

	e = edit(bad, "x\n", &out);
	CHECK(e.rc == 3, "an editor that exits 3: status 3 (%d)", e.rc);
	free(out);
	free(e.zErr);

	e = edit("/no/such/editor", "x\n", &out);
	CHECK(e.rc == -1 && !strcmp(e.zErr, "the editor (/no/such/editor) could not be run"),
	      "an editor that cannot be run is said as such (%d, '%s')", e.rc, e.zErr);
	free(out);
	free(e.zErr);

	e = edit(killed, "x\n", &out);
	char *want = xasprintf("the editor (%s) was killed by signal 9", killed);
	CHECK(e.rc == -1 && !strcmp(e.zErr, want),
	      "an editor killed by a signal is said as such ('%s')", e.zErr);
	free(want);
	free(out);
	free(e.zErr);

	/* "code -w": an editor given with its flags */
	char *flags = xasprintf("%s --wait", ed);
	e = edit(flags, "return 2 * x;\n", &out);
	CHECK(e.rc == 0 && !strcmp(out, "return x + x;\n"),
	      "$EDITOR with flags runs the command with them, on the file (%d, %.*s)", e.rc,
	      (int)strcspn(out, "\n"), out);
	free(flags);
	free(out);
	free(e.zErr);

	test_hand_over(ed, bad);

	unlink(gGo);
	free(gGo);
	unlink(ed);
	unlink(bad);
	unlink(killed);
	rmdir(dir);
	free(ed);
	free(bad);
	free(killed);
	return check_done();
}
