/*
 * test_pool.c - a pool of real kloop-workers on the host backend: two local
 * workers share a batch; a worker killed under a job has the job run again
 * on the other; workers started through an ssh-style command (a local
 * stand-in for ssh); a real single-node Slurm cluster (tests/slurm/cluster.sh,
 * as root) runs the workers as job steps of one allocation, and a step
 * cancelled with scancel mid-evaluation has its job run on the other step;
 * bad specifications get errors that name them.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "pool.h"
#include "util.h"
#include "version.h"

#define MAXJ 16

struct run {
	struct loop *l;
	struct pool *p;
	int nDone;
	char *zStatus[MAXJ + 1];
	char *zLabel[MAXJ + 1];
	int requeued[MAXJ + 1];
	int hangJob;     /* the job to kill the worker under, or 0 */
	int killed;      /* the worker was killed (once) */
	char *zSlurmJob; /* kill by scancel of this allocation's step */
};

static void on_done(int job, cJSON *r, void *arg)
{
	struct run *rn = arg;
	if (job < 1 || job > MAXJ)
		return;
	const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(r, "status"));
	cJSON *w = cJSON_GetObjectItem(r, "worker");
	rn->zStatus[job] = xstrdup(st ? st : "?");
	const char *lab = cJSON_GetStringValue(cJSON_GetObjectItem(w, "label"));
	rn->zLabel[job] = xstrdup(lab ? lab : "");
	cJSON *rq = cJSON_GetObjectItem(w, "requeued");
	rn->requeued[job] = cJSON_IsNumber(rq) ? rq->valueint : 0;
	if (st && strcmp(st, "correct") && strcmp(st, "timeout"))
		printf("# job %d: %s: %s\n", job, st,
		       cJSON_GetStringValue(cJSON_GetObjectItem(r, "reason")));
	rn->nDone++;
}

/* the worker evaluating job j: its index, or -1 */
static int worker_of(struct pool *p, int job)
{
	for (int i = 0; i < pool_size(p); i++) {
		struct pool_info pi;
		pool_info(p, i, &pi);
		if (pi.job == job)
			return i;
	}
	return -1;
}

static void on_progress(int job, const char *zStage, int k, void *arg)
{
	struct run *rn = arg;
	(void)k;
	if (job != rn->hangJob || rn->killed || strcmp(zStage, "running"))
		return;
	/* the hanging candidate is running: take its worker away */
	int w = worker_of(rn->p, job);
	struct pool_info pi;
	pool_info(rn->p, w, &pi);
	rn->killed = 1;
	if (rn->zSlurmJob) {
		char cmd[300];
		snprintf(
		    cmd, sizeof cmd,
		    "scancel $(squeue -h -s -j %s -o '%%i %%j' | awk '$2 == \"kloop-worker-%d\" "
		    "{print $1}')",
		    rn->zSlurmJob, w);
		if (system(cmd) != 0)
			printf("# scancel failed\n");
	} else if (pi.pid > 0) {
		kill(-pi.pid, SIGKILL);
	}
}

static char *source(const char *zPath, int variant)
{
	strbuf sb = STRBUF_INIT;
	char err[KL_ERRLEN];
	sb_addf(&sb, "/* variant %d */\n", variant);
	if (read_file(zPath, &sb, 1 << 20, err) < 0) {
		printf("# %s\n", err);
		exit(1);
	}
	return sb_detach(&sb);
}

static void run_until(struct run *rn, int n, double maxS)
{
	double t0 = now_s();
	while (rn->nDone < n && now_s() - t0 < maxS)
		loop_once(rn->l, 0.1);
}

static void run_free(struct run *rn)
{
	for (int i = 0; i <= MAXJ; i++) {
		free(rn->zStatus[i]);
		free(rn->zLabel[i]);
	}
}

static struct worker_config host_config(void)
{
	struct worker_config wc = {
	    .zBackend = "host",
	    .zTaskDir = "tasks/softmax",
	    .nTrials = 2,
	    .budgetS = 0.05,
	    .runTimeoutS = 4,
	    .jobs = 1,
	};
	return wc;
}

/* a batch of n variants of the seed plus (when hang) one hanging candidate
 * as job 1; returns the number submitted */
static int submit_batch(struct run *rn, int n, int hang)
{
	int k = 0;
	if (hang) {
		char *s = source("tests/fixtures/host/hang_softmax.c", 0);
		rn->hangJob = pool_submit(rn->p, "hang.c", s, strlen(s));
		free(s);
		k++;
	}
	for (int i = 0; i < n; i++) {
		char *s = source("tasks/softmax/seed.c", i);
		char name[32];
		snprintf(name, sizeof name, "v%d.c", i);
		pool_submit(rn->p, name, s, strlen(s));
		free(s);
		k++;
	}
	return k;
}

