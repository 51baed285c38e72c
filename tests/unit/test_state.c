/*
 * test_state.c - the idea and LLM events folded into the state: ideas
 * proposed, accepted, edited and rejected; candidates that implement an
 * idea; token and cost totals; events that contradict the state refused;
 * the same state after a journal is read back; sessions without a journal;
 * evaluations started and never finished (poison pills) counted; ideas
 * proposed again for a parent found (the normaliser) and the words for
 * where an idea stands (a duplicate, one that made nothing).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "session.h"

static cJSON *ev(const char *json)
{
	cJSON *e = cJSON_Parse(json);
	if (!e)
		printf("# bad test JSON: %s\n", json);
	return e;
}

static int emit(struct session *s, const char *json, char *err)
{
	return session_emit(s, ev(json), err);
}

static const char *const events[] = {
    "{\"type\":\"session_started\",\"task\":\"softmax\",\"backend\":\"host\"}",
    "{\"type\":\"candidate_added\",\"id\":1,\"name\":\"seed.c\",\"origin\":\"seed\",\"source\":"
    "\"x\"}",
    "{\"type\":\"llm_request\",\"request\":1,\"purpose\":\"ideas\",\"provider\":\"openai\","
    "\"model\":\"m\",\"prompt\":\"p\"}",
    "{\"type\":\"llm_response\",\"request\":1,\"status\":\"ok\",\"text\":\"t\","
    "\"input_tokens\":100,\"output_tokens\":20,\"cost\":0.5}",
    "{\"type\":\"idea_proposed\",\"id\":1,\"title\":\"Vectorize\",\"description\":\"float4\","
    "\"category\":\"memory access\",\"origin\":\"llm\",\"request\":1,\"parent\":1}",
    "{\"type\":\"idea_proposed\",\"id\":2,\"title\":\"Fuse\",\"category\":\"fusion\","
    "\"origin\":\"llm\",\"request\":1,\"parent\":1}",
    "{\"type\":\"idea_proposed\",\"id\":3,\"title\":\"Mine\",\"origin\":\"human\"}",
    "{\"type\":\"idea_accepted\",\"id\":1}",
    "{\"type\":\"idea_rejected\",\"id\":2,\"reason\":\"not now\"}",
    "{\"type\":\"idea_edited\",\"id\":3,\"title\":\"Mine, better\",\"description\":\"d\"}",
    "{\"type\":\"llm_request\",\"request\":2,\"purpose\":\"implement\"}",
    "{\"type\":\"llm_response\",\"request\":2,\"status\":\"error\",\"error\":\"HTTP 500\","
    "\"input_tokens\":-1,\"output_tokens\":-1}",
    "{\"type\":\"candidate_added\",\"id\":2,\"name\":\"idea1-b1.c\",\"origin\":\"llm\","
    "\"source\":\"y\",\"parents\":[1],\"idea_id\":1,\"request\":2}",
};
#define N_EVENTS (int)(sizeof events / sizeof *events)

static void check_state(const struct state *st, const char *when)
{
	const struct state_idea *a = state_idea(st, 1), *b = state_idea(st, 2),
	                        *c = state_idea(st, 3);
	CHECK(st->nIdea == 3 && a && b && c, "%s: three ideas", when);
	if (!a || !b || !c)
		return;
	CHECK(!strcmp(a->zTitle, "Vectorize") && !strcmp(a->zDescription, "float4") &&
	          !strcmp(a->zCategory, "memory access") && a->status == IDEA_ACCEPTED &&
	          !strcmp(a->zOrigin, "llm") && a->parent == 1 && a->request == 1 && !a->edited,
	      "%s: idea 1 accepted, with its fields", when);
	CHECK(b->status == IDEA_REJECTED && !strcmp(b->zDescription, ""), "%s: idea 2 rejected",
	      when);
	CHECK(!strcmp(c->zTitle, "Mine, better") && !strcmp(c->zDescription, "d") &&
	          c->status == IDEA_PENDING && c->edited && !strcmp(c->zCategory, "other") &&
	          !strcmp(c->zOrigin, "human"),
	      "%s: idea 3 edited and still pending", when);
	const struct cand *k = state_cand(st, 2);
	CHECK(k && k->ideaId == 1 && k->zIdea && !strcmp(k->zIdea, "Vectorize") &&
	          !strcmp(k->zOrigin, "llm") && k->nParent == 1 && k->aParent[0] == 1,
	      "%s: the llm candidate carries its idea's id and title", when);
	CHECK(st->llm.nRequests == 2 && st->llm.nResponses == 2 && st->llm.nFailed == 1 &&
	          st->llm.inTokens == 100 && st->llm.outTokens == 20 && st->llm.cost == 0.5 &&
	          state_next_request_id(st) == 3 && state_next_idea_id(st) == 4,
	      "%s: LLM traffic summed (a response without usage, -1, adds nothing), next ids",
	      when);
}

/* the ideas' and the search's journal names come from their tables: the
 * state's JSON (what `kloop session --json` prints) says them as before */
