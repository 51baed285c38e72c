/*
 * report.c - text renderings of candidates from the state: table rows, the
 * results report, the show page and the function-then-line diff.
 */
#include "report.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "linediff.h"
#include "result.h"
#include "splice.h"

const char *report_status_short(const char *z)
{
	if (!strcmp(z, "compile_error"))
		return "compile_err";
	return z;
}

static const char *origin_short(const char *z)
{
	return !strcmp(z, "crossover") ? "cross" : z;
}

void report_table_header(strbuf *sb)
{
	sb_addf(sb, "%4s %4s %-6s %-11s %9s %7s  %s", "id", "par", "origin", "status", "time ms",
	        "speedup", "idea");
}

void report_table_row(const struct cand *c, const char *zStatus, strbuf *sb)
{
	char par[16] = "-", tm[16] = "-", sp[16] = "-";
	if (c->nParent)
		snprintf(par, sizeof par, "%d", c->aParent[0]);
	if (c->timeMs >= 0)
		snprintf(tm, sizeof tm, "%.4g", c->timeMs);
	if (c->speedup >= 0)
		snprintf(sp, sizeof sp, "%.3gx", c->speedup);
	sb_addf(sb, "%4d %4s %-6.6s %-11.11s %9s %7s  ", c->id, par, origin_short(c->zOrigin),
	        report_status_short(zStatus ? zStatus : c->zStatus), tm, sp);
	/* the idea's first line */
	const char *idea = c->zIdea ? c->zIdea : "";
	sb_add(sb, idea, strcspn(idea, "\n"));
}

static const char *s_of(const cJSON *o, const char *k)
{
	const char *z = cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
	return z ? z : "";
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

void report_results(const struct state *st, const struct cand *c, strbuf *sb)
{
	const cJSON *r = c->result;
	if (!r) {
		sb_addf(sb, "#%d %s: %s\n", c->id, c->zName,
		        !strcmp(c->zStatus, "evaluating") ? "being evaluated"
		                                          : "not evaluated yet");
		return;
	}
	const char *status = s_of(r, "status"), *why = s_of(r, "reason");
	sb_addf(sb, "verdict   %s\n", status);
	if (*why)
		add_indented(sb, why, "          ", 6);
	const cJSON *comp = cJSON_GetObjectItem(r, "compile");
	if (comp) {
		sb_addf(sb, "compile   %.2f s%s on %s\n", result_num(comp, "seconds"),
		        cJSON_IsTrue(cJSON_GetObjectItem(comp, "cached")) ? " (cached)" : "",
		        s_of(r, "device"));
		if (*s_of(comp, "command"))
			sb_addf(sb, "          %s\n", s_of(comp, "command"));
		const char *log = s_of(comp, "log");
		if (*log) {
			sb_adds(sb, "diagnostics\n");
			add_indented(sb, log, "  ", 40);
		} else {
			sb_adds(sb, "diagnostics none\n");
		}
	}
	const cJSON *res;
	cJSON_ArrayForEach(res, cJSON_GetObjectItem(comp, "resources"))
	{
		sb_addf(sb,
		        "kernel    %s: %g registers, %g B shared, %g B stack, %g/%g B spilled "
		        "(st/ld)\n",
		        s_of(res, "kernel"), result_num(res, "registers"),
		        result_num(res, "shared_bytes"), result_num(res, "stack_bytes"),
		        result_num(res, "spill_stores"), result_num(res, "spill_loads"));
	}
	const cJSON *cor = cJSON_GetObjectItem(r, "correctness");
	if (cor && cJSON_GetObjectItem(cor, "trials")) {
		double l2 = result_num(cor, "rel_l2_error");
		sb_addf(sb, "checked   %g/%g trials passed, max abs error %.3g, relative L2 ",
		        result_num(cor, "trials_passed"), result_num(cor, "trials"),
		        result_num(cor, "max_abs_error"));
		if (l2 < 0)
			sb_adds(sb, "inf");
		else
			sb_addf(sb, "%.3g", l2);
		sb_addf(sb, ", %g mismatches\n", result_num(cor, "mismatches"));
	}
	const cJSON *tm = cJSON_GetObjectItem(r, "timing");
	if (tm) {
		sb_addf(
		    sb, "time      %.4g ms median (p10 %.4g, p90 %.4g; %g runs, rse %.2f%%%s)\n",
		    result_num(tm, "median_ms"), result_num(tm, "p10_ms"), result_num(tm, "p90_ms"),
		    result_num(tm, "count"), result_num(tm, "rse") * 100,
		    cJSON_IsTrue(cJSON_GetObjectItem(tm, "converged")) ? "" : ", not converged");
		if (cJSON_IsTrue(cJSON_GetObjectItem(tm, "throttled")))
			sb_addf(sb, "warning   the GPU was throttling: %s\n",
			        s_of(tm, "throttle_reason"));
	}
	double base = result_num(r, "baseline_ms"), sp = result_num(r, "speedup");
	if (isnan(base) && st->baselineMs >= 0)
		base = st->baselineMs;
	if (!isnan(base)) {
		sb_addf(sb, "baseline  %s %.4g ms",
		        *s_of(r, "baseline") ? s_of(r, "baseline") : "reference", base);
		if (!isnan(sp))
			sb_addf(sb, ", speedup %.3gx", sp);
		sb_adds(sb, "\n");
	}
	double bc = result_num(r, "baseline_compile_ms");
	if (!isnan(bc)) {
		sb_addf(sb, "baseline  torch.compile %.4g ms", bc);
		if (!isnan(result_num(r, "speedup_compile")))
			sb_addf(sb, ", speedup %.3gx", result_num(r, "speedup_compile"));
		sb_adds(sb, "\n");
	}
	const char *tail = s_of(r, "stderr_tail");
	if (*tail) {
		sb_adds(sb, "last output\n");
		add_indented(sb, tail, "  ", 20);
	}
}

void report_show(const struct state *st, const struct cand *c, strbuf *sb)
{
	sb_addf(sb, "candidate #%d  %s  origin %s", c->id, c->zName, c->zOrigin);
	for (int i = 0; i < c->nParent; i++)
		sb_addf(sb, "%s%d", i ? "," : "  parent ", c->aParent[i]);
	sb_addf(sb, "  status %s\n", c->zStatus);
	if (c->zIdea)
		sb_addf(sb, "idea      %s\n", c->zIdea);
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
	struct splice_diff fd;
	char e2[KL_ERRLEN];
	if (splice_diff(a->zSource, strlen(a->zSource), b->zSource, strlen(b->zSource), &fd, e2) ==
	    0) {
		int shown = 0;
		for (size_t i = 0; i < fd.n; i++) {
			const struct splice_diff_entry *x = &fd.v[i];
			if (x->status == SPLICE_DIFF_SAME && !x->layout_only)
				continue;
			if (!shown++)
				sb_adds(sb, "functions\n");
			sb_addf(sb, "  %-8s %s",
			        x->status == SPLICE_DIFF_SAME ? "layout"
			                                      : splice_diff_status_name(x->status),
			        x->name);
			if (x->status == SPLICE_DIFF_ADDED)
				sb_addf(sb, "  (lines %u-%u)\n", x->b_line, x->b_end);
			else if (x->status == SPLICE_DIFF_REMOVED)
				sb_addf(sb, "  (was lines %u-%u)\n", x->a_line, x->a_end);
			else
				sb_addf(sb, "  (lines %u-%u, were %u-%u)\n", x->b_line, x->b_end,
				        x->a_line, x->a_end);
		}
		if (!shown)
			sb_adds(sb, "functions: no function changed\n");
		splice_diff_free(&fd);
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
