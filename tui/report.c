/*
 * report.c - text renderings of candidates from the state: table rows, the
 * results report, the show page and the function-then-line diff.
 */
#include "report.h"

#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "describe.h"
#include "diagfold.h"
#include "linediff.h"
#include "result.h"
#include "funcdiff.h"

const char *report_status_short(const char *z)
{
	return report_status_text(z);
}

const char *report_status_text(const char *z)
{
	return status_from_name(z) == STATUS_COMPILE_ERROR ? "compile error" : z;
}

int report_spread(const struct cand *c, double *p10, double *p90)
{
	return state_cand_spread(c, p10, p90);
}

int report_same_within_noise(const struct cand *a, const struct cand *b)
{
	return state_same_within_noise(a, b);
}

const struct cand *report_best(const struct state *st, int *pTie)
{
	return state_best(st, NULL, pTie);
}

void report_best_text(const struct state *st, char *buf, size_t n)
{
	state_best_text(st, buf, n);
}

const struct cand *report_seed_of(const struct state *st, const struct cand *c)
{
	for (int hops = 0; c && hops < 10000; hops++) {
		if (!strcmp(c->zOrigin, "seed"))
			return c;
		c = c->nParent ? state_cand(st, c->aParent[0]) : NULL;
	}
	return NULL;
}

/* the time with its spread: "0.9576 ms (p10-p90 0.95-0.97)" */
static void time_text(const struct cand *c, char *buf, size_t n)
{
	double p10, p90;
	if (c->timeMs < 0)
		snprintf(buf, n, "-");
	else if (report_spread(c, &p10, &p90))
		snprintf(buf, n, "%.4g ms (p10-p90 %.4g-%.4g)", c->timeMs, p10, p90);
	else
		snprintf(buf, n, "%.4g ms", c->timeMs);
}

/* "1.23x faster than #2 (outside the noise)" or "same as #2 within noise" */
static void versus(const struct cand *c, const struct cand *o, const char *zWho, strbuf *sb)
{
	if (c->timeMs <= 0 || o->timeMs <= 0) {
		sb_addf(sb, "%s #%d: not comparable (not both timed)", zWho, o->id);
		return;
	}
	int same = report_same_within_noise(c, o);
	double r = o->timeMs / c->timeMs;
	if (same == 1)
		sb_addf(sb, "%s #%d: %.3gx, same within noise", zWho, o->id, r);
	else
		sb_addf(sb, "%s #%d: %.3gx (%s%s)", zWho, o->id, r, r >= 1 ? "faster" : "slower",
		        same == 0 ? ", outside the noise" : "");
}

/* the speedups of c against its parent and its seed, one line */
static void report_relative(const struct state *st, const struct cand *c, strbuf *sb)
{
	const struct cand *par = c->nParent ? state_cand(st, c->aParent[0]) : NULL;
	const struct cand *seed = report_seed_of(st, c);
	if (c->timeMs < 0 || (!par && (!seed || seed == c)))
		return;
	sb_adds(sb, "versus    ");
	if (par)
		versus(c, par, "parent", sb);
	if (seed && seed != c && seed != par) {
		sb_adds(sb, par ? "; " : "");
		versus(c, seed, "seed", sb);
	}
	sb_adds(sb, "\n");
}

/* c's code hash, or NULL */
static const char *code_hash(const struct cand *c)
{
	return c->v.zCodeHash;
}

/* when a and b are the same machine code (the same code hash on the same
 * device): says so into sb, and which one was not timed again; 1, else 0 */
static int same_code(const struct cand *a, const struct cand *b, strbuf *sb)
{
	const char *ha = code_hash(a), *hb = code_hash(b);
	const char *da = a->v.zDevice, *db = b->v.zDevice;
	if (!ha || !hb || strcmp(ha, hb) || (da && db && strcmp(da, db)))
		return 0;
	sb_addf(sb, "same machine code: #%d and #%d compile to the same kernel (code %.12s)", a->id,
	        b->id, ha);
	for (int k = 0; k < 2; k++) {
		const struct cand *c = k ? b : a;
		if (c->v.sameCodeAs)
			sb_addf(sb, "; #%d was not timed again: it has #%d's timing", c->id,
			        c->v.sameCodeAs);
	}
	return 1;
}

