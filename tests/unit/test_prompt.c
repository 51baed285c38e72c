/*
 * test_prompt.c - prompt templates: placeholders, sections and comments
 * (with standalone tag lines dropped), errors that name the file and line,
 * the user's templates before the bundled ones, every bundled template
 * rendered for the softmax task, and eval results described for a model.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fverdict.h"
#include "json.h"
#include "prompt.h"
#include "task.h"
#include "util.h"

static char *render(const char *t, const struct prompt_vars *v, char *err)
{
	strbuf sb = STRBUF_INIT;
	if (prompt_render(t, strlen(t), "t.md", v, &sb, err) < 0) {
		sb_free(&sb);
		return NULL;
	}
	if (!sb.buf)
		sb_adds(&sb, "");
	return sb_detach(&sb);
}

static int renders_to(const char *t, const struct prompt_vars *v, const char *want)
{
	char err[KL_ERRLEN] = "";
	char *got = render(t, v, err);
	int ok = got && !strcmp(got, want);
	if (!ok)
		printf("# got [%s] %s\n", got ? got : "(error)", got ? "" : err);
	free(got);
	return ok;
}

static int fails_with(const char *t, const struct prompt_vars *v, const char *want)
{
	char err[KL_ERRLEN] = "";
	char *got = render(t, v, err);
	int ok = !got && strstr(err, want);
	if (!ok)
		printf("# got [%s] err [%s]\n", got ? got : "", err);
	free(got);
	return ok;
}

static void syntax(void)
{
	struct prompt_vars v = {0};
	prompt_set(&v, "task.name", "softmax");
	prompt_set(&v, "n", "5");
	prompt_set(&v, "empty", "");
	prompt_setf(&v, "idea.title", "%s %d", "Tile", 2);
	prompt_set(&v, "n", "6");
	CHECK(!strcmp(prompt_get(&v, "n"), "6") && !prompt_get(&v, "nope") &&
	          !strcmp(prompt_get(&v, "idea.title"), "Tile 2"),
	      "set replaces, get finds, unknown is NULL");
	CHECK(renders_to("Task {{task.name}}: {{ n }} ideas ({{idea.title}}).", &v,
	                 "Task softmax: 6 ideas (Tile 2)."),
	      "placeholders, with spaces inside the braces");
	CHECK(renders_to("a{{#n}}[has n]{{/n}}{{#empty}}[has empty]{{/empty}}{{^empty}}[no "
	                 "empty]{{/empty}}b",
	                 &v, "a[has n][no empty]b"),
	      "inline sections and inverted sections");
	CHECK(renders_to(
	          "one\n{{#n}}\ntwo {{n}}\n  {{#empty}}\nhidden\n  {{/empty}}\n{{/n}}\nthree\n", &v,
	          "one\ntwo 6\nthree\n"),
	      "nested sections; tag lines that stand alone vanish with their line");
	CHECK(renders_to("x {{! a comment\nover two lines }} y\n{{! alone }}\nz", &v, "x  y\nz"),
	      "comments, inline and alone on a line");
	CHECK(renders_to("{{! json stays }}\n{\"a\": {\"b\": 1}}\n", &v, "{\"a\": {\"b\": 1}}\n"),
	      "single braces are text");
	CHECK(fails_with("line 1\nline 2 {{tpyo}}\n", &v, "t.md:2: unknown placeholder {{tpyo}}"),
	      "an unknown name: the file, the line and the name");
	CHECK(fails_with("{{#empty}}\n{{typo}}\n{{/empty}}", &v,
	                 "t.md:2: unknown placeholder {{typo}}"),
	      "an unknown name inside a section that is off is still an error");
	CHECK(fails_with("a\nb {{n", &v, "t.md:2: '{{' without its closing '}}'"),
	      "an unclosed {{");
	CHECK(fails_with("{{#n}}\nno end", &v, "t.md:1: section without its closing tag: {{n}}"),
	      "an unclosed section");
	CHECK(fails_with("{{#n}}x{{/empty}}", &v,
	                 "closing tag does not match the open section: {{empty}}"),
	      "a mismatched closing tag");
	CHECK(fails_with("x{{/n}}", &v, "closing tag without an open section: {{n}}"),
	      "a stray closing tag");
	CHECK(fails_with("{{#}}x", &v, "a section tag without a name"), "a section without a name");
	prompt_vars_free(&v);
}

static void paths(void)
{
	char dir[] = "/tmp/kloop-test-prompt.XXXXXX";
	CHECK(mkdtemp(dir) != NULL, "a temporary config home");
	setenv("XDG_CONFIG_HOME", dir, 1);
	char err[KL_ERRLEN] = "";
	char *p = prompt_path("ideas", err);
	CHECK(p && strstr(p, "prompts/ideas.md") && !strstr(p, dir),
	      "the bundled ideas.md is found (%s)", p ? p : err);
	free(p);
	char *ud = xasprintf("%s/kloop/prompts", dir);
	mkdir_p(ud, err);
	char *uf = xasprintf("%s/ideas.md", ud);
	const char *mine = "My own prompt for {{task.name}}.";
	write_file_atomic(uf, mine, strlen(mine), err);
	p = prompt_path("ideas", err);
	CHECK(p && !strcmp(p, uf), "the user's ideas.md overrides it (%s)", p ? p : err);
	free(p);
	struct prompt_vars v = {0};
	prompt_set(&v, "task.name", "softmax");
	strbuf sb = STRBUF_INIT;
	CHECK(prompt_build("ideas", &v, &sb, err) == 0 &&
	          !strcmp(sb.buf, "My own prompt for softmax."),
	      "and is what prompt_build renders");
	sb_free(&sb);
	p = prompt_path("nosuch", err);
	CHECK(!p && strstr(err, "no prompt template 'nosuch'") && strstr(err, ud),
	      "a missing template names where it looked: %s", err);
	unlink(uf);
	rmdir(ud);
	free(uf);
	free(ud);
	char *k = xasprintf("%s/kloop", dir);
	rmdir(k);
	free(k);
	rmdir(dir);
	prompt_vars_free(&v);
	unsetenv("XDG_CONFIG_HOME");
}

static cJSON *result(const char *json)
{
	return cJSON_Parse(json);
}

static void results(void)
{
	strbuf sb = STRBUF_INIT;
	prompt_results(NULL, &sb);
	CHECK(!strcmp(sb.buf, "not evaluated yet\n"), "no result: not evaluated yet");
	sb_reset(&sb);
	/* verdicts as the worker makes them (fverdict.h) */
	cJSON *r =
	    fv_make(&(struct fv){.median = 1.5, .p10 = 1.4, .p90 = 1.6, .count = 40, .base = 3});
	fv_detail(r, "compile",
	          "{\"ok\":true,\"log\":\"\",\"resources\":[{\"kernel\":\"softmax_rows\","
	          "\"registers\":32,\"shared_bytes\":1024,\"stack_bytes\":0,\"spill_stores\":0,"
	          "\"spill_loads\":0}]}");
	fv_detail(r, "correctness",
	          "{\"trials\":5,\"trials_passed\":5,\"max_abs_error\":1e-7,\"rel_l2_error\":2e-7,"
	          "\"mismatches\":0}");
	prompt_results(r, &sb);
	CHECK(strstr(sb.buf, "verdict: correct\n") &&
	          strstr(sb.buf, "checked: 5/5 trials passed") &&
	          strstr(sb.buf, "time: median 1.5 ms") &&
	          strstr(sb.buf, "baseline: reference.c 3 ms; speedup 2x") &&
	          strstr(sb.buf, "kernel: softmax_rows: 32 registers, 1024 B shared memory"),
	      "a correct result: trials, time, baseline and speedup, resources");
	CHECK(!strstr(sb.buf, "torch.compile"),
	      "no torch.compile line where the reference is not PyTorch");
	cJSON_Delete(r);
	sb_reset(&sb);
	/* a PyTorch reference: both baselines, as the prompt asks */
	r = fv_make(&(struct fv){.median = 0.5,
	                         .base = 0.8,
	                         .zRef = "PyTorch eager (reference.py)",
	                         .baseCompile = 0.4});
	prompt_results(r, &sb);
	CHECK(strstr(sb.buf, "baseline: PyTorch eager (reference.py) 0.8 ms; speedup 1.6x\n") &&
	          strstr(sb.buf, "torch.compile of the reference: 0.4 ms; speedup 0.8x\n"),
	      "a PyTorch reference: the speedup against eager and against torch.compile");
	cJSON_Delete(r);
	sb_reset(&sb);
	r = fv_make(&(struct fv){
	    .median = 0.5, .base = 0.8, .zCompileError = "torch.compile failed: no triton"});
	prompt_results(r, &sb);
	CHECK(strstr(sb.buf, "torch.compile of the reference failed:\ntorch.compile failed: no "
	                     "triton\n"),
	      "a torch.compile that failed says so and why");
	cJSON_Delete(r);
	sb_reset(&sb);
	strbuf log = STRBUF_INIT;
	for (int i = 0; i < 400; i++)
		sb_addf(&log, "cand.c:%d:1: error: expected ';'\\n", i + 1);
	char *j = xasprintf(
	    "{\"status\":\"compile_error\",\"reason\":\"cand.c:1:1: error: expected ';'\","
	    "\"compile\":{\"ok\":false,\"log\":\"%s\"}}",
	    log.buf);
	r = result(j);
	prompt_results(r, &sb);
	CHECK(strstr(sb.buf, "verdict: compile_error: cand.c:1:1") &&
	          strstr(sb.buf, "compiler output:\n") && strstr(sb.buf, "cand.c:2:1: error") &&
	          strstr(sb.buf, "of the compiler's output cut here") && sb.len < 4096 + 300,
	      "a compile error: the diagnostics, cut to 4 KiB, saying what was cut (%zu bytes)",
	      sb.len);
	cJSON_Delete(r);
	free(j);
	sb_reset(&log);
	sb_reset(&sb);
	/* a megabyte: CuTe's #20013-D at 5000 places, 8000 distinct warnings,
	 * then the error */
	for (int i = 0; i < 5000; i++)
		sb_addf(&log,
		        "cute/layout.hpp(%d): warning #20013-D: calling a constexpr __host__ "
		        "function(\\\"sq\\\") from a __host__ __device__ function is not allowed\\n"
		        "      return sq(a);\\n             ^\\n\\n",
		        12 + i);
	for (int i = 0; i < 8000; i++)
		sb_addf(&log, "cand.cu(%d): warning #%d-D: something else %d\\n", i, 100000 + i, i);
	sb_adds(&log, "cand.cu(9): error: identifier \\\"undefined_name\\\" is undefined\\n");
	j = xasprintf("{\"status\":\"compile_error\",\"reason\":\"x\",\"compile\":{\"ok\":"
	              "false,\"log\":\"%s\"}}",
	              log.buf);
	r = result(j);
	CHECK(r && strlen(json_str(cJSON_GetObjectItem(r, "compile"), "log", "")) > (1 << 20),
	      "a log of more than 1 MB (%zu bytes)",
	      r ? strlen(json_str(cJSON_GetObjectItem(r, "compile"), "log", "")) : 0);
	prompt_results(r, &sb);
	int ok = sb.len < 4096 + 300 &&
	         strstr(sb.buf, "compiler output:\nwarning #20013-D: calling a constexpr __host__ "
	                        "function(\"sq\") from a __host__ __device__ function is not "
	                        "allowed (5000 times; first at cute/layout.hpp(12))\n") &&
	         strstr(sb.buf, "of the compiler's output cut here; the 1 error line among them:]\n"
	                        "cand.cu(9): error: identifier \"undefined_name\" is undefined\n");
	CHECK(ok,
	      "a 1 MB log reaches the prompt folded and cut (%zu bytes), the error past the cut "
	      "kept%s%.*s",
	      sb.len, ok ? "" : ": ", ok ? 0 : (int)sb.len, sb.buf);
	cJSON_Delete(r);
	free(j);
	sb_free(&log);
	sb_free(&sb);
}

