// Worker side: an AI SDK provider whose models play the script a run carries, built on the `ai`
// package's MockLanguageModelV4. For the tests and the demo; a real worker passes a real provider.
import type {
  JSONValue,
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  ProviderV4,
} from '@ai-sdk/provider';
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV4, MockProviderV4 } from 'ai/test';

/** One turn: tool calls with literal arguments, or a final answer (the shape of toolplane's scripted model). */
export type ScriptedTurn = { tool_calls: { name: string; arguments: JSONValue; id?: string }[] } | { final: string };

const usage = (input: number, output: number): LanguageModelV4GenerateResult['usage'] => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

/** Plays turn n of the script, where n is the number of model turns already in the prompt. */
export function playScript(options: LanguageModelV4CallOptions): LanguageModelV4GenerateResult {
  const script = (options.providerOptions?.scripted?.script ?? []) as JSONValue as ScriptedTurn[];
  const turn = options.prompt.filter((m) => m.role === 'assistant').length;
  const step = script[turn];
  if (!step || 'final' in step)
    return {
      content: [{ type: 'text', text: step?.final ?? '(the script has no more turns)' }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: usage(100, 10),
      warnings: [],
    };
  return {
    content: step.tool_calls.map((c, i) => ({
      type: 'tool-call' as const,
      toolCallId: c.id ?? `call_${turn}_${i}`,
      toolName: c.name,
      input: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
    })),
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage: usage(100, 20),
    warnings: [],
  };
}

/** The turn as a stream: a final answer word by word, `delayMs` apart, as a streaming model writes it. */
export function streamScript(
  options: LanguageModelV4CallOptions,
  delayMs: number,
): ReadableStream<LanguageModelV4StreamPart> {
  const result = playScript(options);
  const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  for (const c of result.content) {
    if (c.type === 'text') {
      parts.push({ type: 'text-start', id: 'text-0' });
      for (const word of c.text.match(/\s*\S+\s*/g) ?? [])
        parts.push({ type: 'text-delta', id: 'text-0', delta: word });
      parts.push({ type: 'text-end', id: 'text-0' });
    } else if (c.type === 'tool-call') parts.push(c);
  }
  parts.push({ type: 'finish', finishReason: result.finishReason, usage: result.usage });
  return simulateReadableStream({ chunks: parts, chunkDelayInMs: delayMs });
}

/**
 * A provider serving `scripted` (and any other model id) with the script-playing mock model; streamed
 * (`streamText`), it writes a word every `tokenDelayMs` (default 0).
 */
export function scriptedProvider(options: { tokenDelayMs?: number } = {}): ProviderV4 {
  const model = new MockLanguageModelV4({
    provider: 'toolplane.scripted',
    modelId: 'scripted',
    doGenerate: (options) => Promise.resolve(playScript(options)),
    doStream: (call) => Promise.resolve({ stream: streamScript(call, options.tokenDelayMs ?? 0) }),
  });
  const provider = new MockProviderV4({ languageModels: { scripted: model } });
  return provider;
}
