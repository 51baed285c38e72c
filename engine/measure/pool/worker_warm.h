/*
 * worker_warm.h - a kloop-worker kept warm between two kloop evals (the
 * worker's side: worker/warm.c): the socket it waits on, named by a hash of
 * what its state depends on, and the attach of the next engine.
 */
#ifndef KL_WORKER_WARM_H
#define KL_WORKER_WARM_H

/* the directory of the warm workers' sockets, this user's alone (made
 * 0700: $XDG_RUNTIME_DIR/kloop, else /tmp/kloop-warm-UID); NULL + err */
char *worker_warm_dir(char *err);

/* the socket of a worker launched by argv for the task request zTaskLine
 * on task zTask (a directory or a problem file): a hash of kloop's version,
 * the worker's binary (path, size, time), argv, the working directory, the
 * request, the environment the worker depends on and the task's files;
 * NULL + err where there can be none */
char *worker_warm_path(char *const *argv, const char *zTaskLine, const char *zTask, char *err);

/* attach to the warm worker waiting on zPath: 0 with the connection in
 * *pSock (its hello waiting to be read), the read end of the pipe it now
 * writes its stderr to in *pErr, its pid in *pPid; -1 where none waits
 * there (a stale name is removed) or it did not answer within a second */
int worker_warm_attach(const char *zPath, int *pSock, int *pErr, int *pPid);

/* a warm worker as its description beside its socket says (SOCKET.json,
 * worker/warm.c), trusted only where the socket's listener is that pid */
struct warm_entry {
	int pid;
	char zState[16]; /* "busy" or "idle" */
	double since;    /* when it became so (time(), s) */
	char zTask[128], zBackend[16], zDevice[256];
	char zUuid[96]; /* its GPU's UUID, "" where none (the host, an older worker) */
	double evals, lingerS;
	char *zSock;
};

/* the warm workers of this user, into *pa (n of them, the caller frees
 * them with worker_warm_list_free); the names of one gone are removed;
 * -1 + err where there is no directory */
int worker_warm_list(struct warm_entry **pa, char *err);
void worker_warm_list_free(struct warm_entry *a, int n);

#endif