void report_compare(const struct state *st, const struct cand *a, const struct cand *b, strbuf *sb)
{
	char ta[96], tb[96], sa[32] = "-", sbp[32] = "-";
	time_text(a, ta, sizeof ta);
	time_text(b, tb, sizeof tb);
	if (a->speedup >= 0)
		snprintf(sa, sizeof sa, "%.3gx", a->speedup);
	if (b->speedup >= 0)
		snprintf(sbp, sizeof sbp, "%.3gx", b->speedup);
	char ia[16], ib[16];
	snprintf(ia, sizeof ia, "#%d", a->id);
	snprintf(ib, sizeof ib, "#%d", b->id);
	sb_addf(sb, "%-9s %-36s %s\n", "", ia, ib);
	sb_addf(sb, "%-9s %-36s %s\n", "name", a->zName, b->zName);
	sb_addf(sb, "%-9s %-36s %s\n", "origin", a->zOrigin, b->zOrigin);
	sb_addf(sb, "%-9s %-36s %s\n", "status", report_status_text(a->zStatus),
	        report_status_text(b->zStatus));
	sb_addf(sb, "%-9s %-36s %s\n", "time", ta, tb);
	sb_addf(sb, "%-9s %-36s %s\n", "speedup", sa, sbp);
	sb_addf(sb, "%-9s %-36.36s %s\n", "idea", a->zIdea ? a->zIdea : "-",
	        b->zIdea ? b->zIdea : "-");
	char who[32];
	snprintf(who, sizeof who, "#%d against", b->id);
	sb_adds(sb, "verdict   ");
	if (!same_code(a, b, sb))
		versus(b, a, who, sb);
	sb_adds(sb, "\n");
	/* the A/B timing of the two, the latest either way, if one was run */
	const struct state_ab *ab = state_ab(st, b->id, a->id), *ba = state_ab(st, a->id, b->id);
	const struct cand *win;
	if (!ab && !ba) /* one against the machine code of either counts too */
		ab = state_ab_between(st, b, a, &win);
	for (int k = 0; k < 2; k++) {
		const struct state_ab *x = k ? ba : ab;
		if (!x)
			continue;
		if (x->failed)
			sb_addf(sb, "A/B       #%d against #%d: could not be run\n", x->cand,
			        x->incumbent);
		else
			sb_addf(
			    sb,
			    "A/B       #%d against #%d: %.3gx over %d interleaved pairs, faster in "
			    "%d; %s%s\n",
			    x->cand, x->incumbent, x->ratio, x->pairs, x->wins,
			    x->unverified ? "unverified: kloop's clock could not bound its times"
			    : x->won      ? "won, beyond the noise"
			                  : "not beyond the noise",
			    (x->cand == a->id || x->cand == b->id) &&
			            (x->incumbent == a->id || x->incumbent == b->id)
			        ? ""
			        : " (of the same machine code as these)");
	}
	if (!ab && !ba)
		sb_addf(sb, "A/B       none run between #%d and #%d\n", a->id, b->id);
	sb_adds(sb, "\n");
	char err[KL_ERRLEN];
	if (report_diff(st, a, b, sb, err) < 0)
		sb_addf(sb, "%s\n", err);
}

static const char *origin_short(const char *z)
{
	return !strcmp(z, "crossover") ? "cross" : !strcmp(z, "translation") ? "transl" : z;
}

void report_table_header(strbuf *sb)
{
	report_table_header_cols(sb, 1);
}

