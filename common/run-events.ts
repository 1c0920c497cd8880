// What a run streams to its clients as it happens (toolplane's own stream, common/stream-protocol.ts):
// the model's text as it is written, and the run's effects. One union for both sides: the workflow
// and the model activity publish these, `streamRun` (toolplane/client) reads them. The stream is a
// view: nothing in toolplane decides from it, and anyone who may signal the run may publish tokens
// into it (see streamRun).
import type { JournalEntry } from './journal';

/** The stream topics a run publishes to. */
export const RunTopic = {
  /** Model text, from the model activity (one publisher per attempt, batched). */
  Tokens: 'toolplane.tokens',
  /** The run's effects, published by the workflow itself. */
  Effects: 'toolplane.effects',
  /**
   * The AI SDK's raw stream parts of `governedModel`'s streaming calls: @temporalio/ai-sdk publishes
   * them on its own stream (@temporalio/workflow-streams), not on the run's; a workflow that wants them
   * keeps that library's `WorkflowStream` itself.
   */
  AiSdkParts: 'toolplane.ai-sdk',
} as const;
export type RunTopic = (typeof RunTopic)[keyof typeof RunTopic];

/**
 * Model text as it is written: `deltas[i]` is the turn's token number `index + i`. A turn's attempt
 * that dies mid-stream has published some tokens; its retry publishes them again from index 0, and a
 * reader skips the indices it delivered (`streamRun` does). The turn's `turn-completed` event carries
 * the text the run recorded: that, not the tokens, is the authority.
 *
 * @experimental
 */
export interface TokensEvent {
  type: 'tokens';
  /** The turn: `turn-<n>` in an agent run (numbered over the whole chain), `call-<runId>/<activityId>` on the AI SDK path. */
  turn: string;
  /** The attempt of the model activity that wrote them. */
  attempt: number;
  index: number;
  deltas: string[];
}

/**
 * A model turn ended: what the run recorded.
 *
 * @experimental
 */
export interface TurnCompletedEvent {
  type: 'turn-completed';
  turn: string;
  text: string;
  /** The tool calls the model asked for, by the model's call id. */
  toolCalls: { id: string; name: string }[];
  usage: { inputTokens: number; outputTokens: number };
}

/**
 * Which call an event is about: its position in the run and its tool, as the journal names them.
 *
 * @experimental
 */
export interface CallRef {
  /** The call's position in the run (the journal entry's `position`; a chain numbers on). */
  position: number;
  /** The tool's identity (`tool://server/name`). */
  toolId: string;
}

/**
 * What the call events share: which call, its effect key, and its journal entry as it stands.
 *
 * @experimental
 */
export interface CallEventBase extends CallRef {
  /** The call's effect key (its activity id), once the gate let its arguments through. */
  effectKey?: string;
  /** The journal entry at the time of the event, as `readJournal` would show it. */
  entry: JournalEntry;
}

/**
 * The gate (and, where asked, a person) let the call go out: its activity is scheduled next.
 *
 * @experimental
 */
export interface CallDecidedEvent extends CallEventBase {
  type: 'call-decided';
  effectKey: string;
  decision: 'allowed' | 'approved';
}

/**
 * The call's effect happened (its outcome is `ok`, possibly after recovery).
 *
 * @experimental
 */
export interface CallLandedEvent extends CallEventBase {
  type: 'call-landed';
  effectKey: string;
}

/**
 * The call was refused (by the gate, a limit, or a person's denial); no effect exists.
 *
 * @experimental
 */
export interface CallRefusedEvent extends CallEventBase {
  type: 'call-refused';
  /** The rule that refused it (`unreachable`, `taint:/recipient`, `protected_field:/to`, ...). */
  rule?: string;
  /** Why, as the model is told. */
  reason: string;
}

/**
 * The call failed (its tool failed, or it ended in doubt or aborted).
 *
 * @experimental
 */
export interface CallFailedEvent extends CallEventBase {
  type: 'call-failed';
}

/**
 * A call whose outcome is unknown waits for a person (`retry`, `landed` or `abort`).
 *
 * @experimental
 */
