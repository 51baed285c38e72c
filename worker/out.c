/*
 * worker/out.c - the bottom of kloop-worker: its one state W, what goes to
 * the engine (events, errors, progress: one JSON line each on the private
 * protocol descriptor) and the runners' memory limit.  It calls nothing of
 * the worker's other files; they all call it (kworker.h).
 */
#include "kworker.h"

struct kworker_state kworker_w;

/* ---- protocol out ---- */

void kworker_relay_drain(void)
{
	char buf[65536];
	ssize_t r;
	while (W.relayFd >= 0 && (r = read(W.relayFd, buf, sizeof buf)) > 0)
		if (W.errOut >= 0 && write_all(W.errOut, buf, (size_t)r) < 0) {
			close(W.errOut); /* the engine's stderr is gone: dropped */
			W.errOut = -1;
		}
}

void kworker_send_json(cJSON *o)
{
	/* what the runners wrote before this event reaches the engine first
	 * (a crash's last output, read when its result comes) */
	kworker_relay_drain();
	char *z = cJSON_PrintUnformatted(o);
	size_t n = strlen(z);
	z = xrealloc(z, n + 2);
	z[n] = '\n';
	if (write_all(W.out, z, n + 1) < 0)
		_exit(4); /* the engine is gone */
	free(z);
	cJSON_Delete(o);
}

void kworker_send_ready(cJSON *o)
{
	if (!W.tReady)
		W.tReady = now_s();
	if (W.warmFd >= 0) {
		cJSON_Delete(W.readyMsg);
		W.readyMsg = cJSON_Duplicate(o, 1);
	}
	kworker_send_json(o);
}

void kworker_send_error(int job, const char *zMsg, int fatal)
{
	kworker_send_json(protocol_error(job, zMsg, fatal));
}

void kworker_send_progress(int job, const char *zStage, int k)
{
	kworker_send_json(protocol_progress(job, zStage, k));
}

void kworker_peaks(void)
{
	static int done;
	char merr[KL_ERRLEN];
	if (done++)
		return;
	peaks_get(W.b, W.zCacheDir, 0, &W.roof.pk, merr, sizeof merr);
	if (merr[0])
		fprintf(stderr, "kloop-worker: warning: %s\n", merr);
}

/* the host backend's memory limit in MiB (0: none) */
long long kworker_mem_limit_mb(void)
{
	const char *env = getenv("KLOOP_MEM_LIMIT_MB");
	long long mb = env && *env ? atoll(env) : 0;
	if (mb <= 0) {
		long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
		mb = pages > 0 && size > 0 ? (long long)pages * size / 2 / (1 << 20) : 0;
	}
	return mb;
}
