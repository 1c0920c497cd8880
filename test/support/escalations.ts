// Waiting, as a person would, until a run asks for a decision.
import type { WorkflowHandle } from '@temporalio/client';
import { pendingEscalations, type PendingEscalation } from '../../workflows/escalation';

export async function waitForPending(handle: WorkflowHandle, intervalMs = 100): Promise<PendingEscalation> {
  for (;;) {
    const pending = await handle.query(pendingEscalations);
    if (pending.length > 0) return pending[0]!;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
