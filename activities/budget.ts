// The budget activities: reserve a call's amounts against its principal's budgets across runs, and
// settle them once the call's outcome is known. They talk to the principal's budget workflow through
// the worker's own client, by update-with-start (the workflow exists after the first call), under the
// call's idempotency key as the update id: a retried activity is answered, never counted again.
// Each message carries the worker's proof (common/budget-proof.ts); the budget workflow asks the two
// local activities here whether a reserve is the worker's, and whether an operator may release.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import { decisionKindOf, mayDecide } from '../catalog/approvers';
import { budgetClaims, type BudgetClaim } from '../catalog/budget';
import type { Manifest } from '../catalog/manifest';
import { budgetWorkflowId, principalOfBudgetWorkflow } from '../common/budget-id';
import { BUDGET_MESSAGE_REFUSED, BudgetRefusedReason } from '../common/budget-proof';
import { ActivityName, WorkflowName } from '../common/names';
import type {
  BudgetActivities,
  BudgetAnswer,
  BudgetProofActivities,
  BudgetReserveRequest,
  BudgetSettleRequest,
} from '../common/budget-wire';
import {
  reserveBudgetUpdate,
  settleBudgetUpdate,
  type BudgetCounterWorkflow,
  type BudgetProofRequest,
  type BudgetReleaseRequest,
  type ReserveUpdate,
} from '../common/budget-protocol';
import { toolPermit } from '../common/ticket';
import { IdentityRefused, type CredentialVerifier } from '../identity/credentials';
import { asFinalRefusalAsync } from './catalog-failure';
import { spendCredential } from './identity/credential-spend';
import { checkTicket } from './identity/ticket-check';
import type { TicketIssuer } from './identity/tickets';
import { RunFailureType } from '../catalog/failure-types';

export interface BudgetActivityDeps {
  /** The worker's own manifest: the budgets, their periods and limits come from here, never from the run. */
  manifest: Manifest;
  /** Only a run the worker authorized reserves or settles: each request presents the run's ticket for the tool. */
  tickets: TicketIssuer;
  /** The worker's verifier: an operator's hand release is taken only with a credential it verifies. */
  credentials?: CredentialVerifier;
}

/** The budget workflow's refusal of a message as a retried or repeated one: its reason and details. */
function refusalOf(err: unknown): { reason?: string; details?: Record<string, unknown> } | undefined {
  if (!(err instanceof WorkflowUpdateFailedError)) return undefined;
  const cause = err.cause;
  if (!(cause instanceof ApplicationFailure) || cause.type !== BUDGET_MESSAGE_REFUSED) return undefined;
  const details = cause.details?.[0] as { reason?: string } | undefined;
  return { reason: details?.reason, details: details as Record<string, unknown> | undefined };
}

function refused(reason: string, message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, BUDGET_MESSAGE_REFUSED, { reason });
}

