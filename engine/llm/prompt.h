/*
 * prompt.h - the prompts kloop sends to an LLM, made from plain template
 * files (prompts/NAME.md: system, ideas, implement, fix, crossover) that a
 * user can read and override in $XDG_CONFIG_HOME/kloop/prompts/.  Templates
 * use a small placeholder syntax, documented in docs/LLM.md:
 *
 *   {{name}}               the value of name (names: letters, digits, '.', '_')
 *   {{#name}}...{{/name}}  the text inside when name's value is not empty
 *   {{^name}}...{{/name}}  the text inside when it is empty
 *   {{! comment }}         nothing
 *
 * A section or comment tag alone on its line takes the line with it.  A
 * name the caller did not set is an error naming the file and the line.
 */
#ifndef KL_PROMPT_H
#define KL_PROMPT_H

#include <cJSON.h>

#include "task.h"
#include "util.h"

/* the values placeholders take */
struct prompt_vars {
	char **azKey; /* names */
	char **azVal; /* their values */
	int n;
	size_t nAlloc;
};

/* set zKey to a copy of zVal (NULL: "") without its trailing newlines (the
 * template places values on their lines), replacing an earlier value */
void prompt_set(struct prompt_vars *v, const char *zKey, const char *zVal);
/* the same with a printf format */
void prompt_setf(struct prompt_vars *v, const char *zKey, const char *zFmt, ...)
    __attribute__((format(printf, 3, 4)));
/* zKey's value, or NULL when it was never set */
const char *prompt_get(const struct prompt_vars *v, const char *zKey);
void prompt_vars_free(struct prompt_vars *v);

/*
 * Render a template (n bytes of zTemplate; zFile names it in errors) into
 * out (appending).  0, or -1 with err "FILE:LINE: ..." for an unknown name,
 * an unclosed {{ or section, or a closing tag that does not match.
 */
int prompt_render(const char *zTemplate, size_t n, const char *zFile, const struct prompt_vars *v,
                  strbuf *out, char *err);

/*
 * The file of template zName ("ideas"): $XDG_CONFIG_HOME/kloop/prompts/
 * NAME.md (else ~/.config/kloop/prompts/NAME.md) when it exists, else the
 * bundled one ($KLOOP_PROMPTS when set, else prompts/ beside the kloop
 * binary's directory, or share/kloop/prompts when installed).  A fresh path the caller frees, or
 * NULL with err naming where it looked.
 */
char *prompt_path(const char *zName, char *err);

/* find template zName, read it and render it into out; 0 or -1 + err */
int prompt_build(const char *zName, const struct prompt_vars *v, strbuf *out, char *err);

/*
 * Set the task's placeholders: task.name, task.description, task.backend,
 * task.cuda ("yes" for the cuda backend, else empty),
 * task.language, task.file (the candidate's file name), archive (empty: a
 * session fills it from the innovation archive), task.tensors (inputs,
 * outputs, shapes, tolerances), task.reference and task.reference_name (the
 * reference source: the backend's kernel, else the PyTorch module) and
 * task.abi (kloop.h).  t may be NULL for a KernelBench problem file
 * zProblem (then its text is the reference).  zBackend is "host" or "cuda".
 */
void prompt_task_vars(struct prompt_vars *v, const struct task *t, const char *zProblem,
                      const char *zBackend);

/*
 * Set PREFIX.name, PREFIX.source, PREFIX.status and PREFIX.results for a
 * candidate (zPrefix "parent", "parent2", "attempt"): results describe its
 * latest eval result (NULL: not evaluated yet) as prompt_results() does.
 */
void prompt_candidate_vars(struct prompt_vars *v, const char *zPrefix, const char *zName,
                           const char *zSource, const cJSON *result);

/*
 * Describe an eval result for a model, appending to out: the verdict and
 * its reason, compile diagnostics (the log, cut to its first 4 KiB), the
 * correctness report, timing against the baseline and the resource report.
 */
void prompt_results(const cJSON *result, strbuf *out);

#endif
