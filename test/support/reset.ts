// An operator's reset, as `temporal workflow reset` and the Web UI make it, and the tools that make one matter.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type Long from 'long';
import type { Manifest } from '../../catalog/manifest';
import type { HistoryEvent } from './history';

export const REFUND = 'tool://payments/refund';

/**
 * The manifest with a refund provider that keeps no idempotency keys and fails when in doubt: a resend
 * is a second refund. `also` sets more of the refund's declaration.
 */
export function keylessRefunds(manifest: Manifest, also: Partial<Manifest['tools'][number]> = {}): Manifest {
  return {
    ...manifest,
    tools: manifest.tools.map((t) =>
      t.id === REFUND ? { ...t, honours_idempotency_key: false, recovery: 'fail', ...also } : t,
    ),
  };
}

/** Where a reset goes: the end of the run's n-th completed workflow task (0 is the first), or an event id. */
export type ResetPoint = { task: number } | { eventId: Long };

/** Resets a run as an operator does; the reset run's id. */
export async function resetTo(
  client: Client,
  workflowId: string,
  runId: string,
  at: ResetPoint,
  reason = 'operator reset in a test',
): Promise<string> {
  let eventId: Long;
  if ('eventId' in at) eventId = at.eventId;
  else {
    const events: HistoryEvent[] = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
    const completed = events.filter((e) => e.workflowTaskCompletedEventAttributes);
    const task = completed[at.task];
    if (!task) throw new Error(`run ${runId} has ${completed.length} completed workflow tasks, not ${at.task + 1}`);
    eventId = task.eventId!;
  }
  const { runId: reset } = await client.workflowService.resetWorkflowExecution({
    namespace: client.options.namespace,
    workflowExecution: { workflowId, runId },
    reason,
    workflowTaskFinishEventId: eventId,
    requestId: randomUUID(),
  });
  if (!reset) throw new Error(`the reset of ${workflowId}/${runId} named no new run`);
  return reset;
}
