// One model turn through an AI SDK provider: toolplane's transcript in, the assistant's message,
// usage, finish reason and tool-call ids out. The provider is called once; Temporal retries.
import {
  APICallError,
  UnsupportedFunctionalityError,
  type LanguageModelV4,
  type LanguageModelV4CallOptions,
  type LanguageModelV4Content,
  type LanguageModelV4FunctionTool,
  type LanguageModelV4GenerateResult,
  type LanguageModelV4Prompt,
  type LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import type { OfferedTool } from '../../catalog/tool-catalog';
import { ModelFailureType } from '../../catalog/failure-types';
import { classifyModelError, ModelFailure } from './model-failure';
import type { ModelTurnRequest } from './types';
import type { ChatMessage, FinishReason, ModelToolCall, ModelTurnAnswer } from '../../common/wire';

function parsedInput(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The transcript as the AI SDK's provider-level prompt; a tool result names the tool its call named. */
export function toPrompt(messages: ChatMessage[]): LanguageModelV4Prompt {
  const toolNames = new Map<string, string>();
  return messages.map((m): LanguageModelV4Prompt[number] => {
    switch (m.role) {
      case 'system':
        return { role: 'system', content: m.content };
      case 'user':
        return { role: 'user', content: [{ type: 'text', text: m.content }] };
      case 'assistant':
        for (const c of m.toolCalls ?? []) toolNames.set(c.id, c.name);
        return {
          role: 'assistant',
          content: [
            ...(m.content ? [{ type: 'text' as const, text: m.content }] : []),
            ...(m.toolCalls ?? []).map((c) => ({
              type: 'tool-call' as const,
              toolCallId: c.id,
              toolName: c.name,
              input: parsedInput(c.arguments),
            })),
          ],
        };
      case 'tool':
        return {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: m.toolCallId,
              toolName: toolNames.get(m.toolCallId) ?? 'unknown',
              output: { type: 'text', value: m.content },
            },
          ],
        };
    }
  });
}

export function toTools(tools: OfferedTool[]): LanguageModelV4FunctionTool[] {
  return tools.map((t) => ({
    type: 'function',
    name: t.name,
    description: t.description,
    inputSchema: t.inputSchema,
  }));
}

/** The GenAI semantic-convention spelling of the AI SDK's finish reason. */
function finishReasonOf(r: LanguageModelV4GenerateResult['finishReason']): FinishReason {
  switch (r.unified) {
    case 'tool-calls':
      return 'tool_calls';
    case 'content-filter':
      return 'content_filter';
    case 'stop':
    case 'length':
    case 'error':
      return r.unified;
    default:
      return 'other';
  }
}

export function fromResult(result: LanguageModelV4GenerateResult, where: string): ModelTurnAnswer {
  if (!Array.isArray(result.content))
    throw new ModelFailure(ModelFailureType.ResponseMalformed, `${where} answered without content`);
  const text = result.content
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('');
  const toolCalls: ModelToolCall[] = result.content
    .filter((c) => c.type === 'tool-call' && !c.providerExecuted)
    .map((c) => {
      const call = c as Extract<typeof c, { type: 'tool-call' }>;
      return { id: call.toolCallId, name: call.toolName, arguments: call.input };
    });
  return {
    message: { role: 'assistant', content: text, ...(toolCalls.length ? { toolCalls } : {}) },
    usage: {
      inputTokens: result.usage.inputTokens.total ?? 0,
      outputTokens: result.usage.outputTokens.total ?? 0,
    },
    finishReason: finishReasonOf(result.finishReason),
    ...(result.response?.modelId ? { responseModel: result.response.modelId } : {}),
    ...(result.response?.id ? { responseId: result.response.id } : {}),
  };
}

/**
 * Sends one turn. Every failure comes out as a typed `ModelFailure`; a cancelled activity's abort passes
 * through. With `onText` the turn streams (`doStream`), each text delta handed over as it arrives; a
 * provider that cannot stream answers through `doGenerate`. The result is the same either way.
 */