void report_table_header_cols(strbuf *sb, int bRoof)
{
	sb_addf(sb, "%4s %4s %-6s %-13s %11s %7s ", "id", "par", "origin", "status", "time ms",
	        "speedup");
	if (bRoof)
		sb_addf(sb, "%5s ", "roof");
	sb_adds(sb, " idea");
}

void report_table_row(const struct cand *c, const char *zStatus, strbuf *sb)
{
	report_table_row_marked(c, zStatus, ' ', sb);
}

void report_table_row_marked(const struct cand *c, const char *zStatus, char mark, strbuf *sb)
{
	report_table_row_cols(c, zStatus, mark, 1, sb);
}

/* c's roofline column: how far from the device's limit (roofline.h), or "-" */
static void roof_text(const struct cand *c, char *buf, size_t n)
{
	double fr = c->v.roofline.fraction;
	if (c->timeMs >= 0 && fr > 0)
		snprintf(buf, n, "%.0f%%", fr * 100 < 9999 ? fr * 100 : 9999.0);
	else
		snprintf(buf, n, "-");
}

int report_table_has_roof(const struct state *st, const int *aIdx, int n)
{
	char roof[16];
	for (int i = 0; i < n; i++) {
		roof_text(&st->aCand[aIdx[i]], roof, sizeof roof);
		if (strcmp(roof, "-"))
			return 1;
	}
	return 0;
}

void report_table_row_cols(const struct cand *c, const char *zStatus, char mark, int bRoof,
                           strbuf *sb)
{
	char par[16] = "-", tm[16] = "-", sp[16] = "-", roof[16];
	if (c->nParent)
		snprintf(par, sizeof par, "%d", c->aParent[0]);
	double p10, p90;
	if (c->timeMs > 0 && report_spread(c, &p10, &p90))
		snprintf(tm, sizeof tm, "%.4g±%.0f%%", c->timeMs,
		         (p90 - p10) / 2 / c->timeMs * 100 < 99 ? (p90 - p10) / 2 / c->timeMs * 100
		                                                : 99.0);
	else if (c->timeMs >= 0)
		snprintf(tm, sizeof tm, "%.4g", c->timeMs);
	if (c->speedup >= 0)
		snprintf(sp, sizeof sp, "%.3gx%s%s%s", c->speedup, c->unverified ? "?" : "",
		         c->reduced ? "~" : "", c->belowFloor ? "!" : "");
	roof_text(c, roof, sizeof roof);
	/* ± is two bytes and one column: pad by columns */
	char tmc[24];
	snprintf(tmc, sizeof tmc, "%*s", 11 + (strstr(tm, "±") ? 1 : 0), tm);
	/* the mark in the id's first column (an id of four digits has no room:
	 * Results still says it) */
	if (mark != ' ' && c->id < 1000)
		sb_addf(sb, "%c%3d", mark, c->id);
	else
		sb_addf(sb, "%4d", c->id);
	sb_addf(sb, " %4s %-6.6s %-13.13s %s %7s ", par, origin_short(c->zOrigin),
	        report_status_short(zStatus ? zStatus : c->zStatus), tmc, sp);
	if (bRoof)
		sb_addf(sb, "%5s ", roof);
	sb_adds(sb, " ");
	/* a search's candidate: its round (lineage: parent, round, origin) */
	if (c->round)
		sb_addf(sb, "r%d ", c->round);
	/* the idea's first line */
	const char *idea = c->zIdea ? c->zIdea : "";
	sb_add(sb, idea, strcspn(idea, "\n"));
}

/* add text, each line indented by `ind` */
static void add_indented(strbuf *sb, const char *text, const char *ind, int maxLines)
{
	int n = 0;
	for (const char *p = text; *p && n < maxLines; n++) {
		size_t k = strcspn(p, "\n");
		sb_adds(sb, ind);
		sb_add(sb, p, k);
		sb_adds(sb, "\n");
		p += k + (p[k] == '\n');
	}
}

