/*
 * test_linediff.c - the line diff behind the Code pane's diff toggle and
 * `diff` (engine/linediff.c): hunks, context, line numbers, the bound.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "linediff.h"

static int diff(const char *a, const char *b, int ctx, strbuf *sb)
{
	sb_reset(sb);
	return linediff_unified(a, b, ctx, 1000, sb);
}

int main(void)
{
	strbuf sb = STRBUF_INIT;
	CHECK(diff("a\nb\nc\n", "a\nb\nc\n", 3, &sb) == 0 && sb.len == 0,
	      "identical texts: no hunk");
	CHECK(diff("a\nb\nc\n", "a\nB\nc\n", 3, &sb) == 2,
	      "one line changed: one removed, one added");
	CHECK(!strcmp(sb.buf, "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"), "as a unified hunk");
	CHECK(diff("a\nb\nc\n", "a\nb\nc\nd\n", 0, &sb) == 1 &&
	          !strcmp(sb.buf, "@@ -3,0 +4,1 @@\n+d\n"),
	      "a line added at the end, no context");
	CHECK(diff("x\na\n", "a\n", 1, &sb) == 1 && !strcmp(sb.buf, "@@ -1,2 +1,1 @@\n-x\n a\n"),
	      "a line removed at the start");
	CHECK(diff("", "a\nb\n", 3, &sb) == 2 && strstr(sb.buf, "+a\n+b\n"), "from nothing");
	CHECK(diff("a\nb\n", "", 3, &sb) == 2 && strstr(sb.buf, "-a\n-b\n"), "to nothing");
	CHECK(diff("a\nb", "a\nc", 3, &sb) == 2 && strstr(sb.buf, "-b\n+c\n"),
	      "no newline at the end");

	/* two changes far apart: two hunks; close together: one */
	char a[4096] = "", b[4096] = "";
	for (int i = 1; i <= 30; i++) {
		snprintf(a + strlen(a), sizeof a - strlen(a), "line %d\n", i);
		snprintf(b + strlen(b), sizeof b - strlen(b), "line %d%s\n", i,
		         i == 3 || i == 25 ? "!" : "");
	}
	diff(a, b, 3, &sb);
	int hunks = 0;
	for (const char *p = sb.buf; (p = strstr(p, "@@ -")); p++)
		hunks++;
	CHECK(hunks == 2 && strstr(sb.buf, "@@ -1,6 +1,6 @@") &&
	          strstr(sb.buf, "@@ -22,7 +22,7 @@"),
	      "changes 22 lines apart make two hunks");
	diff(a, b, 12, &sb);
	hunks = 0;
	for (const char *p = sb.buf; (p = strstr(p, "@@ -")); p++)
		hunks++;
	CHECK(hunks == 1, "with 12 lines of context they merge into one");

	/* a reordering is found as a minimal script */
	CHECK(diff("a\nb\nc\nd\n", "b\nc\nd\na\n", 0, &sb) == 2, "moving a line costs two edits");

	/* the bound: more edits than allowed give one line */
	char big1[8192] = "", big2[8192] = "";
	for (int i = 0; i < 400; i++) {
		snprintf(big1 + strlen(big1), sizeof big1 - strlen(big1), "a%d\n", i);
		snprintf(big2 + strlen(big2), sizeof big2 - strlen(big2), "b%d\n", i);
	}
	sb_reset(&sb);
	int n = linediff_unified(big1, big2, 3, 100, &sb);
	CHECK(n > 100 && strstr(sb.buf, "more than 100 lines differ"),
	      "a diff past the bound is summarized: %s", sb.buf);
	sb_free(&sb);
	return check_done();
}
