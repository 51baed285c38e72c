/*
 * test_cand.c - the parts of containment below the runner (issue 14):
 * children start without secrets in their environment and die with their
 * parent; cached objects are loaded only while they match their SHA-256;
 * a sandboxed compiler sees nothing outside the candidate's directory and
 * kloop's include directory; the runner's bubblewrap arguments are accepted
 * by bubblewrap for either backend, with library directories reached
 * through links.  The runner itself: tests/e2e/sandbox.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cand.h"
#include "check.h"
#include "compile.h"
#include "compiled.h"
#include "loop.h"
#include "proc.h"
#include "util.h"

/* 1 once pid is gone (or a zombie of someone else's), within 10 s */
static int gone(pid_t pid)
{
	for (int i = 0; i < 1000; i++) {
		char p[64], buf[256];
		snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
		int fd = open(p, O_RDONLY);
		if (fd < 0)
			return 1;
		ssize_t n = read(fd, buf, sizeof buf - 1);
		close(fd);
		buf[n > 0 ? n : 0] = 0;
		char *rp = strrchr(buf, ')');
		if (rp && rp[2] == 'Z')
			return 1;
		usleep(10000);
	}
	return 0;
}

/* the index of z in v, or -1 */
static int argi(char **v, const char *z)
{
	for (int i = 0; v[i]; i++)
		if (!strcmp(v[i], z))
			return i;
	return -1;
}

/* v has the triple X Y Z somewhere */
static int has3(char **v, const char *x, const char *y, const char *z)
{
	for (int i = 0; v[i] && v[i + 1] && v[i + 2]; i++)
		if (!strcmp(v[i], x) && !strcmp(v[i + 1], y) && !strcmp(v[i + 2], z))
			return 1;
	return 0;
}