char report_mark(const struct state *st, const struct cand *c, const struct cand *best)
{
	const struct state_search *ss = &st->search;
	for (int i = 0; i < ss->nBanned; i++)
		if (ss->aBanned[i] == c->id)
			return 'B';
	if (ss->pinned && ss->pinned == c->id)
		return 'P';
	if (c == best)
		return '*';
	const struct state_suspect *x = state_search_suspect(st, c->id);
	if ((x && !x->cleared) || (c->belowFloor && !x))
		return '!';
	if (c->unverified)
		return '?';
	if (c->reduced)
		return '~';
	return ' ';
}

const char *report_mark_legend(void)
{
	return "B banned (never a parent), P pinned (the next parent), * the best, ! suspect "
	       "(faster than the "
	       "device can be, held back), ? unverified time, ~ reduced precision";
}

/* a verdict's fact in the workbench's layout: the label in a column of
 * nine, in capitals where it withholds a rank; reduced precision says
 * what the session's precision policy makes of it */
struct lines {
	const struct state *st;
	strbuf *sb;
};

static void report_line(void *arg, const char *zLabel, const char *zText, int alarm)
{
	struct lines *ln = arg;
	char label[16];
	snprintf(label, sizeof label, "%s", zLabel);
	for (char *p = label; alarm && *p; p++)
		*p = (char)toupper((unsigned char)*p);
	sb_addf(ln->sb, "%-9s %s", label, zText);
	if (alarm && !strcmp(zLabel, "precision"))
		sb_adds(ln->sb, state_precision_any(ln->st)
		                    ? " (ranked: the precision policy is any, its speedup marked ~)"
		                    : " (never a parent, the best or a win: the precision policy "
		                      "is faithful)");
	sb_adds(ln->sb, "\n");
}

/* the steering a person did on c: pinned, banned, held back as a suspect */
static void results_marks(const struct state *st, const struct cand *c, strbuf *sb)
{
	const struct state_search *ss = &st->search;
	for (int i = 0; i < ss->nBanned; i++)
		if (ss->aBanned[i] == c->id)
			sb_addf(sb, "BANNED    never a parent (`:search unban %d` lifts it)\n",
			        c->id);
	if (ss->pinned && ss->pinned == c->id)
		sb_adds(sb, "PINNED    the next round's parent (a person asked for it)\n");
	const struct state_suspect *x = state_search_suspect(st, c->id);
	if (x)
		sb_addf(sb, "%s %s\n", x->cleared ? "suspect   cleared:" : "SUSPECT   held back:",
		        x->zWhy && *x->zWhy ? x->zWhy : "its speedup is too good to trust");
}

