/*
 * verbs_cand.c - the commands about one candidate: evaluate it again
 * (bench), edit a copy, add one from a file, profile it, look at it (show,
 * diff, compare), and write it out (export, as `kloop export` does:
 * sessions/driver/cand_export.h).
 */
#include "actions.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs.h"
#include "cand_export.h"
#include "torchext.h"
#include "report.h"

/* bench ID --on W (or --on=W): W, or -1 after saying what is wrong */
static int worker_arg(struct actions_front *f, const struct commands_line *c)
{
	const char *z = NULL;
	if (c->nArg == 3 && !strcmp(c->azArg[1], "--on"))
		z = c->azArg[2];
	else if (c->nArg == 2 && !strncmp(c->azArg[1], "--on=", 5))
		z = c->azArg[1] + 5;
	if (!z)
		return actions_fail(
		    f, "bench: expected --on W or --ab OTHER after the id, got '%s' (usage: %s)",
		    c->azArg[1], c->def->usage);
	char *end;
	errno = 0;
	long w = strtol(z, &end, 10);
	if (!*z || *end || errno || w < 0 || w > 1000000)
		return actions_fail(f, "bench: --on wants a worker number (0, 1, ...), got '%s'",
		                    z);
	return (int)w;
}

/* the editor ended with candidate ctx's copy (rc: its exit status, or -1 +
 * zErr): the copy, when changed, is added and evaluated; the outcome is
 * said */
static int cand_edited(struct actions_front *f, void *ctx, int rc, const char *zText, size_t nText,
                       int changed, const char *zErr)
{
	char err[KL_ERRLEN];
	int id = (int)(intptr_t)ctx;
	snprintf(err, sizeof err, "%s", zErr);
	if (rc > 0)
		rc = kl_err(err, "the editor exited with status %d; nothing was added", rc);
	else if (rc == 0 && !nText)
		rc = kl_err(err, "the edited copy is empty; nothing was added");
	else if (rc == 0 && changed) {
		rc = driver_add(f->lv, "human", &id, 1, NULL, zText, NULL, err);
		if (rc > 0 && driver_bench(f->lv, rc, err) < 0)
			rc = -1;
	}
	if (rc < 0)
		return actions_fail(f, "edit: %s", err);
	if (rc == 0)
		actions_say(f, "edit: candidate %d is unchanged; nothing was added", id);
	else
		actions_say(f, "candidate %d (human, from #%d) added; evaluating", rc, id);
	return 0;
}

int actions_edit(struct actions_front *f, int id, char *err)
{
	const struct cand *c = state_cand(driver_state(f->lv), id);
	if (!c)
		return kl_err(err, "there is no candidate %d", id);
	return actions_edit_text(f, c->zName, c->zSource, 8u << 20, cand_edited,
	                         (void *)(intptr_t)id, err);
}

/* the candidate argument of a command that changes the session, or NULL
 * after saying why there is none */
static const struct cand *live_cand(struct actions_front *f, const struct commands_line *c)
{
	return actions_need_live(f, c) < 0 ? NULL : actions_cand(f, c, 0);
}

int verb_edit(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	const struct cand *a = live_cand(f, c);
	if (!a)
		return -1;
	if (actions_edit(f, a->id, err) < 0)
		return actions_fail(f, "edit: %s", err);
	return 0;
}

int verb_add(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	if (actions_need_live(f, c) < 0)
		return -1;
	const char *path = c->azArg[0];
	if (!torchext_known_name(path))
		return actions_fail(f, "add: %s: not a .c, .cpp, .cu or ModelNew .py source", path);
	strbuf src = STRBUF_INIT;
	if (read_file(path, &src, 4 << 20, err) < 0) {
		sb_free(&src);
		return actions_fail(f, "add: %s", err);
	}
	const char *base = strrchr(path, '/');
	int id = driver_add(f->lv, "human", NULL, 0, base ? base + 1 : path, src.buf, NULL, err);
	sb_free(&src);
	if (id < 0 || driver_bench(f->lv, id, err) < 0)
		return actions_fail(f, "add: %s", err);
	actions_say(f, "candidate %d (%s, human) added from %s; evaluating", id,
	            base ? base + 1 : path, path);
	return 0;
}

int verb_profile(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	const struct cand *a = live_cand(f, c);
	if (!a)
		return -1;
	if (driver_profile(f->lv, a->id, err) < 0)
		return actions_fail(f, "profile: %s", err);
	actions_say(f, "candidate %d (%s): Nsight Compute is running once on its kernels", a->id,
	            a->zName);
	return 0;
}

/* the session's baseline (issue 39): shown, or re-measured */
int verb_baseline(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	if (c->nArg && strcmp(c->azArg[0], "remeasure"))
		return actions_fail(f, "baseline: expected remeasure or nothing, got '%s'",
		                    c->azArg[0]);
	if (!c->nArg) {
		strbuf sb = STRBUF_INIT;
		const struct state *st = actions_state(f);
		if (f->lv)
			driver_baseline_text(f->lv, &sb);
		for (int i = 0; !f->lv && i < st->nBase; i++)
			sb_addf(&sb, "%sbaseline %.4g ms%s%s, %s", i ? "\n" : "", st->aBase[i].ms,
			        *st->aBase[i].zDevice ? " on " : "", st->aBase[i].zDevice,
			        st->aBase[i].remeasured ? "re-measured"
			                                : "timed when the session began");
		if (!sb.len)
			sb_adds(&sb, "no baseline yet");
		f->h->page(f->arg, "baseline", sb.buf, 0);
		sb_free(&sb);
		return 0;
	}
	if (actions_need_live(f, c) < 0)
		return -1;
	int id = driver_remeasure(f->lv, err);
	if (id < 0)
		return actions_fail(f, "baseline: %s", err);
	actions_say(f,
	            "re-measuring the baseline: the workers start afresh and time the reference, "
	            "then evaluate #%d with it",
	            id);
	return 0;
}

