// One model turn through an AI SDK provider: toolplane's transcript in, the assistant's message,
// usage, finish reason and tool-call ids out. The provider is called once; Temporal retries.
import type {
  LanguageModelV4,
  LanguageModelV4FunctionTool,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
} from '@ai-sdk/provider';
import type { OfferedTool } from '../../catalog/tool-catalog';
import { classifyModelError, ModelFailure, ModelFailureType } from './model-failure';
import type { ModelTurnRequest } from './types';
import type { ChatMessage, FinishReason, ModelToolCall, ModelTurnResult } from '../../common/wire';

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

export function fromResult(result: LanguageModelV4GenerateResult, where: string): ModelTurnResult {
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

/** Sends one turn. Every failure comes out as a typed `ModelFailure`; a cancelled activity's abort passes through. */
export async function aiSdkTurn(
  model: LanguageModelV4,
  req: ModelTurnRequest,
  where: string,
  signal?: AbortSignal,
): Promise<ModelTurnResult> {
  let result: LanguageModelV4GenerateResult;
  try {
    result = await model.doGenerate({
      prompt: toPrompt(req.messages),
      ...(req.tools.length ? { tools: toTools(req.tools) } : {}),
      ...(req.model.temperature !== undefined ? { temperature: req.model.temperature } : {}),
      abortSignal: signal,
    });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw classifyModelError(err, where);
  }
  return fromResult(result, where);
}
