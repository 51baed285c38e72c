/*
 * verbs.h - the handlers of the command table (tui/command_table.c), one
 * per command, grouped by the file that holds them.  Each has the
 * signature of commands_def.run: 0, or -1 after saying why with bError
 * set (what they share to do so is in tui/actions.h).
 */
#ifndef KL_VERBS_H
#define KL_VERBS_H

#include "commands.h"

typedef int verb_fn(struct actions_front *f, const struct commands_line *c);

/* the LLM's ideas and code, and its traffic in the journal (verbs_llm.c) */
verb_fn verb_ideas, verb_accept, verb_reject, verb_revise, verb_implement, verb_prompt, verb_reply;
/* one candidate: evaluate, edit, add, look at, write out (verbs_cand.c) */
verb_fn verb_edit, verb_add, verb_bench, verb_profile, verb_show, verb_diff, verb_compare,
    verb_export, verb_baseline;
/* the population view, help, quit, and a replay's steps (verbs_view.c) */
verb_fn verb_sort, verb_filter, verb_list, verb_help, verb_quit, verb_step, verb_goto,
    verb_continue;
/* the work in flight (jobs.c) */
verb_fn verb_jobs, verb_cancel;
/* the automatic search: search, and its steering pin, ban, ... set (verbs_search.c) */
verb_fn verb_search, verb_pin, verb_ban, verb_unban, verb_prefer, verb_clear, verb_idea, verb_gate,
    verb_set;
/* the innovation archive (archive_view.c) */
verb_fn verb_archive;

#endif
