// An operator's reset performs nothing twice (issue 50). A finished support-desk run whose refund tool
// keeps no idempotency keys (`honours_idempotency_key: false`, `recovery: fail`) is reset as an operator
// does (`resetWorkflowExecution`, what `temporal workflow reset` and the Web UI call), to each of its
// completed workflow tasks: the payments provider must have received the refund once, and the reset
// run's journal must say the refund was adopted from the run it was reset from.
import { randomUUID } from 'node:crypto';
import type { Manifest } from '../../catalog/manifest';
import type { JournalEntry } from '../../common/journal';
import type { AgentRunResult } from '../../workflows/agent/run';
import { runAgent } from '../support/agent';
import { refundScript, supportDesk } from '../support/desk';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { historyOf, scheduledActivities } from '../support/history';

const REFUND = 'tool://payments/refund';

/** The desk's manifest with a refund provider that keeps no keys: a resend is a second refund. */
function keylessManifest(): Manifest {
  const m = exampleManifest();
  return {
    ...m,
    tools: m.tools.map((t) => (t.id === REFUND ? { ...t, honours_idempotency_key: false, recovery: 'fail' } : t)),
  };
}

describe('an operator reset performs nothing twice', () => {
  const desk = supportDesk(testDir('reset-adopts'));
  const manifest = keylessManifest();
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

  /** Resets run `runId` of `workflowId` to the end of its `task`-th completed workflow task (from 0); the new run and its result. */
  async function resetAt(workflowId: string, runId: string, task: number) {
    const events = await h.client.workflow.getHandle(workflowId, runId).fetchHistory();
    const completed = (events.events ?? []).filter((e) => e.workflowTaskCompletedEventAttributes);
    const resetTo = completed[task]!.eventId!;
    const reset = await h.client.workflowService.resetWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId, runId },
      reason: 'operator reset in a test',
      workflowTaskFinishEventId: resetTo,
      requestId: randomUUID(),
    });
    const result: AgentRunResult = await h.client.workflow.getHandle(workflowId, reset.runId!).result();
    return { runId: reset.runId!, result };
  }

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
    const second = await resetAt(base.workflowId, first.runId, 0);
    expect(second.result.status).toBe('completed');
    expect(refundOf(second.result.journal)).toMatchObject({ outcome: 'ok', adoptedFrom: { runId: base.runId } });
    expect(refundsReceived()).toBe(before);
  });
});
