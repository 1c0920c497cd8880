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
/**
 * What the model turn activity receives. Runs before transcripts by reference send a whole
 * request every turn; a run now sends its conversation by reference (`transcript`, absent on the
 * first turn), only the messages added since, and the offered tools by digest (their schemas on
 * the first turn only).
 */
export interface ModelTurnInput {
  model: ModelRequest;
  messages: ChatMessage[];
  tools?: OfferedTool[];
  toolsDigest?: string;
  transcript?: string;
}

export interface ModelTurnResult {
  message: Extract<ChatMessage, { role: 'assistant' }>;
  usage: { inputTokens: number; outputTokens: number };
  /** The model that answered, as the provider reports it. */
  responseModel?: string;
  /** Absent in results recorded before providers reported it. */
  finishReason?: FinishReason;
  /** The provider's id for the response. */
  responseId?: string;
  /** By reference: the conversation including this reply, for the next turn to name. */
  transcript?: string;
}