/* verdict and reason, the time, the speedup and how it compares */
static void results_head(const struct state *st, const struct cand *c, strbuf *sb)
{
	const struct verdict *v = &c->v;
	const char *status = v->zStatus, *why = v->zReason;
	/* the speedup and the time on the verdict's line: a pane of a few rows
	 * shows them */
	sb_addf(sb, "verdict   %s", report_status_text(status));
	if (c->speedup >= 0)
		sb_addf(sb, ", %.3gx", c->speedup);
	if (c->timeMs >= 0)
		sb_addf(sb, " (%.4g ms)", c->timeMs);
	sb_adds(sb, "\n");
	if (*why)
		add_indented(sb, why, "          ", 6);
	results_marks(st, c, sb);
	struct lines ln = {st, sb};
	verdict_describe(v, RD_TIME, report_line, &ln);
	/* the session's baseline on its device (the fold put it in the
	 * result, with the speedup against it: issue 39) */
	double base = v->baselineMs, own = v->baselineMeasuredMs;
	if (isnan(base) && st->baselineMs >= 0)
		base = st->baselineMs;
	if (!isnan(base)) {
		sb_addf(sb, "baseline  %s %.4g ms, the session's",
		        *v->zBaseline ? v->zBaseline : "reference", base);
		if (c->speedup >= 0)
			sb_addf(sb, ": speedup %.3gx", c->speedup);
		if (!isnan(own))
			sb_addf(sb, " (this evaluation's run timed the reference at %.4g ms)", own);
		sb_adds(sb, "\n");
		if (c->speedup >= 0 && !isnan(v->speedupTimeMs))
			sb_addf(
			    sb,
			    "speedups  of its events' median, %.4g ms, as the baseline was timed "
			    "(its time is its kernels' durations)\n",
			    v->speedupTimeMs);
	}
	report_relative(st, c, sb);
	double bc = v->baselineCompileMs;
	if (!isnan(bc)) {
		sb_addf(sb, "baseline  torch.compile %.4g ms", bc);
		if (!isnan(v->speedupCompile))
			sb_addf(sb, ", speedup %.3gx", v->speedupCompile);
		sb_adds(sb, "\n");
	}
	result_library_lines(c->result, "", sb);
	const struct verdict_ab *ab = &v->ab;
	char inc[24] = "nan";
	if (ab->incumbent >= 0)
		snprintf(inc, sizeof inc, "%d", ab->incumbent);
	if (ab->present && ab->zError && *ab->zError)
		sb_addf(sb, "A/B       against #%s: not run: %s\n", inc, ab->zError);
	else if (ab->present)
		sb_addf(sb, "A/B       against #%s: %s; %s\n", inc,
		        ab->unverified ? "unverified (kloop's clock could not bound its times)"
		        : ab->won      ? "won"
		                       : "not beyond the noise",
		        ab->zRule);
}

/* the checks: correctness, precision, the roofline, the profile */
static void results_checks(const struct state *st, const struct verdict *v, strbuf *sb)
{
	struct lines ln = {st, sb};
	verdict_describe(v, RD_CHECKS | RD_WARN, report_line, &ln);
	/* the cascade: where it stopped */
	if (v->zStage && *v->zStage) {
		sb_addf(sb, "stages    ");
		int k = 0;
		for (const char *z; (z = verdict_stage(v, k)); k++)
			sb_addf(sb, "%s%s", k ? ", " : "", z);
		if (strcmp(v->zStatus, "correct"))
			sb_addf(sb, "%sstopped at %s", k ? "; " : "", v->zStage);
		sb_adds(sb, "\n");
	}
	if (v->timing.stopped)
		sb_addf(sb, "timing    %s\n", v->timing.zStopped);
}

/* the compile: its time, resources, the vectoriser, the diagnostics */
static void results_compile(const struct verdict *v, strbuf *sb)
{
	const struct verdict_compile *comp = &v->comp;
	if (comp->present) {
		sb_addf(sb, "compile   %.2f s%s on %s\n", comp->seconds, verdict_compile_how(comp),
		        v->zDevice ? v->zDevice : "");
	}
	struct lines ln = {NULL, sb}; /* (no precision among the compile's facts) */
	verdict_describe(v, RD_COMPILE, report_line, &ln);
	if (comp->present) {
		/* folded by the worker; folded here too for a verdict kept
		 * before it did (diagfold.h) */
		char *log = diag_fold(comp->zLog);
		if (*log) {
			sb_adds(sb, "diagnostics\n");
			add_indented(sb, log, "  ", 40);
			int nLines = 0;
			for (const char *p = log; *p; p++)
				nLines += *p == '\n' || !p[1];
			if (nLines > 40)
				sb_addf(sb, "  [%d more lines not shown]\n", nLines - 40);
		} else {
			sb_adds(sb, "diagnostics none\n");
		}
		free(log);
	}
}