static void test_specs(void)
{
	struct loop *l = loop_new();
	struct worker_config wc = host_config();
	char err[KL_ERRLEN];
	const char *bad[] = {
	    "gpu:3", "local:0", "local:x", "ssh:", "ssh:h:a,b", "cmd:", "slurm:-n 0", ";"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		err[0] = 0;
		struct pool *p = pool_new(l, &wc, bad[i], on_done, NULL, NULL, err);
		CHECK(!p && strstr(err, "workers"), "'%s' is refused: %s", bad[i], err);
		pool_free(p);
	}
	struct pool *p =
	    pool_new(l, &wc, "local:3; ssh:gpu1:0,2; cmd:run-it {i}", on_done, NULL, NULL, err);
	CHECK(p && pool_size(p) == 6, "local:3; ssh:gpu1:0,2; cmd: make 6 workers (%d)",
	      p ? pool_size(p) : -1);
	struct pool_info pi;
	if (p) {
		pool_info(p, 4, &pi);
		CHECK(!strcmp(pi.zLabel, "ssh:gpu1:2"), "the fifth is ssh:gpu1:2 (%s)", pi.zLabel);
		pool_info(p, 0, &pi);
		CHECK(pi.state == POOL_W_IDLE && pi.pid == 0, "nothing starts before a submit");
	}
	pool_free(p);
	loop_free(l);
}

static void test_local(void)
{
	struct run rn = {0};
	rn.l = loop_new();
	struct worker_config wc = host_config();
	char err[KL_ERRLEN];
	rn.p = pool_new(rn.l, &wc, "local:2", on_done, on_progress, &rn, err);
	CHECK(rn.p != NULL, "a pool of two local workers (%s)", rn.p ? "" : err);
	if (!rn.p)
		return;
	int n = submit_batch(&rn, 6, 0);
	CHECK(rn.nDone == 0, "nothing is answered from inside pool_submit");
	loop_once(rn.l, 0); /* the dispatch */
	struct pool_info i0, i1;
	pool_info(rn.p, 0, &i0);
	pool_info(rn.p, 1, &i1);
	CHECK(i0.job == 1 && i1.job == 2 && i0.pid > 0 && i1.pid > 0,
	      "the first two jobs go to the two workers at once (%d, %d)", i0.job, i1.job);
	run_until(&rn, n, 120);
	int ok = 0, on0 = 0, on1 = 0;
	for (int j = 1; j <= n; j++) {
		ok += rn.zStatus[j] && !strcmp(rn.zStatus[j], "correct");
		on0 += rn.zLabel[j] && !strcmp(rn.zLabel[j], "local:0");
		on1 += rn.zLabel[j] && !strcmp(rn.zLabel[j], "local:1");
	}
	CHECK(ok == 6, "the batch of 6 is correct (%d)", ok);
	CHECK(on0 > 0 && on1 > 0 && on0 + on1 == 6, "both workers evaluated (%d and %d)", on0, on1);
	struct pool_info a, b;
	pool_info(rn.p, 0, &a);
	pool_info(rn.p, 1, &b);
	CHECK(a.nDone + b.nDone == 6 && a.busyS > 0 && b.busyS > 0,
	      "each worker counts its jobs and its busy time");
	CHECK(pool_reference_timing(rn.p, a.zDevice) != NULL,
	      "the baseline is known for the workers' device");
	pool_free(rn.p);
	loop_free(rn.l);
	run_free(&rn);
}

/* how many jobs one worker is given at once: on the GPU one running and as
 * many compiling behind it as it compiles at once, on the CPU one and one */
static void test_capacity(void)
{
	/* on the GPU one running and as many compiling as the worker compiles
	 * at once, more than 16 too (a node of many cores per GPU) */
	const char *backends[] = {"host", "cuda", "cuda"};
	int jobs[] = {3, 3, 40}, want[] = {2, 4, 41};
	for (int b = 0; b < 3; b++) {
		struct run rn = {0};
		rn.l = loop_new();
		struct worker_config wc = host_config();
		wc.zBackend = backends[b];
		wc.jobs = jobs[b];
		char err[KL_ERRLEN];
		rn.p = pool_new(rn.l, &wc, "local", on_done, NULL, &rn, err);
		CHECK(rn.p != NULL, "a pool of one local %s worker (%s)", backends[b],
		      rn.p ? "" : err);
		if (!rn.p)
			continue;
		int n = submit_batch(&rn, jobs[b] + 5, 0);
		loop_once(rn.l, 0); /* the dispatch */
		struct pool_info pi;
		pool_info(rn.p, 0, &pi);
		CHECK(pi.nOut == want[b],
		      "%s: a worker compiling %d at once is given %d of %d jobs at once (%d)",
		      backends[b], jobs[b], want[b], n, pi.nOut);
		pool_free(rn.p);
		loop_free(rn.l);
		run_free(&rn);
	}
}

