// Temporal reapplies a run's updates after the reset point to the reset run (issue 50, found by the
// chaos campaign's resets): a person's in-doubt `retry`, given in the base for the base's own lost
// send, reaches the reset run again. It must not resend: the base's resend completed, so the reset run
// takes that outcome and the relay receives nothing more.
import { randomUUID } from 'node:crypto';
import type Long from 'long';
import { loadManifest } from '../../runtime/manifest-file';
import { resolveEscalation } from '../../workflows/escalation';
import type { ToolRunResult } from '../../workflows/tool-run';
import { harness, testDir, type Harness } from '../support/env';
import { waitForPending } from '../support/escalations';
import { historyOf } from '../support/history';
import { resetTo } from '../support/reset';
import { SCENARIO_MANIFEST, scenarioTools } from '../support/scenario-tools';

const manifest = loadManifest(SCENARIO_MANIFEST).manifest;

describe("a base's decision that Temporal reapplies to the reset run", () => {
  let h: Harness;
  let s: ReturnType<typeof scenarioTools>;

  beforeAll(async () => {
    h = await harness(`reset-reapplied-${randomUUID()}`);
    s = scenarioTools(testDir('reset-reapplied'));
    await h.runWorker({ manifest, tools: s.tools });
  });
  afterAll(async () => {
    await h.close();
  });

  /** A tool run of one call, under its own workflow id. */
  const startCall = (workflowId: string, call: { toolId: string; args: Record<string, unknown> }) =>
    h.client.workflow.start('toolRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [{ manifest, grants: manifest.tools.map((t) => t.id), principal: 'agent:test', calls: [call] }],
    });

  /** Resets a finished run to the end of one of its workflow tasks, as an operator does; the reset run's handle. */
  const resetAt = async (workflowId: string, runId: string, eventId: Long) =>
    h.client.workflow.getHandle(workflowId, await resetTo(h.client, workflowId, runId, { eventId }));

  it('a retry the base took for its lost send resends nothing in the reset run', async () => {
    // The relay times out on the first send (in doubt; it did deliver), then delivers: escalate asks a person.
    const args = { to: `ops-${randomUUID()}@example.com`, text: 'hello' };
    const delivered = () => s.store.all().filter((r) => JSON.stringify(r.args) === JSON.stringify(args)).length;
    const workflowId = `reset-reapplied-${randomUUID()}`;
    const handle = await startCall(workflowId, { toolId: 'tool://flaky/notify', args });
    const pending = await waitForPending(handle);
    await handle.executeUpdate(resolveEscalation, {
      args: [{ effectKey: pending.effectKey, decision: 'retry', by: 'oncall@example.com' }],
    });
    const base: ToolRunResult = await handle.result();
    expect(base.journal[0]).toMatchObject({ recovery: 'escalated_retry', outcome: 'ok' });
    expect(delivered()).toBe(2);

    // Reset to the workflow task in which the run began to wait: the person's retry comes after the point.
    const events = await historyOf(h.client, workflowId);
    const lost = events.findIndex((e) => e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes);
    const waiting = events.slice(lost).find((e) => e.workflowTaskCompletedEventAttributes)!;
    const reset = await resetAt(workflowId, handle.firstExecutionRunId, waiting.eventId!);
    const result: ToolRunResult = await reset.result();
    // The reapplied retry took the outcome the base's resend completed with; the relay got nothing more.
    expect(result.status).toBe('completed');
    expect(result.outputs[0]).toEqual({ delivered: true });
    expect(result.journal[0]).toMatchObject({ recovery: 'escalated_landed', outcome: 'ok' });
    expect(delivered()).toBe(2);
    // Temporal did reapply it: the reset run's history holds the person's update after the point.
    const resetEvents = (await reset.fetchHistory()).events ?? [];
    expect(resetEvents.some((e) => e.workflowExecutionUpdateAdmittedEventAttributes)).toBe(true);
  });

  it("a retry tool's resend past the reset point adopts the send the base completed", async () => {
    // The read is busy on its first send, then answers: the run waits a backoff and sends again.
    const before = s.reads.length;
    const workflowId = `reset-resend-${randomUUID()}`;
    const handle = await startCall(workflowId, { toolId: 'tool://flaky/read', args: { q: 'balance' } });
    const base: ToolRunResult = await handle.result();
    expect(base.journal[0]).toMatchObject({ attempts: 2, outcome: 'ok' });
    expect(s.reads.length - before).toBe(2);
    // Reset to the workflow task that began the backoff: the first send is in the copied part, the resend is not.
    const events = await historyOf(h.client, workflowId);
    const failed = events.findIndex((e) => e.activityTaskFailedEventAttributes);
    const backoff = events.slice(failed).find((e) => e.workflowTaskCompletedEventAttributes)!;
    const reset = await resetAt(workflowId, handle.firstExecutionRunId, backoff.eventId!);
    const result: ToolRunResult = await reset.result();
    expect(result.outputs[0]).toEqual(base.outputs[0]);
    expect(result.journal[0]).toMatchObject({ outcome: 'ok', adoptedFrom: { runId: handle.firstExecutionRunId } });
    // The provider was asked twice, by the base alone.
    expect(s.reads.length - before).toBe(2);
  });
});