static void check_names(const struct state *st)
{
	cJSON *j = state_to_json(st);
	const cJSON *ideas = cJSON_GetObjectItem(j, "ideas");
	const char *want[] = {"accepted", "rejected", "pending"};
	int same = cJSON_GetArraySize(ideas) == 3;
	for (int i = 0; same && i < 3; i++)
		same = !strcmp(cJSON_GetStringValue(
		                   cJSON_GetObjectItem(cJSON_GetArrayItem(ideas, i), "status")),
		               want[i]);
	CHECK(same, "the ideas' statuses are written by name (accepted, rejected, pending)");
	cJSON_Delete(j);
	CHECK(!strcmp(idea_status_name(IDEA_REJECTED), "rejected") &&
	          !strcmp(idea_status_name((enum idea_status)99), "pending") &&
	          idea_decided(IDEA_ACCEPTED) && idea_decided(IDEA_REJECTED) &&
	          !idea_decided(IDEA_PENDING),
	      "idea status names and idea_decided()");
	CHECK(!strcmp(search_state_name(SEARCH_PAUSED), "paused") &&
	          !strcmp(search_state_name(SEARCH_NONE), "") &&
	          search_state_live(SEARCH_RUNNING) && search_state_live(SEARCH_PAUSED) &&
	          !search_state_live(SEARCH_STOPPED) && search_state_ended(SEARCH_FINISHED) &&
	          search_state_ended(SEARCH_STOPPED) && !search_state_ended(SEARCH_NONE),
	      "search state names, search_state_live() and search_state_ended()");
}

static int word_is(const struct state *st, int id, const char *zWord, const char *zWhy)
{
	const struct state_idea *d = state_idea(st, id);
	return d && !strcmp(state_idea_word(st, d), zWord) &&
	       !strcmp(state_idea_why(st, d).z, zWhy);
}

/* ideas proposed again, and ideas whose implementations made nothing
 * (issue 27 item 4) */