static void free_argv(char **v)
{
	for (int i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

/* run bubblewrap with the runner's arguments, the command after "--"
 * replaced by sh -c CMD: its exit status, its output in out */
static int run_bwrap(char **v, const char *zCmd, char *out, size_t nOut)
{
	int dd = argi(v, "--");
	char *av[512];
	int n = 0;
	for (int i = 0; i <= dd && n < 500; i++)
		av[n++] = v[i];
	av[n++] = "/bin/sh";
	av[n++] = "-c";
	av[n++] = (char *)zCmd;
	av[n] = NULL;
	char *o = NULL;
	int st = proc_capture(av, &o, 4096);
	snprintf(out, nOut, "%s", o ? o : "");
	free(o);
	return st;
}

static void runner_argv_tests(void)
{
	char err[KL_ERRLEN], out[4096];
	char dir[] = "/tmp/kloop-test-argv.XXXXXX";
	CHECK(mkdtemp(dir) != NULL, "a scratch directory");
	char *real = xasprintf("%s/real-lib", dir), *link = xasprintf("%s/link", dir);
	char *viaLink = xasprintf("%s/link/real-lib", dir), *mark = xasprintf("%s/marker", real);
	(void)!mkdir(real, 0755);
	(void)!close(open(mark, O_CREAT | O_WRONLY, 0644));
	CHECK(symlink(dir, link) == 0, "a library directory reached through an absolute link");

	const char *ldWas = getenv("LD_LIBRARY_PATH");
	char *ldSaved = ldWas ? xstrdup(ldWas) : NULL;
	unsetenv("LD_LIBRARY_PATH");
	struct cand_opts host = {.zBackend = "host", .sandbox = 1};
	char **v = cand_runner_argv(&host, "/bin/true", 0);
	CHECK(argi(v, "--unshare-pid") > 0 && has3(v, "--proc", "/proc", "--dev"),
	      "host runner: its own pid namespace and a fresh /proc");
	CHECK(argi(v, "LD_LIBRARY_PATH") < 0,
	      "host runner: no LD_LIBRARY_PATH where kloop had none");
	free_argv(v);

	/* the runner's own libraries (cJSON installed outside the system's
	 * directories) found through LD_LIBRARY_PATH: on the host backend too,
	 * or the runner cannot start (on a GPU machine every host candidate
	 * "crashed", exit status 127) */
	setenv("LD_LIBRARY_PATH", viaLink, 1);
	v = cand_runner_argv(&host, "/bin/true", 0);
	CHECK(has3(v, "--setenv", "LD_LIBRARY_PATH", viaLink) &&
	          has3(v, "--ro-bind-try", real, viaLink),
	      "host runner: LD_LIBRARY_PATH is kept and its directories are visible");
	if (cand_sandbox_probe(err) == 0) {
		char *cmd = xasprintf("test -e %s/marker && test \"$LD_LIBRARY_PATH\" = %s",
		                      viaLink, viaLink);
		int st = run_bwrap(v, cmd, out, sizeof out);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "inside the host runner's sandbox the library directory is there (%s)", out);
		free(cmd);
	}
	free_argv(v);
	unsetenv("LD_LIBRARY_PATH");

	/* the GPU runner's library directories: the CUDA toolkit's (an absolute
	 * link inside /usr where it is installed), one through /lib, and ours */
	char *ld = xasprintf("/usr/local/cuda/lib64:/lib/x86_64-linux-gnu:%s", viaLink);
	setenv("LD_LIBRARY_PATH", ld, 1);
	char *libs[] = {viaLink, NULL};
	struct cand_opts gpu = {.zBackend = "cuda", .sandbox = 1, .azLibDirs = libs};
	v = cand_runner_argv(&gpu, "/bin/true", 0);
	CHECK(argi(v, "--unshare-pid") > 0 && has3(v, "--proc", "/proc", "--dev"),
	      "GPU runner with buffers passed as file descriptors: its own pid namespace too");
	CHECK(has3(v, "--ro-bind-try", real, real) && has3(v, "--ro-bind-try", real, viaLink),
	      "a linked library directory is bound at its real path and at the path given");
	int underUsr = 0;
	for (int i = 0; v[i]; i++)
		underUsr |= !strcmp(v[i], "--ro-bind-try") && v[i + 1] && v[i + 2] &&
		            (!strncmp(v[i + 2], "/usr/", 5) || !strncmp(v[i + 2], "/lib/", 5));
	CHECK(!underUsr, "nothing is bound again inside /usr or /lib, which the runner sees whole");
	if (cand_sandbox_probe(err) == 0) {
		char *cmd = xasprintf("test -e %s/marker && test -e %s && test -d /proc/self/fd",
		                      viaLink, real);
		int st = run_bwrap(v, cmd, out, sizeof out);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "bubblewrap accepts the GPU runner's arguments, and the library is visible "
		      "through the link (%s)",
		      out);
		free(cmd);
	} else {
		printf("skip - bubblewrap cannot run here (%s)\n", err);
	}
	free_argv(v);
	CHECK(!getenv("KLOOP_CUPTI"), "KLOOP_CUPTI is not set for this test");
	v = cand_runner_argv(&gpu, "/bin/true", 0);
	CHECK(argi(v, "KLOOP_CUPTI") < 0, "no KLOOP_CUPTI in a GPU runner where kloop has none");
	free_argv(v);
	/* the runs' kernel time from CUPTI, on trial: the switch, and a library
	 * named by its path with its directory, reach the GPU runner */
	setenv("KLOOP_CUPTI", mark, 1);
	v = cand_runner_argv(&gpu, "/bin/true", 0);
	CHECK(has3(v, "--setenv", "KLOOP_CUPTI", mark) && has3(v, "--ro-bind-try", real, real),
	      "KLOOP_CUPTI=PATH reaches the GPU runner, and its directory is bound");
	free_argv(v);
	unsetenv("KLOOP_CUPTI");
	CHECK(proc_env_allowed("KLOOP_CUPTI"), "the worker's environment keeps KLOOP_CUPTI");

	/* kloop's own kernels beside the runner's program: the GPU runner's cache
	 * flush reads with them (without, it wrote the L2 full of dirty lines,
	 * and memory-bound candidates timed 9% slower in the sandbox) */
	char exe[4096];
	if (realpath("bin/kloop-worker", exe)) {
		char *lib = xasprintf("%.*s/libkloop-cuda.so", (int)(strrchr(exe, '/') - exe), exe);
		v = cand_runner_argv(&gpu, exe, 0);
		int bound = has3(v, "--ro-bind", lib, "/run/kloop/libkloop-cuda.so");
		CHECK(access(lib, R_OK) == 0 ? bound : !bound,
		      "the GPU runner sees kloop's kernels (%s) beside its program, where they are "
		      "built",
		      lib);
		if (bound && cand_sandbox_probe(err) == 0) {
			int st =
			    run_bwrap(v, "test -r /run/kloop/libkloop-cuda.so", out, sizeof out);
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			      "... and can read them in the sandbox (%s)", out);
		}
		free_argv(v);
		free(lib);
	}

	v = cand_runner_argv(&gpu, "/bin/true", 1);
	CHECK(argi(v, "--unshare-pid") < 0 && has3(v, "--ro-bind", "/proc", "/proc"),
	      "GPU runner with legacy CUDA IPC handles: kloop's pid namespace, /proc read-only");
	free_argv(v);

	/* MPS (mps.h): its variables reach every runner; a GPU runner also sees
	 * the pipe directory and the host's /dev/shm, in its own namespaces
	 * unless KLOOP_MPS_NAMESPACES=share */
	char *pipeDir = xasprintf("%s/mps", dir);
	(void)!mkdir(pipeDir, 0700);
	setenv("CUDA_MPS_PIPE_DIRECTORY", pipeDir, 1);
	v = cand_runner_argv(&host, "/bin/true", 0);
	CHECK(has3(v, "--setenv", "CUDA_MPS_PIPE_DIRECTORY", pipeDir) && argi(v, "/dev/shm") < 0 &&
	          argi(v, "--unshare-ipc") > 0,
	      "host runner under MPS: the variable set, nothing more bound or shared");
	free_argv(v);
	v = cand_runner_argv(&gpu, "/bin/true", 0);
	CHECK(has3(v, "--setenv", "CUDA_MPS_PIPE_DIRECTORY", pipeDir) &&
	          has3(v, "--ro-bind", pipeDir, pipeDir) &&
	          has3(v, "--bind-try", "/dev/shm", "/dev/shm") && argi(v, "--unshare-ipc") > 0 &&
	          argi(v, "--tmpfs") < argi(v, pipeDir),
	      "GPU runner under MPS: the pipe directory (over the private /tmp) and /dev/shm");
	if (cand_sandbox_probe(err) == 0) {
		char *cmd = xasprintf("test \"$CUDA_MPS_PIPE_DIRECTORY\" = %s && test -d %s",
		                      pipeDir, pipeDir);
		int st = run_bwrap(v, cmd, out, sizeof out);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "inside the GPU runner's sandbox the pipe directory is there and named (%s)",
		      out);
		free(cmd);
	}
	free_argv(v);
	setenv("KLOOP_MPS_NAMESPACES", "share", 1);
	v = cand_runner_argv(&gpu, "/bin/true", 0);
	CHECK(argi(v, "--unshare-pid") < 0 && argi(v, "--unshare-ipc") < 0 &&
	          has3(v, "--ro-bind", "/proc", "/proc"),
	      "KLOOP_MPS_NAMESPACES=share: the GPU runner keeps kloop's pid and IPC namespaces");
	free_argv(v);
	unsetenv("KLOOP_MPS_NAMESPACES");
	unsetenv("CUDA_MPS_PIPE_DIRECTORY");
	free(pipeDir);
	unsetenv("LD_LIBRARY_PATH");
	if (ldSaved)
		setenv("LD_LIBRARY_PATH", ldSaved, 1);
	free(ldSaved);
	free(ld);
	char *rm = xasprintf("rm -rf %s", dir);
	(void)!system(rm);
	free(rm);
	free(real), free(link), free(viaLink), free(mark);
}

