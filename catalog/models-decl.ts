// Workflow-safe: the manifest's `models` section, the model endpoints a worker owns.
import { z } from 'zod';
import { ScriptTurnShape } from './script';
import { durationText } from './duration';

const envVarName = z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'an environment variable name');
const servedModels = z
  .array(z.string().min(1))
  .min(1)
  .meta({
    description: 'The models a run may ask this endpoint for; the first is the default.',
    examples: [['gpt-5-mini']],
  });
const apiKeyEnv = envVarName.describe(
  "The worker's environment variable holding the key. Never taken from a run, never written to history.",
);
const baseUrl = (fallback: string) => z.string().url().optional().describe(`The API's base URL. Default ${fallback}.`);
const streams = z
  .boolean()
  .optional()
  .describe(
    "Whether an agent run's turns stream from this endpoint (`doStream`), so clients see the text as it is written (`streamRun`). Default false: the endpoint is asked plainly (`doGenerate`).",
  );

/**
 * A model endpoint the worker owns: which AI SDK provider speaks to it, where it is, which key it
 * presents, which models it serves. Only the providers a worker declares are loaded.
 */
export const ModelEndpointDecl = z
  .discriminatedUnion('provider', [
    z.strictObject({
      provider: z
        .literal('openai-compatible')
        .describe('Chat Completions through `@ai-sdk/openai-compatible`: vLLM, Ollama, llama.cpp servers, gateways.'),
      base_url: z
        .string()
        .url()
        .meta({ description: "The API's base URL.", examples: ['http://localhost:8000/v1'] }),
      api_key_env: apiKeyEnv.optional(),
      models: servedModels,
      stream: streams,
    }),
    z.strictObject({
      provider: z
        .literal('openai')
        .describe('OpenAI through `@ai-sdk/openai`: the Responses API, or Chat Completions with `api: chat`.'),
      base_url: baseUrl('https://api.openai.com/v1'),
      api_key_env: apiKeyEnv,
      api: z.enum(['responses', 'chat']).default('responses').describe('Which OpenAI API the endpoint speaks.'),
      models: servedModels,
      stream: streams,
    }),
    z.strictObject({
      provider: z
        .literal('anthropic')
        .describe("Anthropic's Messages API (or a server speaking it) through `@ai-sdk/anthropic`."),
      base_url: baseUrl('https://api.anthropic.com/v1'),
      api_key_env: apiKeyEnv,
      models: servedModels,
      stream: streams,
    }),
    z.strictObject({
      provider: z.literal('scripted').describe('Plays a script: contacts nothing and reads no secret.'),
      script: z
        .array(ScriptTurnShape)
        .optional()
        .describe(
          "The turns the worker plays; a run naming this endpoint may not send its own. Absent: the run's script.",
        ),
      token_delay: z
        .union([z.number().int().nonnegative(), durationText('a duration such as "50ms" or "1s"')])
        .optional()
        .meta({
          description:
            "Pause between the words of a final answer, which the model then writes one by one into the run's stream (as a real model streams its tokens): for demos and tests that watch them arrive. Absent: the answer is written at once.",
          examples: ['50ms'],
        }),
    }),
  ])
  .describe('A model endpoint the worker owns, chosen by `provider`.');
export type ModelEndpointDecl = z.infer<typeof ModelEndpointDecl>;
/** An endpoint that is reached over the network through an AI SDK provider. */
export type ProviderEndpointDecl = Exclude<ModelEndpointDecl, { provider: 'scripted' }>;

export const ModelsDecl = z
  .record(z.string().regex(/^[a-z0-9][a-z0-9_.-]*$/, 'a lower-case endpoint name'), ModelEndpointDecl)
  .describe(
    'The model endpoints this worker serves, by lower-case name; a run names one. Absent: the scripted model only.',
  );
export type ModelsDecl = z.infer<typeof ModelsDecl>;

/** Without a `models` section a worker offers the scripted model only. */
export const DEFAULT_MODELS: ModelsDecl = { scripted: { provider: 'scripted' } };
