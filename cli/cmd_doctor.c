/*
 * cmd_doctor.c - `kloop doctor`: what kloop can use on this machine
 * (compilers, GPU, Python and PyTorch, the grammar, the configuration, the
 * LLM provider, model and endpoint, tried with a real request, and the
 * keys), each on one line, never printing a key.
 */
#include <cJSON.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "cand.h"
#include "cgroup.h"
#include "confine.h"
#include "cuda_target.h"
#include "cmd.h"
#include "compile.h"
#include "config.h"
#include "doctor_workers.h"
#include "flags.h"
#include "llm_config.h"
#include "mps.h"
#include "proc.h"
#include "task.h"
#include "torchref.h"
#include "libs.h"
#include "peaks.h"
#include "torch_real.h"
#include "util.h"
#include "worker_warm.h"

static int json;
static cJSON *report;

static void line(const char *zWhat, int ok, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void line(const char *zWhat, int ok, const char *fmt, ...)
{
	strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (json) {
		/* one key per check: a second line of the same check (two keys
		 * looked at) joins the first one's details; it is ok when one is */
		cJSON *o = cJSON_GetObjectItem(report, zWhat);
		if (o) {
			const char *d = cJSON_GetStringValue(cJSON_GetObjectItem(o, "detail"));
			char *both = xasprintf("%s; %s", d ? d : "", sb.buf);
			cJSON_ReplaceItemInObject(o, "detail", cJSON_CreateString(both));
			free(both);
			/* one of them is enough (a key for either provider) */
			if (ok)
				cJSON_ReplaceItemInObject(o, "ok", cJSON_CreateBool(1));
		} else {
			o = cJSON_AddObjectToObject(report, zWhat);
			cJSON_AddBoolToObject(o, "ok", ok);
			cJSON_AddStringToObject(o, "detail", sb.buf);
		}
	} else {
		printf("%-11s %s  %s\n", zWhat, ok ? "ok " : "-- ", sb.buf);
	}
	sb_free(&sb);
}

/*
 * The libraries candidates can link (cuBLAS, cuBLASLt, cuDNN, CUTLASS: found
 * or not; missing ones are fine unless a task names them) and those the
 * configuration's libs = names (each must be found).
 */
static void check_libs(const char *zConfigured)
{
	char err[KL_ERRLEN];
	for (int i = 0; libs_known[i]; i++) {
		struct libs L = {0};
		char key[64];
		snprintf(key, sizeof key, "lib %s", libs_known[i]);
		if (libs_add(&L, libs_known[i], NULL, err) == 0)
			line(key, 1, "%s", L.a[0].zFound);
		else
			line(key, 0, "not found (only tasks that name it need it): %s", err);
		libs_free(&L);
	}
	char *p = xstrdup(zConfigured ? zConfigured : "");
	for (char *save, *w = strtok_r(p, " ,", &save); w; w = strtok_r(NULL, " ,", &save)) {
		struct libs L = {0};
		char key[160];
		snprintf(key, sizeof key, "libs= %s", w);
		if (libs_add(&L, w, NULL, err) == 0)
			line(key, 1, "%s", L.a[0].zFound);
		else
			line(key, 0, "%s (named by libs= in the config)", err);
		libs_free(&L);
	}
	free(p);
}

/* the first line of `cmd --version` (nvcc: its last line), or NULL */
static char *version(const char *cmd, int last)
{
	char *argv[] = {(char *)cmd, "--version", NULL};
	char *out = NULL;
	int st = proc_capture(argv, &out, 1 << 16);
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		free(out);
		return NULL;
	}
	char *s = out, *e;
	if (last) {
		e = out + strlen(out);
		while (e > out && e[-1] == '\n')
			*--e = 0;
		s = strrchr(out, '\n');
		s = s ? s + 1 : out;
	}
	e = strchr(s, '\n');
	char *r = e ? xstrndup(s, (size_t)(e - s)) : xstrdup(s);
	free(out);
	return r;
}

