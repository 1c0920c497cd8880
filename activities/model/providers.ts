// The worker's model endpoints as AI SDK language models. Only the provider packages an endpoint
// declares are loaded; URL and key come from the worker's configuration, never from a run.
import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { ProviderEndpointDecl } from '../../catalog/authority';
import { ModelFailureType } from '../../catalog/failure-types';
import { ModelFailure } from './model-failure';

/** The GenAI semantic-convention name of the provider an endpoint speaks to. */
export function providerName(decl: ProviderEndpointDecl): string {
  return decl.provider === 'anthropic' ? 'anthropic' : 'openai';
}

/** Reads the key from the variable the worker's configuration names; a declared but unset variable fails closed. */
function apiKey(endpoint: string, variable: string | undefined): string | undefined {
  if (variable === undefined) return undefined;
  const value = process.env[variable];
  if (!value)
    throw new ModelFailure(
      ModelFailureType.Auth,
      `model endpoint "${endpoint}" presents the key in $${variable}, which is not set in this worker's environment`,
    );
  return value;
}

type Factory = (modelId: string) => LanguageModelV4;

async function factoryFor(endpoint: string, decl: ProviderEndpointDecl): Promise<Factory> {
  const key = apiKey(endpoint, decl.api_key_env);
  switch (decl.provider) {
    case 'openai-compatible': {
      const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
      const p = createOpenAICompatible({ name: endpoint, baseURL: decl.base_url, apiKey: key, includeUsage: true });
      return (id) => p.chatModel(id);
    }
    case 'openai': {
      const { createOpenAI } = await import('@ai-sdk/openai');
      const p = createOpenAI({ baseURL: decl.base_url, apiKey: key, name: endpoint });
      return decl.api === 'chat' ? (id) => p.chat(id) : (id) => p.responses(id);
    }
    case 'anthropic': {
      const { createAnthropic } = await import('@ai-sdk/anthropic');
      const p = createAnthropic({ baseURL: decl.base_url, apiKey: key });
      return (id) => p.languageModel(id);
    }
  }
}

/**
 * The AI SDK language model for one of the worker's endpoints. A provider is built per turn, so a
 * key rotated in the worker's environment is read on the next turn; its package is loaded once.
 */
export async function languageModelFor(
  endpoint: string,
  decl: ProviderEndpointDecl,
  modelId: string,
): Promise<LanguageModelV4> {
  return (await factoryFor(endpoint, decl))(modelId);
}
