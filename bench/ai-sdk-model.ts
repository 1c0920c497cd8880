// The `ai` package's mock language model playing the bench's script, as an AI SDK provider for
// @temporalio/ai-sdk's plugin. The model id names the workload: `bench:<calls>:<perTurn>`.
import type { LanguageModelV4, ProviderV4 } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { turnCalls } from './activities';

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

function scripted(modelId: string): LanguageModelV4 {
  const [, calls, perTurn] = modelId.split(':').map(Number);
  return new MockLanguageModelV4({
    modelId,
    doGenerate: async (options) => {
      const turn = options.prompt.filter((m) => m.role === 'assistant').length;
      const next = turnCalls(turn, calls!, perTurn!);
      if (next.length === 0)
        return {
          content: [{ type: 'text', text: 'done' }],
          finishReason: { unified: 'stop', raw: undefined },
          usage: usage(10, 1),
          warnings: [],
        };
      return {
        content: next.map((args, i) => ({
          type: 'tool-call' as const,
          toolCallId: `call_${turn}_${i}`,
          toolName: 'crm__lookup_customer',
          input: JSON.stringify(args),
        })),
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage: usage(10, next.length * 8),
        warnings: [],
      };
    },
  });
}

export function benchModelProvider(): ProviderV4 {
  const unsupported = (kind: string) => () => {
    throw new Error(`the bench provider has no ${kind} models`);
  };
  return {
    specificationVersion: 'v4',
    languageModel: scripted,
    embeddingModel: unsupported('embedding'),
    imageModel: unsupported('image'),
  };
}
