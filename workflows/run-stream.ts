// Workflow-safe: the run's stream, a view for clients (common/stream-protocol.ts). An append-only log
// of items in one offset space: the workflow publishes its effects here as they happen, and the
// model activity sends its tokens by update, each batch signed by the worker. The update's validator
// checks the signature with the worker's public key (the run's opening names it), so a batch nobody
// with the ticket key signed for this run is refused before it enters history and is never shown.
// It writes only tokens, checked field by field, so an effect event a client reads was written by the
// run. Nothing in the run reads the stream back: it is never an input to a decision.
//
// Tokens once came by a signal (`STREAM_PUBLISH_SIGNAL`), which anyone who may signal a run could
// send and no validator can refuse: the run has no handler for it any more. A history that holds such
// signals replays unchanged (the stream issues no commands; test/replay.test.ts), its tokens unshown.
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  defineQuery,
  defineUpdate,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { recordUpdateTracingFlag } from './update-tracing-flag';
import { RunTopic, type EffectEvent } from '../common/run-events';
import { signedByWorker } from '../common/worker-signature';
import {
  asTokensEvent,
  STREAM_APPEND_UPDATE,
  STREAM_MESSAGE_REFUSED,
  STREAM_POLL_UPDATE,
  STREAM_TAIL_QUERY,
  streamBatchFields,
  StreamRefusedReason,
  type StreamPoll,
  type StreamPollAnswer,
  type StreamPublish,
  type StreamTail,
  type StreamTailItem,
} from '../common/stream-protocol';

/** What a run hands the run that continues it (continue-as-new): where offsets go on, and what publishers sent. */
export interface RunStreamState {
  /** The offset of the continuing run's first item: the end of this run's log. */
  offset: number;
  /** Each publisher's last applied sequence number, and when (workflow time, ms) it last sent. */
  publishers: Record<string, { sequence: number; at: number }>;
}

// The update's argument is whatever a sender sent: typed unknown, and checked before anything is kept.
const appendUpdate = defineUpdate<void, [unknown]>(STREAM_APPEND_UPDATE);
const pollUpdate = defineUpdate<StreamPollAnswer, [StreamPoll]>(STREAM_POLL_UPDATE);
const tailQuery = defineQuery<StreamTail, [number]>(STREAM_TAIL_QUERY);

/** An answer's size (JSON characters) past which it is cut: an update's result stays far below Temporal's limit. */
const MAX_ANSWER_CHARS = 1_000_000;
/** How long a publisher's sequence number is carried after it last sent (a model attempt sends within its turn). */
const PUBLISHER_TTL_MS = 15 * 60_000;

interface Item {
  topic: string;
  /** The item as JSON, written when it was published and read back only when a client asks for it. */
  json?: string;
  /** Or a copy of it (`copyOf`), nothing in it shared with what the run changes later. */
  copy?: EffectEvent;
  /** Its JSON's length, for the answer's size limit (of a copy: once a client first asks for it). */
  size?: number;
}

/**
 * A copy of a call's event that the run's later changes leave alone, or undefined for any other
 * event. What a call's journal entry holds beside its own fields is replaced whole when it changes,
 * never changed in place (pipeline.ts), except a lease's states: the entry and those are copied, at
 * a fraction of the cost of writing the event as JSON (a call publishes two).
 */
function copyOf(event: EffectEvent): EffectEvent | undefined {
  switch (event.type) {
    case 'call-decided':
    case 'call-landed':
    case 'call-refused':
    case 'call-failed': {
      const entry = Object.assign({}, event.entry);
      if (entry.lease) entry.lease = { id: entry.lease.id, states: entry.lease.states.slice() };
      return Object.assign({}, event, { entry });
    }
    default:
      return undefined;
  }
}

function refuse(reason: StreamRefusedReason, message: string): never {
  throw ApplicationFailure.nonRetryable(message, STREAM_MESSAGE_REFUSED, { reason });
}

const isOffset = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isRecord = (v: unknown): v is RunStreamState['publishers'] => typeof v === 'object' && v !== null;

/**
 * The run's stream: `StepCtx` opens one per run (`step.stream`); its handlers answer `streamRun` (toolplane/client).
 *
 * @experimental
 */
export class RunStream {
  private readonly log: Item[] = [];
  private readonly base: number;
  private readonly publishers: RunStreamState['publishers'];
  private closing = false;
  private handedOver = false;
  /** The worker's public key, from the run's opening: until it is known, no batch is taken. */
  private key: string | undefined;

  /** Registers the stream's handlers; a run that continues a chain passes the state its predecessor handed over. */
  constructor(prior?: RunStreamState) {
    // A run continued from one written before toolplane owned its stream carries that library's state,
    // whose `base_offset` is where the log ended: offsets go on from there all the same.
    const legacyEnd = (prior as { base_offset?: unknown } | undefined)?.base_offset;
    this.base = isOffset(prior?.offset) ? prior.offset : isOffset(legacyEnd) ? legacyEnd : 0;
    this.publishers = isRecord(prior?.publishers) ? { ...prior.publishers } : {};
    // Set in the run's first task: a validator's rejection never drops it (update-tracing-flag.ts).
    recordUpdateTracingFlag();
    // Before history: a batch the worker did not sign for this run is refused, and nothing is kept.
    setHandler(appendUpdate, (input) => this.accept(input as StreamPublish), {
      validator: (input) => this.refuseUnproved(input),
    });
    setHandler(pollUpdate, (poll) => this.answer(poll));
    // A client that polled a run until it closed reads what it missed here (a query answers a closed run).
    setHandler(tailQuery, (from) => ({
      items: this.collect(this.clamp(from), undefined, Infinity).items,
      end: this.end(),
    }));
  }