/* every bundled template, rendered for the softmax task */
static void bundled(void)
{
	char err[KL_ERRLEN] = "";
	struct task *t = task_load("tasks/softmax", "host", NULL, err);
	CHECK(t != NULL, "the softmax task loads (%s)", t ? "" : err);
	if (!t)
		return;
	struct prompt_vars v = {0};
	prompt_task_vars(&v, t, NULL, "host");
	strbuf seed = STRBUF_INIT;
	read_file("tasks/softmax/seed.c", &seed, 1 << 20, err);
	cJSON *r = fv_make(&(struct fv){.median = 2.5, .base = 2.9});
	prompt_candidate_vars(&v, "parent", "seed.c", seed.buf, r);
	prompt_candidate_vars(&v, "parent2", "other.c", "int other;", NULL);
	prompt_candidate_vars(&v, "failed", "idea1-b1.c", "int broken(", NULL);
	prompt_set(&v, "failed.reason", "");
	prompt_set(&v, "failed.reply", "");
	prompt_set(&v, "n", "5");
	prompt_set(&v, "categories", "memory access, fusion");
	prompt_set(&v, "inspirations", "");
	prompt_set(&v, "tried", "");
	prompt_set(&v, "idea.title", "Vectorize the loads");
	prompt_set(&v, "idea.description", "Use four-wide loads.");
	prompt_set(&v, "idea.category", "memory access");
	prompt_set(&v, "branch", "1");
	prompt_set(&v, "branches", "2");
	CHECK(!strcmp(prompt_get(&v, "task.name"), "softmax") &&
	          strstr(prompt_get(&v, "task.tensors"),
	                 "in[0] x: f32 [64, 4096] (inputs drawn normal, mean 0, std 1)") &&
	          strstr(prompt_get(&v, "task.tensors"), "out[0] y: f32 [64, 4096]") &&
	          strstr(prompt_get(&v, "task.tensors"), "relative L2 error <= 0.0001") &&
	          !strcmp(prompt_get(&v, "task.reference_name"), "reference.c") &&
	          strstr(prompt_get(&v, "task.reference"), "int kl_run(") &&
	          strstr(prompt_get(&v, "task.abi"), "typedef struct {") &&
	          !strcmp(prompt_get(&v, "task.file"), "candidate.c") &&
	          !*prompt_get(&v, "task.cuda"),
	      "the task's placeholders: tensors, tolerances, reference, ABI, file name");
	static const char *const names[] = {"system", "ideas",     "implement",
	                                    "fix",    "crossover", "translate"};
	for (size_t i = 0; i < 6; i++) {
		strbuf sb = STRBUF_INIT;
		int rc = prompt_build(names[i], &v, &sb, err);
		CHECK(rc == 0 && sb.len > 200 && !strstr(sb.buf, "{{") && !strstr(sb.buf, "\n\n\n"),
		      "prompts/%s.md renders (%zu bytes, no braces or runs of blank lines left) %s",
		      names[i], sb.len, rc ? err : "");
		if (i && rc == 0)
			CHECK(strstr(sb.buf, "softmax") &&
			          strstr(sb.buf, "int kl_run(const kl_tensor *in"),
			      "%s.md carries the task and the ABI", names[i]);
		if (i == 1 && rc == 0)
			CHECK(
			    strstr(sb.buf, "Propose 5 distinct ideas") &&
			        strstr(sb.buf, "speedup 1.16x") &&
			        strstr(sb.buf, "naive host seed") && strstr(sb.buf, "\"ideas\""),
			    "ideas.md: the count, the parent's source and results, the JSON form");
		if (i == 5 && rc == 0)
			CHECK(strstr(sb.buf, "Translate the reference into a first candidate") &&
			          strstr(sb.buf, "This is translation 1 of 2"),
			      "translate.md: what to do and which translation this is");
		if (i == 2 && rc == 0)
			CHECK(strstr(sb.buf, "Vectorize the loads") &&
			          strstr(sb.buf, "This is variant 1 of 2 of the same idea") &&
			          !strstr(sb.buf, "`extern \"C\"` linkage"),
			      "implement.md: the idea and the variant; no CUDA advice on the host");
		if (i == 3 && rc == 0)
			CHECK(strstr(sb.buf, "int broken(") &&
			          !strstr(sb.buf, "could not be used as code"),
			      "fix.md: the failed source and its results");
		if (i == 4 && rc == 0)
			CHECK(strstr(sb.buf, "Parent B (other.c)") && strstr(sb.buf, "int other;"),
			      "crossover.md: both parents");
		sb_free(&sb);
	}
	/* the fix prompt for a reply without usable code */
	prompt_set(&v, "failed.source", "");
	prompt_set(&v, "failed.reason", "the reply holds no code");
	prompt_set(&v, "failed.reply", "Just unroll it.");
	strbuf sb = STRBUF_INIT;
	CHECK(prompt_build("fix", &v, &sb, err) == 0 &&
	          strstr(sb.buf, "could not be used as code: the reply holds no code") &&
	          strstr(sb.buf, "Just unroll it."),
	      "fix.md for a reply with no code quotes the reason and the reply");
	sb_free(&sb);
	prompt_task_vars(&v, t, NULL, "cuda");
	CHECK(prompt_build("implement", &v, &sb, err) == 0 &&
	          strstr(sb.buf, "`extern \"C\"` linkage") && strstr(sb.buf, "candidate.cu"),
	      "implement.md on the cuda backend asks for extern \"C\" and a .cu file");
	sb_free(&sb);
	prompt_task_vars(&v, NULL, "tests/fixtures/torch/softmax.py", "cuda");
	CHECK(!strcmp(prompt_get(&v, "task.name"), "softmax.py") &&
	          strstr(prompt_get(&v, "task.reference"), "class Model"),
	      "a KernelBench problem file is its own reference");
	cJSON_Delete(r);
	sb_free(&seed);
	{
		/* the ideas tried on the lineage, when there are some */
		strbuf sb = STRBUF_INIT;
		prompt_set(&v, "tried",
		           "- [fusion] Fuse the passes: correct, 1.8x the baseline (a.c)");
		int rc = prompt_build("ideas", &v, &sb, err);
		CHECK(rc == 0 &&
		          strstr(sb.buf, "## Ideas already tried on this lineage (do not propose "
		                         "them again)\n- [fusion] Fuse the passes: correct"),
		      "ideas.md lists the ideas tried on the lineage with their outcome");
		prompt_set(&v, "tried", "");
		sb_free(&sb);
	}
	prompt_vars_free(&v);
	task_free(t);
}

int main(void)
{
	setenv("KLOOP_PROMPTS", "prompts", 1);
	setenv("KLOOP_INCLUDE", "include", 1);
	syntax();
	paths();
	results();
	bundled();
	return check_done();
}
