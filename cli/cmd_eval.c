/*
 * cmd_eval.c - `kloop eval TASK SOURCE...`: compile, check and time
 * candidates through a worker, print the verdicts, and journal them when a
 * session is given.
 */
#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "cmd.h"
#include "compile.h"
#include "describe.h"
#include "emit.h"
#include "flags.h"
#include "result.h"
#include "driver.h"
#include "search_settings.h"
#include "torchext.h"
#include "util.h"

#define SOURCE_MAX (8u << 20)

struct src {
	const char *zPath; /* as given */
	char *zName;       /* base name */
	strbuf text;       /* contents */
	int candId;        /* the session's candidate */
};

struct run {
	struct driver *drv;
	int tty; /* progress lines on stderr */
};

/* the driver's notes: journal messages, and progress on a terminal */
static void on_note(void *arg, const struct driver_note *n)
{
	struct run *r = arg;
	if (n->kind == DRIVER_MESSAGE) {
		fprintf(stderr, "kloop: warning: %s", n->zText);
		if (*n->zText && n->zText[strlen(n->zText) - 1] != '\n')
			fputc('\n', stderr);
		return;
	}
	const struct driver_job *j = r->tty && r->drv && n->kind == DRIVER_CHANGED && n->cand
	                                 ? driver_job_of(r->drv, n->cand)
	                                 : NULL;
	const struct cand *c = j ? state_cand(driver_state(r->drv), n->cand) : NULL;
	if (!c || !strcmp(j->zStage, "queued"))
		return;
	char note[96];
	state_compile_note(driver_state(r->drv), c, j->zStage, note, sizeof note);
	if (j->k > 0)
		term_ctl(stderr, "\r\033[K"),
		    fprintf(stderr, "%s: %s %d", c->zName, j->zStage, j->k);
	else
		term_ctl(stderr, "\r\033[K"),
		    fprintf(stderr, "%s: %s%s", c->zName, j->zStage, note);
}

static const struct cmd_entry *self = &cmd_eval_entry;

static int read_source(struct src *s, const char *zBackend, char *err)
{
	s->zName = xstrdup(strrchr(s->zPath, '/') ? strrchr(s->zPath, '/') + 1 : s->zPath);
	if (!torchext_known_name(s->zName))
		return kl_err(err,
		              "%s: unknown source language (expected a .c, .cpp or .cu file, or a "
		              "KernelBench ModelNew .py)",
		              s->zPath);
	if (read_file(s->zPath, &s->text, SOURCE_MAX, err) < 0)
		return -1;
	if (s->text.len == 0)
		return kl_err(err, "%s: the source file is empty", s->zPath);
	if (looks_binary(s->text.buf, s->text.len))
		return kl_err(err, "%s: this looks like a binary file, not C, C++ or CUDA source",
		              s->zPath);
	return torchext_check_backend(s->zPath, s->text.buf, s->text.len, zBackend, err);
}

/* a verdict's fact as kloop eval prints it: indented, the label in a
 * column of nine, in capitals where it withholds a rank; what came from
 * the candidate or a compiler cleaned of terminal controls */
static void eval_line(void *arg, const char *zLabel, const char *zText, int alarm)
{
	(void)arg;
	char label[16];
	snprintf(label, sizeof label, "%s", zLabel);
	for (char *p = label; alarm && *p; p++)
		*p = (char)toupper((unsigned char)*p);
	char *z = term_clean(zText, 0);
	printf("  %-9s %s\n", label, z);
	free(z);
}

