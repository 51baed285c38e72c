/*
 * fold.h - a journal event, written in a test as JSON text, folded into a
 * session's state as the session folds what it reads (state_apply(),
 * event.h): for the unit tests that build a state event by event.
 */
#ifndef KL_TEST_FOLD_H
#define KL_TEST_FOLD_H

#include <cJSON.h>

#include "check.h"
#include "event.h"
#include "state.h"
#include "util.h"

/* apply the event zJson to st; 0, or -1 with err (may be NULL) saying why:
 * "bad JSON", or what state_apply() refused */
static inline int fold_event(struct state *st, const char *zJson, char *err)
{
	char buf[KL_ERRLEN];
	if (!err)
		err = buf;
	cJSON *e = cJSON_Parse(zJson);
	int rc = e ? state_apply(st, e, err) : kl_err(err, "bad JSON");
	cJSON_Delete(e);
	return rc;
}

/* the same, checked: one line "applied EVENT (ok)", or the error it got */
static inline void fold_check(struct state *st, const char *zJson)
{
	char err[KL_ERRLEN] = "";
	int rc = fold_event(st, zJson, err);
	CHECK(rc == 0, "applied %.70s (%s)", zJson, rc ? err : "ok");
}

#endif
