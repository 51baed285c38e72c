/*
 * cmd_profile.c - `kloop profile TASK FILE`: Nsight Compute on a candidate's
 * kernels, once.  ncu (the engine's command line, ncu_argv()) runs `kloop
 * eval TASK FILE` (one trial, a short timing budget) with a filter on the
 * kernels the candidate defines (ncu_kernel_regex(): from its outline), and
 * the few metrics that matter are read from its CSV:
 * duration, achieved DRAM bandwidth, achieved and theoretical occupancy, the
 * top stall reason (engine/measure/profile/ncu.h).  `--parse FILE.csv` reads a CSV
 * ncu wrote before (`ncu --csv --page raw --metrics ...`) instead of running it.  With --session,
 * the profile is journaled for the candidate with that source, so the Results pane and the LLM's
 * prompts show it.
 */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "emit.h"
#include "flags.h"
#include "ncu.h"
#include "proc.h"
#include "session.h"
#include "util.h"

/* run ncu over `kloop eval`; the parsed profile or NULL + err */
static cJSON *run_ncu(const char *zNcu, const char *zTask, const char *zFile,
                      const char *const *azExtra, int nExtra, char *err)
{
	strbuf src = STRBUF_INIT;
	if (read_file(zFile, &src, 4 << 20, err) < 0) {
		sb_free(&src);
		return NULL;
	}
	char *re = ncu_kernel_regex(src.buf, src.len);
	sb_free(&src);
	char tmpl[] = "/tmp/kloop-ncu-XXXXXX";
	if (!mkdtemp(tmpl)) {
		free(re);
		return kl_err(err, "cannot make a temporary directory"), NULL;
	}
	char *log = path_join(tmpl, "ncu.csv"), *ses = path_join(tmpl, "s.jsonl");
	char *kl = path_join(exe_dir(), "kloop");
	const char *argv[NCU_ARGS + 16 + FLAGS_MAX_PASS];
	int n = ncu_argv(argv, zNcu, log, re);
	/* unsandboxed: Nsight Compute's injection (its environment and its files
	 * in /tmp) does not reach a runner inside bubblewrap, which clears both;
	 * the person profiles a candidate they chose */
	const char *tail[] = {kl,         "eval", zTask,       zFile, "--trials", "1",
	                      "--budget", "0.05", "--session", ses,   "--json",   "--no-sandbox"};
	for (size_t i = 0; i < sizeof tail / sizeof *tail; i++)
		argv[n++] = tail[i];
	for (int i = 0; i < nExtra && n < (int)(sizeof argv / sizeof *argv) - 1; i++)
		argv[n++] = azExtra[i];
	argv[n] = NULL;
	char *out = NULL;
	int st = proc_capture((char *const *)argv, &out, 1 << 20);
	cJSON *prof = NULL;
	strbuf csv = STRBUF_INIT;
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) == 127)
		kl_err(err, "Nsight Compute (%s) cannot be run: install it or give --ncu PATH",
		       zNcu);
	else if (read_file(log, &csv, 16 << 20, err) == 0 &&
	         !(prof = ncu_parse_csv(csv.buf, err))) {
		char *m = xasprintf("%s (ncu said: %.300s)", err, out ? out : "");
		kl_err(err, "%s", m);
		free(m);
	}
	sb_free(&csv);
	free(out);
	unlink(log);
	unlink(ses);
	rmdir(tmpl);
	free(log);
	free(ses);
	free(kl);
	free(re);
	return prof;
}

static int exec_profile(int argc, char **argv)
{
	struct flags f;
	int frc = flags_parse(&cmd_profile_entry, FL_PROFILE, argc, argv, 0, 2, &f);
	if (frc)
		return frc;
	int json = f.json, nPos = f.nPos;
	const char *zParse = f.zParse, *zNcu = f.zNcu ? f.zNcu : "ncu", *zSession = f.zSession;
	const char *const *pos = f.azPos;
	flags_free(&f); /* the configuration is not used: kloop eval's flags are passed on */
	if ((!zParse && nPos != 2) || (zParse && nPos != 0 && nPos != 2) || (zSession && nPos != 2))
		return cmd_usage(&cmd_profile_entry);
	char err[KL_ERRLEN];
	cJSON *prof = NULL;
	if (zParse) {
		strbuf sb = STRBUF_INIT;
		if (read_file(zParse, &sb, 64 << 20, err) == 0)
			prof = ncu_parse_csv(sb.buf, err);
		sb_free(&sb);
	} else {
		prof = run_ncu(zNcu, pos[0], pos[1], f.azPass, f.nPass, err);
	}
	if (!prof) {
		fprintf(stderr, "kloop: profile: %s\n", err);
		return 2;
	}
	int rc = 0;
	if (zSession && nPos == 2) {
		/* journal it for the session's candidate with this source */
		struct session *s = session_open(zSession, 1, err);
		strbuf src = STRBUF_INIT;
		int id = -1;
		const struct cand *same = s && read_file(pos[1], &src, 4 << 20, err) == 0
		                              ? state_cand_by_source(&s->st, src.buf)
		                              : NULL;
		if (same)
			id = same->id;
		if (s && id < 0)
			kl_err(err, "%s has no candidate with the source of %s", zSession, pos[1]);
		if (s && id > 0) {
			if (ev_profile(s, id, prof, err) == 0)
				id = 0;
		}
		if (id != 0) {
			fprintf(stderr, "kloop: profile: %s\n", err);
			rc = 2;
		}
		sb_free(&src);
		session_close(s);
	}
	strbuf line = STRBUF_INIT;
	ncu_summary(prof, &line);
	if (json) {
		cJSON_AddStringToObject(prof, "summary", line.buf);
		char *z = json_text(prof, 1);
		printf("%s\n", z);
		free(z);
	} else {
		printf("ncu  %s\n", line.buf);
	}
	sb_free(&line);
	cJSON_Delete(prof);
	return rc;
}

const struct cmd_entry cmd_profile_entry = {
    .name = "profile",
    .usage = "TASK FILE [--session FILE] [--ncu PATH] [kloop eval's flags] [--json] | [TASK FILE "
             "--session FILE] --parse NCU.csv [--json]",
    .exec = exec_profile,
};
