// SIGKILL a real worker process at each point of a call, start another, and check the provider's store and the history.
import { randomUUID } from 'node:crypto';
import type { Manifest, ToolDecl } from '../../catalog/manifest';
import { paymentsStore } from '../../examples/support-desk/payments-store';
import { outbox } from '../../examples/support-desk/tools/mail';
import { resolveEscalation } from '../../workflows/escalation';
import { waitForPending } from '../support/escalations';
import type { ToolRunInput, ToolRunResult } from '../../workflows/tool-run';
import { idempotencyKey } from '../../common/effect-key';
import { exampleManifest, harness, testAddress, testDir, type Harness } from '../support/env';
import { buildProgram } from '../../cli';
import { spawnTestWorker } from '../support/worker-process';
import { historyOf, scheduledActivities } from '../support/history';
import { writeManifest, type WorkerProcess } from '../../scripts/worker-process';

const spawnWorker = spawnTestWorker;

/** The example manifest with timeouts short enough that a lost worker is noticed in seconds. */
function fastManifest(change: (t: ToolDecl) => ToolDecl = (t) => t): Manifest {
  const m = exampleManifest();
  return { ...m, tools: m.tools.map((t) => change({ ...t, timeouts: { ...t.timeouts, start_to_close: '2s' } })) };
}