export async function aiSdkTurn(
  model: LanguageModelV4,
  req: ModelTurnRequest,
  where: string,
  signal?: AbortSignal,
  onText?: (delta: string) => void,
): Promise<ModelTurnAnswer> {
  const options: LanguageModelV4CallOptions = {
    prompt: toPrompt(req.messages),
    ...(req.tools.length ? { tools: toTools(req.tools) } : {}),
    ...(req.model.temperature !== undefined ? { temperature: req.model.temperature } : {}),
    abortSignal: signal,
  };
  let result: LanguageModelV4GenerateResult;
  try {
    result = onText ? await streamed(model, options, onText) : await model.doGenerate(options);
  } catch (err) {
    if (signal?.aborted) throw err;
    throw classifyModelError(err, where);
  }
  return fromResult(result, where);
}

/** A stream's parts, assembled as they arrive into what `doGenerate` would have answered. */
class StreamAssembly {
  readonly content: LanguageModelV4Content[] = [];
  readonly texts = new Map<string, string>();
  finish: Extract<LanguageModelV4StreamPart, { type: 'finish' }> | undefined;
  written = false;

  constructor(
    private response: LanguageModelV4GenerateResult['response'],
    private readonly onText: (delta: string) => void,
  ) {}

  /** Whether the stream held nothing a stream holds (an endpoint that ignored the stream request). */
  get empty(): boolean {
    return !this.finish && !this.written && this.content.length === 0 && this.texts.size === 0;
  }

  take(part: LanguageModelV4StreamPart): void {
    switch (part.type) {
      case 'text-start':
        this.texts.set(part.id, '');
        break;
      case 'text-delta':
        this.texts.set(part.id, (this.texts.get(part.id) ?? '') + part.delta);
        this.written = true;
        this.onText(part.delta);
        break;
      case 'text-end':
        this.content.push({ type: 'text', text: this.texts.get(part.id) ?? '' });
        this.texts.delete(part.id);
        break;
      case 'tool-call':
        this.content.push(part);
        break;
      case 'response-metadata':
        this.response = { ...this.response, id: part.id, modelId: part.modelId, timestamp: part.timestamp };
        break;
      case 'finish':
        this.finish = part;
        break;
      case 'error':
        throw part.error;
      default:
        break;
    }
  }

  result(): LanguageModelV4GenerateResult {
    // A text block the provider never closed still counts.
    for (const text of this.texts.values()) this.content.push({ type: 'text', text });
    return {
      content: this.content,
      finishReason: this.finish?.finishReason ?? { unified: 'other', raw: undefined },
      usage: this.finish?.usage ?? {
        inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: undefined, text: undefined, reasoning: undefined },
      },
      warnings: [],
      ...(this.response ? { response: this.response } : {}),
    };
  }
}

/**
 * A streamed call, assembled into what `doGenerate` would have answered. A provider that cannot stream
 * (it says so, or its endpoint answers a stream request with nothing a stream holds) is asked again
 * with `doGenerate`; a request the endpoint refused (an HTTP error) is not sent again here.
 */
async function streamed(
  model: LanguageModelV4,
  options: LanguageModelV4CallOptions,
  onText: (delta: string) => void,
): Promise<LanguageModelV4GenerateResult> {
  let started;
  try {
    started = await model.doStream(options);
  } catch (err) {
    if (UnsupportedFunctionalityError.isInstance(err)) return model.doGenerate(options);
    throw err;
  }
  const assembly = new StreamAssembly(started.response, onText);
  const reader = started.stream.getReader();
  try {
    for (;;) {
      const { done, value: part } = await reader.read();
      if (done) break;
      assembly.take(part);
    }
  } catch (err) {
    if (assembly.written || assembly.content.length > 0 || APICallError.isInstance(err)) throw err;
    return model.doGenerate(options);
  }
  // An endpoint that ignored the stream request answered nothing a stream holds: ask it plainly.
  if (assembly.empty) return model.doGenerate(options);
  return assembly.result();
}
