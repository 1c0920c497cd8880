// Workflow-safe: the protocol of a run's stream, shared by the workflow (workflows/run-stream.ts), the
// model activity (activities/model/token-stream.ts) and the client (inspect/stream-run.ts). The names
// are toolplane's own, not @temporalio/workflow-streams' (`__temporal_workflow_stream_*`), so a
// workflow that also keeps that library's stream (for @temporalio/ai-sdk's raw parts) has both.
import type { TokensEvent } from './run-events';

/**
 * The signal the model activity sent its token batches through before they were signed. A run takes
 * nothing by it any more (it has no handler): anyone who may signal a run could send it.
 */
export const STREAM_PUBLISH_SIGNAL = 'toolplaneStreamPublish';

/**
 * The update the model activity sends its token batches through, each signed by the worker
 * (`streamBatchFields`): the one way into the stream from outside. Its validator refuses a batch the
 * worker did not sign for this run before it enters history.
 */
export const STREAM_APPEND_UPDATE = 'toolplaneStreamAppend';

/** The failure type of a batch the stream's validator refuses: it never entered history, nothing was shown. */
export const STREAM_MESSAGE_REFUSED = 'StreamMessageRefused';

/** Why a batch was refused, in the failure's details. */
export const StreamRefusedReason = {
  /** Not shaped as the model activity sends it (no signature, no publisher or sequence). */
  Malformed: 'malformed',
  /** The signature is not the worker's for this run, publisher, sequence and tokens (or the run knows no key). */
  BadProof: 'bad_proof',
  /** The publisher's batch of this number was applied already: a replayed batch adds nothing. */
  AlreadyApplied: 'already_applied',
  /** The run is handing over to the run that continues it: it takes no more tokens. */
  Closing: 'closing',
} as const;
export type StreamRefusedReason = (typeof StreamRefusedReason)[keyof typeof StreamRefusedReason];

/** The long-poll update a client reads the stream with while the run is open. */
export const STREAM_POLL_UPDATE = 'toolplaneStreamPoll';

/** The query a run answers with its stream's items from an offset: read from a run that has closed. */
export const STREAM_TAIL_QUERY = 'toolplaneStreamTail';

/**
 * What `STREAM_APPEND_UPDATE` carries: token batches of one publisher (one model attempt), numbered
 * from 1, each signed by the worker. The run applies a sequence number once per publisher, so a batch
 * sent again after a lost answer adds nothing. Only tokens travel this way: the run's effects are the
 * run's own.
 */
export interface StreamPublish {
  publisher: string;
  sequence: number;
  tokens: TokensEvent[];
  /** The worker's Ed25519 signature over `streamBatchFields` (base64url). */
  sig?: string;
}

/**
 * What a batch's signature covers, in order: the run it is sent to (workflow and run id: a batch
 * signed for one run of a chain is no other's), the publisher, its number and the tokens as sent.
 */
export function streamBatchFields(
  workflowId: string,
  runId: string,
  b: Pick<StreamPublish, 'publisher' | 'sequence' | 'tokens'>,
): unknown[] {
  return ['toolplane-stream-tokens', workflowId, runId, b.publisher, b.sequence, b.tokens];
}

/** What `STREAM_POLL_UPDATE` asks: the items from an offset, of these topics. */
export interface StreamPoll {
  from: number;
  topics: string[];
}

/** One item of a run's stream, at its offset. */
export interface StreamTailItem {
  offset: number;
  topic: string;
  data: unknown;
}

/**
 * What `STREAM_POLL_UPDATE` answers, once items from `from` exist or the run hands over: the items
 * of the topics asked and the offset to poll from next. `more`: an answer was cut at its size limit,
 * poll again at once. `closing`: the run is handing over (continue-as-new) and answers no more polls;
 * wait for it to close, read its tail by query, and go on with the run that continues it.
 */
export interface StreamPollAnswer {
  items: StreamTailItem[];
  next: number;
  more: boolean;
  closing: boolean;
}

/** What `STREAM_TAIL_QUERY` answers: the items from the offset asked, and the offset after the last. */
export interface StreamTail {
  items: StreamTailItem[];
  end: number;
}

/** `v` as a tokens event with exactly a tokens event's fields, or nothing: what a signal brings is checked. */
export function asTokensEvent(v: unknown): TokensEvent | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const { type, turn, attempt, index, deltas } = v as Record<string, unknown>;
  if (type !== 'tokens' || typeof turn !== 'string') return undefined;
  if (typeof attempt !== 'number' || !Number.isSafeInteger(attempt)) return undefined;
  if (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0) return undefined;
  if (!Array.isArray(deltas) || !deltas.every((d): d is string => typeof d === 'string')) return undefined;
  return { type: 'tokens', turn, attempt, index, deltas: [...deltas] };
}