/* a fast GPU run's time where CUPTI gave its kernels' (issue 39): the
 * figures are an H200's, 26_GELU's 4.1 us kernel read 5.07 us by events */
static void kernel_time_tests(void)
{
	int gap = -1;
	double t = cand_kernel_time(0.0041, 0.00507, 1, &gap);
	CHECK(t == 0.0041 && gap == 0,
	      "a 4.1 us kernel whose events read 5.07 us: the kernel's time (%g ms)", t);
	t = cand_kernel_time(0.0079, 0.00867, 2, &gap);
	CHECK(t == 0.0079 && gap == 0, "two kernels (94_MSELoss) with a launch between: theirs");
	t = cand_kernel_time(0.0041, 0.0641, 1, &gap);
	CHECK(t == 0.0641 && gap == 1,
	      "a kernel after 60 us on the host: the events' time, which holds the host's work "
	      "(%g ms)",
	      t);
	t = cand_kernel_time(2.0, 2.15, 1, &gap);
	CHECK(t == 2.0 && gap == 0, "a 2 ms kernel within a tenth of its events: its own");
	t = cand_kernel_time(0.01, 0.009, 1, &gap);
	CHECK(t == 0.01 && gap == 1,
	      "kernels reported longer than the events around them: flagged, the longer time");
}

