// Every toolplane activity's first check: the request presents a MAC of a ticket this worker issued
// to the very run that scheduled it (as Temporal reports that run, not as the request says), for
// this permit and principal. Anything else is refused before anything is sent.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { RunIds, TicketIssuer } from './tickets';
import { resetBasesIn } from '../base-branch';

/**
 * A run an operator reset keeps its ticket: the run its start event names, and every run a reset in its
 * history names (a reset of a reset run copies the ticket the run in between was issued).
 */
const resetFrom = new Map<string, Promise<string[]>>();

async function earlierRunIds(run: RunIds): Promise<string[]> {
  const client = Context.current().client;
  const events = (await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory()).events ?? [];
  const started = events[0]?.workflowExecutionStartedEventAttributes;
  const ids = new Set<string>(resetBasesIn(events));
  if (started?.originalExecutionRunId) ids.add(started.originalExecutionRunId);
  ids.delete(run.runId);
  return [...ids];
}

/** Refuses, with `failureType`, a request whose ticket this worker did not issue to its run for `permit`. */
export async function checkTicket(
  tickets: TicketIssuer,
  req: { principal?: string; ticket?: string },
  permit: string,
  failureType: string,
): Promise<void> {
  const run = Context.current().info.workflowExecution ?? { workflowId: '', runId: '' };
  const principal = req.principal;
  if (typeof principal === 'string' && typeof req.ticket === 'string') {
    if (tickets.permits(run, principal, permit, req.ticket)) return;
    // Not this run's: perhaps the run an operator reset this one from (its history, and the ticket in it, were copied).
    let earlier = resetFrom.get(run.runId);
    if (!earlier) {
      if (resetFrom.size >= 1024) resetFrom.clear(); // requests from unknown runs must not grow it without end
      earlier = earlierRunIds(run).catch(() => []);
      resetFrom.set(run.runId, earlier);
    }
    for (const from of await earlier)
      if (tickets.permits({ workflowId: run.workflowId, runId: from }, principal, permit, req.ticket)) return;
  }
  throw ApplicationFailure.nonRetryable(
    `${permit} refused: the request carries no ticket this worker issued to run ${run.workflowId} (${run.runId})` +
      ` for ${JSON.stringify(principal ?? null)}; only a run the worker authorized may schedule it, and nothing was sent`,
    failureType,
    { reason: 'ticket', permit },
  );
}
