/*
 * worker_warm.c - the engine's side of a worker kept warm between two
 * kloop evals (worker/warm.c): the socket's name, a hash of everything the
 * worker's state depends on, and the attach (worker.h).
 */
#include "worker_warm.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "sha256.h"
#include "util.h"
#include "version.h"

/* the environment a worker's state depends on: its tools, libraries,
 * caches, devices and kloop's own settings */
static int env_counts(const char *z)
{
	static const char *const prefixes[] = {"KLOOP_",   "CUDA_",   "NVIDIA_",
	                                       "CUPTI_",   "TORCH_",  "TORCHINDUCTOR_",
	                                       "PYTORCH_", "TRITON_", "CUTLASS_"};
	static const char *const names[] = {"PATH",
	                                    "LD_LIBRARY_PATH",
	                                    "LD_PRELOAD",
	                                    "HOME",
	                                    "XDG_CACHE_HOME",
	                                    "TMPDIR",
	                                    "PYTHONPATH",
	                                    "PYTHONHOME",
	                                    "VIRTUAL_ENV",
	                                    "CC",
	                                    "CXX",
	                                    "NVCC_PREPEND_FLAGS",
	                                    "NVCC_APPEND_FLAGS",
	                                    "LIBRARY_PATH",
	                                    "CPATH",
	                                    "OMP_NUM_THREADS",
	                                    "ASAN_OPTIONS"};
	for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
		if (!strncmp(z, prefixes[i], strlen(prefixes[i])))
			return 1;
	size_t k = strcspn(z, "=");
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (strlen(names[i]) == k && !strncmp(z, names[i], k))
			return 1;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* a file's bytes into the hash, after its name; -1 where it cannot be read
 * or the task's files exceed *pLeft bytes */
static int hash_file(struct sha256 *h, const char *zPath, long long *pLeft)
{
	struct stat st;
	if (stat(zPath, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > *pLeft)
		return -1;
	*pLeft -= st.st_size;
	strbuf sb = STRBUF_INIT;
	char err[KL_ERRLEN];
	int rc = read_file(zPath, &sb, (size_t)st.st_size + 1, err);
	if (rc == 0) {
		sha256_update(h, zPath, strlen(zPath) + 1);
		sha256_update(h, sb.buf, sb.len);
		sha256_update(h, "\n", 1);
	}
	sb_free(&sb);
	return rc;
}

/* the task's files (a directory's, two levels down, or the problem file) */
static int hash_task(struct sha256 *h, const char *zTask, int depth, long long *pLeft, int *pN)
{
	struct stat st;
	if (stat(zTask, &st) < 0)
		return -1;
	if (S_ISREG(st.st_mode))
		return ++*pN > 512 ? -1 : hash_file(h, zTask, pLeft);
	if (!S_ISDIR(st.st_mode) || depth > 2)
		return 0;
	DIR *d = opendir(zTask);
	if (!d)
		return -1;
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		xgrow((void **)&names, &cap, n + 1, sizeof *names);
		names[n++] = xstrdup(e->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, cmp_str);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		char *p = path_join(zTask, names[i]);
		if (rc == 0 && hash_task(h, p, depth + 1, pLeft, pN) < 0)
			rc = -1;
		free(p);
		free(names[i]);
	}
	free(names);
	return rc;
}

char *worker_warm_dir(char *err)
{
	/* the runtime directory where it is this user's (root under sudo -E
	 * would make its kloop/ there, another user's, and refuse it them) */
	const char *run = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	char *dir =
	    run && *run && access(run, W_OK) == 0 && stat(run, &st) == 0 && st.st_uid == getuid()
	        ? path_join(run, "kloop")
	        : xasprintf("/tmp/kloop-warm-%u", (unsigned)getuid());
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		kl_err(err, "%s: %s", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 077)) {
		kl_err(err, "%s is not a directory of this user's alone (mode 0700)", dir);
		free(dir);
		return NULL;
	}
	return dir;
}

