// Client side of a run's stream: long-poll updates against the run (common/stream-protocol.ts), no
// history polling. Follows a chain of runs (continue-as-new) and reads the tail of a run that closed
// by query, so nothing published before the run ended is missed; tokens a retried model attempt
// publishes again are skipped by index, so none is delivered twice.
import {
  WorkflowUpdateStage,
  type Client,
  type WorkflowExecutionDescription,
  type WorkflowHandle,
} from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { ToolplaneError } from '../catalog/errors';
import { RunTopic, type RunEvent, type TokensEvent } from '../common/run-events';
import {
  asTokensEvent,
  STREAM_POLL_UPDATE,
  STREAM_TAIL_QUERY,
  type StreamPoll,
  type StreamPollAnswer,
  type StreamTail,
} from '../common/stream-protocol';
import { ErrorCode } from '../catalog/error-codes';

/**
 * Options of {@link streamRun}.
 *
 * @experimental
 */
export interface StreamRunOptions {
  /** The stream offset to read from (default 0: from the run's first event). Each event carries its own. */
  fromOffset?: number;
  /** Whether to read the model's tokens (default true); effects are always read. */
  tokens?: boolean;
  /** Pause between polls when nothing more is ready (default 100 ms). */
  pollCooldownMs?: number;
  /** Stops the iteration when aborted. */
  signal?: AbortSignal;
}

/**
 * A run's event and where it stands in the run's stream (the offset to resume from is `offset + 1`).
 *
 * @experimental
 */
export type StreamedEvent = RunEvent & { offset: number };

const CLOSED = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TERMINATED', 'TIMED_OUT', 'CONTINUED_AS_NEW']);
const ENDS_RUN = new Set<RunEvent['type']>(['run-completed', 'run-ended']);

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/** Keeps what a reader was given of each turn's tokens: a retried attempt's tokens come again from index 0. */
class TokenLedger {
  private readonly delivered = new Map<string, number>();

  /** The part of the event not yet delivered, or nothing. */
  fresh(e: TokensEvent): TokensEvent | undefined {
    const have = this.delivered.get(e.turn);
    const end = e.index + e.deltas.length;
    if (have !== undefined && end <= have) return undefined;
    this.delivered.set(e.turn, end);
    if (have === undefined || e.index >= have) return e;
    return { ...e, index: have, deltas: e.deltas.slice(have - e.index) };
  }
}

/**
 * An item as a run event, or nothing: a tokens event only from the tokens topic (checked field by
 * field), any other event only from the effects topic, which only the run writes.
 */
function asRunEvent(topic: string, data: unknown): RunEvent | undefined {
  if (topic === RunTopic.Tokens) return asTokensEvent(data);
  if (topic !== RunTopic.Effects || typeof data !== 'object' || data === null) return undefined;
  const type = (data as { type?: unknown }).type;
  return typeof type === 'string' && type !== 'tokens' ? (data as RunEvent) : undefined;
}

/**
 * The events of a run as they happen: the model's text (`tokens`, each token once and in order, even
 * when a model attempt died mid-stream and was retried), and its effects (`call-decided`,
 * `call-landed`, `call-refused`, `approval-requested`, ... each once, carrying its effect key), until
 * the run ends (`run-completed` or `run-ended` is the last event; a run that closed without one, such
 * as a workflow of one's own or a terminated run, ends the iteration when it closes). A chain of runs
 * (continue-as-new) is followed. Nothing here reads the run's history: the run answers long-poll
 * updates, and a run that has closed answers what was left by query (a worker must be running).
 *
 * The stream is a view. The run's effect events come from the workflow itself (the run's publish
 * signal carries tokens only), but tokens come through a signal anyone who may signal the run can
 * send: decide nothing from the stream; the journal
 * (`readJournal`) and the run's result are the record. A turn's `turn-completed` carries the text the
 * run recorded, which is the authority over its tokens.
 *
 * @example
 * ```ts
 * for await (const e of streamRun(client, handle.workflowId)) {
 *   if (e.type === 'tokens') process.stdout.write(e.deltas.join(''));
 *   else if (e.type === 'call-landed') console.log(`\n#${e.position} ${e.toolId} landed (${e.effectKey})`);
 * }
 * ```
 *
 * @experimental
 */
