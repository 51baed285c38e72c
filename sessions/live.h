/*
 * live.h - the names the runner (runner.h) had when it was "the live
 * session": kept only so that code written against live_* builds while the
 * branches merge.  New code includes runner.h and uses runner_*; once no
 * caller is left, this file goes.
 */
#ifndef KL_LIVE_H
#define KL_LIVE_H

#include "runner.h"

#define live runner
#define live_opts runner_opts
#define live_job runner_job
#define live_stream runner_stream
#define live_open runner_open
#define live_close runner_close
#define live_state runner_state
#define live_default_path runner_default_path
#define live_state_dir runner_state_dir
#define live_add runner_add
#define live_bench runner_bench
#define live_profile runner_profile
#define live_jobs runner_jobs
#define live_job_of runner_job_of
#define live_llm runner_llm
#define live_ideas runner_ideas
#define live_idea_accept runner_idea_accept
#define live_idea_reject runner_idea_reject
#define live_idea_revise runner_idea_revise
#define live_implement runner_implement
#define live_llm_busy runner_llm_busy
#define live_streams runner_streams
#define live_export runner_export
#define live_verdict runner_verdict
#define live_cancel_eval runner_cancel_eval
#define live_cancel_request runner_cancel_request
#define live_requests runner_requests

#endif
