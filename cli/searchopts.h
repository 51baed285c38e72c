/*
 * searchopts.h - the flags `kloop search` and `kloop translate` share:
 * the task, the session, the provider's and the evaluation's flags (as
 * `kloop implement` takes them, plus --command), and the search's own
 * settings (search.h) collected as a JSON object; and the driver
 * they open on one loop, printing its verdicts.
 */
#ifndef KL_SEARCHOPTS_H
#define KL_SEARCHOPTS_H

#include <cJSON.h>

#include "cmd.h"
#include "config.h"
#include "flags.h"
#include "driver.h"
#include "loop.h"
#include "search.h"

struct searchopts {
	const struct cmd_entry *self; /* for usage errors */
	/* kloop search's options (searchopts_parse's bSearch), else kloop
	 * translate's: a translation starts from no seed, a search defers
	 * torch.compile's baseline */
	int search;
	struct flags f;        /* the flag table's result (flags.h): configuration, flags applied */
	struct driver_opts lo; /* task, session, shapes, reference */
	const char *zFrom;     /* --from SOURCE: the first candidate instead of the seeds */
	cJSON *settings;       /* the search settings given by flags (owned) */
	int json;              /* --json */
	int sweepOnly;         /* --sweep-only given */
	int providerGiven;     /* an LLM provider is configured */
	struct loop *l;
	struct driver *drv;
	struct search *s;
	int first; /* the first candidate's id, for the summary */
};

/*
 * Parse argv for o->self (bSearch: the search's flags too; else -b T for
 * translate).  Returns 0, or the exit status (2) after saying what was
 * wrong on stderr.
 */
int searchopts_parse(struct searchopts *o, int argc, char **argv, int bSearch);

/* open the loop and the driver (and --from's candidate); 0, or 2
 * after saying what was wrong */
int searchopts_open(struct searchopts *o);

/* print event lines (or JSON objects) as the search and the session tell */
void searchopts_note(void *arg, const char *zLine, const cJSON *ev);

/* print the population table (text) */
void searchopts_population(const struct searchopts *o);

/* free all; -1 when events were lost (said on stderr: the exit status is 2) */
int searchopts_free(struct searchopts *o);

#endif