static void tool(const char *zWhat, const char *env, const char *dflt, int last)
{
	const char *cmd = getenv(env) && *getenv(env) ? getenv(env) : dflt;
	char *v = version(cmd, last);
	line(zWhat, v != NULL, "%s: %s", cmd, v ? v : "not found");
	free(v);
}

static size_t sink(char *p, size_t size, size_t n, void *arg)
{
	strbuf *sb = arg;
	if (sb->len < 65536)
		sb_add(sb, p, size * n);
	return size * n;
}

/*
 * The LLM lines: the provider, model and base URL the configuration (and
 * the flags) name, and the endpoint tried: GET BASE/models (OpenAI) or
 * BASE/v1/models (Anthropic) with the key, within timeoutS.
 */
static void llm_lines(const struct config *cfg, double timeoutS)
{
	struct llm_config lc;
	char err[KL_ERRLEN];
	if (!cfg->zProvider || !*cfg->zProvider) {
		line("llm", 0,
		     "no LLM provider is configured (give --provider openai|anthropic|command with "
		     "--model and --base-url, or set provider, model and base_url in %s)",
		     "$XDG_CONFIG_HOME/kloop/config");
		return;
	}
	int rc = llm_config_from(&lc, cfg, err);
	int anth = !strcmp(cfg->zProvider, "anthropic");
	const char *base = cfg->zBaseUrl && *cfg->zBaseUrl ? cfg->zBaseUrl
	                   : anth                          ? "https://api.anthropic.com"
	                                                   : "https://api.openai.com/v1";
	if (!strcmp(cfg->zProvider, "command")) {
		line("llm", rc == 0, "provider command, model %s, command %s%s%s",
		     cfg->zModel ? cfg->zModel : "(none)", cfg->zCommand ? cfg->zCommand : "(none)",
		     rc ? ": " : "", rc ? err : "");
		return;
	}
	line("llm", rc == 0, "provider %s, model %s, base URL %s%s%s", cfg->zProvider,
	     cfg->zModel && *cfg->zModel ? cfg->zModel : "(none)", base, rc ? ": " : "",
	     rc ? err : "");
	if (rc < 0)
		return;
	char *url = xasprintf("%s%s/models", base, anth && !strstr(base, "/v1") ? "/v1" : "");
	/* trailing slashes of the base do not double */
	for (char *p = strstr(url, "//models"); p; p = strstr(url, "//models"))
		memmove(p, p + 1, strlen(p));
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	strbuf body = STRBUF_INIT;
	if (lc.zApiKey && *lc.zApiKey) {
		char *hd = anth ? xasprintf("x-api-key: %s", lc.zApiKey)
		                : xasprintf("Authorization: Bearer %s", lc.zApiKey);
		h = curl_slist_append(h, hd);
		free(hd);
	}
	if (anth)
		h = curl_slist_append(h, "anthropic-version: 2023-06-01");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(timeoutS * 1000));
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(timeoutS * 1000));
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
	CURLcode cr = curl_easy_perform(c);
	long status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (cr != CURLE_OK) {
		line("endpoint", 0, "GET %s: %s", url, curl_easy_strerror(cr));
	} else if (status >= 200 && status < 300) {
		cJSON *j = cJSON_ParseWithLength(body.buf ? body.buf : "", body.len);
		cJSON *data = cJSON_GetObjectItem(j, "data");
		int n = cJSON_IsArray(data) ? cJSON_GetArraySize(data) : -1, found = 0;
		cJSON *m;
		cJSON_ArrayForEach(m, data)
		{
			const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(m, "id"));
			found |= id && cfg->zModel && !strcmp(id, cfg->zModel);
		}
		if (n < 0)
			line("endpoint", 1, "GET %s: HTTP %ld", url, status);
		else
			line("endpoint", 1, "GET %s: HTTP %ld, %d model%s%s", url, status, n,
			     n == 1 ? "" : "s",
			     found ? ", the configured one among them"
			           : ", the configured model is not listed");
		cJSON_Delete(j);
	} else {
		line("endpoint", status == 404 || status == 405, "GET %s: HTTP %ld%s", url, status,
		     status == 401 || status == 403 ? " (the key was refused)"
		     : status == 404 || status == 405
		         ? " (the server answers but lists no models; requests may still work)"
		         : "");
	}
	sb_free(&body);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	free(url);
}

