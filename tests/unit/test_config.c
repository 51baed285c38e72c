/*
 * test_config.c - the config file: every number is range-checked (NaN, inf,
 * negative, overflow, absurd, fractional where an integer is meant), and the
 * error names the file, the line, the key and the value; a config file that
 * is a FIFO or a directory is refused instead of read.  The configuration
 * table (config.h) is walked: for every setting the file's key and its flag
 * (cli/flags.c, compiled into this test) take and refuse the same values, the
 * ends of its range and one beyond each, and `kloop CMD --help` lists each
 * flag with its range and default.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.c"
#include "config.h"
#include "flags.c"
#include "llm_provider.h"
#include "mps.h"
#include "util.h"

#include "check.h"

static char dir[64];

/* write zBody as the config file; load it; 0 or -1 + err */
static int load(const char *zBody, struct config *c, char *err)
{
	char *p = xasprintf("%s/kloop/config", dir);
	write_file_atomic(p, zBody, strlen(zBody), NULL);
	free(p);
	int rc = config_load(c, err);
	return rc;
}

static void refused(const char *zLine, const char *zNeedle)
{
	struct config c;
	char err[KL_ERRLEN] = "";
	char *body = xasprintf("# a comment\nbackend = host\n%s\n", zLine);
	int rc = load(body, &c, err);
	CHECK(rc < 0 && strstr(err, "kloop/config:3: ") && strstr(err, zNeedle),
	      "'%s' is refused at line 3 with '%s' (got: %s)", zLine, zNeedle, err);
	config_free(&c);
	free(body);
}

/* ---- the table, walked ---- */

/* whether member t of a and of b hold the same value */
static int same_member(const struct config *a, const struct config *b, const struct config_key *t)
{
	const char *pa = (const char *)a + t->off, *pb = (const char *)b + t->off;
	switch (t->kind) {
	case CK_STR:
	case CK_WORD: {
		const char *za = *(char *const *)pa, *zb = *(char *const *)pb;
		return za == zb || (za && zb && !strcmp(za, zb));
	}
	case CK_ENUM:
	case CK_INT:
		return *(const int *)pa == *(const int *)pb;
	case CK_NUM:
		return *(const double *)pa == *(const double *)pb;
	}
	return 0;
}

/* the first command (FL_ bit) whose flag d is */
static unsigned first_cmd(unsigned cmds)
{
	for (unsigned b = 1; b; b <<= 1)
		if (cmds & b)
			return b;
	return 0;
}

/*
 * Value v of row t, given as `key = v` in the file and as the flag zFlag
 * (with v, or a switch when bSwitch: then zFile is what the file is given
 * to compare): both take it or both refuse it, with the same value taken;
 * a refusal names the file's line and key, or the flag, and a number's
 * range.  bWant: whether the range says it is taken.
 */
static void same_both_ways(const struct config_key *t, const char *zFlag, const char *v,
                           const char *zFile, int bWant)
{
	char err[KL_ERRLEN] = "", ferr[KL_ERRLEN] = "";
	char *body = xasprintf("%s = %s\n", t->zKey, zFile);
	struct config cf;
	int fileOk = load(body, &cf, err) == 0;
	free(body);
	/* the flag, on the defaults (no file) */
	char *p = xasprintf("%s/kloop/config", dir);
	unlink(p);
	free(p);
	struct flags f;
	memset(&f, 0, sizeof f);
	config_defaults(&f.cfg);
	unsigned cmd = first_cmd(CFG_CMDS(t->cmds));
	const struct flag_def *d = find(zFlag, strlen(zFlag), cmd);
	int flagOk = d && apply(&f, d, d->type == FT_SWITCH ? NULL : v, ferr) == 0;
	CHECK(d && fileOk == bWant && flagOk == bWant,
	      "%s = %s and %s%s%s: both %s (file: %s; flag: %s)", t->zKey, zFile, zFlag,
	      d && d->type == FT_SWITCH ? "" : " ", d && d->type == FT_SWITCH ? "" : v,
	      bWant ? "taken" : "refused", fileOk ? "taken" : err, flagOk ? "taken" : ferr);
	if (fileOk && flagOk)
		CHECK(same_member(&cf, &f.cfg, t), "... %s is the same value either way", t->zKey);
	if (!bWant && (t->kind == CK_INT || t->kind == CK_NUM)) {
		char lo[64], hi[64], flo[64], fhi[64];
		snprintf(lo, sizeof lo, "from %g to %g", t->lo, t->hi);
		snprintf(flo, sizeof flo, "from %.15g to %.15g", t->lo, t->hi);
		char *fileWhere = xasprintf("kloop/config:1: %s: ", t->zKey);
		char *flagWhere = xasprintf("%s: ", zFlag);
		CHECK(strstr(err, fileWhere) && strstr(err, lo) && strstr(ferr, flagWhere) &&
		          strstr(ferr, flo) && (!t->zWhat || strstr(ferr, t->zWhat)),
		      "... the file's error names its line, %s and %s; the flag's names %s and %s "
		      "(file: %s; flag: %s)",
		      t->zKey, lo, zFlag, flo, err, ferr);
		free(fileWhere);
		free(flagWhere);
		(void)hi, (void)fhi;
	}
	config_free(&cf);
	flags_free(&f);
}

