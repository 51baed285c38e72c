/*
 * worker/main.c - kloop-worker: one process per device.  It speaks
 * newline-delimited JSON on the stdin/stdout it was started with, moved to
 * private descriptors so that a candidate's own output (sent to stderr)
 * cannot corrupt the protocol; it compiles candidates (in parallel, cached),
 * checks and times them, and streams progress and results.  It never loads
 * candidate code: each candidate (and the reference) runs in a sandboxed
 * runner process (cand.h: `kloop-worker --runner`) on shared buffers, and
 * this process compares and bounds the times.
 */
#include "kworker.h"

static void handle_line(char *line)
{
	cJSON *req = cJSON_Parse(line);
	switch (protocol_op(req)) {
	case PROTO_OP_NONE:
		kworker_send_error(-1, "malformed request (expected a JSON object with \"op\")", 0);
		break;
	case PROTO_OP_TASK:
		if (!kworker_warm_task(line))
			kworker_op_task(req);
		break;
	case PROTO_OP_EVAL:
		kworker_op_eval(req);
		break;
	case PROTO_OP_MEASURED:
		kworker_op_measured(req);
		break;
	case PROTO_OP_CANCEL:
		kworker_op_cancel(req);
		break;
	case PROTO_OP_QUIT:
		exit(0);
	case PROTO_OP_UNKNOWN: {
		char *z = xasprintf("unknown op '%s'", protocol_op_name(req));
		kworker_send_error(-1, z, 0);
		free(z);
		break;
	}
	}
	cJSON_Delete(req);
}

/* the request lines read so far, in order (a task request only starts its
 * load: the lines after it are handled at once) */
static void handle_lines(void)
{
	char *z;
	size_t n;
	int got;
	while ((got = lb_next(&W.inbuf, &z, &n)) > 0) {
		char *line = xstrndup(z, n);
		handle_line(line);
		free(line);
	}
	if (got < 0) {
		char *m =
		    xasprintf("protocol error: a request line of more than %u bytes without a "
		              "newline",
		              (unsigned)PROTO_LINE_MAX);
		kworker_send_error(-1, m, 1);
		free(m);
		exit(2);
	}
}

static void on_input(struct loop *l, int fd, int events, void *arg)
{
	(void)l, (void)events, (void)arg;
	char buf[65536];
	ssize_t r = read(fd, buf, sizeof buf);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		/* the engine closed the channel: a worker kept warm waits for
		 * the next, where nothing of this one's is left to do */
		if (kworker_warm_idle())
			return;
		exit(0);
	}
	lb_add(&W.inbuf, buf, (size_t)r);
	handle_lines();
}

/* bytes of requests read elsewhere (a warm worker's next engine) */
static void add_lines(const char *z, size_t n)
{
	lb_add(&W.inbuf, z, n);
	handle_lines();
}

/*
 * Limits a candidate runs under, so that exhausting them ends in a clear
 * crash of this worker rather than the machine's: on the host backend an
 * address space of KLOOP_MEM_LIMIT_MB (default: half the memory), here and
 * in the runners it starts.  The CUDA runtime reserves huge address ranges,
 * so the cuda backend has no address-space limit.  The file size limit is
 * the runner's alone (limit_files): the worker's own buffers are memfds,
 * whose size counts as a file's, and a task's tensors may be up to 16 GiB.
 */
/* built with AddressSanitizer (make asan): its shadow memory takes terabytes
 * of address space, so RLIMIT_AS cannot coexist with it */
#if defined(__SANITIZE_ADDRESS__)
#define KL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KL_ASAN 1
#endif
#endif

/* the runner: a file the candidate writes is at most 1 GiB (past it,
 * SIGXFSZ: a crash) */
static void limit_files(void)
{
	struct rlimit fs = {1ul << 30, 1ul << 30};
	setrlimit(RLIMIT_FSIZE, &fs);
}

