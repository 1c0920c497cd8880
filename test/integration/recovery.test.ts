import { randomUUID } from 'node:crypto';
import { buildProgram } from '../../cli';
import { loadManifest } from '../../runtime/manifest-file';
import { resolveEscalation } from '../../workflows/escalation';
import { journalQuery } from '../../workflows/journal-query';
import { waitForPending } from '../support/escalations';
import type { ToolRunInput, ToolRunResult } from '../../workflows/tool-run';
import { harness, testDir, type Harness } from '../support/env';
import { historyOf, scheduledActivities } from '../support/history';
import { SCENARIO_MANIFEST, scenarioTools } from '../support/scenario-tools';

const manifest = loadManifest(SCENARIO_MANIFEST).manifest;
const grants = manifest.tools.map((t) => t.id);

describe('recovery, as each tool declares it', () => {
  let h: Harness;
  let s: ReturnType<typeof scenarioTools>;

  beforeAll(async () => {
    h = await harness(`recovery-${randomUUID()}`);
    s = scenarioTools(testDir('recovery'));
    await h.runWorker({ manifest, tools: s.tools });
  });
  afterAll(async () => {
    await h.close();
  });

  function start(calls: ToolRunInput['calls']) {
    const workflowId = `recovery-${randomUUID()}`;
    return h.client.workflow.start('toolRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [{ manifest, grants, principal: 'agent:test', calls }],
    });
  }
  async function run(calls: ToolRunInput['calls']) {
    const handle = await start(calls);
    const result: ToolRunResult = await handle.result();
    const activities = scheduledActivities(await historyOf(h.client, handle.workflowId));
    return { result, activities, workflowId: handle.workflowId };
  }
  const landedFor = (args: object) => s.store.all().filter((r) => JSON.stringify(r.args) === JSON.stringify(args));

  it('retry: a rejected read-only call is sent again under its key after a backoff timer', async () => {
    const handle = await start([{ toolId: 'tool://flaky/read', args: { q: 'balance' } }]);
    const result: ToolRunResult = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.outputs[0]).toEqual({ answer: 'result for balance', attempt: 2 });
    const events = await historyOf(h.client, handle.workflowId);
    const activities = scheduledActivities(events);
    expect(activities.map((a) => a.type)).toEqual(['performTool', 'performTool']);
    expect(activities[1]!.activityId).toBe(`${activities[0]!.activityId}.1`);
    expect(events.filter((e) => e.timerStartedEventAttributes)).toHaveLength(1);
    // Two sends, one of them the tool's own failure; no worker was lost.
    expect(result.journal[0]).toMatchObject({ attempts: 2, toolFailures: 1, recovery: 'retried', outcome: 'ok' });
    expect(result.journal[0]).not.toHaveProperty('lostSends');
  });

  it("retry: the tool's own failures stop at its maximum_attempts, every send under one idempotency key", async () => {
    const before = s.reads.length;
    const { result, activities } = await run([{ toolId: 'tool://flaky/read', args: { q: 'never' } }]);
    expect(result.status).toBe('failed');
    // maximum_attempts: 3 in the scenario manifest.
    expect(result.journal[0]).toMatchObject({
      attempts: 3,
      toolFailures: 3,
      recovery: 'retried',
      outcome: 'failed',
      error: { code: 'Failed', message: 'tool://flaky/read: retries exhausted: busy, always' },
    });
    expect(activities.map((a) => a.activityId)).toEqual([
      result.journal[0]!.effectKey,
      `${result.journal[0]!.effectKey}.1`,
      `${result.journal[0]!.effectKey}.2`,
    ]);
    const keys = s.reads.slice(before);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
  });

  it('reconcile: a charge that landed but answered in doubt is confirmed, not resent', async () => {
    const args = { account: `acct-${randomUUID()}`, cents: 500, mode: 'in_doubt_landed' };
    const { result, activities } = await run([{ toolId: 'tool://flaky/charge', args }]);
    expect(result.status).toBe('completed');
    expect(result.journal[0]).toMatchObject({ recovery: 'reconciled_landed', outcome: 'ok', attempts: 1 });
    expect(landedFor(args)).toHaveLength(1);
    expect(result.outputs[0]).toEqual({ charge_id: landedFor(args)[0]!.id });
    expect(activities.map((a) => a.type)).toEqual(['performTool', 'reconcileTool']);
  });

  it('reconcile: a charge that did not land is sent again, once', async () => {
    const args = { account: `acct-${randomUUID()}`, cents: 700, mode: 'in_doubt_not_landed' };
    const { result, activities } = await run([{ toolId: 'tool://flaky/charge', args }]);
    expect(result.journal[0]).toMatchObject({ recovery: 'reconciled_resent', outcome: 'ok', attempts: 2 });
    expect(landedFor(args)).toHaveLength(1);
    expect(activities.map((a) => a.type)).toEqual(['performTool', 'reconcileTool', 'performTool']);
    expect(activities[2]!.activityId).toBe(`${activities[0]!.activityId}.1`);
  });

  it('reconcile: a rejection before sending is retried by the workflow after a backoff timer', async () => {
    const args = { account: `acct-${randomUUID()}`, cents: 900, mode: 'rejected_once' };
    const handle = await start([{ toolId: 'tool://flaky/charge', args }]);
    const result: ToolRunResult = await handle.result();
    expect(result.journal[0]).toMatchObject({ recovery: 'retried', outcome: 'ok', attempts: 2 });
    expect(landedFor(args)).toHaveLength(1);
    const events = await historyOf(h.client, handle.workflowId);
    expect(events.filter((e) => e.timerStartedEventAttributes)).toHaveLength(1);
  });

  it('reconcile: when the provider cannot tell and no escalation is declared, the step ends InDoubt', async () => {
    const args = { account: `acct-${randomUUID()}`, cents: 100, mode: 'unknown_forever' };
    const { result } = await run([{ toolId: 'tool://flaky/charge', args }]);
    expect(result.status).toBe('failed');
    expect(result.journal[0]).toMatchObject({
      recovery: 'reconcile_unknown',
      outcome: 'in_doubt',
      error: { code: 'InDoubt' },
    });
    expect(landedFor(args)).toHaveLength(1);
  });

  it('fail: an unknown outcome ends the step with InDoubt and nothing is resent', async () => {
    const args = { account: `acct-${randomUUID()}`, cents: 12345 };
    const { result, activities } = await run([{ toolId: 'tool://flaky/wire', args }]);
    expect(result.status).toBe('failed');
    expect(result.outputs[0]).toMatchObject({ error: { code: 'InDoubt' } });
    expect(result.journal[0]).toMatchObject({ recovery: 'in_doubt_failed', outcome: 'in_doubt', attempts: 1 });
    expect(landedFor(args)).toHaveLength(1);
    expect(activities.map((a) => a.type)).toEqual(['performTool']);
  });

  it('escalate: the run waits for a person; "retry" sends again and the run resumes', async () => {
    const args = { to: `ops-${randomUUID()}@example.com`, text: 'hello' };
    const handle = await start([{ toolId: 'tool://flaky/notify', args }]);
    const pending = await waitForPending(handle);
    // While a person decides, the run's journal shows the call as it stands: sent once, no outcome yet.
    const [waiting] = await handle.query(journalQuery);
    expect(waiting).toMatchObject({ attempts: 1, recovery: 'none' });
    expect(waiting).not.toHaveProperty('outcome');
    expect(pending).toMatchObject({
      toolId: 'tool://flaky/notify',
      kind: 'in_doubt',
      reason: expect.stringContaining('mail relay timed out'),
    });
    const refused = await handle
      .executeUpdate(resolveEscalation, { args: [{ effectKey: 'ek-nope', decision: 'retry' }] })
      .catch((e: Error) => e);
    expect((refused as Error & { cause?: Error }).cause?.message).toMatch(
      /no call is waiting for a decision under effect key ek-nope/,
    );
    await handle.executeUpdate(resolveEscalation, {
      args: [{ effectKey: pending.effectKey, decision: 'retry', by: 'oncall@example.com' }],
    });
    const result: ToolRunResult = await handle.result();
    expect(result.outputs[0]).toEqual({ delivered: true });
    expect(result.journal[0]).toMatchObject({ recovery: 'escalated_retry', outcome: 'ok', attempts: 2 });
    expect(landedFor(args)).toHaveLength(2);
    const events = await historyOf(h.client, handle.workflowId);
    // The refused answer is in history too (the audit keeps it), but only the person's decision succeeded.
    const answers = events.flatMap((e) => e.workflowExecutionUpdateCompletedEventAttributes?.outcome ?? []);
    expect(answers.map((o) => (o.success ? 'taken' : o.failure?.applicationFailureInfo?.type))).toEqual([
      'DecisionRejected',
      'taken',
    ]);
  });

  it('escalate: when nobody decides before the deadline, the step ends InDoubt and nothing is resent', async () => {
    const args = { to: `pager-${randomUUID()}`, text: 'disk full' };
    const { result } = await run([{ toolId: 'tool://flaky/page', args }]);
    expect(result.journal[0]).toMatchObject({
      recovery: 'escalation_expired',
      outcome: 'in_doubt',
      attempts: 1,
      error: { code: 'InDoubt', message: expect.stringContaining('nobody decided within 1s') },
    });
    expect(landedFor(args)).toHaveLength(1);
  });

  it('escalate: "landed" takes the person\'s output and sends nothing more; "abort" ends the step', async () => {
    const a1 = { to: `ops-${randomUUID()}@example.com`, text: 'landed' };
    const h1 = await start([{ toolId: 'tool://flaky/notify', args: a1 }]);
    await h1.executeUpdate(resolveEscalation, {
      args: [
        {
          effectKey: (await waitForPending(h1)).effectKey,
          decision: 'landed',
          output: { delivered: 'confirmed by phone' },
        },
      ],
    });
    const r1: ToolRunResult = await h1.result();
    expect(r1.outputs[0]).toEqual({ delivered: 'confirmed by phone' });
    expect(r1.journal[0]!.recovery).toBe('escalated_landed');
    expect(landedFor(a1)).toHaveLength(1);

    const a2 = { to: `ops-${randomUUID()}@example.com`, text: 'abort' };
    const h2 = await start([{ toolId: 'tool://flaky/notify', args: a2 }]);
    await h2.executeUpdate(resolveEscalation, {
      args: [{ effectKey: (await waitForPending(h2)).effectKey, decision: 'abort', reason: 'customer called' }],
    });
    const r2: ToolRunResult = await h2.result();
    expect(r2.status).toBe('failed');
    expect(r2.journal[0]).toMatchObject({
      recovery: 'escalated_abort',
      outcome: 'aborted',
      error: { code: 'Aborted' },
    });
    expect(landedFor(a2)).toHaveLength(1);
  });
});

