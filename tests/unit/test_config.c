/*
 * test_config.c - the config file: every number is range-checked (NaN, inf,
 * negative, overflow, absurd, fractional where an integer is meant), and the
 * error names the file, the line, the key and the value; a config file that
 * is a FIFO or a directory is refused instead of read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "config.h"
#include "mps.h"
#include "util.h"

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
	char *cmd = xasprintf("rm -rf %s", dir);
	CHECK(system(cmd) == 0, "cleanup");
	free(cmd);
	free(sub);
	return check_done();
}
