// Workflow-safe: the model's side of an agent run. The conversation lives on the worker, by
// reference (`transcript`); each turn sends only what the model has not read yet, and the offered
// tools by digest after the first turn. Turns are numbered from 1 in the Web UI: `model turn 3`.
import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { ModelRequest } from '../../catalog/authority';
import { offeredDigest, type OfferedTool } from '../../catalog/tool-catalog';
import { modelPermit, permitMac, type RunTicket } from '../../common/ticket';
import type { ChatMessage, ModelActivities, ModelToolCall, ModelTurnResult } from '../../common/wire';
import { ModelFailureType, RunFailureType } from '../../catalog/failure-types';

const { modelTurn } = proxyActivities<ModelActivities>({
  startToCloseTimeout: '2m',
  // The activity heartbeats while it waits for the model: a worker lost mid-turn is noticed in seconds,
  // and the turn (and its stream of tokens) starts again on another.
  heartbeatTimeout: '10s',
  retry: {
    maximumAttempts: 3,
    initialInterval: '1s',
    nonRetryableErrorTypes: [
      ModelFailureType.Auth,
      ModelFailureType.RequestInvalid,
      RunFailureType.ModelRefused,
      ModelFailureType.OutputTooLarge,
      RunFailureType.TranscriptUnavailable,
    ],
  },
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
    /** Who the run acts for and its ticket: each turn presents the MAC for the endpoint. */
    private readonly access: { principal: string; ticket: RunTicket },
    private readonly model: ModelRequest,
    /** The tools the run's model is offered. */
    readonly offered: OfferedTool[],
    /** The conversation so far, by reference (absent before the first turn). */
    public transcript: string | undefined,
    /** What the model has not read yet. */
    public unread: ChatMessage[],
    /** Whether each turn's text streams to the run's clients as it is written. */
    private readonly streamTokens = true,
  ) {
    this.modelByRef = byReference(model);
    this.toolsDigest = offeredDigest(offered);
  }

  /** The opening messages of a run: its system prompt, if any, and the user's prompt. */
  static opening(prompt: string, systemPrompt?: string): ChatMessage[] {
    return [
      ...(systemPrompt ? [{ role: 'system' as const, content: systemPrompt }] : []),
      { role: 'user', content: prompt },
    ];
  }

  /** Asks the model for its next turn with what it has not read; the transcript then holds its reply. */
  async take(number: number): Promise<ModelTurnResult> {
    const first = this.transcript === undefined;
    const turn = await modelTurn.executeWithOptions({ summary: `model turn ${number}` }, [
      {
        model: first ? this.model : this.modelByRef,
        principal: this.access.principal,
        ticket: permitMac(this.access.ticket, modelPermit(this.model.endpoint)) ?? '',
        transcript: this.transcript,
        messages: this.unread,
        ...(this.streamTokens ? { stream: { turn: turnKey(number) } } : {}),
        toolsDigest: this.toolsDigest,
        ...(first ? { tools: this.offered } : {}),
      },
    ]);
    if (!turn.transcript)
      throw ApplicationFailure.nonRetryable(
        'the model turn kept no transcript for the run',
        RunFailureType.TranscriptUnavailable,
      );
    this.transcript = turn.transcript;
    this.unread = [];
    return turn;
  }

  /** The tool results of a turn: what the model reads next. */
  deliver(results: ChatMessage[]): void {
    this.unread = results;
  }
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
