// Workflow-safe: the model's side of an agent run. The conversation lives on the worker, by
// reference (`transcript`); each turn sends only what the model has not read yet, and the offered
// tools by digest after the first turn. Turns are numbered from 1 in the Web UI: `model turn 3`.
import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { ModelRequest } from '../../catalog/authority';
import { offeredDigest, type OfferedTool } from '../../catalog/tool-catalog';
import { modelPermit, permitMac, type RunTicket } from '../../common/ticket';
import {
  scriptedCallId,
  type ChatMessage,
  type ModelActivities,
  type ModelToolCall,
  type ModelTurnAnswer,
  type ModelTurnResult,
  type ToolResults,
} from '../../common/wire';
import type { StoredOutput } from '../../common/stored-output';
import { RunFailureType } from '../../catalog/failure-types';

const { modelTurn } = proxyActivities<ModelActivities>({
  startToCloseTimeout: '2m',
  // The activity heartbeats while it waits for the model: a worker lost mid-turn is noticed in seconds,
  // and the turn (and its stream of tokens) starts again on another.
  heartbeatTimeout: '10s',
  // The activity makes its final failures non-retryable itself (refused, invalid, too large, no
  // transcript), so the policy names no types: it is recorded with every turn.
  retry: { maximumAttempts: 3, initialInterval: '1s' },
});

/** The key a turn's tokens and its `turn-completed` event carry: its number in the whole chain. */
export function turnKey(number: number): string {
  return `turn-${number}`;
}

/** A model by endpoint name only: the worker holds any script it plays, and every key. */
export function byReference(model: ModelRequest): ModelRequest {
  const { script: _script, ...byRef } = model;
  return byRef;
}

export class Conversation {
  private readonly toolsDigest: string;
  /** The model by endpoint name only (`byReference`). */
  readonly modelByRef: ModelRequest;

  constructor(
    /**
     * Who the run acts for and its ticket: each turn presents the MAC for the endpoint, unless the ticket
     * is the run's first opening's (`inOpening`), where the worker reads both.
     */
    private readonly access: { principal: string; ticket: RunTicket; inOpening?: boolean },
    private readonly model: ModelRequest,
    /** The tools the run's model is offered. */
    readonly offered: OfferedTool[],
    /** The conversation so far, by reference (absent before the first turn). */
    public transcript: string | undefined,
    /** What the model has not read yet (the opening, or what a continued run carries). */
    private messages: ChatMessage[],
    /** Whether each turn's text streams to the run's clients as it is written. */
    private readonly streamTokens = true,
  ) {
    this.modelByRef = byReference(model);
    this.toolsDigest = offeredDigest(offered);
  }

  /** The tool results of the last turn, one per call in its order (none before the first turn's calls). */
  private replies: ToolReply[] | undefined;

  /** What the model has not read yet, as messages: what a run continuing as new carries. */
  get unread(): ChatMessage[] {
    return this.replies ? this.replies.map(messageOf) : this.messages;
  }

  /** The opening messages of a run: its system prompt, if any, and the user's prompt. */
  static opening(prompt: string, systemPrompt?: string): ChatMessage[] {
    return [
      ...(systemPrompt ? [{ role: 'system' as const, content: systemPrompt }] : []),
      { role: 'user', content: prompt },
    ];
  }

  /**
   * Asks the model for its next turn with what it has not read; the transcript then holds its reply.
   * The first turn names the offered tools by identity and their digest; later turns name the transcript.
   */
  async take(number: number): Promise<ModelTurnAnswer> {
    const first = this.transcript === undefined;
    const result = await modelTurn.executeWithOptions({ summary: `model turn ${number}` }, [
      {
        model: first ? this.model : this.modelByRef,
        ...(this.access.inOpening
          ? {}
          : {
              principal: this.access.principal,
              ticket: permitMac(this.access.ticket, modelPermit(this.model.endpoint)) ?? '',
            }),
        transcript: this.transcript,
        ...this.sending(),
        ...(this.streamTokens ? { stream: { turn: turnKey(number) } } : {}),
        ...(first ? { toolsDigest: this.toolsDigest, offered: this.offered.map((o) => o.toolId) } : {}),
      },
    ]);
    if (!result.transcript)
      throw ApplicationFailure.nonRetryable(
        'the model turn kept no transcript for the run',
        RunFailureType.TranscriptUnavailable,
      );
    this.transcript = result.transcript;
    this.messages = [];
    this.replies = undefined;
    return readTurn(result, number - 1);
  }

  /**
   * What a turn sends: the last turn's tool results by position (the worker names each by its call's
   * id), or messages whole (the opening, a continued run's, a result no JSON can carry).
   */
  private sending(): { messages: ChatMessage[] } | { results: ToolResults } {
    const replies = this.replies;
    if (!replies || this.transcript === undefined || replies.some((r) => !('stored' in r) && r.value === undefined))
      return { messages: this.unread };
    const stored: Record<string, StoredOutput> = {};
    const values = replies.map((r, i) => {
      if (!('stored' in r)) return r.value;
      stored[i] = r.stored;
      return null;
    });
    return { results: { values, ...(Object.keys(stored).length ? { stored } : {}) } };
  }

  /** The tool results of a turn, one per call in the turn's order: what the model reads next. */
  deliver(replies: ToolReply[]): void {
    this.replies = replies;
    this.messages = [];
  }
}

/** A tool call's result as the model reads it: a JSON value, or an output stored outside history. */
export type ToolReply = { toolCallId: string; value: unknown } | { toolCallId: string; stored: StoredOutput };

/** The tool message a reply stands for: its value as JSON text, a stored output's preview and envelope. */
function messageOf(r: ToolReply): ChatMessage {
  return 'stored' in r
    ? { role: 'tool', toolCallId: r.toolCallId, content: r.stored.preview, stored: r.stored }
    : { role: 'tool', toolCallId: r.toolCallId, content: JSON.stringify(r.value) };
}

/**
 * A turn's result whole again (see `ModelTurnResult`): the assistant's role, empty content, the
 * ids the scripted model named calls by (the turn's index in the chain, from 0), the name a call
 * shares with the call before it, and each call's arguments as text (recorded as the object they
 * are the exact JSON of). Results recorded whole read as they were.
 */
export function readTurn(result: ModelTurnResult, turnIndex: number): ModelTurnAnswer {
  const { content, toolCalls } = result.message;
  let name = '';
  const calls = toolCalls?.map((c, i): ModelToolCall => {
    name = c.name ?? name;
    return { id: c.id ?? scriptedCallId(turnIndex, i), name, arguments: c.arguments ?? JSON.stringify(c.args) };
  });
  return {
    ...result,
    message: { role: 'assistant', content: content ?? '', ...(calls ? { toolCalls: calls } : {}) },
  };
}

/** A model's call as the run reads it: the offer it named and its arguments (text that is no JSON stays text). */
export function readCall(
  offered: readonly OfferedTool[],
  c: ModelToolCall,
): { offer?: OfferedTool; toolId: string; args: unknown } {
  const offer = offered.find((o) => o.name === c.name || o.toolId === c.name);
  let args: unknown;
  try {
    args = JSON.parse(c.arguments);
  } catch {
    args = c.arguments;
  }
  return { offer, toolId: offer?.toolId ?? c.name, args };
}
