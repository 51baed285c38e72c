/*
 * llm_config.h - an LLM client's settings (llm.h's struct llm_config)
 * from kloop's configuration (config.h) and the environment.  Here rather
 * than in llm.h: the client knows nothing of the configuration; this
 * bridge knows both (llm_config_defaults() too takes the configuration's
 * defaults).
 */
#ifndef KL_LLM_CONFIG_H
#define KL_LLM_CONFIG_H

#include "config.h"
#include "llm.h"

/*
 * Fill lc from kloop's configuration (provider, model, base_url, command,
 * the llm_* keys and prices) and the environment: the key is read from the
 * variable the config names (api_key_env), else OPENAI_API_KEY or
 * ANTHROPIC_API_KEY.  lc's strings point into cfg and the environment.
 * Returns 0, or -1 with err saying what is missing (no provider, no model,
 * no command, no key for anthropic or for a named variable that is unset).
 */
int llm_config_from(struct llm_config *lc, const struct config *cfg, char *err);

#endif
