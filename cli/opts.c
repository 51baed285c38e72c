/*
 * opts.c - parsing the session commands' flags into the configuration and
 * the live session's options, with messages that name the flag.
 */
#include "opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static int parse(const struct cmd_entry *e, int argc, char **argv, int flags, struct opts *o)
{
	char err[KL_ERRLEN];
	memset(o, 0, sizeof *o);
	o->at = -1;
	if (config_load(&o->cfg, err) < 0) {
		fprintf(stderr, "kloop: %s\n", err);
		return 2;
	}
	static const struct {
		const char *flag, *key; /* key: a config key, or NULL for our own */
	} t[] = {{"--backend", "backend"}, {"--trials", "trials"},
	         {"--budget", "budget"},   {"--timeout", "timeout"},
	         {"--python", "python"},   {"--jobs", "jobs"},
	         {"--worker", "worker"},   {"--session", NULL},
	         {"--shapes", NULL},       {"--reference", NULL},
	         {"--at", NULL},           {"--provider", "provider"},
	         {"--model", "model"},     {"--base-url", "base_url"}};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || !a[1]) {
			if (o->nPos == OPTS_MAX_POS) {
				fprintf(stderr, "kloop: %s: too many arguments\n", e->name);
				return cmd_usage(e);
			}
			o->azPos[o->nPos++] = a;
			continue;
		}
		if ((flags & OPTS_JSON) && !strcmp(a, "--json")) {
			o->json = 1;
			continue;
		}
		size_t k;
		for (k = 0; k < sizeof t / sizeof *t; k++)
			if (!strcmp(a, t[k].flag) && ((flags & OPTS_AT) || strcmp(a, "--at")))
				break;
		if (k == sizeof t / sizeof *t) {
			fprintf(stderr, "kloop: %s: unknown option %s\n", e->name, a);
			return cmd_usage(e);
		}
		const char *v = i + 1 < argc ? argv[++i] : NULL;
		if (!v) {
			fprintf(stderr, "kloop: %s: %s needs a value\n", e->name, a);
			return cmd_usage(e);
		}
		if (t[k].key) {
			if (config_set(&o->cfg, t[k].key, v, err) < 0) {
				fprintf(stderr, "kloop: %s: %s\n", a, err);
				return 2;
			}
		} else if (!strcmp(a, "--session")) {
			o->lo.zSession = v;
		} else if (!strcmp(a, "--shapes")) {
			o->lo.zShapes = v;
		} else if (!strcmp(a, "--reference")) {
			if (strcmp(v, "host") && strcmp(v, "cuda") && strcmp(v, "torch")) {
				fprintf(
				    stderr,
				    "kloop: --reference: expected host, cuda or torch, got '%s'\n",
				    v);
				return 2;
			}
			o->lo.zReference = v;
		} else {
			char *end;
			long n = strtol(v, &end, 10);
			if (*end || end == v || n < 0 || n > 100000000) {
				fprintf(stderr,
				        "kloop: --at: expected a number of events, got '%s'\n", v);
				return 2;
			}
			o->at = (int)n;
		}
	}
	return 0;
}

int opts_parse(const struct cmd_entry *e, int argc, char **argv, int flags, int nMin, int nMax,
               struct opts *o)
{
	int rc = parse(e, argc, argv, flags, o);
	if (!rc && (o->nPos < nMin || o->nPos > nMax))
		rc = cmd_usage(e);
	if (rc)
		opts_free(o);
	return rc;
}

void opts_free(struct opts *o)
{
	config_free(&o->cfg);
}
