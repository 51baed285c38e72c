/*
 * cmd_import.c - `kloop import FILES|DIR... --problem P.py|--task NAME
 * [--session F]`: a batch of candidates as the field writes them (one
 * KernelBench run's outputs, an archive's kernels: PyTorch extensions,
 * ModelNew modules, kl_run files, modules `kloop export --kernelbench`
 * wrote) put into a session journal, each evaluated with kloop's verdicts,
 * then a table of them and the best to steer from (issue 38).  A file that
 * is no candidate is said, with why, and the others go on; a problem that
 * does not load stops it before anything is added.
 */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "cand_import.h"
#include "cmd.h"
#include "flags.h"
#include "driver.h"
#include "taskopen.h"
#include "torchref.h"
#include "util.h"

static const struct cmd_entry *self = &cmd_import_entry;

struct imp {
	struct cand_import_list l;
	struct driver *drv;
	int json;
	int tty;
};

/* the file x of the batch that candidate id came from, or NULL */
static const struct cand_import *file_of(const struct imp *m, int id)
{
	for (int i = 0; i < m->l.n; i++)
		if (m->l.a[i].candId == id)
			return &m->l.a[i];
	/* one the session held, whose evaluation cut short runs again */
	for (int i = 0; i < m->l.n; i++)
		if (!m->l.a[i].zError && m->l.a[i].present == id)
			return &m->l.a[i];
	return NULL;
}

static void print_json(cJSON *o)
{
	char *z = json_text(o, 0);
	printf("%s\n", z);
	free(z);
	cJSON_Delete(o);
	fflush(stdout);
}

/* the driver's notes: each verdict as it comes, progress on a terminal */
static void on_note(void *arg, const struct driver_note *n)
{
	struct imp *m = arg;
	if (n->kind == DRIVER_MESSAGE) {
		char *z = term_clean(n->zText, 0);
		fprintf(stderr, "kloop: warning: %s\n", z);
		free(z);
		return;
	}
	if (!m->drv || !n->cand)
		return;
	const struct cand *c = state_cand(driver_state(m->drv), n->cand);
	const struct cand_import *x = file_of(m, n->cand);
	if (!c || !x)
		return;
	if (n->kind == DRIVER_FINISHED) {
		if (m->tty)
			term_ctl(stderr, "\r\033[K");
		if (m->json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "type", "verdict");
			cJSON_AddStringToObject(o, "file", x->zPath);
			cJSON_AddItemToObject(o, "candidate", state_cand_json(c));
			print_json(o);
			return;
		}
		char v[600];
		driver_verdict(c, v, sizeof v);
		char *safe = term_clean(v, 0), *path = term_clean(x->zPath, 0);
		printf("  #%d %s (%s): %s\n", c->id, c->zName, path, safe);
		free(safe);
		free(path);
		fflush(stdout);
		return;
	}
	const struct driver_job *j =
	    m->tty && n->kind == DRIVER_CHANGED ? driver_job_of(m->drv, n->cand) : NULL;
	if (j && strcmp(j->zStage, "queued"))
		term_ctl(stderr, "\r\033[K"), fprintf(stderr, "%s: %s", c->zName, j->zStage);
}

/* a verdict in a few words: the status, and what withholds a rank (the
 * precision class, an unverified or suspect time) */
static void verdict_words(const struct cand *c, char *buf, size_t n)
{
	if (c->status != STATUS_CORRECT) {
		snprintf(buf, n, "%s",
		         c->status == STATUS_COMPILE_ERROR ? "compile error" : c->zStatus);
		return;
	}
	const char *pv = c->v.precision.zClass, *like = c->v.precision.zMatches;
	size_t k = (size_t)snprintf(buf, n, "correct");
	if (c->reduced && k < n)
		k += (size_t)snprintf(buf + k, n - k, ", REDUCED precision%s%s",
		                      like ? " like " : "", like ? like : "");
	else if (pv && !strcmp(pv, "faithful") && k < n)
		k += (size_t)snprintf(buf + k, n - k, ", faithful");
	if (c->unverified && k < n)
		k += (size_t)snprintf(buf + k, n - k, ", time UNVERIFIED");
	if (c->belowFloor && k < n)
		snprintf(buf + k, n - k, ", SUSPECT time");
}

