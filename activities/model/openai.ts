// OpenAI-compatible Chat Completions over HTTP (OpenAI, vLLM, Ollama, llama.cpp servers).
import { ApplicationFailure } from '@temporalio/activity';
import type { ModelEndpointDecl } from '../../catalog/authority';
import type { ChatMessage, ModelTurnRequest, ModelTurnResult } from './types';

/** The endpoint as the worker declared it: URL and key variable never come from a run. */
export interface OpenAITarget {
  decl: Extract<ModelEndpointDecl, { provider: 'openai-compatible' }>;
  model: string;
  temperature?: number;
}

function toWire(m: ChatMessage): Record<string, unknown> {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
  if (m.role === 'assistant') {
    return {
      role: 'assistant',
      content: m.content || null,
      ...(m.toolCalls?.length
        ? {
            tool_calls: m.toolCalls.map((c) => ({
              id: c.id,
              type: 'function',
              function: { name: c.name, arguments: c.arguments },
            })),
          }
        : {}),
    };
  }
  return { role: m.role, content: m.content };
}

interface WireResponse {
  model?: string;
  choices?: {
    message?: { content?: string | null; tool_calls?: { id: string; function: { name: string; arguments: string } }[] };
  }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

export async function openaiTurn(
  choice: OpenAITarget,
  req: ModelTurnRequest,
  signal?: AbortSignal,
): Promise<ModelTurnResult> {
  const base = choice.decl.base_url.replace(/\/$/, '');
  const keyVar = choice.decl.api_key_env;
  const key = keyVar ? process.env[keyVar] : undefined;
  const body = {
    model: choice.model,
    messages: req.messages.map(toWire),
    ...(req.tools.length
      ? {
          tools: req.tools.map((t) => ({
            type: 'function',
            function: { name: t.name, description: t.description, parameters: t.inputSchema },
          })),
        }
      : {}),
    ...(choice.temperature !== undefined ? { temperature: choice.temperature } : {}),
  };
  let res: Response;
  try {
    res = await fetch(`${base}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify(body),
      signal,
    });
  } catch (err) {
    throw ApplicationFailure.retryable(`cannot reach ${base}: ${(err as Error).message}`, 'ModelUnavailable');
  }
  if (res.status === 401 || res.status === 403)
    throw ApplicationFailure.nonRetryable(
      `${base} refused the credentials in $${keyVar ?? '(none)'} (${res.status})`,
      'ModelAuth',
    );
  if (res.status === 400 || res.status === 404 || res.status === 422)
    throw ApplicationFailure.nonRetryable(
      `${base} rejected the request (${res.status}): ${(await res.text()).slice(0, 500)}`,
      'ModelRequestInvalid',
    );
  if (!res.ok) throw ApplicationFailure.retryable(`${base} answered ${res.status}`, 'ModelUnavailable');
  const json = (await res.json()) as WireResponse;
  const msg = json.choices?.[0]?.message;
  if (!msg) throw ApplicationFailure.retryable(`${base} answered without a choice`, 'ModelUnavailable');
  return {
    message: {
      role: 'assistant',
      content: msg.content ?? '',
      ...(msg.tool_calls?.length
        ? {
            toolCalls: msg.tool_calls.map((c) => ({
              id: c.id,
              name: c.function.name,
              arguments: c.function.arguments,
            })),
          }
        : {}),
    },
    usage: { inputTokens: json.usage?.prompt_tokens ?? 0, outputTokens: json.usage?.completion_tokens ?? 0 },
    responseModel: json.model,
  };
}