/* each word of "a|b|c" into az (at most n), their count */
static int split_words(const char *zWords, char az[][32], int n)
{
	int k = 0;
	for (const char *p = zWords; *p && k < n; k++) {
		size_t w = strcspn(p, "|");
		snprintf(az[k], 32, "%.*s", (int)w, p);
		p += w + (p[w] == '|');
	}
	return k;
}

static void walk_row(const struct config_key *t)
{
	char v[64];
	if (t->kind == CK_INT || t->kind == CK_NUM) {
		int whole = t->kind == CK_INT;
		double below = whole ? t->lo - 1 : nextafter(t->lo, -INFINITY);
		double above = whole ? t->hi + 1 : nextafter(t->hi, INFINITY);
		const double vals[] = {t->lo, t->hi, below, above};
		for (int i = 0; i < 4; i++) {
			snprintf(v, sizeof v, "%.17g", vals[i]);
			same_both_ways(t, t->zFlag, v, v, i < 2);
		}
		if (whole) {
			snprintf(v, sizeof v, "%.17g", t->lo + 0.5);
			same_both_ways(t, t->zFlag, v, v, 0);
		}
		return;
	}
	if (t->kind == CK_STR) {
		same_both_ways(t, t->zFlag, "some text", "some text", 1);
		return;
	}
	char az[8][32];
	int n = split_words(t->zWords, az, 8);
	if (t->kind == CK_ENUM) {
		/* the switches give the words "on" and "off" */
		same_both_ways(t, t->zFlag, NULL, "on", 1);
		if (t->zFlagOff)
			same_both_ways(t, t->zFlagOff, NULL, "off", 1);
		return;
	}
	for (int i = 0; i < n; i++)
		same_both_ways(t, t->zFlag, az[i], az[i], 1);
	same_both_ways(t, t->zFlag, "nosuchword", "nosuchword", 0);
}

/* `kloop CMD --help` of command cmd lists zFlag with zWant on its line */
static void help_lists(unsigned cmd, const char *zFlag, const char *zWant)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	flags_help(f, cmd);
	fclose(f);
	char *at = NULL, *line = xasprintf("\n  %s", zFlag);
	for (char *p = buf; (p = strstr(p, line)); p++)
		if (p[strlen(line)] == ' ' || p[strlen(line)] == '\n') {
			at = p + 1;
			break;
		}
	/* its lines: to the next flag's, or the group's end */
	char *end = at ? strstr(at, "\n  -") : NULL;
	char *gap = at ? strstr(at, "\n\n") : NULL;
	if (!end || (gap && gap < end))
		end = gap;
	if (end)
		*end = 0;
	CHECK(at && strstr(at, zWant), "help of command %#x lists %s with [%s] (%s)", cmd, zFlag,
	      zWant, at ? at : "no line");
	free(line);
	free(buf);
}