static void check_repeats(void)
{
	static const char *const norm[][2] = {
	    {"  CORPUS-mid  Sum the exponentials, fewer times! ",
	     "corpus mid sum the exponentials fewer times"},
	    {"Use\tfloat4\nloads.", "use float4 loads"},
	    {"!!! ...", ""},
	    {"", ""},
	    {"\xc3\x9c"
	     "ber-Fast",
	     "\xc3\x9c"
	     "ber fast"},
	};
	for (size_t i = 0; i < sizeof norm / sizeof *norm; i++) {
		char *z = idea_text_norm(norm[i][0]);
		CHECK(!strcmp(z, norm[i][1]), "idea_text_norm('%s') is '%s' ('%s')", norm[i][0],
		      norm[i][1], z);
		free(z);
	}
	char err[KL_ERRLEN];
	struct session *s = session_memory();
	static const char *const evs[] = {
	    "{\"type\":\"session_started\",\"task\":\"softmax\",\"backend\":\"host\"}",
	    "{\"type\":\"candidate_added\",\"id\":1,\"name\":\"seed.c\",\"source\":\"x\"}",
	    "{\"type\":\"candidate_added\",\"id\":2,\"name\":\"b.c\",\"source\":\"y\"}",
	    "{\"type\":\"idea_proposed\",\"id\":1,\"title\":\"Vectorize the loads\","
	    "\"description\":\"Use float4.\",\"parent\":1}",
	    "{\"type\":\"idea_proposed\",\"id\":2,\"title\":\"Vectorize the loads\","
	    "\"parent\":2}",
	    "{\"type\":\"idea_proposed\",\"id\":3,\"title\":\"vectorize the LOADS!\","
	    "\"parent\":1}",
	    "{\"type\":\"idea_rejected\",\"id\":3,\"reason\":\"the same as idea 1 for #1 "
	    "(deduplicated)\",\"duplicate_of\":1}",
	    "{\"type\":\"idea_proposed\",\"id\":4,\"title\":\"Fewer passes\",\"parent\":1}",
	    "{\"type\":\"idea_accepted\",\"id\":4}",
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof evs / sizeof *evs; i++)
		bad += emit(s, evs[i], err) < 0;
	CHECK(!bad, "the events of ideas proposed again are taken (%s)", bad ? err : "");
	const struct state *st = &s->st;
	const struct state_idea *o = state_idea_same(st, 1, "VECTORIZE the loads.", "other");
	CHECK(o && o->id == 1, "the same title for the same parent: idea 1 (%d)", o ? o->id : 0);
	o = state_idea_same(st, 1, "Another title", " use FLOAT4 ");
	CHECK(o && o->id == 1, "the same description: idea 1 (%d)", o ? o->id : 0);
	o = state_idea_same(st, 2, "vectorize the loads", "");
	CHECK(o && o->id == 2, "for parent 2: its own idea 2 (%d)", o ? o->id : 0);
	CHECK(!state_idea_same(st, 7, "Vectorize the loads", "") &&
	          !state_idea_same(st, 1, "Something else", "") &&
	          !state_idea_same(st, 1, "!!!", "..."),
	      "another parent, another title, or words of punctuation only: none");
	CHECK(word_is(st, 3, "duplicate", "the same as idea 1 for #1") &&
	          word_is(st, 1, "pending", "") && word_is(st, 4, "accepted", ""),
	      "idea 3 is a duplicate of idea 1 for #1; idea 1 pending; idea 4 accepted");
	emit(s,
	     "{\"type\":\"llm_request\",\"request\":1,\"purpose\":\"implement\","
	     "\"idea\":4,\"branch\":1,\"parent\":1}",
	     err);
	emit(s,
	     "{\"type\":\"llm_request\",\"request\":2,\"purpose\":\"implement\","
	     "\"idea\":4,\"branch\":2,\"parent\":1}",
	     err);
	emit(s, "{\"type\":\"llm_response\",\"request\":1,\"status\":\"ok\",\"same_as\":2}", err);
	CHECK(word_is(st, 4, "accepted", ""), "a branch still waits: idea 4 is accepted");
	emit(s, "{\"type\":\"llm_response\",\"request\":2,\"status\":\"error\"}", err);
	CHECK(word_is(st, 4, "nothing new", "no new code: the same as #2"),
	      "both branches ended without a candidate: idea 4 made nothing, the same as #2");
	emit(s, "{\"type\":\"idea_proposed\",\"id\":5,\"title\":\"T\",\"parent\":1}", err);
	emit(s, "{\"type\":\"idea_accepted\",\"id\":5}", err);
	emit(s,
	     "{\"type\":\"llm_request\",\"request\":3,\"purpose\":\"implement\","
	     "\"idea\":5,\"branch\":1,\"parent\":1}",
	     err);
	emit(s, "{\"type\":\"llm_response\",\"request\":3,\"status\":\"error\"}", err);
	CHECK(word_is(st, 5, "nothing new", "no reply from the LLM"),
	      "a branch whose request failed: made nothing, no reply");
	emit(s, "{\"type\":\"candidate_added\",\"id\":3,\"source\":\"z\",\"idea_id\":5}", err);
	CHECK(word_is(st, 5, "implemented", ""), "a candidate of it: implemented");
	emit(s, "{\"type\":\"idea_accepted\",\"id\":3}", err);
	CHECK(word_is(st, 3, "accepted", ""), "a duplicate a person accepts is accepted");
	session_close(s);
}

