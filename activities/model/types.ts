// The model seam: what a turn takes and returns. Plain JSON: it is written to history.
import type { ModelRequest } from '../../catalog/authority';
import type { OfferedTool } from '../../catalog/tool-catalog';
import type { StoredOutput } from '../../common/stored-output';

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
  /** `stored`: the output is outside history; the model activity reads it back for this run only. */
  | { role: 'tool'; toolCallId: string; content: string; stored?: StoredOutput };

/** A scripted turn: tool calls with literal arguments, or a final answer. */
export type ScriptTurn = { tool_calls: { name: string; arguments: unknown; id?: string }[] } | { final: string };

export interface ModelTurnRequest {
  model: ModelRequest;
  messages: ChatMessage[];
  tools: OfferedTool[];
}

/** Why the model stopped, spelled as the GenAI semantic conventions spell it. */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error' | 'other';

export interface ModelTurnResult {
  message: Extract<ChatMessage, { role: 'assistant' }>;
  usage: { inputTokens: number; outputTokens: number };
  /** The model that answered, as the provider reports it. */
  responseModel?: string;
  /** Absent in results recorded before providers reported it. */
  finishReason?: FinishReason;
  /** The provider's id for the response. */
  responseId?: string;
}
