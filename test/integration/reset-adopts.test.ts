// An operator's reset performs nothing twice (issue 50). A finished support-desk run whose refund tool
// keeps no idempotency keys (`honours_idempotency_key: false`, `recovery: fail`) is reset as an operator
// does (`resetWorkflowExecution`, what `temporal workflow reset` and the Web UI call), to each of its
// completed workflow tasks: the payments provider must have received the refund once, and the reset
// run's journal must say the refund was adopted from the run it was reset from.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import { formatEffects, loadEffects } from '../../inspect/journal';
import type { JournalEntry } from '../../common/journal';
import type { AgentRunResult } from '../../workflows/agent/run';
import { agentInput, runAgent } from '../support/agent';
import { refundScript, supportDesk } from '../support/desk';
import { exampleManifest, harness, testAddress, testDir, type Harness } from '../support/env';
import { historyOf, scheduledActivities, type HistoryEvent } from '../support/history';
import { keylessRefunds, REFUND, resetTo } from '../support/reset';
import { waitFor } from '../support/wait';
import { buildProgram } from '../../cli';
import type { ResetPlan } from '../../inspect/reset-plan';

describe('an operator reset performs nothing twice', () => {
  const dir = testDir('reset-adopts');
  const desk = supportDesk(dir);
  const manifest = keylessRefunds(exampleManifest());
  let h: Harness;

  beforeAll(async () => {
    h = await harness(`reset-adopts-${randomUUID()}`);
    await h.runWorker({ manifest, tools: desk.tools });
  });
  afterAll(async () => {
    await h?.close();
  });

  /** Every refund the provider received, a repeat under a key it already holds included (it keeps none). */
  const refundsReceived = () => desk.payments.all().length + desk.payments.repeats();

  /** Whether a history holds the reset question: its activity, or the marker that guards it. */
  const asksBase = (events: HistoryEvent[]) =>
    events.some(
      (e) =>
        e.activityTaskScheduledEventAttributes?.activityType?.name === 'readBaseBranch' ||
        (e.markerRecordedEventAttributes && JSON.stringify(e).includes('toolplane-reset-adopts')),
    );

  /** Resets run `runId` of `workflowId` to the end of its `task`-th completed workflow task (from 0); the new run and its result. */
  async function resetAt(workflowId: string, runId: string, task: number, on: Harness = h) {
    const reset = await resetOnly(workflowId, runId, task, on);
    const result: AgentRunResult = await on.client.workflow.getHandle(workflowId, reset).result();
    return { runId: reset, result };
  }

  const resetOnly = (workflowId: string, runId: string, task: number, on: Harness = h): Promise<string> =>
    resetTo(on.client, workflowId, runId, { task });

  async function finishedRun() {
    const { result, workflowId } = await runAgent(h, manifest, refundScript);
    expect(result.status).toBe('completed');
    const runId = (await h.client.workflow.getHandle(workflowId).describe()).runId;
    const events = await historyOf(h.client, workflowId);
    const tasks = events.filter((e) => e.workflowTaskCompletedEventAttributes).length;
    return { workflowId, runId, result, tasks };
  }

  const refundOf = (journal: JournalEntry[]) => journal.find((e) => e.toolId === REFUND)!;

  it('a run reset to each of its completed workflow tasks: the keyless provider received the refund once', async () => {
    const base = await finishedRun();
    expect(base.tasks).toBeGreaterThanOrEqual(3);
    const refundKey = refundOf(base.result.journal).effectKey;
    expect(refundsReceived()).toBe(1);
    for (let task = 0; task < base.tasks; task++) {
      const reset = await resetAt(base.workflowId, base.runId, task);
      expect(reset.result.status).toBe('completed');
      // Nothing sent again: the provider, which keeps no keys, holds one refund.
      expect({ task, refunds: refundsReceived() }).toEqual({ task, refunds: 1 });
      const refund = refundOf(reset.result.journal);
      expect(refund).toMatchObject({ effectKey: refundKey, outcome: 'ok' });
      // The reset run's refund is the base run's: in the copied history (a reset after the send), or adopted.
      const sentHere = scheduledActivities(await historyOf(h.client, base.workflowId)).some(
        (a) => a.type === 'performTool' && a.activityId === refundKey,
      );
      if (!sentHere) expect(refund.adoptedFrom).toMatchObject({ runId: base.runId });
    }
  });

  it('a reset of a reset run adopts what the first run did', async () => {
    const base = await finishedRun();
    const before = refundsReceived();
    const first = await resetAt(base.workflowId, base.runId, 0);
    expect(refundOf(first.result.journal).adoptedFrom).toMatchObject({ runId: base.runId });
    // `toolplane show` says so.
    const shown = formatEffects((await loadEffects(h.client, base.workflowId)).effects).join('\n');
    expect(shown).toContain(`[adopted from run ${base.runId} event `);
    const second = await resetAt(base.workflowId, first.runId, 0);
    expect(second.result.status).toBe('completed');
    expect(refundOf(second.result.journal)).toMatchObject({ outcome: 'ok', adoptedFrom: { runId: base.runId } });
    expect(refundsReceived()).toBe(before);
  });

  it('a reset of a reset past its own question asks again, and both reset runs replay as they ran', async () => {
    const base = await finishedRun();
    const before = refundsReceived();
    const first = await resetAt(base.workflowId, base.runId, 0);
    // Reset the reset run to the workflow task in which it adopted the refund (the one that asked for the
    // model's last turn): its question is in the copied part, and the refund is decided again past the point.
    const firstEvents = (await h.client.workflow.getHandle(base.workflowId, first.runId).fetchHistory()).events ?? [];
    const turns = firstEvents.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'modelTurn');
    const adoptedIn = String(
      turns[turns.length - 1]!.activityTaskScheduledEventAttributes!.workflowTaskCompletedEventId,
    );
    const last = firstEvents
      .filter((e) => e.workflowTaskCompletedEventAttributes)
      .findIndex((e) => String(e.eventId) === adoptedIn);
    expect(last).toBeGreaterThan(0);
    const second = await resetAt(base.workflowId, first.runId, last);
    expect(second.result.status).toBe('completed');
    expect(refundOf(second.result.journal)).toMatchObject({ outcome: 'ok', adoptedFrom: { runId: base.runId } });
    expect(refundsReceived()).toBe(before);
    // The copied question (the first reset's) and the second reset's own.
    const secondEvents = (await h.client.workflow.getHandle(base.workflowId, second.runId).fetchHistory()).events ?? [];
    const asked = secondEvents.filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'readBaseBranch',
    );
    expect(asked).toHaveLength(2);
    for (const runId of [first.runId, second.runId]) {
      const history = await h.client.workflow.getHandle(base.workflowId, runId).fetchHistory();
      await Worker.runReplayHistory(
        { workflowBundle: { codePath: process.env.TOOLPLANE_TEST_BUNDLE! } },
        history,
        runId,
      );
    }
  });

  it('a run never reset pays nothing: no question to the worker, no marker', async () => {
    const base = await finishedRun();
    expect(asksBase(await historyOf(h.client, base.workflowId))).toBe(false);
  });

  it('a reset run asks once, after its reset point', async () => {
    const base = await finishedRun();
    await resetAt(base.workflowId, base.runId, 0);
    const events = await historyOf(h.client, base.workflowId);
    const asked = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'readBaseBranch');
    expect(asked).toHaveLength(1);
    const resetEvent = events.find((e) => e.workflowTaskFailedEventAttributes?.baseRunId)!;
    expect(Number(asked[0]!.eventId)).toBeGreaterThan(Number(resetEvent.eventId));
  });

  it('a provider that honours keys but forgot the key receives nothing again', async () => {
    // The desk's own manifest: the refund honours keys and reconciles. The provider then forgets every key.
    const keyed = supportDesk(testDir('reset-adopts-keyed'));
    const hk = await harness(`reset-adopts-keyed-${randomUUID()}`);
    try {
      await hk.runWorker({ manifest: exampleManifest(), tools: keyed.tools });
      const { result, workflowId } = await runAgent(hk, exampleManifest(), refundScript);
      expect(result.status).toBe('completed');
      const runId = (await hk.client.workflow.getHandle(workflowId).describe()).runId;
      expect(keyed.payments.all()).toHaveLength(1);
      fs.writeFileSync(path.join(keyed.payments.dir, 'payments.jsonl'), '');
      const reset = await resetAt(workflowId, runId, 0, hk);
      expect(refundOf(reset.result.journal)).toMatchObject({ outcome: 'ok', attempts: 0, adoptedFrom: { runId } });
      expect({ refunds: keyed.payments.all().length, repeats: keyed.payments.repeats() }).toEqual({
        refunds: 0,
        repeats: 0,
      });
    } finally {
      await hk.close();
    }
  });

  /** `toolplane reset …` as an operator types it, its --json answer. */
  async function toolplaneReset(...args: string[]): Promise<ResetPlan & { resetRunId?: string }> {
    const lines: string[] = [];
    await buildProgram((l) => lines.push(l)).parseAsync([
      'node',
      'toolplane',
      'reset',
      ...args,
      '--address',
      testAddress(),
      '--json',
    ]);
    return JSON.parse(lines.join('\n')) as ResetPlan & { resetRunId?: string };
  }

  it('toolplane reset --to previews each effect, then resets: the refund is adopted, nothing is sent again', async () => {
    const base = await finishedRun();
    const before = refundsReceived();
    const refundKey = refundOf(base.result.journal).effectKey!;
    const refundAt = refundOf(base.result.journal).position;
    // The preview resets nothing: the lookup stays in the copied history, the refund would be adopted.
    const preview = await toolplaneReset(base.workflowId, '--to', String(refundAt));
    expect(preview.resetRunId).toBeUndefined();
    expect(preview.to).toEqual({ position: refundAt, effectKey: refundKey, toolId: REFUND });
    expect(preview.effects.map((e) => [e.toolId, e.fate])).toEqual([
      ['tool://crm/lookup_customer', 'kept'],
      [REFUND, 'adopted'],
    ]);
    expect((await h.client.workflow.getHandle(base.workflowId).describe()).runId).toBe(base.runId);
    // By effect key, with --yes: the reset run makes the refund again, and adopts the base's.
    const done = await toolplaneReset(base.workflowId, '--to', refundKey, '--yes');
    expect(done.workflowTaskFinishEventId).toBe(preview.workflowTaskFinishEventId);
    const result: AgentRunResult = await h.client.workflow.getHandle(base.workflowId, done.resetRunId).result();
    expect(refundOf(result.journal)).toMatchObject({
      effectKey: refundKey,
      outcome: 'ok',
      adoptedFrom: { runId: base.runId },
    });
    expect(refundsReceived()).toBe(before);
  });

  it('toolplane reset refuses a call the run does not have, naming the ones it has', async () => {
    const base = await finishedRun();
    await expect(toolplaneReset(base.workflowId, '--to', '7')).rejects.toThrow(
      /has no call at position 7; its sent calls are at positions 0, 1/,
    );
    await expect(toolplaneReset(base.workflowId, '--to', 'no-such-key', '--yes')).rejects.toThrow(
      /no call with effect key no-such-key/,
    );
    expect((await h.client.workflow.getHandle(base.workflowId).describe()).runId).toBe(base.runId);
  });

  it("a call in flight at the reset: its outcome is unknown, and the keyless refund's recovery (fail) sends nothing", async () => {
    const holdDir = fs.mkdtempSync(path.join(dir, 'hold-'));
    process.env.TOOLPLANE_HOLD_AT = 'refund';
    process.env.TOOLPLANE_HOLD_DIR = holdDir;
    try {
      const before = refundsReceived();
      const workflowId = `agent-${randomUUID()}`;
      const handle = await h.client.workflow.start('agentRun', {
        taskQueue: h.taskQueue,
        workflowId,
        args: [agentInput(manifest, refundScript)],
      });
      await waitFor('the refund in flight', 30_000, () => fs.readdirSync(holdDir).some((f) => f.startsWith('held-')));
      // The operator resets the running run to its first workflow task: Temporal terminates it mid-call.
      const reset = await resetOnly(workflowId, handle.firstExecutionRunId, 0);
      const result: AgentRunResult = await h.client.workflow.getHandle(workflowId, reset).result();
      const refund = refundOf(result.journal);
      expect(refund).toMatchObject({ outcome: 'in_doubt', attempts: 0, recovery: 'in_doubt_failed' });
      expect(refund.adoptedFrom).toBeUndefined();
      // The base's send goes on and lands once; the reset run sent nothing of its own.
      fs.writeFileSync(path.join(holdDir, 'release'), '');
      await waitFor('the held refund to land', 30_000, () => refundsReceived() === before + 1);
      expect(refundsReceived()).toBe(before + 1);
    } finally {
      delete process.env.TOOLPLANE_HOLD_AT;
      delete process.env.TOOLPLANE_HOLD_DIR;
      fs.writeFileSync(path.join(holdDir, 'release'), '');
    }
  });
});
