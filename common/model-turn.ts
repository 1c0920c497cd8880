// Workflow-safe, owned by neither side: what crosses the boundary for a model turn (what the run
// sends the model turn activity, what it answers) and the conversation's messages. Re-exported by wire.ts.
import type { ModelRequest } from '../catalog/authority';
import type { OfferedTool } from '../catalog/tool-catalog';
import type { StoredOutput } from './stored-output';

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

/** Why the model stopped, spelled as the GenAI semantic conventions spell it. */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error' | 'other';

/**
 * What the model turn activity receives: the conversation by reference (`transcript`, absent on the first
 * turn; older runs send it whole), the messages added since, and the tools by digest on the first turn
 * only (by identity: the worker reads their declarations from its manifest; older runs send them whole,
 * and name the digest on every turn).
 */
export interface ModelTurnInput {
  model: ModelRequest;
  /**
   * Who the run acts for and the MAC of its ticket for the endpoint. Both absent: the run's first opening's,
   * which the worker reads from its history (issue 45's revision; histories before tickets lack them too).
   */
  principal?: string;
  ticket?: string;
  /** What the model has not read yet, whole (absent: `results` alone). */
  messages?: ChatMessage[];
  /** The previous turn's tool results, one per call in its order: the worker writes them as tool messages. */
  results?: ToolResults;
  /** The offered tools whole (first turns recorded before format v1's first revision). */
  tools?: OfferedTool[];
  /** The offered tools by identity (first turn): the worker offers its own manifest's declarations of them. */
  offered?: string[];
  /** The offered tools' digest (`offeredDigest`): on the first turn; a later turn's is its transcript's. */
  toolsDigest?: string;
  transcript?: string;
  /**
   * The run's stream takes this turn's text as it is written, under this turn key (`turn-<n>`).
   * Absent: the turn publishes nothing (a view only; the result is the record either way).
   */
  stream?: { turn: string };
}

/**
 * A turn's tool results by position: the `i`-th answers the previous reply's `i`-th tool call, whose id
 * the worker reads from the run's transcript. The model reads each value as its JSON text, as a tool
 * message would carry it; a stored output is its envelope, the model reads it whole.
 */
export interface ToolResults {
  /** Each call's result as a JSON value (`null` where the output is stored). */
  values: unknown[];
  /** The outputs stored outside history, by their index in `values`. */
  stored?: Record<string, StoredOutput>;
}

/** A model turn's answer, whole: what the worker's model gives, and what the run reads (`readTurn`). */
export interface ModelTurnAnswer {
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

/**
 * A model turn's result as history records it: the answer without what the run restores (`readTurn`).
 * The message's `role` (always `assistant`) and empty `content` are left out, and so is the id of a
 * call the worker's scripted model named itself (`call_<turn index>_<i>`) and the name of a call
 * that names the same tool as the call before it; a call's arguments are
 * its JSON object when the model's text is exactly that object's JSON. The provider's
 * `responseModel`, `responseId` and `finishReason` stay with the turn in the run's transcript (and
 * its span); results recorded before format v1's first revision carry them, and every field whole.
 */
export interface ModelTurnResult extends Omit<ModelTurnAnswer, 'message'> {
  message: {
    role?: 'assistant';
    content?: string;
    toolCalls?: RecordedToolCall[];
  };
}

/**
 * A tool call as a result records it: `id` absent when the scripted model made it up; `name` absent
 * when it is the previous call's (a model often calls one tool several times in a turn); `args` (a
 * JSON object) in place of `arguments` when the model's text is exactly that object's JSON text.
 */
export type RecordedToolCall = { id?: string; name?: string } & (
  { arguments: string; args?: undefined } | { args: Record<string, unknown>; arguments?: undefined }
);

/** The id the worker's scripted model gives a call the script names no id for: its turn's index (from 0) and place. */
export function scriptedCallId(turnIndex: number, i: number): string {
  return `call_${turnIndex}_${i}`;
}
