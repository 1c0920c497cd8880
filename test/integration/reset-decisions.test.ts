// A person's decision follows the same rule as an effect across an operator's reset (issue 50): the
// base branch's approval or denial counts in the reset run for the very same call (same effect key:
// tool, arguments and position), and nobody is asked again; the refund, which keeps no keys, is not
// sent again either. The reset plan says so before the reset.
import { randomUUID } from 'node:crypto';
import type { Manifest } from '../../catalog/manifest';
import type { JournalEntry } from '../../common/journal';
import { planReset } from '../../inspect/reset-plan';
import type { AgentRunResult } from '../../workflows/agent/run';
import { pendingEscalations, resolveEscalation } from '../../workflows/escalation';
import { agentInput } from '../support/agent';
import { refundScript, supportDesk } from '../support/desk';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { keylessRefunds, REFUND, resetTo } from '../support/reset';
import { waitFor } from '../support/wait';

/** A refund a person approves every time, whose provider keeps no keys: a resend is a second refund. */
function approvedRefunds(): Manifest {
  return keylessRefunds(exampleManifest(), { approval: 'always' });
}

describe("an operator's reset carries a person's decision to the same call only", () => {
  const dir = testDir('reset-decisions');
  const desk = supportDesk(dir);
  const manifest = approvedRefunds();
  let h: Harness;

  beforeAll(async () => {
    h = await harness(`reset-decisions-${randomUUID()}`);
    await h.runWorker({ manifest, tools: desk.tools });
  });
  afterAll(async () => {
    await h?.close();
  });

  const refundsReceived = () => desk.payments.all().length + desk.payments.repeats();
  const refundOf = (journal: JournalEntry[]) => journal.find((e) => e.toolId === REFUND)!;

  /** A finished run whose refund the supervisor decided. */
  async function decidedRun(decision: 'approve' | 'deny') {
    const workflowId = `reset-decision-${decision}-${randomUUID()}`;
    const handle = await h.client.workflow.start('agentRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [agentInput(manifest, refundScript)],
    });
    const asked = await waitFor('the refund to ask for approval', 30_000, async () => {
      const pending = await handle.query(pendingEscalations);
      return pending.find((p) => p.toolId === REFUND);
    });
    await handle.executeUpdate(resolveEscalation, {
      args: [{ effectKey: asked.effectKey, decision, by: 'supervisor', reason: 'checked the ticket' }],
    });
    const result: AgentRunResult = await handle.result();
    return { workflowId, runId: handle.firstExecutionRunId, result, effectKey: asked.effectKey };
  }

  /** Resets to the end of the run's first workflow task (before the refund was asked about); the reset run's handle. */
  async function resetToStart(workflowId: string, runId: string) {
    return h.client.workflow.getHandle(workflowId, await resetTo(h.client, workflowId, runId, { task: 0 }));
  }

  /** The reset run's result, failing if it waits for a person instead (a decision not carried asks again). */
  async function finishedWithoutAsking(handle: Awaited<ReturnType<typeof resetToStart>>): Promise<AgentRunResult> {
    let done: AgentRunResult | undefined;
    void handle.result().then((r: AgentRunResult) => (done = r));
    const seen = await waitFor('the reset run to finish, or to ask a person', 60_000, async () => {
      if (done) return { finished: done };
      const pending = await handle.query(pendingEscalations).catch(() => []);
      return pending.length > 0 ? { asksAgain: pending } : undefined;
    });
    expect(seen).not.toHaveProperty('asksAgain');
    return done!;
  }

  it('an approval given in the base counts for the same refund: nobody is asked, nothing is sent again', async () => {
    const base = await decidedRun('approve');
    expect(refundOf(base.result.journal)).toMatchObject({
      outcome: 'ok',
      decision: 'approved',
      decidedBy: 'supervisor',
    });
    const before = refundsReceived();
    const plan = await planReset(h.client, base.workflowId, '0');
    expect(plan.effects.find((e) => e.toolId === REFUND)).toMatchObject({
      fate: 'adopted',
      decisions: [{ decision: 'approve by supervisor', fate: 'carried' }],
    });
    const reset = await resetToStart(base.workflowId, base.runId);
    const result = await finishedWithoutAsking(reset);
    expect(result.status).toBe('completed');
    const refund = refundOf(result.journal);
    expect(refund).toMatchObject({
      effectKey: base.effectKey,
      outcome: 'ok',
      decision: 'approved',
      decidedBy: 'supervisor',
      adoptedFrom: { runId: base.runId },
    });
    expect(refund.reason).toContain(`given in run ${base.runId}`);
    expect(refundsReceived()).toBe(before);
  });

  it('a denial given in the base refuses the same refund again: nothing is sent, nobody is asked', async () => {
    const base = await decidedRun('deny');
    expect(refundOf(base.result.journal)).toMatchObject({ outcome: 'refused', decision: 'denied' });
    const before = refundsReceived();
    const reset = await resetToStart(base.workflowId, base.runId);
    const result = await finishedWithoutAsking(reset);
    const refund = refundOf(result.journal);
    expect(refund).toMatchObject({
      effectKey: base.effectKey,
      outcome: 'refused',
      decision: 'denied',
      decidedBy: 'supervisor',
    });
    expect(refund.reason).toContain(`given in run ${base.runId}`);
    expect(refundsReceived()).toBe(before);
  });
});
