// Every toolplane activity's first check: the request presents a MAC of a ticket this worker issued
// to the very run that scheduled it (as Temporal reports that run, not as the request says), for
// this permit and principal. Anything else is refused before anything is sent.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { TicketIssuer } from './tickets';

/** Refuses, with `failureType`, a request whose ticket this worker did not issue to its run for `permit`. */
export function checkTicket(
  tickets: TicketIssuer,
  req: { principal?: string; ticket?: string },
  permit: string,
  failureType: string,
): void {
  const run = Context.current().info.workflowExecution ?? { workflowId: '', runId: '' };
  if (typeof req.principal === 'string' && tickets.permits(run, req.principal, permit, req.ticket)) return;
  throw ApplicationFailure.nonRetryable(
    `${permit} refused: the request carries no ticket this worker issued to run ${run.workflowId} (${run.runId})` +
      ` for ${JSON.stringify(req.principal ?? null)}; only a run the worker authorized may schedule it, and nothing was sent`,
    failureType,
    { reason: 'ticket', permit },
  );
}
