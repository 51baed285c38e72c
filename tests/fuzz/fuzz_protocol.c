/*
 * fuzz_protocol.c - libFuzzer target for the worker protocol reader: the
 * line splitter both sides use (lb_* in util.h) with a small maximum line,
 * fed in chunks seeded by the first byte, each line parsed as JSON and
 * read by every decoder of protocol.h, as both sides do.  Checks the lines against a plain split of
 * the whole input and that a line over the maximum is refused (never returned, never buffered past
 * the maximum plus one chunk). Build and run: make fuzz.
 */
#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"
#include "util.h"

#define REQUIRE(c)                                                                                 \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "REQUIRE failed at %s:%d: %s\n", __FILE__, __LINE__, #c);  \
			__builtin_trap();                                                          \
		}                                                                                  \
	} while (0)

#define MAXLINE 256

/* read line o as each side does (protocol.h): its op or event, and every
 * decoder, whatever it holds; an eval request's copy is freed */
static void decode(const cJSON *o)
{
	char err[KL_ERRLEN];
	struct eval_request rq;
	if (protocol_op(o) == PROTO_OP_UNKNOWN)
		REQUIRE(protocol_op_name(o) != NULL);
	if (protocol_eval_decode(o, &rq, err) == 0) {
		REQUIRE(rq.zName && rq.zSource && strlen(rq.zSource) == rq.nSource);
		struct eval_request c = eval_request_copy(&rq);
		cJSON *back = protocol_eval(&c);
		REQUIRE(protocol_op(back) == PROTO_OP_EVAL);
		cJSON_Delete(back);
		eval_request_free(&c);
	}
	struct proto_task t;
	if (protocol_task_decode(o, &t, err) == 0)
		REQUIRE(t.zDir != NULL);
	const char *zDev, *zCode, *zLabel;
	const cJSON *tm;
	if (protocol_measured_decode(o, &zDev, &zCode, &zLabel, &tm, err) == 0)
		REQUIRE(strlen(zCode) == 64 && cJSON_IsObject(tm));
	(void)protocol_cancel_job(o);
	int job, k, code;
	(void)protocol_event_of(o, &job);
	struct proto_hello h;
	protocol_hello_decode(o, &h);
	struct proto_ready r;
	protocol_ready_decode(o, &r);
	double sec;
	(void)protocol_baselines_decode(o, &sec);
	(void)protocol_progress_decode(o, &k);
	(void)protocol_error_decode(o, &k);
	const char *zName;
	protocol_cand_ended_decode(o, &code, &zName);
	cJSON_Delete(protocol_result_of(o));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned seed = data[0];
	const char *p = (const char *)data + 1;
	size_t n = size - 1;
	struct linebuf lb;
	lb_init(&lb, MAXLINE);
	size_t i = 0, ref = 0; /* ref: where the next expected line starts in p */
	int refused = 0;
	while (i < n && !refused) {
		size_t k = 1 + (seed * (i + 3)) % 97;
		if (k > n - i)
			k = n - i;
		lb_add(&lb, p + i, k);
		i += k;
		char *z;
		size_t len;
		int got;
		while ((got = lb_next(&lb, &z, &len)) > 0) {
			const char *nl = memchr(p + ref, '\n', n - ref);
			REQUIRE(nl && (size_t)(nl - (p + ref)) == len && len <= MAXLINE);
			REQUIRE(!memcmp(z, p + ref, len) && z[len] == 0);
			cJSON *o = cJSON_ParseWithLength(z, len);
			if (o)
				decode(o);
			cJSON_Delete(o);
			ref += len + 1;
		}
		if (got < 0) {
			/* the pending line is really over the maximum */
			const char *nl = memchr(p + ref, '\n', n - ref);
			size_t line = nl ? (size_t)(nl - (p + ref)) : n - ref;
			REQUIRE(line > MAXLINE);
			refused = 1;
		} else {
			REQUIRE(lb_pending(&lb) <= MAXLINE);
		}
		REQUIRE(lb.sb.len <= MAXLINE + 1 + 97 + lb.off);
	}
	if (!refused) {
		/* everything after the last newline is still pending */
		REQUIRE(lb_pending(&lb) == n - ref);
	}
	lb_free(&lb);
	return 0;
}
