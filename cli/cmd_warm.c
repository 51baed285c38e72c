/*
 * cmd_warm.c - `kloop warm [stop]`: the workers kloop eval kept warm for
 * the next eval of their task (worker/warm.c), listed from the
 * descriptions beside their sockets, or ended.
 */
#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "util.h"
#include "worker_warm.h"

static const struct cmd_entry *self = &cmd_warm_entry;

/* the pid listening on zSock, or -1 where nothing does (the name is stale) */
static int listener(const char *zSock)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(zSock) >= sizeof a.sun_path)
		return -1;
	snprintf(a.sun_path, sizeof a.sun_path, "%s", zSock);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	struct ucred cr = {0};
	socklen_t n = sizeof cr;
	int pid = connect(s, (struct sockaddr *)&a, sizeof a) == 0 &&
	                  getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &n) == 0 && cr.uid == getuid()
	              ? cr.pid
	              : -1;
	close(s);
	return pid;
}

static int exec_warm(int argc, char **argv)
{
	static const char *const subs[] = {"stop"};
	int stop = argc == 2 && !strcmp(argv[1], "stop");
	if (argc > 2 || (argc == 2 && !stop))
		return cmd_sub_usage(self, argv[1], subs, 1);
	char err[KL_ERRLEN];
	char *dir = worker_warm_dir(err);
	if (!dir) {
		fprintf(stderr, "kloop: %s\n", err);
		return 2;
	}
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	time_t now = time(NULL);
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
		if (pid <= 0 || !o || pid != said) {
			/* a worker gone without removing its names */
			if (pid <= 0)
				unlink(sock), unlink(info);
		} else if (stop) {
			kill(pid, SIGTERM);
			printf("stopped the warm worker %d (%s)\n", pid,
			       cJSON_GetStringValue(cJSON_GetObjectItem(o, "task")));
			n++;
		} else {
			double since = cJSON_GetNumberValue(cJSON_GetObjectItem(o, "since"));
			char *task =
			    term_clean(cJSON_GetStringValue(cJSON_GetObjectItem(o, "task")), 0);
			char *dev =
			    term_clean(cJSON_GetStringValue(cJSON_GetObjectItem(o, "device")), 0);
			printf("pid %d  task %s  %s on %s  %s %.0f s, %g eval%s, waits %g s  %s\n",
			       pid, task, cJSON_GetStringValue(cJSON_GetObjectItem(o, "backend")),
			       dev, cJSON_GetStringValue(cJSON_GetObjectItem(o, "state")),
			       difftime(now, (time_t)since),
			       cJSON_GetNumberValue(cJSON_GetObjectItem(o, "evals")),
			       cJSON_GetNumberValue(cJSON_GetObjectItem(o, "evals")) == 1 ? ""
			                                                                  : "s",
			       cJSON_GetNumberValue(cJSON_GetObjectItem(o, "linger_s")), sock);
			free(task);
			free(dev);
			n++;
		}
		cJSON_Delete(o);
		free(sock);
		free(info);
	}
	if (d)
		closedir(d);
	if (!n)
		printf("no worker is kept warm (%s)\n", dir);
	free(dir);
	return 0;
}

const struct cmd_entry cmd_warm_entry = {
    .name = "warm",
    .usage = "[stop]",
    .help = "the workers kloop eval keeps warm for the next eval of their task (kloop eval "
            "--warm): list them, or stop them",
    .exec = exec_warm,
};
