// Waiting, as a person would, until a run asks for a decision.
import type { WorkflowHandle } from '@temporalio/client';
import { pendingEscalations, type PendingEscalation } from '../../workflows/escalation';
import { waitFor } from './wait';

export async function waitForPending(handle: WorkflowHandle, timeoutMs = 120_000): Promise<PendingEscalation> {
  return waitFor(`run ${handle.workflowId} to ask for a decision`, timeoutMs, async () => {
    const pending = await handle.query(pendingEscalations);
    return pending[0];
  });
}
