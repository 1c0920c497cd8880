// Workflow-safe: the protocol of a run's stream, shared by the workflow (workflows/run-stream.ts), the
// model activity (activities/model/token-stream.ts) and the client (inspect/stream-run.ts). The names
// are toolplane's own, not @temporalio/workflow-streams' (`__temporal_workflow_stream_*`), so a
// workflow that also keeps that library's stream (for @temporalio/ai-sdk's raw parts) has both.
import type { TokensEvent } from './run-events';

/** The signal the model activity sends its token batches through: the one way into the stream from outside. */
export const STREAM_PUBLISH_SIGNAL = 'toolplaneStreamPublish';

/** The long-poll update a client reads the stream with while the run is open. */
export const STREAM_POLL_UPDATE = 'toolplaneStreamPoll';

/** The query a run answers with its stream's items from an offset: read from a run that has closed. */
export const STREAM_TAIL_QUERY = 'toolplaneStreamTail';

/**
 * What `STREAM_PUBLISH_SIGNAL` carries: token batches of one publisher (one model attempt), numbered
 * from 1. The run applies a sequence number once per publisher, so a signal sent again after a lost
 * answer adds nothing. Only tokens travel this way: the run's effects are the run's own.
 */
export interface StreamPublish {
  publisher: string;
  sequence: number;
  tokens: TokensEvent[];
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
