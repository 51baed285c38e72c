/*
 * config.c - reading kloop's config file into struct config, with errors
 * that name the file, the line and the key.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm.h"
#include "util.h"

char *config_path(void)
{
	const char *x = getenv("XDG_CONFIG_HOME");
	if (x && *x)
		return xasprintf("%s/kloop/config", x);
	const char *h = getenv("HOME");
	return xasprintf("%s/.config/kloop/config", h && *h ? h : ".");
}

static int set_str(char **p, const char *v)
{
	free(*p);
	*p = xstrdup(v);
	return 0;
}

/*
 * A number from text: finite, within [lo, hi], an integer when bInt.  NaN,
 * inf, "1e999", "3e9" for an int and trailing junk are refused with the key,
 * the value and the range in err.
 */
static int parse_num(const char *zKey, const char *v, double lo, double hi, int bInt, double *p,
                     char *err)
{
	errno = 0;
	double d = 0;
	const char *zWhat = bInt ? "an integer" : "a number";
	char *end;
	double any = strtod(v, &end);
	if (num_parse(v, &d) < 0 && (end == v || *end || isfinite(any)))
		return kl_err(err, "%s: '%s' is not %s (expected %s from %g to %g)", zKey, v, zWhat,
		              zWhat, lo, hi);
	if (!isfinite(any) || !isfinite(d) || errno == ERANGE)
		return kl_err(err, "%s: '%s' is not a finite number (expected %s from %g to %g)",
		              zKey, v, zWhat, lo, hi);
	if (d < lo || d > hi)
		return kl_err(err, "%s: %s is out of range (expected %s from %g to %g)", zKey, v,
		              zWhat, lo, hi);
	if (bInt && d != floor(d))
		return kl_err(err, "%s: %s is not an integer (expected %s from %g to %g)", zKey, v,
		              zWhat, lo, hi);
	*p = d;
	return 0;
}

static int set_num(double *p, const char *zKey, const char *v, double lo, double hi, char *err)
{
	return parse_num(zKey, v, lo, hi, 0, p, err);
}

static int set_int(int *p, const char *zKey, const char *v, double lo, double hi, char *err)
{
	double d;
	if (parse_num(zKey, v, lo, hi, 1, &d, err) < 0)
		return -1;
	*p = (int)d;
	return 0;
}

