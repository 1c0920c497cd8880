// The budget activities: reserve a call's amounts against its principal's budgets across runs, and
// settle them once the call's outcome is known. They talk to the principal's budget workflow through
// the worker's own client, by update-with-start (the workflow exists after the first call), under the
// call's idempotency key as the update id: a retried activity is answered, never counted again.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { budgetClaims } from '../catalog/budget';
import type { Manifest } from '../catalog/manifest';
import { budgetWorkflowId } from '../common/budget-id';
import { WorkflowName } from '../common/names';
import type { BudgetActivities, BudgetAnswer, BudgetReserveRequest, BudgetSettleRequest } from '../common/wire';
import { reserveBudgetUpdate, settleBudgetUpdate, type BudgetCounterWorkflow } from '../common/budget-protocol';
import { toolPermit } from '../common/ticket';
import { checkTicket } from './identity/ticket-check';
import type { TicketIssuer } from './identity/tickets';
import { RunFailureType } from '../catalog/failure-types';

export interface BudgetActivityDeps {
  /** The worker's own manifest: the budgets, their periods and limits come from here, never from the run. */
  manifest: Manifest;
  /** Only a run the worker authorized reserves or settles: each request presents the run's ticket for the tool. */
  tickets: TicketIssuer;
}

/** The failure type of a reserve request the worker cannot count: final, the call is refused. */
export const BUDGET_UNCOUNTABLE = RunFailureType.BudgetUncountable;

function startOperation(principal: string) {
  const info = Context.current().info;
  return new WithStartWorkflowOperation<BudgetCounterWorkflow>(WorkflowName.BudgetCounter, {
    workflowId: budgetWorkflowId(principal),
    // The worker's own task queue: every toolplane worker registers the budget workflow.
    taskQueue: info.taskQueue,
    args: [{}],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}

export function createBudgetActivities(deps: BudgetActivityDeps): BudgetActivities {
  const decls = new Map(deps.manifest.tools.map((t) => [t.id, t]));
  return {
    async reserveBudget(req: BudgetReserveRequest): Promise<BudgetAnswer> {
      await checkTicket(deps.tickets, req, toolPermit(req.toolId), BUDGET_UNCOUNTABLE);
      const decl = decls.get(req.toolId);
      if (!decl)
        throw ApplicationFailure.nonRetryable(
          `${req.toolId} is not declared on this worker; no budget is counted for it`,
          BUDGET_UNCOUNTABLE,
        );
      const payment = req.payment && { ...req.payment, minor: BigInt(req.payment.minor) };
      const derived = budgetClaims(decl, payment, req.egress);
      if (!('claims' in derived)) return { ok: false, rule: derived.rule, reason: derived.reason };
      if (derived.claims.length === 0) return { ok: true };
      const client = Context.current().client;
      return client.workflow.executeUpdateWithStart(reserveBudgetUpdate, {
        updateId: req.reservation,
        args: [
          {
            reservation: req.reservation,
            toolId: req.toolId,
            run: Context.current().info.workflowExecution?.workflowId,
            claims: derived.claims,
          },
        ],
        startWorkflowOperation: startOperation(req.principal),
      });
    },

    async settleBudget(req: BudgetSettleRequest): Promise<void> {
      await checkTicket(deps.tickets, req, toolPermit(req.toolId), BUDGET_UNCOUNTABLE);
      const client = Context.current().client;
      // Its own update id: the reserve's id names the reservation, this one the settling of it.
      await client.workflow.executeUpdateWithStart(settleBudgetUpdate, {
        updateId: `${req.reservation}.${req.outcome}`,
        args: [
          {
            reservation: req.reservation,
            outcome: req.outcome,
            run: Context.current().info.workflowExecution?.workflowId,
          },
        ],
        startWorkflowOperation: startOperation(req.principal),
      });
    },
  };
}