/* s cut to its last w columns (a path's end says most) */
static void tail_of(const char *z, int w, char *buf, size_t n)
{
	size_t len = strlen(z);
	if ((int)len <= w)
		snprintf(buf, n, "%s", z);
	else
		snprintf(buf, n, "...%s", z + len - (size_t)(w - 3));
}

static void table(const struct imp *m)
{
	const struct state *st = driver_state(m->drv);
	int w = 4; /* the file column: the longest name shown, at most 48 */
	for (int i = 0; i < m->l.n; i++)
		if ((int)strlen(m->l.a[i].zShow) > w)
			w = (int)strlen(m->l.a[i].zShow) < 48 ? (int)strlen(m->l.a[i].zShow) : 48;
	printf("\n%-*s %5s  %-15s %-38s %10s %9s\n", w, "file", "id", "form", "verdict",
	       "time (ms)", "speedup");
	for (int i = 0; i < m->l.n; i++) {
		const struct cand_import *x = &m->l.a[i];
		char file[64], form[32] = "-", v[160], tm[32] = "-", sp[32] = "-", id[16] = "-";
		char *path = term_clean(x->zShow, 0);
		tail_of(path, w, file, sizeof file);
		free(path);
		const struct cand *c = x->candId ? state_cand(st, x->candId) : NULL;
		if (!x->zError || c)
			cand_import_form(x, form, sizeof form);
		if (x->zError && !c) {
			snprintf(v, sizeof v, "not a candidate");
		} else if (x->present) {
			snprintf(id, sizeof id, "%d", x->present);
			c = state_cand(st, x->present);
			char w[120] = "?";
			if (c)
				verdict_words(c, w, sizeof w);
			snprintf(v, sizeof v, "%s (already there)", w);
		} else if (!c) {
			snprintf(v, sizeof v, "not added");
		} else {
			snprintf(id, sizeof id, "%d", c->id);
			verdict_words(c, v, sizeof v);
		}
		if (c && c->status == STATUS_CORRECT && c->timeMs >= 0)
			snprintf(tm, sizeof tm, "%.4g", c->timeMs);
		if (c && c->status == STATUS_CORRECT && c->speedup >= 0)
			snprintf(sp, sizeof sp, "%.3gx", c->speedup);
		printf("%-*s %5s  %-15s %-38s %10s %9s\n", w, file, id, form, v, tm, sp);
	}
}

/* the lines after the verdicts: the table, the best, how to go on */
static void summary(const struct imp *m, int nAdded, int nRefused, int nPresent)
{
	const struct state *st = driver_state(m->drv);
	const struct cand *best = state_best(st, NULL, NULL);
	const char *path = driver_path(m->drv);
	if (m->json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "type", "summary");
		cJSON_AddStringToObject(o, "session", path);
		cJSON_AddNumberToObject(o, "imported", nAdded);
		cJSON_AddNumberToObject(o, "refused", nRefused);
		cJSON_AddNumberToObject(o, "present", nPresent);
		cJSON_AddNumberToObject(o, "skipped", m->l.nSkipped);
		if (best)
			cJSON_AddItemToObject(o, "best", state_cand_json(best));
		else
			cJSON_AddNullToObject(o, "best");
		print_json(o);
		return;
	}
	table(m);
	printf("\n%d file%s imported into %s", nAdded, nAdded == 1 ? "" : "s", path);
	if (nPresent)
		printf(", %d there already", nPresent);
	if (nRefused)
		printf(", %d not a candidate", nRefused);
	printf(" (task %s, %s backend)\n", driver_task_name(m->drv), driver_backend(m->drv));
	if (best) {
		const struct cand_import *x = file_of(m, best->id);
		char *from = x ? term_clean(x->zPath, 0) : NULL;
		printf("best: #%d %s%s%s%s, %.4g ms, %.3gx the baseline\n", best->id, best->zName,
		       from ? " (" : "", from ? from : "", from ? ")" : "", best->timeMs,
		       best->speedup);
		free(from);
		char bt[200];
		state_best_text(st, bt, sizeof bt);
		printf("session: %s\nsteer from it: kloop search --session %s (or kloop open "
		       "--session %s)\n",
		       bt, path, path);
	} else {
		printf("no candidate holds the best: none is correct with a trusted time\n");
	}
}