int verb_bench(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	const struct cand *a = live_cand(f, c);
	if (!a)
		return -1;
	if (c->nArg == 3 && !strcmp(c->azArg[1], "--ab")) {
		const struct cand *o = state_cand(actions_state(f), atoi(c->azArg[2]));
		if (!o)
			return actions_fail(f, "bench: --ab wants a candidate id, got '%s'",
			                    c->azArg[2]);
		if (driver_bench_ab(f->lv, a->id, o->id, err) < 0)
			return actions_fail(f, "bench: %s", err);
		actions_say(f, "candidate %d (%s): evaluating, then an A/B against #%d (%s)", a->id,
		            a->zName, o->id, o->zName);
		return 0;
	}
	if (c->nArg > 1) {
		int w = worker_arg(f, c);
		if (w < 0)
			return -1;
		if (driver_bench_on(f->lv, a->id, w, err) < 0)
			return actions_fail(f, "bench: %s", err);
		actions_say(f, "candidate %d (%s): evaluating on worker %d", a->id, a->zName, w);
		return 0;
	}
	if (driver_bench(f->lv, a->id, err) < 0)
		return actions_fail(f, "bench: %s", err);
	actions_say(f, "candidate %d (%s): evaluating", a->id, a->zName);
	return 0;
}

int verb_show(struct actions_front *f, const struct commands_line *c)
{
	const struct cand *a = actions_cand(f, c, 0);
	if (!a)
		return -1;
	strbuf sb = STRBUF_INIT;
	report_show(actions_state(f), a, &sb);
	char title[64];
	snprintf(title, sizeof title, "show #%d", a->id);
	f->h->page(f->arg, title, sb.buf, a->id);
	sb_free(&sb);
	return 0;
}

int verb_diff(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	const struct cand *a = NULL, *b = actions_cand(f, c, 0);
	if (!b)
		return -1;
	if (c->nArg > 1) {
		/* diff A B: what changed from A to B */
		a = b;
		if (!(b = actions_cand(f, c, 1)))
			return -1;
	}
	strbuf sb = STRBUF_INIT;
	int rc = 0;
	if (report_diff(actions_state(f), a, b, &sb, err) < 0)
		rc = actions_fail(f, "diff: %s", err);
	else
		f->h->page(f->arg, "diff", sb.buf, b->id);
	sb_free(&sb);
	return rc;
}

int verb_compare(struct actions_front *f, const struct commands_line *c)
{
	const struct cand *a, *b;
	if (!(a = actions_cand(f, c, 0)) || !(b = actions_cand(f, c, 1)))
		return -1;
	strbuf sb = STRBUF_INIT;
	report_compare(actions_state(f), a, b, &sb);
	char title[64];
	snprintf(title, sizeof title, "compare #%d #%d", a->id, b->id);
	f->h->page(f->arg, title, sb.buf, 0);
	sb_free(&sb);
	return 0;
}

/* export ID's words after the id into x: FILE (the plain source), --source
 * OUT, --cuda OUT, --kernelbench OUT.py, --problem PROBLEM.py (or
 * --NAME=VALUE); 0, or -1 after saying what is wrong */
static int export_args(struct actions_front *f, const struct commands_line *c,
                       struct cand_export *x)
{
	static const char *const names[] = {"--source", "--cuda", "--kernelbench", "--problem"};
	const char **slots[] = {&x->zSource, &x->zCuda, &x->zKernelbench, &x->zProblem};
	for (int i = 1; i < c->nArg; i++) {
		const char *w = c->azArg[i];
		if (strncmp(w, "--", 2)) {
			if (x->zSource)
				return actions_fail(f, "export: unexpected '%s' (usage: %s)", w,
				                    c->def->usage);
			x->zSource = w;
			continue;
		}
		size_t k = strcspn(w, "=");
		int which = -1;
		for (int n = 0; n < 4; n++)
			if (strlen(names[n]) == k && !strncmp(w, names[n], k))
				which = n;
		if (which < 0)
			return actions_fail(f, "export: unknown option '%.*s' (usage: %s)", (int)k,
			                    w, c->def->usage);
		const char *v = w[k] ? w + k + 1 : i + 1 < c->nArg ? c->azArg[++i] : NULL;
		if (!v || !*v)
			return actions_fail(f, "export: %s wants a file name", names[which]);
		*slots[which] = v;
	}
	if (!x->zSource && !x->zCuda && !x->zKernelbench)
		return actions_fail(f,
		                    "export: nothing to write: give FILE, --source, --cuda or "
		                    "--kernelbench (usage: %s)",
		                    c->def->usage);
	return 0;
}

int verb_export(struct actions_front *f, const struct commands_line *c)
{
	char err[KL_ERRLEN];
	const struct cand *a = actions_cand(f, c, 0);
	struct cand_export x = {0};
	if (!a || export_args(f, c, &x) < 0)
		return -1;
	const char *zJournal = f->lv ? driver_path(f->lv) : f->rp ? f->rp->zPath : NULL;
	if (cand_export_write(actions_state(f), zJournal, a, &x, err) < 0)
		return actions_fail(f, "export: %s", err);
	/* one line (the TUI's message line shows one): each file written, then
	 * the note kloop export gives on stderr */
	strbuf sb = STRBUF_INIT;
	cand_export_said(a, &x, 1, &sb);
	f->h->say(f->arg, sb.buf, 0);
	sb_free(&sb);
	return 0;
}
