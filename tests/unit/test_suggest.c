/*
 * test_suggest.c - "did you mean": the nearest word to a typo, and none
 * where no word is near or two are as near.
 */
#include <string.h>

#include "check.h"
#include "suggest.h"

static const char *const commands[] = {"open",   "shell",   "replay",  "eval",   "tasks",
                                       "search", "doctor",  "archive", "report", "export",
                                       "ideas",  "profile", "outline", "session"};
#define N (sizeof commands / sizeof *commands)

static int is(const char *got, const char *want)
{
	return got && want ? !strcmp(got, want) : got == want;
}

int main(void)
{
	CHECK(suggest_distance("search", "search") == 0, "a word is 0 from itself");
	CHECK(suggest_distance("serach", "search") == 1, "two letters swapped are 1 edit");
	CHECK(suggest_distance("doctr", "doctor") == 1, "a letter left out is 1 edit");
	CHECK(suggest_distance("Search", "search") == 0, "case is ignored");
	CHECK(suggest_distance("abc", "") == 3, "from nothing: the word's length");
	CHECK(is(suggest_nearest("serach", commands, N), "search"), "serach -> search");
	CHECK(is(suggest_nearest("doctr", commands, N), "doctor"), "doctr -> doctor");
	CHECK(is(suggest_nearest("archiv", commands, N), "archive"), "archiv -> archive");
	CHECK(is(suggest_nearest("search", commands, N), NULL),
	      "a word that is in the list suggests nothing");
	CHECK(is(suggest_nearest("softmax", commands, N), NULL),
	      "a word near none of them suggests nothing");
	CHECK(is(suggest_nearest("xyz", commands, N), NULL), "nor does a short unrelated word");
	const char *flags[] = {"--rounds", "--round-time", "--budget", NULL, "--gate"};
	CHECK(is(suggest_nearest("--round", flags, 5), "--rounds"), "--round -> --rounds");
	CHECK(is(suggest_nearest("--gat", flags, 5), "--gate"),
	      "--gat -> --gate (dashes are not counted as letters)");
	const char *gates[] = {"auto", "human"};
	CHECK(is(suggest_nearest("humn", gates, 2), "human"), "humn -> human");
	const char *two[] = {"cat", "bat"};
	CHECK(is(suggest_nearest("hat", two, 2), NULL), "a tie suggests neither");
	char lng[200];
	memset(lng, 'a', sizeof lng - 1);
	lng[sizeof lng - 1] = 0;
	CHECK(suggest_distance(lng, "a") == 199,
	      "a word too long for the table is its length away");
	return check_done();
}