/* the problem, described before anything is added: one that does not load
 * stops the import here.  0, or -1 said */
static int problem_loads(const struct flags *o)
{
	char err[KL_ERRLEN];
	const char *py = o->cfg.zPython ? o->cfg.zPython : "python3";
	if (!task_is_problem(o->zProblem)) {
		fprintf(
		    stderr,
		    "kloop: import: --problem %s: not a KernelBench problem file (FILE.py, with "
		    "class Model); a bundled task is --task NAME\n",
		    o->zProblem);
		return -1;
	}
	if (!o->json)
		fprintf(
		    stderr,
		    "kloop: import: describing %s with %s (importing PyTorch, then the problem's "
		    "get_init_inputs(), get_inputs() and forward())\n",
		    o->zProblem, py);
	char size[32] = "";
	if (o->cfg.size > 0)
		snprintf(size, sizeof size, "%g", o->cfg.size);
	cJSON *d = torchref_describe(py, o->zProblem, o->zShapes, size, 0, err);
	if (!d) {
		const char *other =
		    torchref_has_torch(py) == 0 ? torchref_python_with_torch(py) : NULL;
		fprintf(stderr,
		        "kloop: import: the problem did not load, nothing was imported: %s\n", err);
		if (other)
			fprintf(stderr, "kloop: %s has PyTorch: give --python %s\n", other, other);
		return -1;
	}
	cJSON_Delete(d);
	return 0;
}

/* the task: --problem, --task, or the session's own; NULL said */
static const char *task_of(const struct flags *o)
{
	if (o->zProblem && o->zTask) {
		fprintf(stderr, "kloop: import: give --problem P.py or --task NAME, not both\n");
		return NULL;
	}
	if (o->zProblem)
		return o->zProblem;
	if (o->zTask)
		return o->zTask;
	if (o->zSession && path_exists(o->zSession))
		return ""; /* the session's */
	fprintf(stderr, "kloop: import: which problem are the files for? give --problem P.py (a "
	                "KernelBench problem), --task NAME (a bundled task), or --session F of "
	                "an existing session\n");
	return NULL;
}

/* file x, whose source candidate x->present has: said */
static void said_present(const struct imp *m, const struct cand_import *x)
{
	if (m->json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "type", "present");
		cJSON_AddStringToObject(o, "file", x->zPath);
		cJSON_AddNumberToObject(o, "candidate", x->present);
		print_json(o);
		return;
	}
	char *p = term_clean(x->zPath, 0);
	fprintf(stderr,
	        "kloop: import: %s: the same source as candidate %d, which the session holds: "
	        "not imported again\n",
	        p, x->present);
	free(p);
}

/* each candidate of the batch added and its evaluation started; the
 * others said.  Counts into *pAdded, *pRefused, *pPresent */
static void add_all(struct imp *m, int *pAdded, int *pRefused, int *pPresent)
{
	char err[KL_ERRLEN];
	cand_import_names(&m->l, driver_state(m->drv));
	for (int i = 0; i < m->l.n; i++) {
		struct cand_import *x = &m->l.a[i];
		/* the same source twice in the batch: once */
		for (int k = 0; k < i && !x->zError && !x->present; k++)
			if (m->l.a[k].candId && !strcmp(m->l.a[k].zSource, x->zSource))
				x->present = m->l.a[k].candId;
		if (!x->zError && x->present) {
			++*pPresent;
			said_present(m, x);
			continue;
		}
		if (!x->zError) {
			int id =
			    driver_add(m->drv, "import", NULL, 0, x->zName, x->zSource, NULL, err);
			if (id < 0 || driver_bench(m->drv, id, err) < 0)
				x->zError = xasprintf("%s: %s", x->zPath, err);
			if (id > 0)
				x->candId = id;
		}
		if (!x->zError) {
			++*pAdded;
			continue;
		}
		++*pRefused;
		if (m->json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "type", "refused");
			cJSON_AddStringToObject(o, "file", x->zPath);
			cJSON_AddStringToObject(o, "error", x->zError);
			print_json(o);
		} else {
			char *z = term_clean(x->zError, 0);
			fprintf(stderr, "kloop: import: %s\n", z);
			free(z);
		}
	}
}