int config_set(struct config *c, const char *k, const char *v, char *err)
{
	if (!strcmp(k, "backend")) {
		if (strcmp(v, "host") && strcmp(v, "cuda") && strcmp(v, "auto"))
			return kl_err(err, "backend: expected host, cuda or auto, got '%s'", v);
		free(c->zBackend);
		c->zBackend = strcmp(v, "auto") ? xstrdup(v) : NULL;
		return 0;
	}
	if (!strcmp(k, "python"))
		return set_str(&c->zPython, v);
	if (!strcmp(k, "worker"))
		return set_str(&c->zWorker, v);
	if (!strcmp(k, "workers"))
		return set_str(&c->zWorkers, v);
	/* the ranges: from the smallest that makes sense to the largest a person
	 * could mean (a week of timeout, a million trials) */
	if (!strcmp(k, "timeout"))
		return set_num(&c->timeoutS, k, v, 0.1, 7 * 86400, err);
	if (!strcmp(k, "budget"))
		return set_num(&c->budgetS, k, v, 0.01, 86400, err);
	if (!strcmp(k, "atol") || !strcmp(k, "rtol")) {
		double *p = !strcmp(k, "atol") ? &c->atol : &c->rtol;
		double d;
		if (set_num(&d, k, v, 0, 1e6, err) < 0)
			return -1;
		if (!c->bTol) /* the other one stays the task's */
			c->atol = c->rtol = -1;
		c->bTol = 1;
		*p = d;
		return 0;
	}
	if (!strcmp(k, "size"))
		return set_num(&c->size, k, v, 1e-6, 1000, err);
	if (!strcmp(k, "libs"))
		return set_str(&c->zLibs, v);
	if (!strcmp(k, "mps")) {
		/* mps.h's enum mps_mode: auto 0, on 1, off 2 */
		static const char *const modes[] = {"auto", "on", "off"};
		for (int i = 0; i < 3; i++)
			if (!strcmp(v, modes[i]))
				return c->mps = i, 0;
		return kl_err(err, "mps: expected on, off or auto, got '%s'", v);
	}
	if (!strcmp(k, "trials"))
		return set_int(&c->nTrials, k, v, 1, 1e6, err);
	if (!strcmp(k, "jobs"))
		return set_int(&c->jobs, k, v, 1, 4096, err);
	if (!strcmp(k, "spares")) {
		if (set_int(&c->spares, k, v, 0, 8, err) < 0)
			return -1;
		return c->bSpares = 1, 0;
	}
	if (!strcmp(k, "provider")) {
		if (llm_provider_check(v, err) < 0)
			return -1;
		return set_str(&c->zProvider, v);
	}
	if (!strcmp(k, "model"))
		return set_str(&c->zModel, v);
	if (!strcmp(k, "sandbox")) {
		if (strcmp(v, "on") && strcmp(v, "off"))
			return kl_err(err, "sandbox: expected on or off, got '%s'", v);
		c->noSandbox = !strcmp(v, "off");
		return 0;
	}
	if (!strcmp(k, "base_url"))
		return set_str(&c->zBaseUrl, v);
	if (!strcmp(k, "api_key_env"))
		return set_str(&c->zApiKeyEnv, v);
	if (!strcmp(k, "command"))
		return set_str(&c->zCommand, v);
	if (!strcmp(k, "llm_timeout"))
		return set_num(&c->llmTimeoutS, k, v, 0.1, 7 * 86400, err);
	if (!strcmp(k, "llm_stall_timeout"))
		return set_num(&c->llmStallS, k, v, 0.1, 7 * 86400, err);
	if (!strcmp(k, "temperature"))
		return set_num(&c->llmTemperature, k, v, 0, 2, err);
	if (!strcmp(k, "price_input"))
		return set_num(&c->priceIn, k, v, 0, 1e6, err);
	if (!strcmp(k, "price_output"))
		return set_num(&c->priceOut, k, v, 0, 1e6, err);
	if (!strcmp(k, "llm_retries"))
		return set_int(&c->llmRetries, k, v, 0, 100, err);
	if (!strcmp(k, "llm_max_in_flight"))
		return set_int(&c->llmMaxInFlight, k, v, 1, 1024, err);
	if (!strcmp(k, "max_tokens"))
		return set_int(&c->llmMaxTokens, k, v, 1, 1e8, err);
	if (!strcmp(k, "fix_attempts"))
		return set_int(&c->fixAttempts, k, v, 0, 1000, err);
	return kl_err(
	    err,
	    "unknown key '%s' (known: backend, python, worker, workers, timeout, budget, trials, "
	    "jobs, spares, provider, model, base_url, api_key_env, command, llm_timeout, "
	    "llm_stall_timeout, llm_retries, llm_max_in_flight, max_tokens, temperature, "
	    "price_input, price_output, fix_attempts, atol, rtol, size, libs, sandbox, mps)",
	    k);
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

int config_load(struct config *c, char *err)
{
	memset(c, 0, sizeof *c);
	c->zPython = xstrdup("python3");
	c->timeoutS = 120;
	c->llmTimeoutS = 600;
	c->llmStallS = 120;
	c->llmRetries = 3;
	c->llmMaxInFlight = 4;
	c->llmTemperature = c->priceIn = c->priceOut = -1;
	c->fixAttempts = 1;
	c->atol = c->rtol = -1;
	char *path = config_path();
	strbuf sb = STRBUF_INIT;
	if (!path_exists(path)) {
		free(path);
		return 0;
	}
	if (read_file(path, &sb, 1 << 20, err) < 0) {
		free(path);
		sb_free(&sb);
		return -1;
	}
	c->zPath = path;
	int line = 0, rc = 0;
	for (char *l = sb.buf, *next; l && *l; l = next) {
		next = strchr(l, '\n');
		if (next)
			*next++ = 0;
		line++;
		char *hash = strchr(l, '#');
		if (hash)
			*hash = 0;
		char *s = trim(l);
		if (!*s)
			continue;
		char *eq = strchr(s, '=');
		if (!eq) {
			rc = kl_err(err, "%s:%d: expected 'key = value'", path, line);
			break;
		}
		*eq = 0;
		char e2[KL_ERRLEN];
		if (config_set(c, trim(s), trim(eq + 1), e2) < 0) {
			rc = kl_err(err, "%s:%d: %s", path, line, e2);
			break;
		}
	}
	sb_free(&sb);
	return rc;
}

void config_free(struct config *c)
{
	free(c->zBackend);
	free(c->zPython);
	free(c->zWorker);
	free(c->zProvider);
	free(c->zModel);
	free(c->zBaseUrl);
	free(c->zApiKeyEnv);
	free(c->zCommand);
	free(c->zWorkers);
	free(c->zPath);
	free(c->zLibs);
	memset(c, 0, sizeof *c);
}

char **config_worker_argv(const struct config *c)
{
	if (!c->zWorker)
		return NULL;
	const char *z = c->zWorker;
	char **v = xcalloc(strlen(z) / 2 + 2, sizeof(char *));
	int n = 0;
	const char *p = z;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		size_t k = strcspn(p, " ");
		v[n++] = xstrndup(p, k);
		p += k;
	}
	return v;
}

void config_argv_free(char **argv)
{
	for (int i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}
