/*
 * test_fence.c - the fenced code blocks of an LLM reply: backtick and
 * tilde fences, info strings, nested fences, an unterminated fence, and
 * languages that are not code kloop splices.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fence.h"

static void test_blocks(void)
{
	const char *reply = "text\n```cuda\nA\n```\n  ~~~ C++ "
	                    "{.numberLines}\nB\n~~~\n````\n```\ninner\n```\n````\n";
	struct fence_block *b;
	size_t n = fence_blocks(reply, strlen(reply), &b);
	CHECK(n == 3, "three fenced blocks (%zu)", n);
	if (n == 3) {
		CHECK(!strcmp(b[0].lang, "cuda") && b[0].is_code && b[0].line == 2 &&
		          !strncmp(reply + b[0].start, "A\n", b[0].end - b[0].start),
		      "```cuda at line 2 holds A");
		CHECK(!strcmp(b[1].lang, "c++") && b[1].is_code &&
		          !strncmp(reply + b[1].start, "B\n", 2),
		      "an indented ~~~ C++ fence holds B");
		CHECK(!strcmp(b[2].lang, "") &&
		          strstr(reply + b[2].start, "```\ninner\n```") == reply + b[2].start,
		      "a four-backtick fence holds a three-backtick one");
	}
	free(b);
}

static void test_edges(void)
{
	struct fence_block *b;
	const char *open = "intro\n```cu\n__global__ void k() {}\n";
	size_t n = fence_blocks(open, strlen(open), &b);
	CHECK(n == 1 && b[0].is_code && b[0].end == strlen(open) &&
	          !strcmp(open + b[0].start, "__global__ void k() {}\n"),
	      "an unterminated fence runs to the end of the reply");
	free(b);
	const char *py = "```python\nprint(1)\n```\n```bash\nls\n```\n";
	n = fence_blocks(py, strlen(py), &b);
	CHECK(n == 2 && !b[0].is_code && !b[1].is_code && !strcmp(b[0].lang, "python"),
	      "python and bash blocks are found but are not code to splice");
	free(b);
	const char *none = "no fences here\n    ``not one``\n";
	n = fence_blocks(none, strlen(none), &b);
	CHECK(n == 0 && b == NULL, "a reply without fences has no blocks");
	free(b);
}

int main(void)
{
	test_blocks();
	test_edges();
	return check_done();
}