static void print_human(const cJSON *r, const struct src *s)
{
	struct verdict v;
	verdict_decode(r, &v);
	const char *st = *v.zStatus ? v.zStatus : NULL, *why = v.zReason;
	printf("%s  %s  [%s on %s]\n", s->zPath, v.zTask, v.zBackend, v.zDevice ? v.zDevice : "");
	if (v.comp.present)
		printf("  compile   %.2f s%s\n", v.comp.seconds, verdict_compile_how(&v.comp));
	/* the reason, the compiler's log and the candidate's last output
	 * shown, never obeyed: no terminal controls of theirs reach it */
	char *whyC = term_clean(why, 0);
	printf("  verdict   %s%s%s%s\n", st ? st : "?",
	       v.timing.unverified ? " (its time unverified: not ranked)" : "", *why ? ": " : "",
	       whyC);
	free(whyC);
	if (v.status == STATUS_COMPILE_ERROR && v.comp.present) {
		char *log = term_clean(v.comp.zLog, TERM_KEEP_NL | TERM_KEEP_TAB);
		if (*log)
			printf("%s%s", log, log[strlen(log) - 1] == '\n' ? "" : "\n");
		free(log);
	}
	if (v.status == STATUS_CRASHED || v.status == STATUS_TIMEOUT) {
		char *tail = term_clean(v.zStderrTail, TERM_KEEP_NL | TERM_KEEP_TAB);
		if (*tail)
			printf("  last output:\n%s%s", tail,
			       tail[strlen(tail) - 1] == '\n' ? "" : "\n");
		free(tail);
	}
	verdict_describe(&v, RD_ALL, eval_line, NULL);
	if (!isnan(v.refData.seconds)) {
		const char *note = v.refData.zNote;
		printf("  reference PyTorch made %g set%s of inputs and outputs in %.2f s%s%s\n",
		       v.refData.trials + 1.0, v.refData.trials == 0 ? "" : "s", v.refData.seconds,
		       note ? "; " : "", note ? note : "");
	}
	const cJSON *su = v.refData.setup;
	static int said; /* once: every result of the worker carries it */
	if (cJSON_IsObject(su) && !said++) {
		strbuf sb = STRBUF_INIT;
		result_setup_line(su, &sb);
		printf("  setup     %s\n", sb.buf);
		sb_free(&sb);
	}
	if (v.timing.throttled)
		printf("  warning   the GPU was throttling during the measurement: %s\n",
		       v.timing.zThrottleReason ? v.timing.zThrottleReason : "(null)");
	double base = v.baselineMs, sp = v.speedup;
	if (!isnan(base))
		printf("  baseline  %s %.4g ms%s", v.zBaseline, base, isnan(sp) ? "\n" : "");
	if (!isnan(sp))
		printf(", speedup %.3gx\n", sp);
	if (!isnan(sp) && !isnan(v.speedupTimeMs))
		printf("  speedups  of its events' median, %.4g ms, as the baseline was timed (its "
		       "time is its kernels' durations)\n",
		       v.speedupTimeMs);
	double bc = v.baselineCompileMs;
	if (!isnan(bc) && !isnan(v.speedupCompile))
		printf("  baseline  torch.compile %.4g ms, speedup %.3gx\n", bc, v.speedupCompile);
	else if (!isnan(bc))
		printf("  baseline  torch.compile %.4g ms\n", bc);
	strbuf lb = STRBUF_INIT;
	result_library_lines(r, "  ", &lb);
	if (lb.len)
		fputs(lb.buf, stdout);
	sb_free(&lb);
}

/* the sources, read and checked against the backend before anything runs */
static int read_sources(struct src *a, int n, const char *zBackend)
{
	char err[KL_ERRLEN];
	for (int i = 0; i < n; i++)
		if (read_source(&a[i], zBackend, err) < 0) {
			fprintf(stderr, "kloop: %s\n", err);
			return -1;
		}
	return 0;
}

/* 1 when zPath is one of task t's seeds */
static int is_seed(const struct task *t, const char *zPath)
{
	char *real = realpath(zPath, NULL);
	int seed = 0;
	for (int k = 0; t && real && !seed && k < t->seeds.nHost + t->seeds.nCuda; k++)
		seed = !strcmp(real, k < t->seeds.nHost ? t->seeds.azHost[k]
		                                        : t->seeds.azCuda[k - t->seeds.nHost]);
	free(real);
	return seed;
}

/* print each verdict (the result with the source as given); 0 when each
 * passes the session's rank rule, its time aside (state_cand_passes():
 * correct, faithful in precision unless the session's policy is "any",
 * not below the device's floor), else 1 */
static int print_results(struct driver *drv, const struct src *a, int n, int json)
{
	int rc = 0;
	for (int i = 0; i < n; i++) {
		const struct cand *c = state_cand(driver_state(drv), a[i].candId);
		cJSON *r = c && c->result ? cJSON_Duplicate(c->result, 1) : cJSON_CreateObject();
		struct verdict v;
		verdict_decode(r, &v);
		v.zSource = a[i].zPath;
		verdict_encode(r, &v, 0);
		if (json) {
			char *z = json_text(r, 0);
			printf("%s\n", z);
			free(z);
		} else {
			print_human(r, &a[i]);
		}
		if (!state_cand_passes(driver_state(drv), c))
			rc = 1;
		cJSON_Delete(r);
	}
	return rc;
}

