// A reset whose base branch cannot be read (issue 50's bad input): the base run's history is gone, past
// retention or deleted, before the reset run asks what it did. Nothing the base did can be adopted, so
// every effect past the reset point is of unknown outcome and its tool's recovery decides: the keyless
// refund (`recovery: fail`) is not sent blind, the journal says why, and the run ends.
import { randomUUID } from 'node:crypto';
import type { JournalEntry } from '../../common/journal';
import type { AgentRunResult } from '../../workflows/agent/run';
import { agentInput } from '../support/agent';
import { refundScript, supportDesk } from '../support/desk';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { keylessRefunds, REFUND, resetTo } from '../support/reset';
import { waitFor } from '../support/wait';

describe('a reset whose base branch is unreadable', () => {
  const desk = supportDesk(testDir('reset-unreadable'));
  const manifest = keylessRefunds(exampleManifest());
  let h: Harness;

  beforeAll(async () => {
    h = await harness(`reset-unreadable-${randomUUID()}`);
  });
  afterAll(async () => {
    await h?.close();
  });

  const refundsReceived = () => desk.payments.all().length + desk.payments.repeats();
  const refundOf = (journal: JournalEntry[]) => journal.find((e) => e.toolId === REFUND)!;

  it('sends nothing blind: the refund is in doubt, as its recovery declares, and the run ends', async () => {
    // The base run, on a worker stopped before the reset, so the reset run asks only after its base is gone.
    const first = await h.startWorker({ manifest, tools: desk.tools });
    const serving = first.run();
    const workflowId = `reset-unreadable-${randomUUID()}`;
    const base = await h.client.workflow.start('agentRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [agentInput(manifest, refundScript)],
    });
    expect(((await base.result()) as AgentRunResult).status).toBe('completed');
    first.shutdown();
    await serving;
    expect(refundsReceived()).toBe(1);

    const resetRun = await resetTo(h.client, workflowId, base.firstExecutionRunId, { task: 0 });
    // The base run's history goes, as retention would take it (the server deletes it in its own time:
    // half a minute on the dev server, so this suite is a slow one).
    await h.client.workflowService.deleteWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId, runId: base.firstExecutionRunId },
    });
    await waitFor('the base run to be gone', 120_000, async () => {
      try {
        await h.client.workflow.getHandle(workflowId, base.firstExecutionRunId).fetchHistory();
        return false;
      } catch {
        return true;
      }
    });

    await h.runWorker({ manifest, tools: desk.tools });
    const result: AgentRunResult = await h.client.workflow.getHandle(workflowId, resetRun).result();
    expect(result.status).toBe('completed');
    const refund = refundOf(result.journal);
    expect(refund).toMatchObject({ outcome: 'in_doubt', attempts: 0, recovery: 'in_doubt_failed' });
    expect(refund.adoptedFrom).toBeUndefined();
    expect(JSON.stringify(refund)).toContain('could not be read');
    // Nothing was sent again to the provider, which keeps no keys.
    expect(refundsReceived()).toBe(1);
  });
});