/* a job cancelled while it waits in a worker (compiling, or behind the one
 * running) is dropped there: the worker is not started again */
struct cw {
	struct run rn;
	int job2;     /* the job to cancel */
	int pid;      /* the worker's pid when it was cancelled */
	int pidAfter; /* and right after (a restart stops the old one at once) */
	int rc;       /* pool_cancel's */
	int waiting;  /* job2 was given to the worker when it was cancelled */
};

static void cw_progress(int job, const char *zStage, int k, void *arg)
{
	struct cw *c = arg;
	(void)k;
	if (job != c->rn.hangJob || c->pid || strcmp(zStage, "running"))
		return;
	struct pool_info pi;
	pool_info(c->rn.p, 0, &pi);
	c->pid = pi.pid;
	c->waiting = pi.nOut == 2;
	c->rc = pool_cancel(c->rn.p, c->job2);
	pool_info(c->rn.p, 0, &pi);
	c->pidAfter = pi.pid;
}

static void test_cancel_waiting(void)
{
	struct cw c = {0};
	c.rn.l = loop_new();
	struct worker_config wc = host_config();
	char err[KL_ERRLEN];
	c.rn.p = pool_new(c.rn.l, &wc, "local", on_done, cw_progress, &c, err);
	CHECK(c.rn.p != NULL, "a pool of one local worker (%s)", c.rn.p ? "" : err);
	if (!c.rn.p)
		return;
	submit_batch(&c.rn, 2, 1); /* the hanging one (1), then 2 and 3 */
	c.job2 = c.rn.hangJob + 1;
	run_until(&c.rn, 3, 60);
	CHECK(c.rc == 0 && c.waiting && c.rn.zStatus[c.job2] &&
	          !strcmp(c.rn.zStatus[c.job2], "cancelled"),
	      "a job waiting in the worker behind a running one is cancelled (%s)",
	      c.rn.zStatus[c.job2] ? c.rn.zStatus[c.job2] : "no result");
	CHECK(c.pid > 0 && c.pidAfter == c.pid,
	      "... without starting the worker again (pid %d, then %d)", c.pid, c.pidAfter);
	CHECK(c.rn.zStatus[c.rn.hangJob] && !strcmp(c.rn.zStatus[c.rn.hangJob], "timeout") &&
	          c.rn.zStatus[c.job2 + 1] && !strcmp(c.rn.zStatus[c.job2 + 1], "correct"),
	      "the running job goes on to its verdict (%s) and the next one runs (%s)",
	      c.rn.zStatus[c.rn.hangJob] ? c.rn.zStatus[c.rn.hangJob] : "-",
	      c.rn.zStatus[c.job2 + 1] ? c.rn.zStatus[c.job2 + 1] : "-");
	pool_free(c.rn.p);
	loop_free(c.rn.l);
	run_free(&c.rn);
}

static void test_killed(void)
{
	struct run rn = {0};
	rn.l = loop_new();
	struct worker_config wc = host_config();
	char err[KL_ERRLEN];
	rn.p = pool_new(rn.l, &wc, "local:2", on_done, on_progress, &rn, err);
	int n = submit_batch(&rn, 1, 1);
	run_until(&rn, n, 120);
	int h = rn.hangJob;
	CHECK(rn.killed, "the worker under the hanging candidate was killed");
	CHECK(pool_requeued(rn.p) == 1 && rn.requeued[h] == 1,
	      "its job went back on the queue once");
	CHECK(rn.zStatus[h] && !strcmp(rn.zStatus[h], "timeout"),
	      "and was run again to its own verdict, timeout (%s), not 'crashed'",
	      rn.zStatus[h] ? rn.zStatus[h] : "none");
	CHECK(rn.zStatus[2] && !strcmp(rn.zStatus[2], "correct"), "the other job is correct");
	struct pool_info a, b;
	pool_info(rn.p, 0, &a);
	pool_info(rn.p, 1, &b);
	CHECK(a.nLost + b.nLost == 1, "one worker was lost once");
	pool_free(rn.p);
	loop_free(rn.l);
	run_free(&rn);
}