static void limit_resources(void)
{
	/* the buffers are memfds, whose size counts as a file's: a file size
	 * limit kloop was started under (ulimit -f, its soft part) is lifted to
	 * the hard one here, and what still passes it is a write error, not a
	 * signal (the runners get the default back, and their own 1 GiB) */
	struct rlimit fs;
	if (getrlimit(RLIMIT_FSIZE, &fs) == 0 && fs.rlim_cur != fs.rlim_max) {
		fs.rlim_cur = fs.rlim_max;
		setrlimit(RLIMIT_FSIZE, &fs);
	}
	signal(SIGXFSZ, SIG_IGN);
	if (strcmp(W.zBackend, "host"))
		return;
	long long mb = kworker_mem_limit_mb();
#ifndef KL_ASAN
	/* the soft limit: a runner whose cgroup limits the candidate as a
	 * whole lifts it (runner_limits) */
	struct rlimit as;
	if (mb > 0 && getrlimit(RLIMIT_AS, &as) == 0) {
		as.rlim_cur = (rlim_t)mb << 20;
		if (as.rlim_max != RLIM_INFINITY && as.rlim_max < as.rlim_cur)
			as.rlim_cur = as.rlim_max;
		setrlimit(RLIMIT_AS, &as);
	}
#else
	(void)mb; /* ASan's own limit instead: asan_limit() */
#endif
}

/*
 * Under ASan the same limit is ASan's soft RSS limit (past it malloc returns
 * NULL, as under RLIMIT_AS), which can only be set when the process starts:
 * the worker runs itself again once with it in ASAN_OPTIONS.
 */
static void asan_limit(char **argv, const char *zBackend, int runner, long long runnerMb)
{
#ifdef KL_ASAN
	long long mb = runner ? runnerMb : kworker_mem_limit_mb();
	if (strcmp(zBackend, "host") || mb <= 0 || getenv("KLOOP_WORKER_ASAN_LIMIT"))
		return;
	const char *old = getenv("ASAN_OPTIONS");
	char *opts = xasprintf("%s%ssoft_rss_limit_mb=%lld:allocator_may_return_null=1",
	                       old ? old : "", old && *old ? ":" : "", mb);
	setenv("ASAN_OPTIONS", opts, 1);
	setenv("KLOOP_WORKER_ASAN_LIMIT", "1", 1);
	free(opts);
	execv("/proc/self/exe", argv);
#else
	(void)argv, (void)zBackend, (void)runner, (void)runnerMb;
#endif
}

/*
 * A runner's own limits: its files at most 1 GiB; its address space asMb
 * MiB where the worker gave it one (--as-limit-mb: no cgroup limits the
 * candidate as a whole, so this process, the only one it may have, is
 * limited), else lifted from the worker's (its cgroup's memory limit
 * holds, and says so when it is reached).
 */
static void runner_limits(long long asMb)
{
	limit_files();
	struct rlimit as;
	if (getrlimit(RLIMIT_AS, &as) < 0)
		return;
	if (asMb > 0)
		as.rlim_cur = as.rlim_max = (rlim_t)asMb << 20;
	else
		as.rlim_cur = as.rlim_max;
	setrlimit(RLIMIT_AS, &as);
}

static int usage(void)
{
	fprintf(stderr,
	        "usage: kloop-worker [--backend host|cuda] [--device N] [--jobs N] [--spares N] "
	        "[--cache DIR] [--python PATH] [--no-sandbox] [--warm SOCKET --linger SECONDS]\n"
	        "(kloop starts workers itself; see "
	        "kloop eval)\n");
	return 2;
}