static void walk_table(void)
{
	for (int i = 0; i < CFG_COUNT; i++) {
		const struct config_key *t = &config_keys[i];
		CHECK(config_key_find(t->zKey) == i, "%s: its id", t->zKey);
		int num = t->kind == CK_INT || t->kind == CK_NUM;
		CHECK(!num || (t->lo <= t->hi && t->zWhat), "%s: a range, and what it counts",
		      t->zKey);
		if (t->zWords) {
			char az[8][32];
			int n = split_words(t->zWords, az, 8), known = !t->zDef;
			for (int k = 0; k < n; k++)
				known |= t->zDef && !strcmp(az[k], t->zDef);
			CHECK(known, "%s: its default '%s' is one of %s", t->zKey,
			      t->zDef ? t->zDef : "none", t->zWords);
		}
		/* an enum's switches give "on" and "off": its first two words */
		CHECK(t->kind != CK_ENUM || !strncmp(t->zWords, "on|off", 6), "%s: words %s",
		      t->zKey, t->zWords ? t->zWords : "none");
		if (!t->zFlag)
			continue;
		walk_row(t);
		char want[200];
		config_key_describe(i, want, sizeof want);
		CHECK(strstr(want, "default "), "%s: described with its default (%s)", t->zKey,
		      want);
		for (unsigned b = 1; b <= FL_REPORT; b <<= 1) {
			if (!(CFG_CMDS(t->cmds) & b))
				continue;
			help_lists(b, t->zFlag, want);
			if (t->zFlagOff)
				help_lists(b, t->zFlagOff, want);
		}
	}
	/* the defaults are the table's */
	struct config c;
	config_defaults(&c);
	CHECK(c.timeoutS == 120 && c.llmTimeoutS == 600 && c.llmStallS == 120 &&
	          c.llmRetries == 3 && c.llmMaxInFlight == 4 && c.fixAttempts == 1 &&
	          c.llmTemperature == -1 && c.priceIn == -1 && c.atol == -1 && !c.bTol &&
	          !c.bSpares && !c.zBackend && !strcmp(c.zPython, "python3") && c.mps == MPS_AUTO &&
	          !c.noSandbox,
	      "the defaults: timeout 120, llm_timeout 600, stall 120, 3 retries, 4 in flight, 1 "
	      "fix, no temperature or prices or tolerances, auto backend and MPS, sandboxed");
	config_free(&c);
	/* the words of other tables: the providers', mps.h's modes */
	const struct config_key *prov = &config_keys[CFG_provider];
	strbuf sb = STRBUF_INIT;
	for (int i = 0; llm_providers[i]; i++)
		sb_addf(&sb, "%s%s", i ? "|" : "", llm_providers[i]->zName);
	CHECK(!strcmp(sb.buf, prov->zWords), "provider's words are the provider table's (%s, %s)",
	      sb.buf, prov->zWords);
	sb_free(&sb);
	char az[8][32];
	int n = split_words(config_keys[CFG_mps].zWords, az, 8), same = n == 3;
	for (int i = 0; i < n; i++)
		same &= !strcmp(mps_mode_name(i), az[i]);
	CHECK(same, "mps's words are mps.h's modes in order");
	/* README's table of the keys: each key, its flag, and a number's range */
	char err[KL_ERRLEN] = "";
	strbuf rd = STRBUF_INIT;
	CHECK(read_file("README.md", &rd, 1 << 22, err) == 0, "README.md is read (%s)", err);
	const char *table = rd.buf ? strstr(rd.buf, "| key | flag | takes | default |") : NULL;
	for (int i = 0; table && i < CFG_COUNT; i++) {
		const struct config_key *t = &config_keys[i];
		char *key = xasprintf("`%s`", t->zKey), range[80] = "", *line = NULL;
		/* its row: the one whose first column names it */
		for (const char *p = table; !line && *p == '|'; p = strchr(p, '\n') + 1) {
			const char *eol = strchr(p, '\n'), *col = strchr(p + 1, '|');
			if (!eol)
				break;
			if (col && col < eol && memmem(p, (size_t)(col - p), key, strlen(key)))
				line = xstrndup(p, (size_t)(eol - p));
		}
		if (t->kind == CK_INT || t->kind == CK_NUM)
			snprintf(range, sizeof range, "%.15g to %.15g", t->lo, t->hi);
		CHECK(line && (!t->zFlag || strstr(line, t->zFlag)) && strstr(line, range),
		      "README's configuration table has %s with %s and %s (%s)", key,
		      t->zFlag ? t->zFlag : "no flag", range[0] ? range : "no range",
		      line ? line : "no line");
		free(line);
		free(key);
	}
	CHECK(table != NULL, "README.md has the configuration table");
	sb_free(&rd);
	/* the three it once had two ranges of (issue 41) */
	struct config m = {0};
	CHECK(config_set(&m, "llm_max_in_flight", "2000", err) < 0 && strstr(err, "from 1 to 1024"),
	      "llm_max_in_flight = 2000 is refused, 1 to 1024 (%s)", err);
	CHECK(config_set(&m, "fix_attempts", "100", err) < 0 && strstr(err, "from 0 to 16"),
	      "fix_attempts = 100 is refused, as --fix 100 is (%s)", err);
	CHECK(config_set(&m, "llm_timeout", "604800", err) == 0 && m.llmTimeoutS == 604800,
	      "llm_timeout of a week is taken, as --llm-timeout's is");
	CHECK(config_set(&m, "timout", "3", err) < 0 && strstr(err, "did you mean 'timeout'"),
	      "a misspelt key gets the nearest (%s)", err);
	config_free(&m);
}