static int exec_import(int argc, char **argv)
{
	char err[KL_ERRLEN];
	struct flags o;
	int rc = flags_parse(self, FL_IMPORT, argc, argv, 1, FLAGS_MAX_POS, &o);
	if (rc)
		return rc;
	struct imp m = {.json = o.json, .tty = !o.json && isatty(2)};
	struct loop *l = NULL;
	rc = 2; /* until the candidates have run */
	const char *zTask = task_of(&o);
	if (!zTask)
		goto out;
	const char *zBackend = o.cfg.zBackend             ? o.cfg.zBackend
	                       : backend_cuda_available() ? "cuda"
	                                                  : "host";
	if (cand_import_list(o.azPos, o.nPos, o.zProblem, &m.l, err) < 0) {
		fprintf(stderr, "kloop: import: %s\n", err);
		goto out;
	}
	if (m.l.nSkipped && !o.json) {
		char *z = term_clean(m.l.skipped.buf, 0);
		fprintf(stderr, "kloop: import: %d file%s that %s no source left out: %.600s%s\n",
		        m.l.nSkipped, m.l.nSkipped == 1 ? "" : "s",
		        m.l.nSkipped == 1 ? "is" : "are", z, strlen(z) > 600 ? "..." : "");
		free(z);
	}
	if (!m.l.n) {
		fprintf(stderr, "kloop: import: no source files in %s%s\n", o.azPos[0],
		        o.nPos > 1 ? " and the rest" : "");
		goto out;
	}
	for (int i = 0; i < m.l.n; i++)
		cand_import_read(&m.l.a[i], zBackend);
	if (o.zProblem && problem_loads(&o) < 0)
		goto out;
	l = loop_new();
	struct driver_opts ro = {
	    .zTask = *zTask ? zTask : NULL,
	    .zSession = o.zSession,
	    .zShapes = o.zShapes,
	    .zReference = o.zReference,
	    .bNoSeeds = 1, /* an existing session's evaluations cut short run again (resume) */
	};
	if (!(m.drv = driver_open(l, &o.cfg, &ro, on_note, &m, err))) {
		fprintf(stderr, "kloop: import: %s\n", err);
		goto out;
	}
	if (!o.json)
		fprintf(stderr, "kloop: import: session %s\n", driver_path(m.drv));
	int nAdded = 0, nRefused = 0, nPresent = 0;
	add_all(&m, &nAdded, &nRefused, &nPresent);
	while (driver_busy(m.drv))
		loop_once(l, -1);
	if (m.tty)
		term_ctl(stderr, "\r\033[K");
	if (driver_task_error(m.drv)) {
		char *z = term_clean(driver_task_error(m.drv), 0);
		fprintf(stderr, "kloop: import: %s\n", z);
		free(z);
	} else {
		summary(&m, nAdded, nRefused, nPresent);
		rc = nRefused ? 1 : 0;
	}
	fflush(stdout);
	if (driver_saved(m.drv, NULL) < 0)
		rc = 2; /* events lost: the journal could not be written */
out:
	driver_close(m.drv);
	loop_free(l);
	cand_import_list_free(&m.l);
	flags_free(&o);
	return rc;
}

const struct cmd_entry cmd_import_entry = {
    .name = "import",
    .usage = "FILE|DIR... (--problem P.py | --task NAME | --session F) [--session F] [--json] "
             "[--backend host|cuda] [--shapes SET] [--trials N] [--budget SECONDS] "
             "[--timeout SECONDS] [--python PATH] [--jobs N] [--workers SPEC] [--no-sandbox] "
             "[--precision faithful|any]",
    .help = "put a batch of candidates (PyTorch extensions, KernelBench ModelNew modules, kl_run "
            "files, kloop exports; a directory's too) into a session, each evaluated, then a "
            "table of their verdicts and the best to steer from (exit 0 all imported, 1 when "
            "a file is not a candidate, 2 usage, problem or task error)",
    .exec = exec_import,
};