/* the precision policy given (--precision) is the session's from here on,
 * journaled as a search's `set precision` is (search_set), so that this
 * run's exit status, `kloop session` and any later search rank by the
 * same rule; not given, the session's own stands (faithful in a new one) */
static int journal_policy(struct driver *drv, const struct flags *o, char *err)
{
	const cJSON *v = search_setting_get(o->settings, SS_precision);
	const char *z = cJSON_GetStringValue(v);
	if (!z || !strcmp(z, driver_state(drv)->search.set.precision))
		return 0;
	return ev_search_set(driver_session(drv), search_setting_info[SS_precision].zKey, v, -1,
	                     err);
}

static int exec_eval(int argc, char **argv)
{
	char err[KL_ERRLEN];
	struct flags o;
	int rc = flags_parse(self, FL_EVAL, argc, argv, 2, FLAGS_MAX_POS, &o);
	if (rc)
		return rc;
	const char *zBackend = o.cfg.zBackend             ? o.cfg.zBackend
	                       : backend_cuda_available() ? "cuda"
	                                                  : "host";
	int nSrc = o.nPos - 1;
	struct src *aSrc = xcalloc((size_t)nSrc + 1, sizeof *aSrc);
	for (int i = 0; i < nSrc; i++)
		aSrc[i].zPath = o.azPos[i + 1];
	struct loop *l = loop_new();
	struct run r = {NULL, !o.json && isatty(2)};
	struct driver_opts ro = {
	    .zTask = o.azPos[0],
	    .zSession = o.zSession,
	    .zShapes = o.zShapes,
	    .zReference = o.zReference,
	    .bNoSeeds = 1,
	    .bMemory = 1,
	    .bNoResume = 1,
	    .warmS = flags_warm_seconds(&o, zBackend),
	};
	rc = 2; /* until the candidates have run */
	if (read_sources(aSrc, nSrc, zBackend) < 0)
		goto out;
	if (!(r.drv = driver_open(l, &o.cfg, &ro, on_note, &r, err)) ||
	    journal_policy(r.drv, &o, err) < 0) {
		fprintf(stderr, "kloop: %s\n", err);
		goto out;
	}
	for (int i = 0; i < nSrc; i++) {
		const char *origin = is_seed(driver_task(r.drv), aSrc[i].zPath) ? "seed" : "human";
		aSrc[i].candId =
		    driver_add(r.drv, origin, NULL, 0, aSrc[i].zName, aSrc[i].text.buf, NULL, err);
		if (aSrc[i].candId < 0 || driver_bench(r.drv, aSrc[i].candId, err) < 0) {
			fprintf(stderr, "kloop: %s\n", err);
			goto out;
		}
	}
	while (driver_busy(r.drv))
		loop_once(l, -1);
	if (r.tty)
		term_ctl(stderr, "\r\033[K");
	if (driver_task_error(r.drv))
		fprintf(stderr, "kloop: %s\n", driver_task_error(r.drv));
	else
		rc = print_results(r.drv, aSrc, nSrc, o.json);
	fflush(stdout);
	if (driver_saved(r.drv, NULL) < 0)
		rc = 2; /* events lost: the journal could not be written */
out:
	driver_close(r.drv);
	loop_free(l);
	for (int i = 0; i < nSrc; i++) {
		free(aSrc[i].zName);
		sb_free(&aSrc[i].text);
	}
	free(aSrc);
	flags_free(&o);
	return rc;
}

const struct cmd_entry cmd_eval_entry = {
    .name = "eval",
    .usage = "TASK SOURCE... [--backend host|cuda] [--json] [--session FILE] [--shapes SET] "
             "[--reference host|cuda|torch] [--trials N] [--budget SECONDS] [--timeout SECONDS] "
             "[--python PATH] [--jobs N] [--workers SPEC] [--mps|--no-mps] [--no-sandbox] "
             "[--precision faithful|any]",
    .help = "compile, check and time candidates (exit 0 correct and faithful in precision, or "
            "correct with --precision any; 1 otherwise; 2 usage or task error)",
    .exec = exec_eval,
};
