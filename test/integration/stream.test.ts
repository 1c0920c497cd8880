// The run's stream on an in-process worker: a chain of runs (continue-as-new) read from its start as one
// stream, each effect once; and what streaming the tokens adds to a turn's history, measured.
import { randomBytes, randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { RunTopic, type TokensEvent } from '../../common/run-events';
import {
  STREAM_APPEND_UPDATE,
  STREAM_MESSAGE_REFUSED,
  STREAM_PUBLISH_SIGNAL,
  STREAM_TAIL_QUERY,
  StreamRefusedReason,
  type StreamPublish,
  type StreamTail,
} from '../../common/stream-protocol';
import { TicketIssuer } from '../../activities/identity/tickets';
import { waitFor } from '../support/wait';
import type { Manifest } from '../../catalog/manifest';
import type { ScriptTurn } from '../../common/wire';
import { streamRun, type StreamedEvent } from '../../inspect/stream-run';
import type { AgentRunInput, AgentRunResult } from '../../workflows/agent/run';
import { agentInput } from '../support/agent';
import { supportDesk } from '../support/desk';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';

/** @temporalio/workflow-streams' publish signal (its fixed cross-SDK name). */
const LIBRARY_PUBLISH_SIGNAL = '__temporal_workflow_stream_publish';

const lookup = (email: string) => ({ name: 'crm__lookup_customer', arguments: { email } });

async function readAll(h: Harness, workflowId: string): Promise<StreamedEvent[]> {
  const events: StreamedEvent[] = [];
  for await (const e of streamRun(h.client, workflowId)) events.push(e);
  return events;
}

async function historyBytes(h: Harness, workflowId: string): Promise<{ bytes: number; events: number; by: string }> {
  const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
  const by = new Map<string, { n: number; bytes: number }>();
  for (const e of history.events ?? []) {
    const type = temporal.api.enums.v1.EventType[e.eventType ?? 0]!.replace('EVENT_TYPE_', '');
    const t = by.get(type) ?? { n: 0, bytes: 0 };
    t.n++;
    t.bytes += temporal.api.history.v1.HistoryEvent.encode(e).finish().length;
    by.set(type, t);
  }
  return {
    bytes: temporal.api.history.v1.History.encode(history).finish().length,
    events: history.events?.length ?? 0,
    by: [...by].map(([k, v]) => `${k} ${v.n}×/${v.bytes}B`).join(', '),
  };
}

describe("a run's stream", () => {
  let h: Harness;
  const base = exampleManifest();
  // Words 10 ms apart: an answer streams in a few batches.
  const manifest: Manifest = { ...base, models: { scripted: { provider: 'scripted', token_delay: '10ms' } } };
  beforeAll(async () => {
    h = await harness(`stream-${randomUUID()}`);
    await h.runWorker({ manifest, tools: supportDesk(testDir('stream-int')).tools });
  });
  afterAll(() => h.close());

  const run = async (
    script: { prompt: string; turns: ScriptTurn[] },
    extra: Partial<AgentRunInput> = {},
    read = true,
  ) => {
    const workflowId = `stream-${randomUUID()}`;
    await h.client.workflow.start('agentRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [{ ...agentInput(manifest, script), model: { endpoint: 'scripted', script: script.turns }, ...extra }],
    });
    const events = read ? await readAll(h, workflowId) : [];
    const result: AgentRunResult = await h.client.workflow.getHandle(workflowId).result();
    return { workflowId, events, result };
  };

  it('follows a chain of runs from its start: every turn and effect once, in order', async () => {
    const turns: ScriptTurn[] = [
      ...['alice@example.com', 'bob@example.com', 'chen@example.com', 'bob@example.com'].map((e) => ({
        tool_calls: [lookup(e)],
      })),
      { final: 'All four customers looked up.' },
    ];
    const { workflowId, events, result } = await run(
      { prompt: 'Look the customers up.', turns },
      { continueAsNewAfterEvents: 20 },
    );
    expect(result.status).toBe('completed');
    // The chain continued as new at least once.
    const first = await h.client.workflow.getHandle(workflowId).describe();
    expect(first.raw.workflowExecutionInfo?.firstRunId).not.toBe(first.runId);

    const effects = events.filter((e) => e.type !== 'tokens');
    expect(
      effects.filter((e) => e.type === 'turn-completed').map((e) => e.type === 'turn-completed' && e.turn),
    ).toEqual(['turn-1', 'turn-2', 'turn-3', 'turn-4', 'turn-5']);
    expect(effects.filter((e) => e.type === 'call-landed').map((e) => e.type === 'call-landed' && e.position)).toEqual([
      0, 1, 2, 3,
    ]);
    expect(effects.at(-1)).toMatchObject({ type: 'run-completed', answer: 'All four customers looked up.' });
    const offsets = events.map((e) => e.offset);
    expect(new Set(offsets).size).toBe(offsets.length);
    expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
  });

  /** A run that writes `length` words (10 ms apart), and what it published as its end. */
  const wordsRun = async (name: string, length = 100) => {
    const workflowId = `stream-${name}-${randomUUID()}`;
    const words = Array.from({ length }, (_, i) => `w${i}`).join(' ');
    const script = { prompt: 'Say words.', turns: [{ final: words }] };
    await h.client.workflow.start('agentRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [{ ...agentInput(manifest, script), model: { endpoint: 'scripted', script: script.turns } }],
    });
    return { workflowId, words, handle: h.client.workflow.getHandle(workflowId) };
  };
  const forged = { type: 'run-completed', status: 'completed', answer: 'forged' };
  /** The names of the signals the run's history holds: the forgeries reached the run. */
  const signalsIn = async (workflowId: string) =>
    ((await h.client.workflow.getHandle(workflowId).fetchHistory()).events ?? []).flatMap((e) =>
      e.workflowExecutionSignaledEventAttributes ? [e.workflowExecutionSignaledEventAttributes.signalName] : [],
    );

  /** The append updates the run's history accepted, each with the batch it carried. */
  const acceptedBatches = async (workflowId: string, runId?: string): Promise<StreamPublish[]> =>
    ((await h.client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? []).flatMap((e) => {
      const req = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
      if (req?.input?.name !== STREAM_APPEND_UPDATE) return [];
      return [defaultPayloadConverter.fromPayload<StreamPublish>(req.input.args!.payloads![0]!)];
    });
  /** Sends a batch as anyone who may update the run can; what the run answered (undefined: taken). */
  const sendBatch = async (handle: WorkflowHandle, batch: unknown) => {
    const err: unknown = await handle.executeUpdate(STREAM_APPEND_UPDATE, { args: [batch] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    if (err === undefined) return undefined;
    expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
    const cause = (err as WorkflowUpdateFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    const f = cause as ApplicationFailure;
    return { type: f.type, reason: (f.details?.[0] as { reason?: string } | undefined)?.reason };
  };

  it("shows only tokens the worker signed for the run: a forged batch is refused before history, the model's are shown", async () => {
    const { workflowId, words, handle } = await wordsRun('forged', 500);
    const { runId } = await handle.describe();
    // The benign side first: the model's own batches reach the run, signed.
    const real = await waitFor('a batch the model published', 20_000, async () => {
      const batches = await acceptedBatches(workflowId);
      return batches.length > 0 ? batches[0] : undefined;
    });
    expect(typeof real.sig).toBe('string');
    // Anyone who may update the run tries: a batch with no signature, a signature of another key over
    // exactly the fields the worker signs, the worker's own batch again, and its signature on other tokens.
    const token: TokensEvent = { type: 'tokens', turn: 'turn-1', attempt: 1, index: 0, deltas: ['FORGED-U '] };
    const forgedBatch = { publisher: 'forger', sequence: 1, tokens: [token] };
    const other = new TicketIssuer(randomBytes(32));
    const refusals = [
      await sendBatch(handle, forgedBatch),
      await sendBatch(handle, { ...forgedBatch, sig: other.signStreamBatch({ workflowId, runId }, forgedBatch) }),
      await sendBatch(handle, real),
      await sendBatch(handle, { ...real, sequence: real.sequence + 1000, tokens: [token] }),
      await sendBatch(handle, { ...forgedBatch, tokens: [forged], sig: 'x'.repeat(86) }),
    ];
    expect(refusals).toEqual([
      { type: STREAM_MESSAGE_REFUSED, reason: StreamRefusedReason.Malformed },
      { type: STREAM_MESSAGE_REFUSED, reason: StreamRefusedReason.BadProof },
      { type: STREAM_MESSAGE_REFUSED, reason: StreamRefusedReason.AlreadyApplied },
      { type: STREAM_MESSAGE_REFUSED, reason: StreamRefusedReason.BadProof },
      { type: STREAM_MESSAGE_REFUSED, reason: StreamRefusedReason.BadProof },
    ]);
    // The signal tokens once came by is no way in: it reaches history (a signal always does), nothing more.
    await handle.signal(STREAM_PUBLISH_SIGNAL, {
      publisher: 'forger',
      sequence: 2,
      tokens: [{ ...token, deltas: ['FORGED-S'] }],
    });

    // A person following the run reads the model's words, every one, and nothing a forger sent.
    const events = await readAll(h, workflowId);
    expect(events.flatMap((e) => (e.type === 'tokens' ? e.deltas : [])).join('')).toBe(words);
    expect(events.filter((e) => JSON.stringify(e).includes('FORGED') || JSON.stringify(e).includes('forged'))).toEqual(
      [],
    );
    expect(events.filter((e) => e.type === 'run-completed')).toEqual([
      expect.objectContaining({ type: 'run-completed', answer: words }),
    ]);
    const tail = await handle.query<StreamTail, [number]>(STREAM_TAIL_QUERY, 0);
    expect(tail.items.filter((i) => JSON.stringify(i.data).includes('FORGED'))).toEqual([]);
    // History holds no refused batch: every accepted append is one the model's publisher signed.
    const history = JSON.stringify(await handle.fetchHistory());
    const accepted = await acceptedBatches(workflowId);
    expect(accepted.every((b) => b.publisher === real.publisher && typeof b.sig === 'string')).toBe(true);
    expect(new Set(accepted.map((b) => b.sequence)).size).toBe(accepted.length);
    expect(await signalsIn(workflowId)).toEqual([STREAM_PUBLISH_SIGNAL]);
    expect(history.match(/FORGED-U/g) ?? []).toEqual([]);
    await expect(handle.result()).resolves.toMatchObject({ status: 'completed', answer: words });
  });

  it("takes nothing from @temporalio/workflow-streams' own publish signal", async () => {
    const { workflowId, words, handle } = await wordsRun('library');
    // The library's wire form (base64 protobuf payloads), on both of toolplane's topics.
    const wire = (v: unknown) =>
      Buffer.from(temporal.api.common.v1.Payload.encode(defaultPayloadConverter.toPayload(v)).finish()).toString(
        'base64',
      );
    const token = { type: 'tokens', turn: 'turn-1', attempt: 1, index: 0, deltas: ['FORGED '] };
    await handle.signal(LIBRARY_PUBLISH_SIGNAL, {
      items: [
        { topic: RunTopic.Effects, data: wire(forged) },
        { topic: RunTopic.Tokens, data: wire(token) },
      ],
      publisher_id: 'forger',
      sequence: 1,
    });
    const events = await readAll(h, workflowId);
    expect(events.filter((e) => e.type !== 'tokens').map((e) => e.type)).toEqual(['turn-completed', 'run-completed']);
    expect(events.at(-1)).toMatchObject({ type: 'run-completed', answer: words });
    expect(events.flatMap((e) => (e.type === 'tokens' ? e.deltas : [])).join('')).toBe(words);
    expect(await signalsIn(workflowId)).toContain(LIBRARY_PUBLISH_SIGNAL);
    const tail = await handle.query<StreamTail, [number]>(STREAM_TAIL_QUERY, 0);
    expect(
      tail.items.filter((i) => JSON.stringify(i.data).includes('FORGED') || JSON.stringify(i.data).includes('forged')),
    ).toEqual([]);
    await expect(handle.result()).resolves.toMatchObject({ status: 'completed', answer: words });
  });

  it('measures what streaming a turn adds to history', async () => {
    const words = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ');
    const script = { prompt: 'Say many words.', turns: [{ final: words }] };
    const streamed = await run(script);
    const quiet = await run(script, { streamTokens: false });
    const unread = await run(script, {}, false);
    // Without tokens the effects still stream; with them, the client reads the whole answer.
    expect(quiet.events.map((e) => e.type)).toEqual(['turn-completed', 'run-completed']);
    const text = streamed.events.flatMap((e) => (e.type === 'tokens' ? e.deltas : [])).join('');
    expect(text).toBe(words);
    const a = await historyBytes(h, streamed.workflowId);
    const b = await historyBytes(h, quiet.workflowId);
    const c = await historyBytes(h, unread.workflowId);
    console.log(`read while streamed: ${a.by}\nnot streamed: ${b.by}\nstreamed, nobody reading: ${c.by}`);
    console.log(
      `streamed with nobody reading: ${c.bytes} B / ${c.events} events (+${c.bytes - b.bytes} B, +${c.events - b.events} events)`,
    );
    const batches = streamed.events.filter((e) => e.type === 'tokens').length;
    console.log(
      `streaming one turn of ${words.length} characters (200 tokens) added ${a.bytes - b.bytes} bytes ` +
        `and ${a.events - b.events} events to history (${batches} batches read; ` +
        `streamed ${a.bytes} B / ${a.events} events, not streamed ${b.bytes} B / ${b.events} events)`,
    );
    expect(a.bytes).toBeGreaterThan(b.bytes);
  });
});
