/*
 * archive_journal.c - what a journal says beyond the fold: each candidate's
 * last eval_finished, the LLM request that wrote it, and the model.
 */
#include "archive_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void archive_jx_free(struct archive_jx *x)
{
	for (size_t i = 0; i < x->nReq; i++)
		free(x->azModel[i]);
	free(x->azModel);
	free(x->aEvEval);
	free(x->aReq);
	memset(x, 0, sizeof *x);
}

static int num_of(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(o, k);
	return cJSON_IsNumber(v) ? v->valueint : 0;
}

static void jx_cand(struct archive_jx *x, int id)
{
	if ((size_t)id < x->nCand)
		return;
	size_t n = x->nCand, want = (size_t)id + 1;
	size_t a1 = n, a2 = n;
	xgrow((void **)&x->aEvEval, &a1, want, sizeof *x->aEvEval);
	xgrow((void **)&x->aReq, &a2, want, sizeof *x->aReq);
	size_t m = a1 < a2 ? a1 : a2;
	memset(x->aEvEval + n, 0, (a1 - n) * sizeof *x->aEvEval);
	memset(x->aReq + n, 0, (a2 - n) * sizeof *x->aReq);
	x->nCand = m;
}

void archive_jx_event(struct archive_jx *x, const cJSON *ev)
{
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "type"));
	if (!type)
		return;
	x->nEvents++;
	if (!strcmp(type, "eval_finished")) {
		int id = num_of(ev, "candidate");
		if (id > 0 && id < 100000000) {
			jx_cand(x, id);
			x->aEvEval[id] = x->nEvents;
		}
	} else if (!strcmp(type, "candidate_added")) {
		int id = num_of(ev, "id"), rq = num_of(ev, "request");
		if (id > 0 && id < 100000000 && rq > 0) {
			jx_cand(x, id);
			x->aReq[id] = rq;
		}
	} else if (!strcmp(type, "llm_request")) {
		int rq = num_of(ev, "request");
		const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "model"));
		const char *pv = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "provider"));
		if (rq > 0 && rq < 100000000 && m) {
			size_t n = x->nReq;
			if ((size_t)rq >= n) {
				xgrow((void **)&x->azModel, &x->nReq, (size_t)rq + 1,
				      sizeof *x->azModel);
				memset(x->azModel + n, 0, (x->nReq - n) * sizeof *x->azModel);
			}
			free(x->azModel[rq]);
			/* what is known: the command provider names no model */
			x->azModel[rq] = pv && *pv && *m ? xasprintf("%s %s", pv, m)
			                 : pv && *pv     ? xasprintf("%s (no model named)", pv)
			                                 : xstrdup(m);
		}
	}
}

/* read the journal's complete lines from x->off on */
void archive_jx_read(struct archive_jx *x, const char *zJournal)
{
	FILE *f = fopen(zJournal, "r");
	if (!f)
		return;
	if (fseek(f, x->off, SEEK_SET) == 0) {
		char *line = NULL;
		size_t cap = 0;
		ssize_t n;
		while ((n = getline(&line, &cap, f)) > 0) {
			if (line[n - 1] != '\n')
				break; /* a line being written: next time */
			x->off += n;
			cJSON *ev = cJSON_ParseWithLength(line, (size_t)n);
			if (cJSON_IsObject(ev))
				archive_jx_event(x, ev);
			cJSON_Delete(ev);
		}
		free(line);
	}
	fclose(f);
}