static void test_ssh(void)
{
	struct run rn = {0};
	rn.l = loop_new();
	struct worker_config wc = host_config();
	char err[KL_ERRLEN];
	char log[] = "/tmp/kloop-test-ssh-XXXXXX";
	int fd = mkstemp(log);
	close(fd);
	setenv("FAKE_SSH_LOG", log, 1);
	char *ssh = path_join(getenv("PWD") ? getenv("PWD") : ".", "tests/fixtures/fake_ssh.sh");
	setenv("KLOOP_SSH", ssh, 1);
	rn.p = pool_new(rn.l, &wc, "ssh:gpuhost:2", on_done, on_progress, &rn, err);
	int n = submit_batch(&rn, 3, 0);
	run_until(&rn, n, 120);
	int ok = 0, labelled = 0;
	for (int j = 1; j <= n; j++) {
		ok += rn.zStatus[j] && !strcmp(rn.zStatus[j], "correct");
		labelled += rn.zLabel[j] && !strncmp(rn.zLabel[j], "ssh:gpuhost:", 12);
	}
	CHECK(ok == 3 && labelled == 3, "3 candidates evaluated by ssh:gpuhost workers (%d, %d)",
	      ok, labelled);
	strbuf sb = STRBUF_INIT;
	read_file(log, &sb, 1 << 20, err);
	CHECK(sb.buf && strstr(sb.buf, "host gpuhost"), "ssh was asked for the host");
	CHECK(sb.buf && strstr(sb.buf, "option ControlMaster=auto") &&
	          strstr(sb.buf, "option ControlPath="),
	      "with one shared connection (ControlMaster)");
	CHECK(sb.buf && strstr(sb.buf, "CUDA_VISIBLE_DEVICES=1 kloop-worker --backend host"),
	      "the second worker is pinned to GPU 1 and runs kloop-worker on the remote PATH");
	sb_free(&sb);
	pool_free(rn.p);
	loop_free(rn.l);
	run_free(&rn);

	/* a host that cannot be reached: each job is tried three times, then fails */
	struct run rf = {0};
	rf.l = loop_new();
	rf.p = pool_new(rf.l, &wc, "ssh:unreachable", on_done, NULL, &rf, err);
	char *s = source("tasks/softmax/seed.c", 0);
	pool_submit(rf.p, "seed.c", s, strlen(s));
	free(s);
	run_until(&rf, 1, 60);
	CHECK(rf.zStatus[1] && !strcmp(rf.zStatus[1], "error"),
	      "an unreachable host fails the job after its retries (%s)",
	      rf.zStatus[1] ? rf.zStatus[1] : "none");
	CHECK(pool_requeued(rf.p) == 2, "after going back on the queue twice (%d)",
	      pool_requeued(rf.p));
	pool_free(rf.p);
	loop_free(rf.l);
	run_free(&rf);
	unsetenv("KLOOP_SSH");
	unlink(log);
	free(ssh);
}

/* a worker of another kloop version is refused at once, with both versions */
static void test_version(void)
{
	struct run rn = {0};
	rn.l = loop_new();
	struct worker_config wc = host_config();
	char err[KL_ERRLEN];
	rn.p = pool_new(rn.l, &wc, "cmd:sh tests/fixtures/old_worker.sh", on_done, NULL, &rn, err);
	char *s = source("tasks/softmax/seed.c", 0);
	pool_submit(rn.p, "seed.c", s, strlen(s));
	free(s);
	run_until(&rn, 1, 60);
	CHECK(rn.zStatus[1] && !strcmp(rn.zStatus[1], "error"), "the job fails (%s)",
	      rn.zStatus[1] ? rn.zStatus[1] : "none");
	struct pool_info pi;
	pool_info(rn.p, 0, &pi);
	CHECK(pi.state == POOL_W_DISABLED && pi.zNote && strstr(pi.zNote, "version 0.0.9") &&
	          strstr(pi.zNote, "kloop is " KLOOP_VERSION),
	      "the worker is refused for its version: %s", pi.zNote ? pi.zNote : "");
	CHECK(pi.nLost == 1, "and not started again (%d starts lost)", pi.nLost);
	pool_free(rn.p);
	loop_free(rn.l);
	run_free(&rn);
}

