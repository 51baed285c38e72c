/*
 * cmd_doctor.c - `kloop doctor`: what kloop can use on this machine
 * (compilers, GPU, Python and PyTorch, the grammar, the configuration, LLM
 * keys), each on one line, never printing a key.
 */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "cmd.h"
#include "compile.h"
#include "config.h"
#include "proc.h"
#include "task.h"
#include "torchref.h"
#include "util.h"

static int json;
static cJSON *report;

static void line(const char *zWhat, int ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void line(const char *zWhat, int ok, const char *fmt, ...)
{
	strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (json) {
		cJSON *o = cJSON_AddObjectToObject(report, zWhat);
		cJSON_AddBoolToObject(o, "ok", ok);
		cJSON_AddStringToObject(o, "detail", sb.buf);
	} else {
		printf("%-11s %s  %s\n", zWhat, ok ? "ok " : "-- ", sb.buf);
	}
	sb_free(&sb);
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

static int exec_doctor(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else
			return cmd_usage(&cmd_doctor_entry);
	}
	report = cJSON_CreateObject();
	char err[KL_ERRLEN];
	struct config cfg;
	int cfgOk = config_load(&cfg, err) == 0;
	char *cp = config_path();
	if (!cfgOk)
		line("config", 0, "%s", err);
	else
		line("config", 1, "%s%s", cp, cfg.zPath ? "" : " (not present; defaults in use)");
	free(cp);
	tool("cc", "KLOOP_CC", "cc", 0);
	tool("c++", "KLOOP_CXX", "c++", 0);
	tool("nvcc", "KLOOP_NVCC", "nvcc", 1);
	char *w = path_join(exe_dir(), "kloop-worker");
	line("worker", access(w, X_OK) == 0, "%s%s", w, access(w, X_OK) == 0 ? "" : " is missing (run make)");
	free(w);
	char *h = path_join(compile_include_dir(), "kloop.h");
	line("abi", path_exists(h), "%s%s", h, path_exists(h) ? "" : " is missing");
	free(h);
	line("tasks", path_exists(task_bundled_dir()), "%s", task_bundled_dir());
	struct backend *b = backend_cuda_new(0, err);
	if (b) {
		line("gpu", 1, "%s", b->zDevice);
		b->destroy(b);
	} else {
		line("gpu", 0, "%s (the host backend is used)", err);
	}
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
		line("python", 1, "%s: Python %s", py, cJSON_GetStringValue(cJSON_GetObjectItem(chk, "python")));
		const char *tv = cJSON_GetStringValue(cJSON_GetObjectItem(chk, "torch"));
		const char *dev = cJSON_GetStringValue(cJSON_GetObjectItem(chk, "device"));
		if (tv)
			line("pytorch", 1, "torch %s%s%s", tv, dev ? " on " : " (no CUDA)", dev ? dev : "");
		else
			line("pytorch", 0, "PyTorch is not installed for %s (PyTorch references need it)", py);
	}
	cJSON_Delete(chk);
	free(out);
	line("grammar", 1, "tree-sitter runtime and CUDA grammar compiled in");
	const char *keyEnv = cfg.zApiKeyEnv;
	const char *names[] = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", keyEnv};
	for (size_t i = 0; i < 3; i++) {
		if (!names[i])
			continue;
		const char *v = getenv(names[i]);
		line("llm key", v && *v, "%s is %s", names[i], v && *v ? "set" : "not set");
	}
	if (json) {
		char *z = cJSON_Print(report);
		printf("%s\n", z);
		free(z);
	}
	cJSON_Delete(report);
	config_free(&cfg);
	return 0;
}

const struct cmd_entry cmd_doctor_entry = {
	.name = "doctor",
	.usage = "[--json]",
	.help = "check compilers, GPU, Python and PyTorch, grammar, configuration and LLM keys",
	.exec = exec_doctor,
};