char *worker_warm_path(char *const *argv, const char *zTaskLine, const char *zTask, char *err)
{
	struct sha256 h;
	sha256_init(&h);
	sha256_update(&h, KLOOP_VERSION, sizeof KLOOP_VERSION);
	/* the worker's binary: rebuilt, it is another worker */
	char *exe = argv[0] ? realpath(argv[0], NULL) : NULL;
	struct stat st;
	if (!exe || stat(exe, &st) < 0) {
		free(exe);
		return kl_err(err, "the worker's binary %s cannot be found",
		              argv[0] ? argv[0] : ""),
		       NULL;
	}
	char id[128];
	snprintf(id, sizeof id, "|%lld|%lld.%09ld|", (long long)st.st_size,
	         (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	sha256_update(&h, exe, strlen(exe));
	sha256_update(&h, id, strlen(id));
	/* and what it loads from beside it: kloop's GPU kernels (the checks,
	 * the inputs' draws, the profiler) and the PyTorch helper */
	char *sl = strrchr(exe, '/');
	if (sl)
		*sl = 0;
	static const char *const beside[] = {"libkloop-cuda.so",
	                                     "../engine/measure/reference/torchref.py",
	                                     "../share/kloop/torchref.py"};
	for (size_t i = 0; sl && i < sizeof beside / sizeof *beside; i++) {
		char *p = path_join(exe, beside[i]);
		if (stat(p, &st) == 0) {
			snprintf(id, sizeof id, "|%lld|%lld.%09ld|", (long long)st.st_size,
			         (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
			sha256_update(&h, p, strlen(p) + 1);
			sha256_update(&h, id, strlen(id));
		}
		free(p);
	}
	free(exe);
	for (int i = 0; argv[i]; i++)
		sha256_update(&h, argv[i], strlen(argv[i]) + 1);
	char *cwd = getcwd(NULL, 0);
	if (cwd)
		sha256_update(&h, cwd, strlen(cwd) + 1);
	free(cwd);
	sha256_update(&h, zTaskLine, strlen(zTaskLine) + 1);
	extern char **environ;
	size_t n = 0;
	for (char **e = environ; *e; e++)
		n++;
	char **env = xcalloc(n + 1, sizeof *env);
	size_t k = 0;
	for (char **e = environ; *e; e++)
		if (env_counts(*e))
			env[k++] = *e;
	qsort(env, k, sizeof *env, cmp_str);
	for (size_t i = 0; i < k; i++)
		sha256_update(&h, env[i], strlen(env[i]) + 1);
	free(env);
	long long left = 64ll << 20;
	int nFiles = 0;
	if (hash_task(&h, zTask, 0, &left, &nFiles) < 0)
		return kl_err(err,
		              "the task's files (%s) could not all be read, or exceed 512 "
		              "files or 64 MB",
		              zTask),
		       NULL;
	char hex[65];
	sha256_hex(&h, hex);
	char *dir = worker_warm_dir(err);
	if (!dir)
		return NULL;
	char *p = xasprintf("%s/w-%.20s", dir, hex);
	free(dir);
	if (strlen(p) + 6 > sizeof(((struct sockaddr_un *)0)->sun_path)) {
		kl_err(err, "the socket path %s is too long", p);
		free(p);
		return NULL;
	}
	return p;
}

int worker_warm_attach(const char *zPath, int *pSock, int *pErr, int *pPid)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof a.sun_path, "%s", zPath);
	/* not blocking: a worker whose queue is full (busy, connections
	 * abandoned in it) refuses at once (EAGAIN) rather than holding us */
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return -1;
	if (connect(s, (struct sockaddr *)&a, sizeof a) < 0) {
		/* a worker that died without removing its name: gone now */
		if (errno == ECONNREFUSED)
			unlink(zPath);
		close(s);
		return -1;
	}
	struct ucred cr;
	socklen_t n = sizeof cr;
	int ep[2];
	if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &n) < 0 || cr.uid != getuid() ||
	    pipe2(ep, O_CLOEXEC) < 0) {
		close(s);
		return -1;
	}
	/* the attach line, and the write end of our pipe for its stderr */
	static const char line[] = "{\"op\":\"attach\"}\n";
	struct iovec io = {.iov_base = (void *)line, .iov_len = sizeof line - 1};
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof u);
	struct msghdr m = {
	    .msg_iov = &io, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &ep[1], sizeof(int));
	ssize_t w = sendmsg(s, &m, MSG_NOSIGNAL);
	close(ep[1]);
	/* its hello within a second, else it is busy with another kloop (the
	 * connection waits in its queue) or stuck: a worker of our own then */
	struct pollfd p = {.fd = s, .events = POLLIN};
	char ch;
	if (w != (ssize_t)io.iov_len || poll(&p, 1, 1000) <= 0 || recv(s, &ch, 1, MSG_PEEK) != 1) {
		close(s);
		close(ep[0]);
		return -1;
	}
	*pSock = s;
	*pErr = ep[0];
	*pPid = cr.pid;
	return 0;
}