static void test_slurm(void)
{
	if (getuid() != 0 || system("command -v srun >/dev/null 2>&1") != 0) {
		printf("skip - the Slurm pool test needs root and Slurm (make deps installs it)\n");
		return;
	}
	char dir[] = "/tmp/kloop-slurm-XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK(0, "a directory for the test cluster");
		return;
	}
	char cmd[512];
	snprintf(cmd, sizeof cmd, "sh tests/slurm/cluster.sh start %s >%s/start.log 2>&1", dir,
	         dir);
	int rc = system(cmd);
	CHECK(rc == 0, "a single-node Slurm cluster starts (slurmctld, slurmd, munge)");
	if (rc != 0) {
		snprintf(cmd, sizeof cmd, "sed 's/^/# /' %s/start.log", dir);
		if (system(cmd) != 0)
			printf("# no log\n");
		return;
	}
	char conf[300];
	snprintf(conf, sizeof conf, "%s/slurm.conf", dir);
	setenv("SLURM_CONF", conf, 1);
	unsetenv("SLURM_JOB_ID");
	char *bin = path_join(getenv("PWD") ? getenv("PWD") : ".", "bin");
	char *path = xasprintf("%s:%s", bin, getenv("PATH") ? getenv("PATH") : "/usr/bin");
	setenv("PATH", path, 1);

	struct run rn = {0};
	rn.l = loop_new();
	struct worker_config wc = host_config();
	wc.runTimeoutS = 6;
	char err[KL_ERRLEN];
	rn.p = pool_new(rn.l, &wc, "slurm:--ntasks=2 --time=10", on_done, on_progress, &rn, err);
	CHECK(rn.p && pool_size(rn.p) == 2, "slurm:--ntasks=2 makes two workers");
	int n = submit_batch(&rn, 3, 0);
	run_until(&rn, n, 120);
	int ok = 0, steps = 0;
	for (int j = 1; j <= n; j++) {
		ok += rn.zStatus[j] && !strcmp(rn.zStatus[j], "correct");
		steps += rn.zLabel[j] && !strncmp(rn.zLabel[j], "slurm:", 6);
	}
	CHECK(ok == 3 && steps == 3, "3 candidates evaluated by srun job steps (%d, %d)", ok,
	      steps);
	FILE *f = popen("squeue -h -o '%i %j %T'", "r");
	char line[256] = "", job[64] = "";
	if (f) {
		while (fgets(line, sizeof line, f))
			if (strstr(line, " kloop ") && strstr(line, "RUNNING"))
				sscanf(line, "%63s", job);
		pclose(f);
	}
	CHECK(job[0], "one allocation named kloop runs for the session (%s)", job);
	f = popen("squeue -h -s -o '%i %j'", "r");
	int nstep = 0;
	if (f) {
		while (fgets(line, sizeof line, f))
			nstep += strstr(line, "kloop-worker-") != NULL;
		pclose(f);
	}
	CHECK(nstep == 2, "the workers are two persistent job steps in it (%d)", nstep);

	/* scancel a step under a job: it runs again on the other step */
	rn.zSlurmJob = job;
	int h = submit_batch(&rn, 1, 1) + n;
	run_until(&rn, h, 120);
	h = rn.hangJob;
	CHECK(rn.killed, "the step under the hanging candidate was cancelled (scancel)");
	CHECK(rn.requeued[h] == 1, "its job went back on the queue (%d)", rn.requeued[h]);
	CHECK(rn.zStatus[h] && !strcmp(rn.zStatus[h], "timeout"),
	      "and ran to its own verdict on the other step (%s)",
	      rn.zStatus[h] ? rn.zStatus[h] : "none");
	CHECK(rn.zStatus[h + 1] && !strcmp(rn.zStatus[h + 1], "correct"),
	      "the job beside it is correct");
	pool_free(rn.p);
	loop_free(rn.l);
	run_free(&rn);
	/* the allocation is released with the pool */
	int left = 1;
	for (int i = 0; i < 50 && left; i++) {
		f = popen("squeue -h -o '%j %T'", "r");
		left = 0;
		if (f) {
			while (fgets(line, sizeof line, f))
				left += strstr(line, "kloop ") && strstr(line, "RUNNING");
			pclose(f);
		}
		if (left)
			usleep(100000);
	}
	CHECK(!left, "the allocation is released when the session ends");
	snprintf(cmd, sizeof cmd, "sh tests/slurm/cluster.sh stop %s; rm -rf %s", dir, dir);
	if (system(cmd) != 0)
		printf("# could not stop the test cluster\n");
	free(bin);
	free(path);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	char *bin = path_join(getenv("PWD") ? getenv("PWD") : ".", "bin");
	char *path = xasprintf("%s:%s", bin, getenv("PATH") ? getenv("PATH") : "/usr/bin");
	setenv("PATH", path, 1);
	test_specs();
	test_capacity();
	test_cancel_waiting();
	test_local();
	test_killed();
	test_ssh();
	test_version();
	test_slurm();
	free(bin);
	free(path);
	return check_done();
}