/*
 * The GPU target candidates are built for (cuda_target.h): the device's
 * (compute capability major.minor, 0.0: no GPU here), as the worker chooses
 * it; with --json its name, the device's compute capability and nvcc's flag
 * beside the line's words.
 */
static void target_line(int major, int minor)
{
	char err[KL_ERRLEN], d[800];
	const char *over = getenv("KLOOP_CUDA_ARCH"), *nvcc = getenv("KLOOP_NVCC");
	struct cuda_target t;
	if (major <= 0 && !(over && *over)) {
		line("target", 0,
		     "no GPU here: on one, candidates are built for its arch-specific target "
		     "(compute capability 9.0: sm_90a, 10.x: sm_10xa, 12.x: sm_12xa), else its "
		     "sm_XY; KLOOP_CUDA_ARCH chooses another");
		return;
	}
	if (cuda_target_choose(&t, major, minor, over, nvcc && *nvcc ? nvcc : "nvcc", err) < 0) {
		line("target", 0, "%s", err);
		return;
	}
	cuda_target_describe(&t, d, sizeof d);
	line("target", !t.zNote[0], "%s%s", d,
	     major > 0 ? "" : " (no GPU here to check it against)");
	cJSON *o = json ? cJSON_GetObjectItem(report, "target") : NULL;
	if (o) {
		char cc[16] = "";
		if (major > 0)
			snprintf(cc, sizeof cc, "%d.%d", major, minor);
		char *gen = cuda_target_gencode(t.zName);
		cJSON_AddStringToObject(o, "name", t.zName);
		cJSON_AddStringToObject(o, "device_cc", cc);
		cJSON_AddStringToObject(o, "flag", gen);
		free(gen);
	}
}

/* the GPU's dense peaks per compute type (peaks.h): with measure, measured
 * now (and cached for the workers), else the cached ones; one line, and
 * in --json the whole object */
static void peaks_lines(struct backend *b, int measure)
{
	struct peaks pk;
	char warn[2 * KL_ERRLEN], key[512];
	char *dir = cache_dir_default();
	peaks_key(b, key, sizeof key);
	char *path = peaks_cache_path(dir, key);
	double bw = 0, fma = 0;
	char merr[KL_ERRLEN];
	if (measure) {
		peaks_get(b, dir, 1, &pk, warn, sizeof warn);
		/* fp32: kloop's FMA kernel, as a worker measures it at every start */
		if (b->measure && b->measure(b, &bw, &fma, merr) < 0)
			fma = 0;
	} else {
		memset(&pk, 0, sizeof pk);
		peaks_datasheet(b->zDevice, &pk);
		warn[0] = 0;
		if (peaks_load(path, key, &pk, warn) == 0) {
			line("peaks", 1,
			     "not measured on this device yet (a worker measures them at its first "
			     "start; kloop doctor --peaks measures them now)%s%s",
			     pk.zDatasheet ? "; the datasheet's: " : "",
			     pk.zDatasheet ? pk.zDatasheet : "");
			goto done;
		}
	}
	pk.measured[TASK_FP32] = fma;
	strbuf sb = STRBUF_INIT;
	if (measure)
		sb_addf(&sb, "measured in %.2f s", pk.seconds);
	else
		sb_addf(&sb, "cached (measured in %.2f s)", pk.seconds);
	if (pk.clockMhz > 0)
		sb_addf(&sb, " at %.0f MHz (%s)", pk.clockMhz, pk.zClockFrom ? pk.zClockFrom : "");
	sb_addf(&sb, ", TFLOP/s measured (datasheet%s%s):", pk.zDatasheet ? " " : ": none",
	        pk.zDatasheet ? pk.zDatasheet : "");
	for (int c = 0; c < TASK_NCOMPUTE; c++) {
		if (!(pk.measured[c] > 0) && !(pk.datasheet[c] > 0))
			continue;
		sb_addf(&sb, " %s ", task_compute_name(c));
		if (pk.measured[c] > 0)
			sb_addf(&sb, "%.4g", pk.measured[c]);
		else
			sb_adds(&sb, "-");
		if (pk.datasheet[c] > 0)
			sb_addf(&sb, " (%.4g)", pk.datasheet[c]);
	}
	if (measure)
		sb_addf(&sb, "; cached in %s", path);
	if (warn[0])
		sb_addf(&sb, "; %s", warn);
	line("peaks", !warn[0], "%s", sb.buf);
	sb_free(&sb);
	if (json)
		cJSON_AddItemToObject(cJSON_GetObjectItem(report, "peaks"), "peaks",
		                      peaks_json(&pk));
done:
	free(path);
	free(dir);
}