describe('client.ts show and replay on a live run', () => {
  it('lists each effect with its key, attempts, recovery path and outcome, and replays it', async () => {
    const h = await harness(`show-${randomUUID()}`);
    const s = scenarioTools(testDir('show'));
    const worker = await h.startWorker({ manifest, tools: s.tools });
    const workflowId = `show-${randomUUID()}`;
    await worker.runUntil(
      h.client.workflow.execute('toolRun', {
        taskQueue: h.taskQueue,
        workflowId,
        args: [
          {
            manifest,
            grants: ['tool://flaky/charge'],
            principal: 'agent:test',
            continueOnError: true,
            calls: [
              { toolId: 'tool://flaky/wire', args: { account: 'a', cents: 1 } },
              { toolId: 'tool://flaky/charge', args: { account: 'b', cents: 2, mode: 'in_doubt_landed' } },
            ],
          },
        ],
      }),
    );
    const lines: string[] = [];
    process.env.TEMPORAL_ADDRESS = process.env.TOOLPLANE_TEST_ADDRESS;
    try {
      await buildProgram((l) => lines.push(l)).parseAsync(['node', 'client.ts', 'show', workflowId]);
      await buildProgram((l) => lines.push(l)).parseAsync(['node', 'client.ts', 'replay', workflowId]);
    } finally {
      delete process.env.TEMPORAL_ADDRESS;
      await h.close();
    }
    expect(lines[0]).toBe(`${workflowId}: COMPLETED`);
    expect(lines[1]).toMatch(/^pos\s+tool\s+effect key\s+attempts\s+recovery\s+outcome\s+decision$/);
    expect(lines[2]).toMatch(
      /^#0\s+tool:\/\/flaky\/wire\s+-\s+0\s+none\s+refused\s+refused · unreachable · .*ungranted/,
    );
    expect(lines[3]).toMatch(
      /^#1\s+tool:\/\/flaky\/charge\s+ek-[A-Za-z0-9_-]{11}…\s+1\s+reconciled_landed \[tool failed 1\] \[reconcile: landed\]\s+ok\s+allowed$/,
    );
    expect(lines[4]).toMatch(/replayed \d+ events with the current code, no divergence/);
  });
});