int main(int argc, char **argv)
{
	W.tMain = now_s();
	W.zBackend = "host";
	int jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
	char *zCache = NULL;
	W.zPython = xstrdup("python3");
	lb_init(&W.inbuf, PROTO_LINE_MAX);
	W.sandbox = 1;
	int runner = 0;
	long long asMb = 0;
	int nSpares = -1;          /* --spares: runners started ahead (-1: the default) */
	const char *zOrder = NULL; /* a runner's --start-order */
	const char *zWarm = NULL;  /* --warm: the socket a warm worker waits on */
	double lingerS = 0;        /* --linger: how long it waits there */
	W.warmFd = W.relayFd = W.errOut = -1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--backend") && i + 1 < argc)
			W.zBackend = argv[++i];
		else if (!strcmp(argv[i], "--device") && i + 1 < argc)
			W.dev = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
			jobs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--cache") && i + 1 < argc)
			zCache = xstrdup(argv[++i]);
		else if (!strcmp(argv[i], "--python") && i + 1 < argc) {
			free(W.zPython);
			W.zPython = xstrdup(argv[++i]);
		} else if (!strcmp(argv[i], "--no-sandbox"))
			W.sandbox = 0;
		else if (!strcmp(argv[i], "--runner"))
			runner = 1;
		else if (!strcmp(argv[i], "--as-limit-mb") && i + 1 < argc)
			asMb = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--warm") && i + 1 < argc)
			zWarm = argv[++i];
		else if (!strcmp(argv[i], "--linger") && i + 1 < argc) {
			char *end;
			lingerS = strtod(argv[++i], &end);
			if (*end || end == argv[i] || !(lingerS >= 0 && lingerS <= 86400))
				return usage();
		} else if (!strcmp(argv[i], "--twin") && runner)
			; /* the clock's twin: a runner that never loads anything */
		else if (!strcmp(argv[i], "--start-order") && runner && i + 1 < argc)
			zOrder = argv[++i];
		else if (!strcmp(argv[i], "--spares") && i + 1 < argc) {
			char *end;
			long v = strtol(argv[++i], &end, 10);
			if (*end || end == argv[i] || v < 0 || v > CAND_MAX_SPARES)
				return usage();
			nSpares = (int)v;
		} else
			return usage();
	}
	if (strcmp(W.zBackend, "host") && strcmp(W.zBackend, "cuda"))
		return usage();
	/* under ASan the host backend's memory limit is ASan's (the runner, where
	 * the candidate allocates, included) */
	asan_limit(argv, W.zBackend, runner, asMb);
	/* a runner: the candidate's side, on the socket it was given as fd 3 */
	if (runner) {
		runner_limits(asMb);
		return cand_serve(3, W.zBackend, W.dev, zOrder);
	}
	/* the trusted side dies with kloop (a warm one, kept for the next
	 * kloop, ends when its channel closes with work left, or lingers), and
	 * no other process of this user reads its memory, descriptors or
	 * environment through /proc */
	pid_t parent = getppid();
	prctl(PR_SET_PDEATHSIG, zWarm ? 0 : SIGKILL);
	if (getppid() != parent)
		return 1;
	prctl(PR_SET_DUMPABLE, 0);
	/* the protocol moves to private descriptors; stdout joins stderr */
	W.in = fcntl(0, F_DUPFD_CLOEXEC, 100);
	W.out = fcntl(1, F_DUPFD_CLOEXEC, 100);
	if (W.in < 0 || W.out < 0) {
		fprintf(stderr, "kloop-worker: cannot set up the protocol channel: %s\n",
		        strerror(errno));
		return 1;
	}
	int devnull = open("/dev/null", O_RDONLY);
	dup2(devnull, 0);
	if (devnull > 0)
		close(devnull);
	dup2(2, 1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	struct rlimit rl = {0, 0};
	setrlimit(RLIMIT_CORE, &rl);
	limit_resources();

	char err[KL_ERRLEN];
	W.b = !strcmp(W.zBackend, "cuda") ? backend_cuda_new(W.dev, err) : backend_host_new(err);
	if (!W.b) {
		kworker_send_error(-1, err, 1);
		return 1;
	}
	W.zCacheDir = zCache ? zCache : cache_dir_default();
	char *soDir = path_join(W.zCacheDir, "so");
	W.l = loop_new();
	kworker_pid = getpid();
	atexit(kworker_kill_helper);
	/* the device's target (sm_90a on a 9.0), or KLOOP_CUDA_ARCH's */
	struct cuda_target target = {0};
	const char *nvcc = getenv("KLOOP_NVCC");
	if (W.b->ccMajor > 0 &&
	    cuda_target_choose(&target, W.b->ccMajor, W.b->ccMinor, getenv("KLOOP_CUDA_ARCH"),
	                       nvcc && *nvcc ? nvcc : "nvcc", err) < 0) {
		free(soDir);
		kworker_send_error(-1, err, 1);
		return 1;
	}
	if (W.b->ccMajor > 0 && target.zNote[0])
		fprintf(stderr, "kloop-worker: warning: %s\n", target.zNote);
	W.comp = compiler_new(W.l, soDir, jobs, W.b->ccMajor > 0 ? &target : NULL, err);
	free(soDir);
	if (!W.comp) {
		kworker_send_error(-1, err, 1);
		return 1;
	}
	struct proto_hello hi = {.zBackend = W.b->zName,
	                         .zDevice = W.b->zDevice,
	                         .zArch = W.b->ccMajor > 0 ? target.zName : NULL,
	                         .pid = getpid(),
	                         .zVersion = KLOOP_VERSION,
	                         .zUuid = W.b->zUuid[0] ? W.b->zUuid : NULL,
	                         .bandwidthGbs = W.b->bandwidthGbs};
	/* what the device does, for every result's roofline (roofline.h) */
	W.roof.bwGbs = W.b->bandwidthGbs;
	W.roof.tflops = W.b->tflops;
	W.roof.clockPeakMhz = W.b->clockPeakMhz;
	char merr[KL_ERRLEN];
	if (W.b->measure &&
	    W.b->measure(W.b, &W.roof.bwMeasuredGbs, &W.roof.tflopsMeasured, merr) < 0)
		fprintf(stderr, "kloop-worker: warning: %s\n", merr);
	/* the other compute types' peaks (measured once per device, cached):
	 * once the task's load is under way (kworker_peaks) */
	hi.measuredBandwidthGbs = W.roof.bwMeasuredGbs;
	hi.peakTflops = W.roof.tflops;
	hi.measuredPeakTflops = W.roof.tflopsMeasured;
	char zHost[256] = "";
	if (gethostname(zHost, sizeof zHost - 1) == 0)
		hi.zHost = zHost;
	char serr[KL_ERRLEN];
	if (W.sandbox && cand_sandbox_probe(serr) < 0) {
		fprintf(stderr, "kloop-worker: warning: %s\n", serr);
		hi.zSandboxWarning = serr;
		W.sandbox = 0;
	}
	/* the compiles stay in the sandbox; the candidates leave it under a
	 * profiler (proc.h): in it the profiler's injection, re-added at each
	 * exec, reaches the runner without the variables and pipes that tie it
	 * to its front end, and dies in the runner's first CUDA call (ncu
	 * around kloop eval on an H200); the runner is unconfined and its
	 * times unverified there anyway */
	compiler_set_sandbox(W.comp, W.sandbox);
	if (W.sandbox && proc_profiler_injected()) {
		snprintf(serr, sizeof serr,
		         "a profiler is injected into kloop-worker (Nsight's process tracking or "
		         "CUDA_INJECTION64_PATH): its candidates run without bubblewrap, where the "
		         "profiler can follow them, unconfined, their times unverified");
		fprintf(stderr, "kloop-worker: warning: %s\n", serr);
		hi.zSandboxWarning = serr;
		W.sandbox = 0;
	}
	hi.zSandbox = W.sandbox ? "bubblewrap" : "none";
	/* the spare runners: on the GPU the next candidates' runners make
	 * their device contexts while this one is checked and timed (two by
	 * default: a context started while several GPUs start theirs may take
	 * longer than a candidate's check and timing); on the CPU a runner
	 * starts in milliseconds, and one started ahead would only take a core
	 * from the candidate being timed.  --spares N asks for N (0: none) */
	int cuda = !strcmp(W.zBackend, "cuda");
	const char *zSpare = getenv("KLOOP_SPARE_RUNNER");
	static const char *const spares[] = {
	    [CAND_SPARE_OFF] = "off", [CAND_SPARE_AFTER] = "after", [CAND_SPARE_READY] = "ready"};
	int nPolicies = (int)(sizeof spares / sizeof *spares);
	int spare = nSpares == 0 || (nSpares < 0 && !cuda) ? CAND_SPARE_OFF : CAND_SPARE_READY;
	if (zSpare && *zSpare) {
		for (spare = nPolicies - 1; spare >= 0 && strcmp(zSpare, spares[spare]); spare--)
			;
		if (spare < 0) {
			kworker_send_error(
			    -1,
			    "KLOOP_SPARE_RUNNER must be off, after or ready (when a runner "
			    "for the next candidate is started ahead)",
			    1);
			return 2;
		}
	}
	cand_spare_policy(spare);
	cand_spare_count(nSpares > 0 ? nSpares : cuda ? KWORKER_GPU_SPARES : 1);
	hi.zSpareRunner = spares[spare];
	hi.nSpares = spare == CAND_SPARE_OFF ? 0
	             : nSpares > 0           ? nSpares
	             : cuda                  ? KWORKER_GPU_SPARES
	                                     : 1;
	W.hello = protocol_hello(&hi);
	W.tHello = now_s();
	kworker_send_json(cJSON_Duplicate(W.hello, 1));
	if (zWarm && lingerS > 0 &&
	    kworker_warm_listen(zWarm, lingerS, on_input, add_lines, err) < 0)
		fprintf(stderr, "kloop-worker: not kept warm: %s\n", err);
	fd_nonblock(W.in);
	loop_add_fd(W.l, W.in, LOOP_READ, on_input, NULL);
	loop_run(W.l);
	return 0;
}
