/*
 * test_pipeline.c - the idea -> code pipeline with the command provider (a
 * shell script that answers by the prompt's content) and a front end's own
 * evaluator (pc.evaluate): the parent evaluated before the ideas prompt,
 * ideas recorded, edited and rejected, an idea implemented in two branches
 * with a wrong one sent back and fixed, a reply without code sent back and
 * given up on, inspirations from earlier candidates, all journaled.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "emit.h"
#include "pipeline.h"

#define R "tests/fake_llm/replies/"

static const char *script = "p=$(cat); case \"$p\" in "
                            "*Propose*) cat " R "ideas.txt;; "
                            "*NOCODE*) cat " R "nocode.txt;; "
                            "*'The attempt that failed'*) cat " R "fixed.txt;; "
                            "*'variant 2 of'*) cat " R "incorrect.txt;; "
                            "*) cat " R "correct.txt;; esac";

struct fe {
	struct loop *l;
	struct session *ses;
	struct pipeline *p;
	int evals;       /* evaluations asked for */
	int pending[16]; /* candidates to evaluate on the next turn of the loop */
	int nPending;
	long long timer;
	int nIdeas, ideas[8];
	char ideasError[KL_ERRLEN];
	int branches;
	char branchError[KL_ERRLEN];
};

/* the fake evaluator: a source that divides by (or multiplies by the
 * inverse of) the sum is correct, anything else is incorrect */
static void on_eval_timer(struct loop *l, long long id, void *arg)
{
	(void)l, (void)id;
	struct fe *f = arg;
	f->timer = 0;
	char err[KL_ERRLEN];
	for (int i = 0; i < f->nPending; i++) {
		const struct cand *c = state_cand(&f->ses->st, f->pending[i]);
		int ok = strstr(c->zSource, "/= sum") || strstr(c->zSource, "/ sum") ||
		         strstr(c->zSource, "*= inv");
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "type", "eval_finished");
		cJSON_AddNumberToObject(e, "candidate", c->id);
		cJSON *r = cJSON_AddObjectToObject(e, "result");
		cJSON_AddStringToObject(r, "status", ok ? "correct" : "incorrect");
		cJSON_AddStringToObject(r, "reason",
		                        ok ? "" : "output y differs from the reference");
		if (ok) {
			cJSON_AddNumberToObject(cJSON_AddObjectToObject(r, "timing"), "median_ms",
			                        1.0);
			cJSON_AddNumberToObject(r, "baseline_ms", 2.0 + c->id);
			cJSON_AddNumberToObject(r, "speedup", 2.0 + c->id);
		}
		session_emit(f->ses, e, err);
	}
	f->nPending = 0;
	pipeline_update(f->p);
}

static int evaluate(int candId, void *arg, char *err)
{
	struct fe *f = arg;
	f->evals++;
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "type", "eval_started");
	cJSON_AddNumberToObject(e, "candidate", candId);
	if (session_emit(f->ses, e, err) < 0)
		return -1;
	f->pending[f->nPending++] = candId;
	if (!f->timer)
		f->timer = loop_add_timer(f->l, 0.01, on_eval_timer, f);
	return 0;
}

static void on_ideas(int request, const int *a, int n, const char *zError, void *arg)
{
	(void)request;
	struct fe *f = arg;
	for (int i = 0; i < n && f->nIdeas < 8; i++)
		f->ideas[f->nIdeas++] = a[i];
	snprintf(f->ideasError, sizeof f->ideasError, "%s", zError ? zError : "");
}

static void on_branch(int idea, int branch, int cand, const char *zError, void *arg)
{
	(void)idea, (void)branch, (void)cand;
	struct fe *f = arg;
	f->branches++;
	if (zError)
		snprintf(f->branchError, sizeof f->branchError, "%s", zError);
}

static void run(struct fe *f)
{
	double t0 = now_s();
	while (pipeline_busy(f->p) && now_s() - t0 < 30)
		loop_once(f->l, 0.5);
}