int main(void)
{
	char err[KL_ERRLEN] = "";
	char path[] = "/tmp/kloop-test-state.XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	unlink(path);
	struct session *s = session_open(path, 1, err);
	int bad = 0;
	for (int i = 0; i < N_EVENTS; i++)
		if (emit(s, events[i], err) < 0) {
			printf("# event %d: %s\n", i, err);
			bad++;
		}
	CHECK(bad == 0, "every event is accepted");
	check_state(&s->st, "live");
	check_names(&s->st);

	/* events that contradict the state */
	struct {
		const char *json, *why;
	} refused[] = {
	    {"{\"type\":\"idea_proposed\",\"id\":1,\"title\":\"again\"}",
	     "idea 1 is proposed twice"},
	    {"{\"type\":\"idea_proposed\",\"id\":9}", "without a \"title\""},
	    {"{\"type\":\"idea_proposed\",\"title\":\"x\"}", "without a positive \"id\""},
	    {"{\"type\":\"idea_accepted\",\"id\":42}",
	     "idea_accepted for an idea that does not exist"},
	    {"{\"type\":\"idea_edited\",\"id\":1,\"title\":\"\"}", "empty \"title\""},
	    {"{\"type\":\"llm_response\",\"status\":\"ok\"}", "without a positive \"request\""},
	    {"{\"type\":\"candidate_added\",\"id\":7,\"idea_id\":42}",
	     "for an idea that does not exist"},
	};
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
		CHECK(emit(s, refused[i].json, err) == -1 && strstr(err, refused[i].why),
		      "refused: %s (%s)", refused[i].json, err);
	check_state(&s->st, "after the refusals");

	cJSON *j = state_to_json(&s->st);
	char *z = cJSON_PrintUnformatted(j);
	CHECK(
	    strstr(z, "\"ideas\":[{\"id\":1,\"title\":\"Vectorize\",\"description\":\"float4\","
	              "\"category\":\"memory access\",\"status\":\"accepted\",\"origin\":\"llm\","
	              "\"parent\":1,\"edited\":false}") &&
	        strstr(z, "\"idea\":\"Vectorize\",\"idea_id\":1") &&
	        strstr(z,
	               "\"llm\":{\"requests\":2,\"responses\":2,\"failed\":1,\"input_tokens\":100,"
	               "\"output_tokens\":20,\"cost\":0.5}"),
	    "state_to_json has the ideas, the candidates' idea ids and the LLM totals");
	free(z);
	cJSON_Delete(j);
	session_close(s);

	s = session_open(path, 0, err);
	CHECK(s && s->nBad == 0, "the journal reads back without warnings (%s)",
	      s ? s->warnings.buf ? s->warnings.buf : "" : err);
	if (s)
		check_state(&s->st, "read back");
	session_close(s);
	unlink(path);

	s = session_memory();
	CHECK(emit(s, events[0], err) == 0 && emit(s, events[6], err) == 0 && s->st.nIdea == 1 &&
	          !s->j && !path_exists(s->zPath),
	      "a session without a journal applies events and writes nothing");
	session_close(s);

	/* evaluations the session did not live through are counted (issue 14:
	 * a poison pill is one started twice without a verdict) */
	s = session_memory();
	emit(s, events[0], err);
	emit(s, events[1], err);
	const char *started = "{\"type\":\"eval_started\",\"candidate\":1}";
	emit(s, started, err);
	emit(s, started, err);
	const struct cand *k = state_cand(&s->st, 1);
	CHECK(k && k->nUnfinished == 2 && k->status == STATUS_EVALUATING,
	      "two eval_started without a verdict: two unfinished evaluations (%d)",
	      k ? k->nUnfinished : -1);
	emit(s,
	     "{\"type\":\"eval_finished\",\"candidate\":1,\"result\":{\"status\":\"crashed\","
	     "\"abandoned\":true}}",
	     err);
	k = state_cand(&s->st, 1);
	CHECK(k && k->nUnfinished == 0 && k->status == STATUS_CRASHED,
	      "its eval_finished (abandoned) ends them: crashed, none unfinished");
	session_close(s);
	check_repeats();
	return check_done();
}