/* replace *pz by a copy of z */
/* the workers kloop eval keeps warm for the next eval of their task
 * (worker_warm.h): how many, of which tasks, and what holds them */
static void warm_line(void)
{
	char err[KL_ERRLEN];
	struct warm_entry *a;
	int n = worker_warm_list(&a, err);
	if (n < 0) {
		line("warm", 1, "kloop eval keeps no worker warm here: %s", err);
		return;
	}
	strbuf sb = STRBUF_INIT;
	for (int i = 0; i < n && i < 4; i++) {
		char *task = term_clean(a[i].zTask, 0);
		sb_addf(&sb, "%s%s (pid %d, %s)", i ? ", " : ": ", task, a[i].pid, a[i].zState);
		free(task);
	}
	if (n > 4)
		sb_addf(&sb, " and %d more", n - 4);
	line("warm", 1,
	     "%d worker%s kept warm for the next kloop eval of %s%s (kloop warm lists them, "
	     "kloop warm stop ends them; kloop eval --warm S or the config's warm: how long)",
	     n, n == 1 ? "" : "s", n == 1 ? "its task" : "their tasks", sb.len ? sb.buf : "");
	sb_free(&sb);
	worker_warm_list_free(a, n);
}

static void set(char **pz, const char *z)
{
	free(*pz);
	*pz = xstrdup(z);
}