export interface CallEscalatedEvent extends CallRef {
  type: 'call-escalated';
  /** The call's effect key: the one `approve`, `deny` or `resolve` names. */
  effectKey: string;
  /** Why its outcome is unknown. */
  reason: string;
  /** Workflow time (ms since the epoch) after which the call fails as in doubt. */
  deadline: number;
}

/**
 * A person answered an escalated call, or nobody did in time.
 *
 * @experimental
 */
export interface EscalationDecidedEvent extends CallRef {
  type: 'escalation-decided';
  /** The call's effect key: the one `approve`, `deny` or `resolve` names. */
  effectKey: string;
  decision: 'retry' | 'landed' | 'abort' | 'expired';
  /** Who decided, as the run recorded it (the verified subject, on a worker that verifies approvers). */
  by?: string;
}

/**
 * A call waits for a person's approval (`approve` or `deny` under its effect key).
 *
 * @experimental
 */
export interface ApprovalRequestedEvent extends CallRef {
  type: 'approval-requested';
  /** The call's effect key: the one `approve`, `deny` or `resolve` names. */
  effectKey: string;
  /** The call's arguments as the workflow holds them (after the gate's substitutions and redactions). */
  args: unknown;
  /** Why a person is asked. */
  reason: string;
  /** The gate's rule the approval is asked under. */
  rule: string;
  /** Workflow time (ms since the epoch) after which the call is denied. */
  deadline: number;
  /** The model's id for the tool call this answers, when a model made it. */
  modelCallId?: string;
}

/**
 * A person approved or denied the call, or nobody did in time (`expired`, a denial).
 *
 * @experimental
 */
export interface ApprovalDecidedEvent extends CallRef {
  type: 'approval-decided';
  /** The call's effect key: the one `approve`, `deny` or `resolve` names. */
  effectKey: string;
  decision: 'approve' | 'deny' | 'expired';
  /** Who decided, as the run recorded it (the verified subject, on a worker that verifies approvers). */
  by?: string;
  /** The reason the person gave. */
  reason?: string;
}

/**
 * A call waits for the run's principal to vouch for one value (`confirm` or `reject` under its effect key).
 *
 * @experimental
 */
export interface ConfirmationRequestedEvent extends CallRef {
  type: 'confirmation-requested';
  /** The call's effect key: the one `confirm` and `reject` name. */
  effectKey: string;
  /** The argument, the exact value, and where the gate found it (or that nothing in the run holds it). */
  field: { pointer: string; value: string | number; origin: string };
  /** The question, as the principal reads it. */
  reason: string;
  /** Workflow time (ms since the epoch) after which the call is refused. */
  deadline: number;
  /** The model's id for the tool call this answers, when a model made it. */
  modelCallId?: string;
}

/**
 * The principal confirmed or rejected the value, or nobody answered in time (`expired`, a refusal).
 *
 * @experimental
 */
export interface ConfirmationDecidedEvent extends CallRef {
  type: 'confirmation-decided';
  effectKey: string;
  decision: 'confirm' | 'reject' | 'expired';
  /** Who answered, as the run recorded it (the verified principal, on a worker that verifies it). */
  by?: string;
}

/**
 * The run completed (or stopped at a limit): the last event of the run.
 *
 * @experimental
 */
export interface RunCompletedEvent {
  type: 'run-completed';
  status: 'completed' | 'limit';
  answer?: string;
  rule?: string;
  reason?: string;
}

/**
 * The run failed or was cancelled: the last event of the run.
 *
 * @experimental
 */
export interface RunEndedEvent {
  type: 'run-ended';
  how: 'failed' | 'cancelled';
  message?: string;
}

/**
 * Everything a run streams.
 *
 * @experimental
 */
export type RunEvent =
  | TokensEvent
  | TurnCompletedEvent
  | CallDecidedEvent
  | CallLandedEvent
  | CallRefusedEvent
  | CallFailedEvent
  | CallEscalatedEvent
  | EscalationDecidedEvent
  | ApprovalRequestedEvent
  | ApprovalDecidedEvent
  | ConfirmationRequestedEvent
  | ConfirmationDecidedEvent
  | RunCompletedEvent
  | RunEndedEvent;

/**
 * The events the workflow itself publishes (on `RunTopic.Effects`).
 *
 * @experimental
 */
export type EffectEvent = Exclude<RunEvent, TokensEvent>;