describe('killing the worker with SIGKILL', () => {
  let h: Harness;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    h = await harness('unused');
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });
  afterAll(() => h.close());

  async function scenario(opts: { manifest: Manifest; calls: ToolRunInput['calls']; killAt: string[] }) {
    const dir = testDir('kill');
    const manifestFile = writeManifest(dir, opts.manifest);
    const taskQueue = `kill-${randomUUID()}`;
    const workflowId = `kill-${randomUUID()}`;
    const handle = await h.client.workflow.start('toolRun', {
      taskQueue,
      workflowId,
      args: [
        {
          manifest: opts.manifest,
          grants: opts.manifest.tools.map((t) => t.id),
          principal: 'agent:test',
          calls: opts.calls,
        },
      ],
    });
    for (const point of opts.killAt) {
      const w = spawnWorker({ manifestFile, taskQueue, storeDir: dir, killAt: point });
      workers.push(w);
      const ended = await w.exited;
      expect({ point, signal: ended.signal, said: w.output().includes(`SIGKILL at ${point}`) }).toEqual({
        point,
        signal: 'SIGKILL',
        said: true,
      });
    }
    workers.push(spawnWorker({ manifestFile, taskQueue, storeDir: dir }));
    return { handle, dir, workflowId };
  }

  const refund = (memo: string) => ({
    toolId: 'tool://payments/refund',
    args: { account_id: 'acct_alice_001', amount_cents: 2500, currency: 'EUR', memo },
  });

  it.each([
    [
      'before the tool is called',
      ['before_call'],
      'reconciled_resent',
      ['performTool', 'reconcileTool', 'performTool'],
    ],
    [
      'after the tool committed, before the activity completed',
      ['after_commit'],
      'reconciled_landed',
      ['performTool', 'reconcileTool'],
    ],
    ['during reconcile', ['after_commit', 'during_reconcile'], 'reconciled_landed', ['performTool', 'reconcileTool']],
  ])('reconcile, killed %s: exactly one payment lands', async (_label, killAt, recovery, types) => {
    const memo = `kill-${randomUUID()}`;
    const { handle, dir, workflowId } = await scenario({ manifest: fastManifest(), calls: [refund(memo)], killAt });
    const result: ToolRunResult = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.journal[0]).toMatchObject({ recovery, outcome: 'ok' });
    const landed = paymentsStore(dir).all();
    expect(landed).toHaveLength(1);
    expect(landed[0]).toMatchObject({
      memo,
      idempotencyKey: idempotencyKey(workflowId, result.journal[0]!.effectKey!),
    });
    expect(result.outputs[0]).toEqual({ payment_id: landed[0]!.id, status: 'refunded', duplicate: false });
    expect(scheduledActivities(await historyOf(h.client, workflowId)).map((a) => a.type)).toEqual(types);
  });

  it('retry, read-only: the call is simply sent again on the next worker, the lost send counted apart', async () => {
    const { handle, workflowId } = await scenario({
      manifest: fastManifest(),
      calls: [{ toolId: 'tool://crm/lookup_customer', args: { email: 'bob@example.com' } }],
      killAt: ['after_commit'],
    });
    const result: ToolRunResult = await handle.result();
    expect(result.outputs[0]).toMatchObject({ account_id: 'acct_bob_002' });
    expect(result.journal[0]).toMatchObject({ attempts: 2, lostSends: 1, recovery: 'retried', outcome: 'ok' });
    expect(result.journal[0]).not.toHaveProperty('toolFailures');
    const events = await historyOf(h.client, workflowId);
    expect(scheduledActivities(events).map((a) => a.type)).toEqual(['performTool', 'performTool']);
  });

  it('retry, a refund: workers killed more often than its maximum_attempts; it lands once, the lost sends apart', async () => {
    // Two attempts declared, three workers killed inside the call: a user who writes "retry twice" means
    // two answers from the tool, not two deaths of the machine it ran on.
    const manifest = fastManifest((t) =>
      t.id === 'tool://payments/refund'
        ? { ...t, recovery: 'retry', retry: { ...t.retry, initial_interval: '100ms', maximum_attempts: 2 } }
        : t,
    );
    const memo = `kill-${randomUUID()}`;
    const killAt = ['before_call', 'after_commit', 'after_commit'];
    const { handle, dir, workflowId } = await scenario({ manifest, calls: [refund(memo)], killAt });
    const result: ToolRunResult = await handle.result();
    expect(result.status).toBe('completed');
    const entry = result.journal[0]!;
    expect(entry).toMatchObject({ attempts: 4, lostSends: 3, recovery: 'retried', outcome: 'ok' });
    expect(entry).not.toHaveProperty('toolFailures');
    // Exactly one payment in the provider's store, under the call's one idempotency key.
    const landed = paymentsStore(dir).all();
    expect(landed).toHaveLength(1);
    expect(landed[0]).toMatchObject({ memo, idempotencyKey: idempotencyKey(workflowId, entry.effectKey!) });
    expect(result.outputs[0]).toEqual({ payment_id: landed[0]!.id, status: 'refunded', duplicate: true });
    const events = await historyOf(h.client, workflowId);
    expect(scheduledActivities(events).map((a) => a.activityId)).toEqual([
      entry.effectKey,
      `${entry.effectKey}.1`,
      `${entry.effectKey}.2`,
      `${entry.effectKey}.3`,
    ]);
    // Each lost send timed out; none of them is a failure the tool answered.
    expect(events.filter((e) => e.activityTaskTimedOutEventAttributes)).toHaveLength(3);
    expect(events.filter((e) => e.activityTaskFailedEventAttributes)).toHaveLength(0);
    // `toolplane show` says the same.
    const lines: string[] = [];
    process.env.TEMPORAL_ADDRESS = testAddress();
    try {
      await buildProgram((l) => lines.push(l)).parseAsync(['node', 'client.ts', 'show', workflowId]);
    } finally {
      delete process.env.TEMPORAL_ADDRESS;
    }
    expect(lines[2]).toMatch(
      /^#0\s+tool:\/\/payments\/refund\s+ek-\S+\s+4\s+retried \[worker lost 3\]\s+ok\s+allowed$/,
    );
  });

  it('fail: the run reports InDoubt and nothing is sent twice', async () => {
    const manifest = fastManifest((t) => (t.id === 'tool://payments/refund' ? { ...t, recovery: 'fail' } : t));
    const memo = `kill-${randomUUID()}`;
    const { handle, dir, workflowId } = await scenario({ manifest, calls: [refund(memo)], killAt: ['after_commit'] });
    const result: ToolRunResult = await handle.result();
    expect(result.status).toBe('failed');
    expect(result.journal[0]).toMatchObject({ outcome: 'in_doubt', error: { code: 'InDoubt' } });
    expect(paymentsStore(dir).all()).toHaveLength(1);
    expect(scheduledActivities(await historyOf(h.client, workflowId)).map((a) => a.type)).toEqual(['performTool']);
  });

  it('escalate: the run waits for a person and resumes on the update', async () => {
    const to = `kill-${randomUUID()}@example.com`;
    const { handle, dir } = await scenario({
      manifest: fastManifest(),
      calls: [{ toolId: 'tool://mail/send_email', args: { to, subject: 'Your refund', body: 'Done.' } }],
      killAt: ['after_commit'],
    });
    const pending = [await waitForPending(handle)];
    expect(pending[0]).toMatchObject({ toolId: 'tool://mail/send_email', kind: 'in_doubt' });
    expect(outbox(dir).all()).toHaveLength(1);
    await handle.executeUpdate(resolveEscalation, {
      args: [
        {
          effectKey: pending[0]!.effectKey,
          decision: 'landed',
          output: { status: 'sent', message_id: outbox(dir).all()[0]!.id },
          by: 'oncall',
        },
      ],
    });
    const result: ToolRunResult = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.journal[0]).toMatchObject({ recovery: 'escalated_landed', outcome: 'ok' });
    expect(outbox(dir).all()).toHaveLength(1);
  });
});