void report_results(const struct state *st, const struct cand *c, strbuf *sb)
{
	const struct verdict *v = &c->v;
	if (!c->result) {
		sb_addf(sb, "#%d %s: %s\n", c->id, c->zName,
		        c->status == STATUS_EVALUATING ? "being evaluated" : "not evaluated yet");
		results_marks(st, c, sb);
		return;
	}
	/* what a person reads first (a pane of a few rows shows it): the
	 * verdict, the time and the speedup; long text (the compiler's
	 * command, a crash's output) last */
	results_head(st, c, sb);
	if (c->zIdea)
		sb_addf(sb, "idea      %s\n", c->zIdea);
	results_checks(st, v, sb);
	results_compile(v, sb);
	const char *tail = v->zStderrTail ? v->zStderrTail : "";
	if (*tail) {
		sb_adds(sb, "last output\n");
		add_indented(sb, tail, "  ", 20);
	}
	const char *cmd = v->comp.zCommand;
	if (*cmd)
		sb_addf(sb, "command   %s\n", cmd);
}

void report_show(const struct state *st, const struct cand *c, strbuf *sb)
{
	sb_addf(sb, "candidate #%d  %s  origin %s", c->id, c->zName, c->zOrigin);
	for (int i = 0; i < c->nParent; i++)
		sb_addf(sb, "%s%d", i ? "," : "  parent ", c->aParent[i]);
	sb_addf(sb, "  status %s\n", c->zStatus);
	if (c->zIdea && !c->result)
		sb_addf(sb, "idea      %s\n",
		        c->zIdea); /* report_results() says it after the verdict */
	report_results(st, c, sb);
	sb_adds(sb, "source\n");
	int line = 1;
	for (const char *p = c->zSource; *p; line++) {
		size_t k = strcspn(p, "\n");
		sb_addf(sb, "%5d  ", line);
		sb_add(sb, p, k);
		sb_adds(sb, "\n");
		p += k + (p[k] == '\n');
	}
}

int report_diff(const struct state *st, const struct cand *a, const struct cand *b, strbuf *sb,
                char *err)
{
	if (!a) {
		if (!b->nParent)
			return kl_err(
			    err,
			    "candidate %d has no parent to compare with (diff %d ID compares "
			    "it with another)",
			    b->id, b->id);
		a = state_cand(st, b->aParent[0]);
		if (!a)
			return kl_err(err, "candidate %d's parent %d is not in the session", b->id,
			              b->aParent[0]);
	}
	sb_addf(sb, "diff #%d (%s) -> #%d (%s)\n", a->id, a->zName, b->id, b->zName);
	struct funcdiff fd;
	char e2[KL_ERRLEN];
	if (funcdiff_compare(a->zSource, strlen(a->zSource), b->zSource, strlen(b->zSource), &fd,
	                     e2) == 0) {
		int shown = 0;
		for (size_t i = 0; i < fd.n; i++) {
			const struct funcdiff_entry *x = &fd.v[i];
			if (x->status == FUNCDIFF_SAME && !x->layout_only)
				continue;
			if (!shown++)
				sb_adds(sb, "functions\n");
			sb_addf(sb, "  %-8s %s",
			        x->status == FUNCDIFF_SAME ? "layout"
			                                   : funcdiff_status_name(x->status),
			        x->name);
			if (x->status == FUNCDIFF_ADDED)
				sb_addf(sb, "  (lines %u-%u)\n", x->b_line, x->b_end);
			else if (x->status == FUNCDIFF_REMOVED)
				sb_addf(sb, "  (was lines %u-%u)\n", x->a_line, x->a_end);
			else
				sb_addf(sb, "  (lines %u-%u, were %u-%u)\n", x->b_line, x->b_end,
				        x->a_line, x->a_end);
		}
		if (!shown)
			sb_adds(sb, "functions: no function changed\n");
		funcdiff_free(&fd);
	} else {
		sb_addf(sb, "functions: not compared (%s)\n", e2);
	}
	strbuf d = STRBUF_INIT;
	int n = linediff_unified(a->zSource, b->zSource, 3, 4000, &d);
	if (n == 0)
		sb_adds(sb, "lines: identical\n");
	else
		sb_add(sb, d.buf, d.len);
	sb_free(&d);
	return 0;
}