int main(void)
{
	char err[KL_ERRLEN];
	runner_argv_tests();
	kernel_time_tests();
	CHECK(proc_secret_name("OPENAI_API_KEY") && proc_secret_name("ANTHROPIC_API_KEY") &&
	          proc_secret_name("github_token") && proc_secret_name("DB_PASSWORD") &&
	          proc_secret_name("AWS_SECRET_ACCESS_KEY"),
	      "API keys, tokens, passwords and secrets are recognised by name");
	CHECK(!proc_secret_name("PATH") && !proc_secret_name("HOME") &&
	          !proc_secret_name("CUDA_VISIBLE_DEVICES") && !proc_secret_name("KLOOP_CC"),
	      "PATH, HOME, CUDA_VISIBLE_DEVICES and KLOOP_CC are not");

	/* a child started with scrubEnv sees no key */
	setenv("OPENAI_API_KEY", "sk-unit-test-0042", 1);
	setenv("MY_SERVICE_TOKEN", "tok-unit-test-0042", 1);
	char *argv[] = {"sh", "-c", "env; echo END", NULL};
	struct proc_spec s = {
	    .argv = argv, .stdinFd = -1, .stdoutFd = -1, .stderrFd = -1, .scrubEnv = 1};
	int out;
	pid_t pid = proc_spawn(&s, &out, NULL, err);
	strbuf sb = STRBUF_INIT;
	char buf[4096];
	ssize_t n;
	for (;;) {
		n = read(out, buf, sizeof buf);
		if (n > 0)
			sb_add(&sb, buf, (size_t)n);
		else if (n == 0 || errno != EAGAIN)
			break;
		else
			usleep(1000);
	}
	close(out);
	waitpid(pid, NULL, 0);
	CHECK(sb.buf && strstr(sb.buf, "END") && strstr(sb.buf, "PATH=") &&
	          !strstr(sb.buf, "unit-test-0042"),
	      "a child started with scrubEnv has PATH but neither key in its environment");
	sb_free(&sb);

	/* a child dies with its parent, even of SIGKILL */
	int pp[2];
	CHECK(pipe(pp) == 0, "a pipe");
	pid_t mid = fork();
	if (mid == 0) {
		char *sl[] = {"sleep", "30", NULL};
		struct proc_spec s2 = {.argv = sl, .stdinFd = -1, .stdoutFd = 2, .stderrFd = 2};
		pid_t c = proc_spawn(&s2, NULL, NULL, err);
		(void)!write(pp[1], &c, sizeof c);
		pause();
		_exit(0);
	}
	pid_t child = 0;
	(void)!read(pp[0], &child, sizeof child);
	kill(mid, SIGKILL);
	waitpid(mid, NULL, 0);
	CHECK(child > 0 && gone(child), "a child of a process killed by SIGKILL is gone too");

	/* cached objects: verified on load, compiled again when changed */
	char cache[] = "/tmp/kloop-test-cand.XXXXXX";
	CHECK(mkdtemp(cache) != NULL, "a cache directory");
	setenv("KLOOP_INCLUDE", "include", 1);
	struct loop *l = loop_new();
	struct compiler *c = compiler_new(l, cache, 1, NULL, err);
	CHECK(c != NULL, "a compiler service");
	const char *src = "#include \"kloop.h\"\nint kl_run(const kl_tensor *i, int ni, kl_tensor "
	                  "*o, int no, void *s)\n{ (void)i; (void)ni; (void)o; (void)no; "
	                  "(void)s; return 0; }\n";
	struct compiled g = {0};
	compiled_wait(l, c, src, "plain.c", 0, &g, err);
	CHECK(g.ok && !g.cached, "a candidate compiles");
	int fd = g.zSo ? compiler_open_so(c, g.zSo, err) : -1;
	CHECK(fd >= 0, "its object opens, matching its SHA-256");
	CHECK(fd >= 0 && write(fd, "x", 1) < 0, "the copy handed to the runner is sealed");
	if (fd >= 0)
		close(fd);
	int so = g.zSo ? open(g.zSo, O_WRONLY | O_APPEND) : -1;
	CHECK(so >= 0 && write(so, "tampered", 8) == 8, "the cached object is changed on disk");
	if (so >= 0)
		close(so);
	fd = compiler_open_so(c, g.zSo, err);
	CHECK(fd < 0 && strstr(err, "does not match the SHA-256"),
	      "a changed object is not loaded: %s", err);
	compiled_wait(l, c, src, "plain.c", 0, &g, err);
	CHECK(g.ok && !g.cached, "the same source is compiled again instead of served changed");
	fd = compiler_open_so(c, g.zSo, err);
	CHECK(fd >= 0, "and the new object opens");
	if (fd >= 0)
		close(fd);

	/* a sandboxed compiler sees only the system, the source's directory and
	 * kloop's include directory */
	if (cand_sandbox_probe(err) < 0) {
		printf("skip - the compiler sandbox: %s\n", err);
	} else {
		char secret[] = "/tmp/kloop-test-secret.XXXXXX";
		int sfd = mkstemp(secret);
		CHECK(sfd >= 0 && write(sfd, "int unit_secret_0042;\n", 22) == 22,
		      "a file outside the candidate's directory");
		close(sfd);
		char *inc = xasprintf("#include \"%s\"\n%s", secret, src);
		compiler_set_sandbox(c, 1);
		compiled_wait(l, c, inc, "inc.c", 0, &g, err);
		CHECK(!g.ok && strstr(g.zLog, "No such file or directory") &&
		          strstr(g.zLog, "runs in a sandbox") &&
		          !strstr(g.zLog, "unit_secret_0042"),
		      "its #include fails in the sandbox with a note saying why");
		compiled_wait(l, c, src, "plain2.c", 0, &g, err);
		CHECK(g.ok, "an ordinary candidate compiles in the sandbox (%s)",
		      g.zLog ? g.zLog : "");
		unlink(secret);
		free(inc);

		/* a header directory reached through a link, and the CUDA
		 * toolkit's through /usr/local/cuda where it is installed */
		char hdr[] = "/tmp/kloop-test-hdr.XXXXXX";
		CHECK(mkdtemp(hdr) != NULL, "a header directory");
		char *h = xasprintf("%s/unit_lib_0042.h", hdr), *ln = xasprintf("%s.link", hdr);
		FILE *f = fopen(h, "w");
		if (f)
			fputs("#define UNIT_LIB_0042 42\n", f), fclose(f);
		CHECK(symlink(hdr, ln) == 0, "a link to it");
		char *libs = access("/usr/local/cuda/include", F_OK) == 0
		                 ? xasprintf("%s,/usr/local/cuda/include", ln)
		                 : xstrdup(ln);
		CHECK(compiler_add_libs(c, libs, ".", err) == 0, "--libs %s (%s)", libs, err);
		char *use = xasprintf("#include \"unit_lib_0042.h\"\n"
		                      "int unit_lib_value = UNIT_LIB_0042;\n%s",
		                      src);
		compiled_wait(l, c, use, "uses_lib.c", 0, &g, err);
		CHECK(g.ok, "a sandboxed compile sees a library's headers through links (%s: %s)",
		      libs, g.zLog ? g.zLog : "");
		char *rmh = xasprintf("rm -rf %s %s", hdr, ln);
		(void)!system(rmh);
		free(rmh), free(use), free(libs), free(h), free(ln);
	}
	compiled_free(&g);
	compiler_free(c);
	loop_free(l);
	char *rm = xasprintf("rm -rf %s", cache);
	(void)!system(rm);
	free(rm);
	return check_done();
}