/* the n-th (1-based) llm_request's prompt in the journal, or NULL */
static char *request_prompt(const char *zPath, int n)
{
	FILE *fp = fopen(zPath, "r");
	char *line = NULL, *res = NULL;
	size_t cap = 0;
	while (fp && getline(&line, &cap, fp) > 0 && !res) {
		cJSON *e = cJSON_Parse(line);
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(e, "type"));
		if (t && !strcmp(t, "llm_request") && --n == 0)
			res = xstrdup(cJSON_GetStringValue(cJSON_GetObjectItem(e, "prompt")));
		cJSON_Delete(e);
	}
	free(line);
	if (fp)
		fclose(fp);
	return res;
}

int main(void)
{
	setenv("KLOOP_PROMPTS", "prompts", 1);
	setenv("KLOOP_INCLUDE", "include", 1);
	char err[KL_ERRLEN] = "";
	char path[] = "/tmp/kloop-test-pipeline.XXXXXX";
	close(mkstemp(path));
	unlink(path);
	struct fe f = {0};
	f.l = loop_new();
	f.ses = session_open(path, 1, err);
	struct task *t = task_load("tasks/softmax", "host", NULL, err);
	CHECK(f.ses && t && session_begin(f.ses, "softmax", t->zDir, "host", NULL, err) == 0,
	      "a session for the softmax task (%s)", err);
	struct llm_config lc;
	llm_config_defaults(&lc);
	lc.zProvider = "command";
	lc.zCommand = script;
	struct llm *llm = llm_new(f.l, &lc, err);
	struct pipeline_hooks hooks = {.ideas = on_ideas, .branch = on_branch};
	struct pipeline_config pc = {.l = f.l,
	                             .ses = f.ses,
	                             .llm = llm,
	                             .task = t,
	                             .zTaskName = "softmax",
	                             .zBackend = "host",
	                             .fixAttempts = 1,
	                             .evaluateParents = 1,
	                             .hooks = &hooks,
	                             .arg = &f};
	CHECK(!pipeline_new(&pc, err) && strstr(err, "needs an evaluate function"),
	      "a pipeline without a worker or an evaluator is refused: %s", err);
	pc.evaluate = evaluate;
	f.p = pipeline_new(&pc, err);
	CHECK(f.p != NULL, "a pipeline with the front end's evaluator (%s)", err);
	if (!f.p)
		return check_done();

	strbuf seed = STRBUF_INIT;
	read_file("tasks/softmax/seed.c", &seed, 1 << 20, err);
	int parent = pipeline_add_source(f.p, "seed.c", seed.buf, "seed", err);
	CHECK(parent == 1 && pipeline_add_source(f.p, "again.c", seed.buf, "human", err) == 1,
	      "the seed becomes candidate 1; the same source again is the same candidate");

	CHECK(pipeline_ideas(f.p, parent, 2, 0, err) == 0 && pipeline_busy(f.p),
	      "an ideas round starts");
	run(&f);
	CHECK(f.evals == 1 && f.nIdeas == 2 && !f.ideasError[0] &&
	          !strcmp(state_cand(&f.ses->st, 1)->zStatus, "correct"),
	      "the parent is evaluated first, then two ideas come (%d evals, %d ideas) %s", f.evals,
	      f.nIdeas, f.ideasError);
	char *pr = request_prompt(path, 1);
	CHECK(pr && strstr(pr, "Propose 2 distinct ideas") && strstr(pr, "verdict: correct") &&
	          strstr(pr, "speedup 3x"),
	      "the ideas prompt carries the parent's results");
	free(pr);
	const struct state_idea *d1 = state_idea(&f.ses->st, 1), *d2 = state_idea(&f.ses->st, 2);
	CHECK(d1 && d2 && d1->status == IDEA_PENDING && d1->request == 1 && d1->parent == 1 &&
	          !strcmp(d2->zTitle, "Multiply by the reciprocal"),
	      "the ideas are pending, with their request and parent");

	CHECK(pipeline_idea_edit(f.p, 1, NULL, "Online softmax, one pass.", "Algorithmic", err) ==
	              0 &&
	          !strcmp(state_idea(&f.ses->st, 1)->zDescription, "Online softmax, one pass.") &&
	          !strcmp(state_idea(&f.ses->st, 1)->zCategory, "algorithm") &&
	          state_idea(&f.ses->st, 1)->edited,
	      "an idea edited: its description and category (normalised)");
	CHECK(pipeline_idea_reject(f.p, 2, "not now", err) == 0 &&
	          pipeline_implement(f.p, 2, parent, 0, 1, 0, err) == -1 &&
	          strstr(err, "was rejected"),
	      "a rejected idea is not implemented: %s", err);
	CHECK(pipeline_idea_accept(f.p, 9, err) == -1 && strstr(err, "no idea 9"), "%s", err);
	CHECK(pipeline_implement(f.p, 1, parent, 0, 0, 0, err) == -1 && strstr(err, "1 to 64"),
	      "%s", err);
	CHECK(pipeline_implement(f.p, 1, 42, 0, 1, 0, err) == -1 && strstr(err, "no candidate 42"),
	      "%s", err);

	CHECK(pipeline_implement(f.p, 1, parent, 0, 2, 0, err) == 0, "idea 1 in two branches (%s)",
	      err);
	run(&f);
	const struct state *st = &f.ses->st;
	CHECK(state_idea(st, 1)->status == IDEA_ACCEPTED, "implementing accepts the idea");
	const struct cand *b1 = NULL, *b2 = NULL, *fix = NULL;
	for (int i = 0; i < st->nCand; i++) {
		const struct cand *c = &st->aCand[i];
		if (!strcmp(c->zName, "idea1-b1.c"))
			b1 = c;
		if (!strcmp(c->zName, "idea1-b2.c"))
			b2 = c;
		if (!strcmp(c->zName, "idea1-b2-fix1.c"))
			fix = c;
	}
	CHECK(b1 && b2 && fix && f.branches == 2 && !f.branchError[0],
	      "two branches end: idea1-b1.c, idea1-b2.c and its fix idea1-b2-fix1.c");
	if (b1 && b2 && fix) {
		CHECK(!strcmp(b1->zStatus, "correct") && !strcmp(b2->zStatus, "incorrect") &&
		          !strcmp(fix->zStatus, "correct"),
		      "verdicts: correct, incorrect, and the fix correct");
		CHECK(b1->ideaId == 1 && !strcmp(b1->zOrigin, "llm") && b1->nParent == 1 &&
		          b1->aParent[0] == 1 && fix->nParent == 1 && fix->aParent[0] == b2->id,
		      "llm candidates carry the idea; the fix's parent is the candidate it fixes");
	}
	pr = request_prompt(path, 4);
	CHECK(pr && strstr(pr, "## The attempt that failed") &&
	          strstr(pr, "differs from the reference") &&
	          strstr(pr, "Online softmax, one pass."),
	      "the fix prompt carries the failed source's verdict and the edited idea");
	free(pr);

	int human = pipeline_idea_new(f.p, "NOCODE: think harder\nabout it", parent, err);
	CHECK(human == 3 && !strcmp(state_idea(st, 3)->zTitle, "NOCODE: think harder") &&
	          !strcmp(state_idea(st, 3)->zOrigin, "human"),
	      "a person's idea: the first line is its title");
	f.branches = 0;
	CHECK(pipeline_implement(f.p, human, parent, 0, 1, 0, err) == 0, "the idea in one branch");
	run(&f);
	CHECK(
	    f.branches == 1 && strstr(f.branchError, "holds no code") && st->llm.nRequests == 6,
	    "a reply without code, sent back once, still without: the branch ends saying why (%s; "
	    "%d branches, %d requests)",
	    f.branchError, f.branches, st->llm.nRequests);
	pr = request_prompt(path, 5);
	CHECK(pr && strstr(pr, "Other candidates, for inspiration") &&
	          strstr(pr, "idea1-b2-fix1.c") && strstr(pr, "idea1-b1.c") &&
	          !strstr(pr, "seed.c (correct"),
	      "later prompts carry the best other candidates as inspirations");
	free(pr);
	pr = request_prompt(path, 6);
	CHECK(pr && strstr(pr, "could not be used as code: the reply holds no code") &&
	          strstr(pr, "restructure the loops"),
	      "the fix prompt for a reply without code quotes the reason and the reply");
	free(pr);
	CHECK(!pipeline_busy(f.p), "idle at the end");

	pipeline_free(f.p);
	llm_free(llm);
	session_close(f.ses);
	unlink(path);
	task_free(t);
	sb_free(&seed);
	loop_free(f.l);
	return check_done();
}
