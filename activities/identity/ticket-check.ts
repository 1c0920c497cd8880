// Every toolplane activity's first check: the request presents a MAC of a ticket this worker issued
// to the very run that scheduled it (as Temporal reports that run, not as the request says), for
// this permit and principal. Anything else is refused before anything is sent.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { RunIds, TicketIssuer } from './tickets';

/** A run an operator reset keeps its ticket: the run it was reset from, as its start event names it. */
const resetFrom = new Map<string, Promise<string | undefined>>();

async function originalRunId(run: RunIds): Promise<string | undefined> {
  const client = Context.current().client;
  const page = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: run,
    maximumPageSize: 1,
  });
  const started = page.history?.events?.[0]?.workflowExecutionStartedEventAttributes;
  const original = started?.originalExecutionRunId;
  return original && original !== run.runId ? original : undefined;
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
    let original = resetFrom.get(run.runId);
    if (!original) {
      if (resetFrom.size >= 1024) resetFrom.clear(); // requests from unknown runs must not grow it without end
      original = originalRunId(run).catch(() => undefined);
      resetFrom.set(run.runId, original);
    }
    const from = await original;
    if (from && tickets.permits({ workflowId: run.workflowId, runId: from }, principal, permit, req.ticket)) return;
  }
  throw ApplicationFailure.nonRetryable(
    `${permit} refused: the request carries no ticket this worker issued to run ${run.workflowId} (${run.runId})` +
      ` for ${JSON.stringify(principal ?? null)}; only a run the worker authorized may schedule it, and nothing was sent`,
    failureType,
    { reason: 'ticket', permit },
  );
}