int main(void)
{
	strcpy(dir, "/tmp/kloop-test-config.XXXXXX");
	CHECK(mkdtemp(dir) != NULL, "a config home");
	setenv("XDG_CONFIG_HOME", dir, 1);
	char *sub = xasprintf("%s/kloop", dir);
	mkdir(sub, 0700);

	struct config c;
	char err[KL_ERRLEN] = "";
	CHECK(load("timeout = 30\ntrials = 7\nbudget = 0.5\ntemperature = 0.2\nmax_tokens = "
	           "4096\n",
	           &c, err) == 0 &&
	          c.timeoutS == 30 && c.nTrials == 7 && c.budgetS == 0.5 && c.llmMaxTokens == 4096,
	      "sensible numbers load (%s)", err);
	config_free(&c);

	refused("timeout = nan", "timeout: 'nan' is not a finite number");
	refused("timeout = inf", "timeout: 'inf' is not a finite number");
	refused("budget = 1e999", "budget: '1e999' is not a finite number");
	refused("budget = -1", "budget: -1 is out of range (expected a number from 0.01 to 86400)");
	refused("trials = 3e9",
	        "trials: 3e9 is out of range (expected an integer from 1 to 1e+06)");
	refused("trials = 2.5", "trials: 2.5 is not an integer");
	refused("jobs = 0", "jobs: 0 is out of range");
	refused("jobs = 99999999999999999999", "jobs: 99999999999999999999 is out of range");
	refused("max_tokens = 12abc", "max_tokens: '12abc' is not an integer");
	refused("llm_retries = -3", "llm_retries: -3 is out of range");
	refused("temperature = 50", "temperature: 50 is out of range");
	refused("llm_stall_timeout = 1e300", "llm_stall_timeout: 1e300 is out of range");
	refused("price_input = -0.5", "price_input: -0.5 is out of range");
	refused("fix_attempts = 1e6", "fix_attempts: 1e6 is out of range");
	refused("llm_max_in_flight = 0", "llm_max_in_flight: 0 is out of range");

	/* the config file itself: a FIFO or a directory is refused, not read */
	char *p = xasprintf("%s/kloop/config", dir);
	unlink(p);
	CHECK(mkfifo(p, 0600) == 0, "the config file is a FIFO");
	CHECK(config_load(&c, err) < 0 && strstr(err, "config: is a FIFO"),
	      "a FIFO config is refused without blocking (%s)", err);
	config_free(&c);
	unlink(p);
	CHECK(mkdir(p, 0700) == 0, "the config file is a directory");
	CHECK(config_load(&c, err) < 0 && strstr(err, "config: is a directory"),
	      "a directory config is refused (%s)", err);
	config_free(&c);
	rmdir(p);
	free(p);
	/* mps = on|off|auto, into mps.h's values */
	struct config m = {0};
	CHECK(config_set(&m, "mps", "on", err) == 0 && m.mps == MPS_ON &&
	          config_set(&m, "mps", "off", err) == 0 && m.mps == MPS_OFF &&
	          config_set(&m, "mps", "auto", err) == 0 && m.mps == MPS_AUTO,
	      "mps = on, off, auto");
	CHECK(config_set(&m, "mps", "yes", err) < 0 &&
	          strstr(err, "mps: expected on, off or auto, got 'yes'"),
	      "mps = yes is refused (%s)", err);
	/* spares = N: 0 to 8, and that it was said (0 is none, not the default) */
	CHECK(!m.bSpares && config_set(&m, "spares", "0", err) == 0 && m.spares == 0 && m.bSpares &&
	          config_set(&m, "spares", "3", err) == 0 && m.spares == 3,
	      "spares = 0, 3 (said: %d)", m.bSpares);
	CHECK(config_set(&m, "spares", "9", err) < 0 && strstr(err, "spares"),
	      "spares = 9 is refused (%s)", err);
	config_free(&m);
	walk_table();
	char *cmd = xasprintf("rm -rf %s", dir);
	CHECK(system(cmd) == 0, "cleanup");
	free(cmd);
	free(sub);
	return check_done();
}