  /** Takes the worker's public key from the run's opening (undefined: an opening recorded before signed tokens). */
  trust(key: string | undefined): void {
    this.key = key;
  }

  /** Publishes one of the run's effects. */
  publish(event: EffectEvent): void {
    // A copy holds it, made now: an entry the run changes later stays as it was when published.
    const copy = copyOf(event);
    if (copy) this.log.push({ topic: RunTopic.Effects, copy });
    else this.append(RunTopic.Effects, event);
  }

  /**
   * What the run that continues this one (continue-as-new) takes over: offsets go on from where this
   * run's log ends, and publishers' sequence numbers still deduplicate. The log itself stays in this
   * run (its history holds it): a client reads its tail by query, then follows the chain.
   */
  async handOver(): Promise<RunStreamState> {
    this.closing = true;
    await condition(allHandlersFinished);
    this.handedOver = true;
    const now = Date.now();
    const publishers = Object.fromEntries(
      Object.entries(this.publishers).filter(([, p]) => now - p.at < PUBLISHER_TTL_MS),
    );
    return { offset: this.end(), publishers };
  }

  private end(): number {
    return this.base + this.log.length;
  }

  private clamp(from: unknown): number {
    return Math.max(isOffset(from) ? from : 0, this.base);
  }

  private append(topic: string, data: unknown): void {
    const json = JSON.stringify(data);
    this.log.push({ topic, json, size: json.length + topic.length });
  }

  /**
   * The validator: refuses a batch not shaped as the model activity sends it, not signed by the worker
   * for this run, publisher, number and tokens, already applied, or sent while the run hands over.
   */
  private refuseUnproved(input: unknown): void {
    const b = (typeof input === 'object' && input !== null ? input : {}) as Partial<
      Record<keyof StreamPublish, unknown>
    >;
    const { publisher, sequence, tokens, sig } = b;
    if (
      typeof publisher !== 'string' ||
      publisher.length === 0 ||
      !isOffset(sequence) ||
      !Array.isArray(tokens) ||
      typeof sig !== 'string'
    )
      refuse(
        StreamRefusedReason.Malformed,
        "only the worker's model attempts write a run's tokens: a batch names its publisher and number and carries the worker's signature",
      );
    const { workflowId, runId } = workflowInfo();
    const signed = signedByWorker(this.key, streamBatchFields(workflowId, runId, { publisher, sequence, tokens }), sig);
    if (!signed)
      refuse(
        StreamRefusedReason.BadProof,
        "the signature is not the worker's for this run and these tokens; nothing was recorded or shown",
      );
    const seen = this.publishers[publisher];
    if (seen && sequence <= seen.sequence)
      refuse(StreamRefusedReason.AlreadyApplied, `batch ${sequence} of this publisher was applied already`);
    if (this.closing || this.handedOver)
      refuse(
        StreamRefusedReason.Closing,
        'the run is handing over to the run that continues it: it takes no more tokens',
      );
  }

  /** A token batch the validator took: applied once per publisher and sequence number, tokens only, nothing else kept. */
  private accept({ publisher, sequence, tokens }: StreamPublish): void {
    // Asked again: two batches of one number may have been validated before either was applied.
    const seen = this.publishers[publisher];
    if (this.handedOver || (seen && sequence <= seen.sequence)) return;
    this.publishers[publisher] = { sequence, at: Date.now() };
    for (const t of tokens) {
      const event = asTokensEvent(t);
      if (event) this.append(RunTopic.Tokens, event);
    }
  }

  /** A long poll: answered once an item of the topics asked exists at `from` or later, or the run hands over. */
  private async answer(poll: StreamPoll): Promise<StreamPollAnswer> {
    const asked = (poll as Partial<StreamPoll> | undefined)?.topics;
    const topics = Array.isArray(asked) ? new Set(asked.filter((t) => typeof t === 'string')) : undefined;
    const from = this.clamp((poll as Partial<StreamPoll> | undefined)?.from);
    const wanted = (item: Item) => !topics || topics.has(item.topic);
    let seen = from - this.base;
    const ready = () => {
      for (; seen < this.log.length; seen++) if (wanted(this.log[seen]!)) return true;
      return false;
    };
    await condition(() => this.closing || ready());
    return { ...this.collect(from, topics, MAX_ANSWER_CHARS), closing: this.closing };
  }

  /** The items from `from` of the topics given (all without), cut before `limit` characters. */
  private collect(
    from: number,
    topics: Set<string> | undefined,
    limit: number,
  ): { items: StreamTailItem[]; next: number; more: boolean } {
    const items: StreamTailItem[] = [];
    let size = 0;
    for (let offset = from; offset < this.end(); offset++) {
      const item = this.log[offset - this.base]!;
      if (topics && !topics.has(item.topic)) continue;
      const itemSize = (item.size ??= (item.json ?? JSON.stringify(item.copy)).length + item.topic.length);
      if (items.length > 0 && size + itemSize > limit) return { items, next: offset, more: true };
      size += itemSize;
      // A copy is never changed: it goes out as it is (the answer is written as JSON on its way out).
      const data: unknown = item.json !== undefined ? JSON.parse(item.json) : item.copy;
      items.push({ offset, topic: item.topic, data });
    }
    return { items, next: this.end(), more: false };
  }
}
