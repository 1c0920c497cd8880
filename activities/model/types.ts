// The model seam: what a turn takes and returns. Plain JSON: it is written to history.
import type { OfferedTool } from '../../catalog/tool-catalog';

export interface ModelToolCall {
  id: string;
  /** The offered name (`crm__lookup_customer`), exactly as the model wrote it. */
  name: string;
  /** The arguments as text, exactly as the model typed them. */
  arguments: string;
}

export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ModelToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

/** A scripted turn: tool calls with literal arguments, or a final answer. */
export type ScriptTurn = { tool_calls: { name: string; arguments: unknown; id?: string }[] } | { final: string };

export type ModelChoice =
  | { provider: 'scripted'; name?: string; script: ScriptTurn[] }
  | {
      provider: 'openai';
      model: string;
      /** Chat Completions base URL: OpenAI, vLLM, Ollama, llama.cpp servers. */
      baseUrl?: string;
      /** The environment variable holding the API key; the key itself never enters history. */
      apiKeyEnv?: string;
      temperature?: number;
    };

export interface ModelTurnRequest {
  model: ModelChoice;
  messages: ChatMessage[];
  tools: OfferedTool[];
}

export interface ModelTurnResult {
  message: Extract<ChatMessage, { role: 'assistant' }>;
  usage: { inputTokens: number; outputTokens: number };
  /** The model that answered, as the provider reports it. */
  responseModel?: string;
}

export function modelName(choice: ModelChoice): string {
  return choice.provider === 'scripted' ? (choice.name ?? 'scripted') : choice.model;
}