export async function* streamRun(
  client: Client,
  workflowId: string,
  options: StreamRunOptions = {},
): AsyncGenerator<StreamedEvent, void, undefined> {
  const topics: string[] = options.tokens === false ? [RunTopic.Effects] : [RunTopic.Effects, RunTopic.Tokens];
  const { signal } = options;
  const cooldown = options.pollCooldownMs ?? 100;
  const ledger = new TokenLedger();
  let offset = options.fromOffset ?? 0;
  let ended = false;

  /** What a reader gets of one item: nothing for a token delivered before, for another topic, or for what no run wrote. */
  const deliver = (topic: string, data: unknown, at: number): StreamedEvent | undefined => {
    const read = topics.includes(topic) ? asRunEvent(topic, data) : undefined;
    const event = read?.type === 'tokens' ? ledger.fresh(read) : read;
    if (!event) return undefined;
    if (ENDS_RUN.has(event.type)) ended = true;
    return { ...event, offset: at };
  };
  const abortable = <T>(fn: () => Promise<T>): Promise<T> =>
    signal ? client.connection.withAbortSignal(signal, fn) : fn();

  let runId = (await client.workflow.getHandle(workflowId).describe()).runId;
  while (!ended && !signal?.aborted) {
    const run = client.workflow.getHandle(workflowId, runId);
    let closed: WorkflowExecutionDescription | undefined;
    try {
      const answer = await abortable(() => poll(run, { from: offset, topics }));
      for (const item of answer.items) {
        const e = deliver(item.topic, item.data, item.offset);
        if (e) yield e;
      }
      offset = answer.next;
      if (ended || answer.more) continue;
      await sleep(cooldown, signal);
      // A run handing over (continue-as-new) answers at once until it has closed: then its tail is read.
      if (!answer.closing || !(closed = await closedRun(run))) continue;
    } catch (err) {
      if (signal?.aborted) return;
      closed = await closedRun(run);
      if (!closed) throw err;
    }
    // The run closed: what it published after our last poll is read by query, then the chain goes on.
    let tail: StreamTail;
    try {
      tail = await abortable(() => run.query<StreamTail, [number]>(STREAM_TAIL_QUERY, offset));
    } catch (err) {
      if (signal?.aborted) return;
      throw err;
    }
    for (const item of tail.items) {
      const e = deliver(item.topic, item.data, item.offset);
      if (e) yield e;
    }
    offset = Math.max(offset, tail.end);
    if (closed.status.name !== 'CONTINUED_AS_NEW') return;
    runId = await successorOf(client, workflowId, runId);
  }
}

/** One long poll: answered when the run has items from `from` on, or is handing over. */
async function poll(run: WorkflowHandle, request: StreamPoll): Promise<StreamPollAnswer> {
  const update = await run.startUpdate<StreamPollAnswer, [StreamPoll]>(STREAM_POLL_UPDATE, {
    args: [request],
    waitForStage: WorkflowUpdateStage.ACCEPTED,
  });
  return update.result();
}

/** The run's description if it has closed. */
async function closedRun(run: WorkflowHandle): Promise<WorkflowExecutionDescription | undefined> {
  const d = await run.describe();
  return CLOSED.has(d.status.name) ? d : undefined;
}

/** The run that continued `runId`, as its close event names it (the one event read of a closed run). */
async function successorOf(client: Client, workflowId: string, runId: string): Promise<string> {
  const res = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId, runId },
    historyEventFilterType: temporal.api.enums.v1.HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT,
  });
  const next = res.history?.events?.[0]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
  if (!next)
    throw new ToolplaneError(
      ErrorCode.StreamBroken,
      `run ${runId} of ${workflowId} continued as new, but its close event names no next run`,
      { workflowId, runId },
    );
  return next;
}