/* the pid listening on zSock, 0 where one does whose queue is full (busy:
 * not waited for), or -1 where nothing does (the name is stale) */
static int listener(const char *zSock)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(zSock) >= sizeof a.sun_path)
		return -1;
	snprintf(a.sun_path, sizeof a.sun_path, "%s", zSock);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return -1;
	struct ucred cr = {0};
	socklen_t n = sizeof cr;
	int pid = -1;
	if (connect(s, (struct sockaddr *)&a, sizeof a) == 0)
		pid = getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &n) == 0 && cr.uid == getuid()
		          ? cr.pid
		          : -1;
	else if (errno == EAGAIN)
		pid = 0;
	close(s);
	return pid;
}

static void copy_str(char *dst, size_t n, const cJSON *o, const char *zKey)
{
	const char *z = cJSON_GetStringValue(cJSON_GetObjectItem(o, zKey));
	snprintf(dst, n, "%s", z ? z : "");
}

int worker_warm_list(struct warm_entry **pa, char *err)
{
	*pa = NULL;
	char *dir = worker_warm_dir(err);
	if (!dir)
		return -1;
	DIR *d = opendir(dir);
	struct warm_entry *a = NULL;
	size_t cap = 0;
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (strncmp(e->d_name, "w-", 2) || len < 7 || strcmp(e->d_name + len - 5, ".json"))
			continue;
		char *info = path_join(dir, e->d_name);
		char *sock = xstrndup(info, strlen(info) - 5);
		strbuf sb = STRBUF_INIT;
		cJSON *o = read_file(info, &sb, 1 << 16, err) == 0 ? cJSON_Parse(sb.buf) : NULL;
		sb_free(&sb);
		int pid = listener(sock);
		int said = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "pid"));
		if (pid < 0) {
			/* a worker gone without removing its names */
			unlink(sock);
			unlink(info);
		}
		if (pid > 0 && o && pid == said) {
			xgrow((void **)&a, &cap, (size_t)n + 1, sizeof *a);
			struct warm_entry *w = &a[n++];
			memset(w, 0, sizeof *w);
			w->pid = pid;
			copy_str(w->zState, sizeof w->zState, o, "state");
			copy_str(w->zTask, sizeof w->zTask, o, "task");
			copy_str(w->zBackend, sizeof w->zBackend, o, "backend");
			copy_str(w->zDevice, sizeof w->zDevice, o, "device");
			copy_str(w->zUuid, sizeof w->zUuid, o, "uuid");
			w->since = cJSON_GetNumberValue(cJSON_GetObjectItem(o, "since"));
			w->evals = cJSON_GetNumberValue(cJSON_GetObjectItem(o, "evals"));
			w->lingerS = cJSON_GetNumberValue(cJSON_GetObjectItem(o, "linger_s"));
			w->zSock = sock;
			sock = NULL;
		}
		cJSON_Delete(o);
		free(sock);
		free(info);
	}
	if (d)
		closedir(d);
	free(dir);
	*pa = a;
	return n;
}

void worker_warm_list_free(struct warm_entry *a, int n)
{
	for (int i = 0; i < n; i++)
		free(a[i].zSock);
	free(a);
}
