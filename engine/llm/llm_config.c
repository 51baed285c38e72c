/*
 * llm_config.c - the provider table, and an LLM client's settings from
 * kloop's configuration and the environment (where the API key is read).
 */
#include "llm_config.h"

#include <stdlib.h>
#include <string.h>

#include "llm_transport.h"

const struct llm_provider *const llm_providers[] = {&llm_openai, &llm_anthropic, &llm_command,
                                                    NULL};

const struct llm_provider *llm_provider_find(const char *zName)
{
	for (int i = 0; zName && llm_providers[i]; i++)
		if (!strcmp(llm_providers[i]->zName, zName))
			return llm_providers[i];
	return NULL;
}

int llm_provider_unknown(char *err, const char *zName)
{
	strbuf sb = STRBUF_INIT;
	for (int i = 0; llm_providers[i]; i++)
		sb_addf(&sb, "%s%s",
		        i == 0                 ? ""
		        : llm_providers[i + 1] ? ", "
		                               : " or ",
		        llm_providers[i]->zName);
	kl_err(err, "provider: expected %s, got '%s'", sb.buf, zName);
	sb_free(&sb);
	return -1;
}

/* the numbers of the configuration cfg */
static void numbers_from(struct llm_config *lc, const struct config *cfg)
{
	lc->timeoutS = cfg->llmTimeoutS;
	lc->stallS = cfg->llmStallS;
	lc->maxRetries = cfg->llmRetries;
	lc->maxInFlight = cfg->llmMaxInFlight;
	lc->maxTokens = cfg->llmMaxTokens;
	lc->temperature = cfg->llmTemperature;
	lc->priceIn = cfg->priceIn;
	lc->priceOut = cfg->priceOut;
}

void llm_config_defaults(struct llm_config *lc)
{
	memset(lc, 0, sizeof *lc);
	struct config cfg;
	config_defaults(&cfg);
	numbers_from(lc, &cfg);
	config_free(&cfg);
	lc->backoffS = 1;
	lc->backoffMaxS = 60;
}

int llm_config_from(struct llm_config *lc, const struct config *cfg, char *err)
{
	llm_config_defaults(lc);
	const char *p = cfg->zProvider;
	if (!p)
		return kl_err(err,
		              "no LLM provider: give --provider openai|anthropic|command or set "
		              "`provider = ...` in the config file");
	lc->zProvider = p;
	lc->zModel = cfg->zModel;
	lc->zBaseUrl = cfg->zBaseUrl;
	lc->zCommand = cfg->zCommand;
	numbers_from(lc, cfg);
	const struct llm_provider *prov = llm_provider_find(p);
	if (!prov)
		return llm_provider_unknown(err, p);
	if (prov->needsCommand && (!cfg->zCommand || !*cfg->zCommand))
		return kl_err(err,
		              "the %s provider needs a command: set `command = "
		              "PROGRAM ARGS` in the config file",
		              p);
	if (prov->needsModel && (!cfg->zModel || !*cfg->zModel))
		return kl_err(err,
		              "no model for the %s provider: give --model NAME or set `model = "
		              "NAME` in the config file",
		              p);
	if (!prov->zKeyEnv)
		return 0;
	const char *var = cfg->zApiKeyEnv && *cfg->zApiKeyEnv ? cfg->zApiKeyEnv : prov->zKeyEnv;
	const char *key = getenv(var);
	lc->zApiKey = key;
	/* OpenAI-compatible local servers (vLLM, llama.cpp, Ollama) need no key */
	if ((!key || !*key) && (prov->keyRequired || cfg->zApiKeyEnv))
		return kl_err(err, "no API key: the environment variable %s is not set", var);
	return 0;
}
