/*
 * worker/helper.c - the PyTorch helper's life in kloop-worker: its start
 * (the task's), its end when the worker ends first, and torch.compile's
 * baseline compiled by it in the background while candidates run.  Below
 * the requests and the cascade (both call it); above out.c.
 */
#include "kworker.h"

/* the PyTorch helper while the task loads: ended with what it started
 * before a task error is sent (so that nothing of it outlives the error
 * kloop prints), and when the worker ends first (a quit read meanwhile) */
static struct torchref *gHelper;
pid_t kworker_pid; /* a forked child's exit() leaves it alone */

void kworker_kill_helper(void)
{
	if (getpid() == kworker_pid)
		torchref_kill(gHelper);
}

/* start the PyTorch helper on zProblem; zShapes and size scale a problem
 * file's constants (NULL, 0: as written) */
struct torchref *kworker_start_helper(const char *zProblem, const char *zShapes, double size,
                                      char *err)
{
	struct torchref_opts to = {.zPython = W.zPython,
	                           .zCacheDir = W.zCacheDir,
	                           .zDevice = strcmp(W.zBackend, "cuda") ? "cpu" : "cuda",
	                           .cudaIndex = W.dev,
	                           .seed = W.opts.seed,
	                           .budgetS = W.opts.budgetS,
	                           .zShapes = zShapes,
	                           .size = size,
	                           .timeoutS = W.refTimeoutS};
	return gHelper = torchref_start(zProblem, &to, err);
}

static void on_bg_fd(struct loop *l, int fd, int events, void *arg)
{
	(void)l, (void)fd, (void)events, (void)arg;
	kworker_background_compile();
}

/*
 * torch.compile's baseline, compiled in the background (a search asked
 * "defer_compile"): what the helper said is read when no candidate runs;
 * once it has kworker_compiled, the compiled model is timed at once (the GPU is
 * its own meanwhile) and the engine hears {"ev": "baselines"} with the
 * whole baselines.  A failure of the helper is the baseline's, not the
 * task's: it says so in "compile".
 */
void kworker_background_compile(void)
{
	char err[KL_ERRLEN];
	struct torchref *r = W.bg;
	int rc = torchref_service(r, err);
	if (rc == 0)
		return;
	double t0 = now_s();
	/* on a failure the baselines say why in "compile" */
	const cJSON *tm = rc > 0 ? torchref_time_compile(r, err) : torchref_baselines(r);
	/* the helper stays for the runs' inputs (W.tr), its parameters checked
	 * now as its end would */
	int keep = rc > 0 && W.tr == r && torchref_check_params(r, err) == 0;
	if (rc > 0 && !keep && torchref_finish(r, err) < 0)
		torchref_kill(r);
	cJSON *o = protocol_baselines(tm, now_s() - W.tTask, now_s() - t0);
	loop_del_fd(W.l, torchref_fd(r));
	W.bg = NULL;
	if (!keep) {
		harness_set_source(W.h, NULL);
		W.tr = NULL;
		gHelper = NULL;
		torchref_free(r);
	}
	kworker_send_json(o);
}

void kworker_background_watch(struct torchref *tr)
{
	W.bg = tr;
	loop_add_fd(W.l, torchref_fd(tr), LOOP_READ, on_bg_fd, NULL);
}