static int exec_doctor(int argc, char **argv)
{
	struct flags f;
	int frc = flags_parse(&cmd_doctor_entry, FL_DOCTOR, argc, argv, 0, 0, &f);
	if (frc)
		return frc;
	json = f.json;
	const char *zProv = f.zProvider, *zModel = f.zModel, *zBase = f.zBaseUrl;
	/* --workers alone: the configured workers; --workers=SPEC: those */
	int workers = f.zWorkers != NULL;
	const char *zWorkers = f.zWorkers && *f.zWorkers ? f.zWorkers : NULL;
	double timeoutS = f.timeoutS > 0 ? f.timeoutS : 5;
	int peaks = f.peaks;
	/* --python: the interpreter to check (the fix doctor itself advises) */
	char *zPy = f.cfg.zPython ? xstrdup(f.cfg.zPython) : NULL;
	flags_free(&f);
	report = cJSON_CreateObject();
	char err[KL_ERRLEN];
	struct config cfg;
	int cfgOk = config_load(&cfg, err) == 0;
	if (zProv)
		set(&cfg.zProvider, zProv);
	if (zModel)
		set(&cfg.zModel, zModel);
	if (zBase)
		set(&cfg.zBaseUrl, zBase);
	if (zPy)
		set(&cfg.zPython, zPy);
	free(zPy);
	char *cp = config_path();
	if (!cfgOk)
		line("config", 0, "%s", err);
	else
		line("config", 1, "%s%s", cp, cfg.zPath ? "" : " (not present; defaults in use)");
	free(cp);
	tool("cc", "KLOOP_CC", "cc", 0);
	tool("c++", "KLOOP_CXX", "c++", 0);
	tool("nvcc", "KLOOP_NVCC", "nvcc", 1);
	/* the staged CUDA build puts an edit's device code into the kept host
	 * object with objcopy (compile_argv.c) */
	char *oc = version("objcopy", 0);
	if (oc)
		line("cuda edits", 1,
		     "objcopy: %s: an edit inside a kernel compiles only its device code, into the "
		     "host object kept from an earlier build",
		     oc);
	else
		line(
		    "cuda edits", 0,
		    "objcopy is not found: every CUDA source is compiled whole (install binutils)");
	free(oc);
	char *w = path_join(exe_dir(), "kloop-worker");
	line("worker", access(w, X_OK) == 0, "%s%s", w,
	     access(w, X_OK) == 0 ? "" : " is missing (run make)");
	free(w);
	char *h = path_join(compile_include_dir(), "kloop.h");
	line("abi", path_exists(h), "%s%s", h, path_exists(h) ? "" : " is missing");
	free(h);
	line("tasks", path_exists(task_bundled_dir()), "%s", task_bundled_dir());
	struct backend *b = backend_cuda_new(0, err);
	int haveGpu = b != NULL;
	if (b) {
		line("gpu", 1, "%s", b->zDevice);
		target_line(b->ccMajor, b->ccMinor);
		peaks_lines(b, peaks);
		b->destroy(b);
	} else {
		line("gpu", 0, "%s (the host backend is used)", err);
		target_line(0, 0);
		if (peaks)
			line("peaks", 0, "no GPU here: no peaks to measure");
	}
	char mps[1024];
	int mpsOk = mps_describe(cfg.mps, haveGpu, mps, sizeof mps);
	line("mps", mpsOk, "%s", mps);
	const char *py = cfg.zPython ? cfg.zPython : "python3";
	char *argvPy[] = {(char *)py, (char *)torchref_script(), "--check", NULL};
	char *out = NULL;
	int st = proc_capture(argvPy, &out, 1 << 16);
	cJSON *chk = NULL;
	if (out) {
		char *nl = strrchr(out, '{');
		chk = nl ? cJSON_Parse(nl) : NULL;
	}
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || !chk) {
		line("python", 0, "%s cannot be run (set python= in the config or --python)", py);
		line("pytorch", 0, "not checked");
	} else {
		line("python", 1, "%s: Python %s", py,
		     cJSON_GetStringValue(cJSON_GetObjectItem(chk, "python")));
		const char *tv = cJSON_GetStringValue(cJSON_GetObjectItem(chk, "torch"));
		const char *dev = cJSON_GetStringValue(cJSON_GetObjectItem(chk, "device")), *other;
		if (tv)
			line("pytorch", 1, "torch %s%s%s", tv, dev ? " on " : " (no CUDA)",
			     dev ? dev : "");
		else if ((other = torchref_python_with_torch(py)))
			line("pytorch", 0,
			     "PyTorch is not installed for %s; %s has it: give --python %s, or set "
			     "python = %s in the config",
			     py, other, other, other);
		else
			line("pytorch", 0,
			     "PyTorch is not installed for %s (PyTorch references need it)", py);
	}
	cJSON_Delete(chk);
	free(out);
	/* PyTorch's C++ headers: where an extension the stand-in cannot
	 * compile is built (torch_real.h) */
	struct torch_real tr = {0};
	if (torch_real_find(&tr, py) == 0)
		line("torch c++", 1,
		     "%s%s: an extension using what kloop's ATen stand-in lacks is "
		     "built against it",
		     tr.zWhere, tr.cuda ? ", with CUDA" : ", CPU only");
	else
		line("torch c++", 0,
		     "%s (only extensions using what kloop's ATen stand-in lacks "
		     "need it)",
		     tr.zErr);
	torch_real_free(&tr);
	line("grammar", 1, "tree-sitter runtime and CUDA grammar compiled in");
	char serr[KL_ERRLEN];
	if (cfg.noSandbox)
		line("sandbox", 0,
		     "off in the configuration (sandbox = off): candidates run "
		     "unsandboxed");
	else if (cand_sandbox_probe(serr) < 0)
		line("sandbox", 0, "%s", serr);
	else
		line("sandbox", 1,
		     "bubblewrap: candidates run without network, home, session or "
		     "cache, in a private /tmp");
	/* what holds a candidate in its runner (confine.h, cgroup.h) */
	struct confine_report cr;
	if (confine_probe(&cr, serr) < 0)
		line("confine", 0, "the runner cannot confine itself: %s", serr);
	else
		line("confine", cr.seccomp && cr.landlock,
		     "a runner keeps its code unchangeable and starts no process (seccomp)%s%s",
		     cr.landlock ? ", and writes only /tmp and /dev (landlock)" : "; ",
		     cr.landlock ? "" : cr.zNote);
	char lim[1024];
	const struct cgroup_support *cs = cgroup_probe();
	cgroup_describe(lim, sizeof lim);
	line("limits", cs->memory && cs->pids && cs->freeze, "%s", lim);
	/* a compile's memory limit, for as many compiles at once as a local
	 * worker runs (one a core) */
	char how[300];
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long long mb = compile_mem_mb(cores > 0 ? (int)cores : 1, how, sizeof how);
	line("compile mem", !strstr(how, "ignored"), "%llu MiB a compile (%s)%s", mb, how,
	     strstr(how, "KLOOP_COMPILE_MEM_MB") ? "" : "; KLOOP_COMPILE_MEM_MB sets it");
	check_libs(cfg.zLibs);
	warm_line();
	const char *keyEnv = cfg.zApiKeyEnv;
	const char *names[] = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", keyEnv};
	for (size_t i = 0; i < 3; i++) {
		if (!names[i])
			continue;
		const char *v = getenv(names[i]);
		line("llm key", v && *v, "%s is %s", names[i], v && *v ? "set" : "not set");
	}
	llm_lines(&cfg, timeoutS);
	int rc = 0;
	if (workers) {
		/* each configured worker started and tried (the backend the session would use) */
		const char *be = cfg.zBackend ? cfg.zBackend : (haveGpu ? "cuda" : "host");
		if (!json)
			printf("workers (%s backend, %s):\n", be,
			       zWorkers       ? zWorkers
			       : cfg.zWorkers ? cfg.zWorkers
			                      : "local");
		rc = doctor_workers(zWorkers ? zWorkers : cfg.zWorkers, be, cfg.jobs, cfg.zPython,
		                    json ? report : NULL);
	}
	if (json) {
		char *z = json_text(report, 1);
		printf("%s\n", z);
		free(z);
	}
	cJSON_Delete(report);
	config_free(&cfg);
	return rc;
}

const struct cmd_entry cmd_doctor_entry = {
    .name = "doctor",
    .usage = "[--json] [--workers[=SPEC]] [--peaks] [--provider P --model M --base-url URL] "
             "[--python PY] [--timeout S]",
    .help = "check compilers, GPU, Python and PyTorch, grammar, configuration, LLM keys, and the "
            "LLM provider, model and endpoint (a real request, --timeout seconds, 5 by default); "
            "--workers starts each configured worker and tries it; --peaks measures the GPU's "
            "dense peaks per compute type again (cuBLASLt) and caches them for the workers",
    .exec = exec_doctor,
};
