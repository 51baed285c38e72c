/*
 * test_ideas.c - reading ideas out of LLM replies: the JSON kloop asks for
 * (bare, fenced, wrapped in prose, as an array), numbered Markdown lists in
 * the shapes models write them, categories named or guessed, and replies
 * with no ideas at all.
 */
#include <string.h>

#include "check.h"
#include "ideas.h"
#include "util.h"

static int parse(const char *z, struct idea_list *l, char *err)
{
	return ideas_parse(z, strlen(z), l, err);
}

static int is(const struct idea_list *l, int i, const char *t, const char *d, const char *c)
{
	if (i >= l->n) {
		printf("# idea %d missing (%d ideas)\n", i, l->n);
		return 0;
	}
	const struct idea *x = &l->a[i];
	int ok = !strcmp(x->zTitle, t) && (!d || !strcmp(x->zDescription, d)) &&
	         !strcmp(x->zCategory, c);
	if (!ok)
		printf("# idea %d: title '%s' description '%s' category '%s'\n", i, x->zTitle,
		       x->zDescription, x->zCategory);
	return ok;
}

int main(void)
{
	char err[KL_ERRLEN];
	struct idea_list l;

	const char *json =
	    "{\"ideas\": [\n"
	    " {\"title\": \"Vectorize loads\", \"description\": \"Read float4 per thread.\", "
	    "\"category\": \"memory access\"},\n"
	    " {\"title\": \"Online softmax\", \"description\": \"One pass for max and sum.\", "
	    "\"category\": \"Algorithm\"},\n"
	    " {\"title\": \"Warp shuffles\", \"description\": \"Reduce in registers.\", "
	    "\"category\": \"compute_and_instructions\"}]}";
	CHECK(parse(json, &l, err) == 3 &&
	          is(&l, 0, "Vectorize loads", "Read float4 per thread.", "memory access") &&
	          is(&l, 1, "Online softmax", NULL, "algorithm") &&
	          is(&l, 2, "Warp shuffles", NULL, "compute and instructions"),
	      "JSON {\"ideas\": [...]} with categories in any spelling");
	ideas_free(&l);

	const char *fenced =
	    "Here are my ideas:\n\n```json\n[{\"title\": \"Use fp16 math\", "
	    "\"description\": \"Halve the bytes.\", \"category\": \"precision\"},"
	    " {\"name\": \"Fuse the passes\", \"details\": \"One kernel.\"}]\n```\n"
	    "Let me know which you prefer {or not}.";
	CHECK(parse(fenced, &l, err) == 2 &&
	          is(&l, 0, "Use fp16 math", "Halve the bytes.", "precision") &&
	          is(&l, 1, "Fuse the passes", "One kernel.", "fusion"),
	      "a fenced JSON array amid prose; other key names; a missing category is guessed");
	ideas_free(&l);

	const char *prose_json = "Sure! {\"ideas\": [{\"title\": \"Double buffering\", "
	                         "\"description\": \"Prefetch the next tile.\"}]} Hope it helps.";
	CHECK(parse(prose_json, &l, err) == 1 &&
	          is(&l, 0, "Double buffering", NULL, "asynchrony and latency hiding"),
	      "JSON in the middle of prose, without a fence");
	ideas_free(&l);

	const char *strings = "{\"ideas\": [\"Unroll the inner loop by four. It cuts branches.\", "
	                      "\"Raise occupancy\"]}";
	CHECK(parse(strings, &l, err) == 2 &&
	          is(&l, 0, "Unroll the inner loop by four",
	             "Unroll the inner loop by four. It cuts branches.",
	             "compute and instructions") &&
	          is(&l, 1, "Raise occupancy", NULL, "parallelism and occupancy"),
	      "ideas given as plain strings");
	ideas_free(&l);

	const char *numbered =
	    "Here are three ideas.\n\n"
	    "1. **Vectorized loads**: Load four floats at a time with float4.\n"
	    "   This halves the number of load instructions.\n"
	    "   Category: memory access\n"
	    "2. **Block-level reduction** - use one block per row.\n"
	    "   - keep partial sums in shared memory\n"
	    "   - *Category*: parallelism and occupancy\n\n"
	    "3) Fast exponentials: use __expf instead of expf [compute and instructions]\n\n"
	    "These should help. Let me know!\n";
	CHECK(parse(numbered, &l, err) == 3, "a numbered list gives three ideas (%d)", l.n);
	CHECK(is(&l, 0, "Vectorized loads",
	         "Load four floats at a time with float4.\nThis halves the number of load "
	         "instructions.",
	         "memory access"),
	      "bold title, colon, continuation lines, a Category: line taken out");
	CHECK(is(&l, 1, "Block-level reduction",
	         "use one block per row.\nkeep partial sums in shared memory",
	         "parallelism and occupancy"),
	      "a dash separator, nested bullets, an emphasised category");
	CHECK(is(&l, 2, "Fast exponentials", "use __expf instead of expf",
	         "compute and instructions"),
	      "a ')' number, a [category] tag; the closing prose is not part of the last idea");
	ideas_free(&l);

	const char *headings =
	    "### 1. Tiling with shared memory\nStage tiles of x in shared memory.\n\n"
	    "### 2. Kernel fusion\nFuse the scale into the softmax.\n";
	CHECK(parse(headings, &l, err) == 2 &&
	          is(&l, 0, "Tiling with shared memory", "Stage tiles of x in shared memory.",
	             "memory access") &&
	          is(&l, 1, "Kernel fusion", "Fuse the scale into the softmax.", "fusion"),
	      "numbered Markdown headings with their paragraphs");
	ideas_free(&l);

	const char *other = "1. Rewrite it in a cleverer way\n";
	CHECK(parse(other, &l, err) == 1 && is(&l, 0, "Rewrite it in a cleverer way", "", "other"),
	      "an idea with no recognisable category is 'other'");
	ideas_free(&l);

	const char *broken = "```json\n{\"ideas\": [{\"title\": \"a\",, }\n```\n";
	CHECK(parse(broken, &l, err) == -1 && strstr(err, "no ideas in the reply"),
	      "malformed JSON and no list: a clear error: %s", err);
	CHECK(parse("I cannot help with that.", &l, err) == -1 &&
	          strstr(err, "starting \"I cannot help with that.\""),
	      "a refusal: the error quotes the reply: %s", err);
	CHECK(parse("", &l, err) == -1 && strstr(err, "got 0 bytes"), "an empty reply: %s", err);
	CHECK(parse("{\"ideas\": []}", &l, err) == -1, "an empty ideas array is no ideas");

	strbuf many = STRBUF_INIT;
	for (int i = 1; i <= 100; i++)
		sb_addf(&many, "%d. Idea number %d\n", i, i);
	CHECK(parse(many.buf, &l, err) == IDEAS_MAX, "at most %d ideas are taken", IDEAS_MAX);
	ideas_free(&l);
	sb_free(&many);

	CHECK(
	    !strcmp(ideas_category("Memory", NULL), "memory access") &&
	        !strcmp(ideas_category("latency hiding", NULL), "asynchrony and latency hiding") &&
	        !strcmp(ideas_category(NULL, "use cp.async to overlap loads"),
	                "asynchrony and latency hiding") &&
	        !strcmp(ideas_category("nonsense", "nothing to go on"), "other"),
	    "ideas_category maps names and guesses from text");
	const char *n1 = ideas_category_named("Memory_Access"), *n2 = ideas_category_named("async"),
	           *n3 = ideas_category_named(" other "), *n4 = ideas_category_named("memory");
	CHECK(n1 && !strcmp(n1, "memory access") && n2 &&
	          !strcmp(n2, "asynchrony and latency hiding") && n3 && !strcmp(n3, "other") &&
	          n4 && !strcmp(n4, "memory access"),
	      "a person names a category in any case, with _ for spaces, or by a prefix");
	CHECK(!ideas_category_named("memroy access") && !ideas_category_named("a") &&
	          !ideas_category_named("") && !ideas_category_named("precisionx"),
	      "a misspelt category, a prefix of several, or nothing names none");

	/* found by fuzz_reply: a title of blanks gave an idea with an empty title */
	struct idea_list b = {0};
	char e2[KL_ERRLEN];
	int nb = parse("{\"ideas\": [{\"title\": \"\\n \", \"description\": \"\"}, "
	               "{\"title\": \"** **\", \"description\": \"Use float4 loads. Then "
	               "more.\"}]}",
	               &b, e2);
	CHECK(nb == 1 && b.n == 1 && !strcmp(b.a[0].zTitle, "Use float4 loads"),
	      "an idea whose title is blank takes its description's first words; one with "
	      "neither is dropped (%d: %s)",
	      nb, b.n ? b.a[0].zTitle : e2);
	ideas_free(&b);
	/* a typo of a category: the one it is near, by its name or a word of it */
	const char *nc = ideas_category_nearest("memry");
	CHECK(nc && !strcmp(nc, "memory access"), "memry: memory access (got %s)",
	      nc ? nc : "none");
	nc = ideas_category_nearest("fuson");
	CHECK(nc && !strcmp(nc, "fusion"), "fuson: fusion (got %s)", nc ? nc : "none");
	CHECK(ideas_category_nearest("memory") == NULL, "a category it names already: none");
	CHECK(ideas_category_nearest("zzzzzz") == NULL, "nothing near: none");
	return check_done();
}
