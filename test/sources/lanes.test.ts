// The order tool calls ran in, read from the history's activity start and close times.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Tool } from '../../activities/tool';
import { loadManifest } from '../../runtime/manifest-file';
import type { AgentRunResult } from '../../workflows/agent/run';
import { runAgent } from '../support/agent';
import { harness, type Harness } from '../support/env';
import { historyOf, type HistoryEvent } from '../support/history';

const manifest = loadManifest(path.resolve(__dirname, '..', 'fixtures', 'lanes-manifest.yaml')).manifest;
/**
 * Calls that the lanes must run together hold until their partners have started (then run their `ms`), so
 * "ran together" never depends on how fast a loaded machine dispatches; a lane that wrongly serialised them
 * would leave the holder waiting out HOLD_MS and the overlap check failing.
 */
const PARTNERS: Record<string, string[]> = { r1: ['r2', 'w1', 'd1'], k1: ['k2'], k2: ['w1'] };
const HOLD_MS = 20_000;
const started = new Set<string>();
const tools: Tool[] = manifest.tools.map((d) => ({
  origin: 'builtin',
  def: () => ({ id: d.id, description: d.description, inputSchema: d.input_schema, safety: d.safety }),
  async call(_ctx, input) {
    const { id, ms } = input as { id: string; ms: number };
    started.add(id);
    const until = Date.now() + HOLD_MS;
    while (!(PARTNERS[id] ?? []).every((p) => started.has(p)) && Date.now() < until)
      await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, ms));
    return { done: id };
  },
}));

const ms = (e: HistoryEvent) => Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6);

/** Start and close time of each activity, by the `id` argument of its call. */
function spans(events: HistoryEvent[]): Record<string, { start: number; end: number }> {
  const byScheduled = new Map<string, string>();
  const out: Record<string, { start: number; end: number }> = {};
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s?.activityType?.name === 'performTool') {
      const input = JSON.parse(Buffer.from(s.input!.payloads![0]!.data!).toString());
      byScheduled.set(String(e.eventId), input.args.id);
    }
    const st = e.activityTaskStartedEventAttributes;
    if (st && byScheduled.has(String(st.scheduledEventId)))
      out[byScheduled.get(String(st.scheduledEventId))!] = { start: ms(e), end: Infinity };
    const c = e.activityTaskCompletedEventAttributes;
    if (c && byScheduled.has(String(c.scheduledEventId)))
      out[byScheduled.get(String(c.scheduledEventId))!]!.end = ms(e);
  }
  return out;
}
const overlap = (a: { start: number; end: number }, b: { start: number; end: number }) =>
  a.start < b.end && b.start < a.end;

describe('scheduling lanes', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness(`lanes-${randomUUID()}`);
    await h.runWorker({ manifest, tools, workerOptions: { maxConcurrentActivityTaskExecutions: 20 } });
  });
  afterAll(async () => {
    await h.close();
  });

  it('runs reads together, writes one at a time, keyed writes per key, serialize in the global lane, a subagent as a child', async () => {
    const call = (tool: string, id: string, account?: string) => ({
      name: `slow__${tool}`,
      arguments: { id, ms: 600, ...(account ? { account } : {}) },
    });
    const { result, workflowId }: { result: AgentRunResult; workflowId: string } = await runAgent(h, manifest, {
      prompt: 'Run r1 r2 w1 w2 k1 k2 k3 s1 d1 on accounts a and b, 600 ms each.',
      turns: [
        {
          tool_calls: [
            call('read', 'r1'),
            call('read', 'r2'),
            call('write', 'w1'),
            call('write', 'w2'),
            call('keyed', 'k1', 'a'),
            call('keyed', 'k2', 'b'),
            call('keyed', 'k3', 'a'),
            call('serial', 's1'),
            call('sub', 'd1'),
          ],
        },
        { final: 'done' },
      ],
    });
    expect(result.status).toBe('completed');
    expect(result.journal.map((e) => [e.position, e.outcome])).toEqual(
      [0, 1, 2, 3, 4, 5, 6, 7, 8].map((p) => [p, 'ok']),
    );
    const events = await historyOf(h.client, workflowId);
    const t = spans(events);
    expect(overlap(t.r1!, t.r2!)).toBe(true);
    expect(overlap(t.w1!, t.w2!)).toBe(false);
    expect(t.w2!.start).toBeGreaterThanOrEqual(t.w1!.end);
    expect(overlap(t.k1!, t.k2!)).toBe(true);
    expect(overlap(t.k1!, t.k3!)).toBe(false);
    expect(t.k3!.start).toBeGreaterThanOrEqual(t.k1!.end);
    expect(t.s1!.start).toBeGreaterThanOrEqual(t.w2!.end);
    expect(overlap(t.r1!, t.w1!)).toBe(true);
    expect(overlap(t.k2!, t.w1!)).toBe(true);
    // The subagent ran as a child workflow, one delegation level deeper, with its own activity.
    const child = events.find(
      (e) => e.startChildWorkflowExecutionInitiatedEventAttributes,
    )!.startChildWorkflowExecutionInitiatedEventAttributes!;
    expect(child.workflowId).toBe(`${workflowId}/delegated-8`);
    const childInput = JSON.parse(Buffer.from(child.input!.payloads![0]!.data!).toString());
    expect(childInput).toMatchObject({
      carry: { identity: { principal: 'agent:test' }, grants: expect.arrayContaining(['tool://slow/sub']) },
      toolId: 'tool://slow/sub',
      args: { id: 'd1' },
    });
    const childSpans = spans(await historyOf(h.client, child.workflowId!));
    expect(overlap(childSpans.d1!, t.r1!)).toBe(true);
  });

  it('refuses a subagent beyond the delegation depth limit', async () => {
    const { result } = await runAgent(
      h,
      manifest,
      {
        prompt: 'Run d1 600',
        turns: [{ tool_calls: [{ name: 'slow__sub', arguments: { id: 'd1', ms: 600 } }] }, { final: 'x' }],
      },
      { limits: { maxDelegationDepth: 1 }, delegationDepth: 1 },
    );
    expect(result.journal[0]).toMatchObject({ decision: 'refused', rule: 'limit:delegation_depth' });
  });
});