/** Local only, and only for a budget workflow: the workflow it answers is the one it runs beside. */
function budgetWorkflowAsking(what: string): { workflowId: string; principal: string } {
  const info = Context.current().info;
  const workflowId = info.workflowExecution?.workflowId ?? '';
  const principal = principalOfBudgetWorkflow(workflowId);
  if (!info.isLocal || info.workflowType !== WorkflowName.BudgetCounter || principal === undefined)
    throw refused(
      BudgetRefusedReason.BadProof,
      `${what} answers only the budget workflow it runs beside (a local activity of ${WorkflowName.BudgetCounter})`,
    );
  return { workflowId, principal };
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

/** Sends the reserve under the worker's MAC; a reserve the workflow already recorded is answered as it was. */
async function sendReserve(
  tickets: TicketIssuer,
  req: BudgetReserveRequest,
  claims: BudgetClaim[],
): Promise<BudgetAnswer> {
  const client = Context.current().client;
  const budgetId = budgetWorkflowId(req.principal);
  const run = Context.current().info.workflowExecution?.workflowId;
  const message: Omit<ReserveUpdate, 'mac'> = {
    reservation: req.reservation,
    toolId: req.toolId,
    ...(run !== undefined ? { run } : {}),
    claims,
    issuedAt: Date.now(),
  };
  try {
    return await client.workflow.executeUpdateWithStart(reserveBudgetUpdate, {
      updateId: req.reservation,
      args: [{ ...message, mac: tickets.budgetReserveMac(budgetId, message) }],
      startWorkflowOperation: startOperation(req.principal),
    });
  } catch (err) {
    // A retried reserve the workflow already recorded (say, before it continued as new): its answer.
    const r = refusalOf(err);
    if (r?.reason === BudgetRefusedReason.AlreadyReserved) return r.details!.answer as BudgetAnswer;
    throw err;
  }
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
      return sendReserve(deps.tickets, req, derived.claims);
    },

    async settleBudget(req: BudgetSettleRequest): Promise<void> {
      await checkTicket(deps.tickets, req, toolPermit(req.toolId), BUDGET_UNCOUNTABLE);
      const client = Context.current().client;
      const budgetId = budgetWorkflowId(req.principal);
      const run = Context.current().info.workflowExecution?.workflowId;
      try {
        // Its own update id: the reserve's id names the reservation, this one the settling of it.
        await client.workflow.executeUpdateWithStart(settleBudgetUpdate, {
          updateId: `${req.reservation}.${req.outcome}`,
          args: [
            {
              reservation: req.reservation,
              outcome: req.outcome,
              ...(run !== undefined ? { run } : {}),
              proof: deps.tickets.budgetSettleProof(budgetId, req.reservation, req.outcome),
            },
          ],
          startWorkflowOperation: startOperation(req.principal),
        });
      } catch (err) {
        // Settled already (a retried settle, or an operator released it meanwhile): nothing left to do.
        if (refusalOf(err)?.reason === BudgetRefusedReason.AlreadySettled) return;
        throw err;
      }
    },
  };
}

/** What the budget workflow asks the worker beside it: is this message the worker's, may this operator release. */
export function createBudgetProofActivities(deps: BudgetActivityDeps): BudgetProofActivities {
  return {
    async [ActivityName.VerifyBudgetProof](req: BudgetProofRequest) {
      const { workflowId } = budgetWorkflowAsking(ActivityName.VerifyBudgetProof);
      if (req?.kind === 'reserve' && req.reserve) {
        if (!deps.tickets.madeBudgetReserve(workflowId, req.reserve))
          throw refused(
            BudgetRefusedReason.BadProof,
            `the reserve of ${String(req.reserve.reservation)} carries no MAC this worker made for ${workflowId} and these claims; nothing was counted`,
          );
        return { seals: deps.tickets.budgetSeals(workflowId, req.reserve.reservation) };
      }
      if (req?.kind === 'settle' && req.settle) {
        const { reservation, outcome, proof } = req.settle;
        if (!deps.tickets.madeBudgetSettle(workflowId, reservation, outcome, proof))
          throw refused(
            BudgetRefusedReason.BadProof,
            `the settle of ${String(reservation)} carries no proof this worker made for ${workflowId}; nothing was settled`,
          );
        return { seals: deps.tickets.budgetSeals(workflowId, reservation) };
      }
      throw refused(BudgetRefusedReason.Malformed, 'the request names neither a reserve nor a settle');
    },

    async [ActivityName.AuthorizeBudgetRelease](req: BudgetReleaseRequest) {
      const { workflowId, principal } = budgetWorkflowAsking(ActivityName.AuthorizeBudgetRelease);
      return asFinalRefusalAsync(async () => {
        if (!deps.credentials)
          throw new IdentityRefused(
            'missing',
            'this worker verifies no credentials (it has no identity), so it cannot tell an operator from the agent a budget limits; ' +
              "a held reservation counts only in its own window, and a worker with an identity takes an operator's release",
          );
        const v = await deps.credentials.verify(req.credential, {
          workflowId,
          requireBinding: false,
          what: `the release of ${req.reservation}`,
        });
        // An operator is an approver the manifest declares to resolve this tool's in-doubt calls.
        const verdict = mayDecide(deps.manifest.approvers, {
          toolId: req.toolId ?? '',
          kind: decisionKindOf('abort'),
          subject: v.principal,
          groups: v.groups,
          runPrincipal: principal,
        });
        if (!verdict.ok) throw new IdentityRefused(verdict.reason, verdict.message);
        await spendCredential(v, { kind: 'decision', effectKey: req.reservation }, deps.credentials.tolerance);
        return { by: v.principal, issuer: v.issuer };
      });
    },
  };
}
