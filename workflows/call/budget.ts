// Workflow-safe, step 4b of a call: budgets across runs. A tool that declares `spend.budgets` or
// `egress.budgets` reserves what the call pays and sends with its principal's budget workflow before
// the send, and settles the reservation after: kept when the call landed, given back when it was
// refused or failed, held while its outcome is unknown. A tool without such budgets skips this step
// entirely: no activity, no event, no promise.
import { ActivityFailure, CancellationScope, proxyActivities, workflowInfo } from '@temporalio/workflow';
import { budgetClaims, hasBudgets } from '../../catalog/budget';
import { paymentOf, type Payment } from '../../catalog/spend';
import type { ToolCall } from '../../catalog/tool-call';
import { idempotencyKey } from '../../common/effect-key';
import type { BudgetActivities, BudgetReserveRequest } from '../../common/budget-wire';
import { outboundBytes, outboundOf, type Outbound } from '../gate/outbound';
import { StepError, StepErrorCode } from '../step-error';
import type { GateVerdict } from './gate';
import { refusal, type Refusal } from './refuse';
import { RunFailureType } from '../../catalog/failure-types';

/** A reservation the call holds until it is settled. */
export interface Reservation {
  principal: string;
  toolId: string;
  /** The run's ticket MAC for the tool, which settling presents too. */
  ticket: string;
  reservation: string;
}

// Reserve: a few attempts, then the call is refused (fail closed); a reserve that did land meanwhile is given back.
const { reserveBudget } = proxyActivities<BudgetActivities>({
  startToCloseTimeout: '30s',
  retry: {
    initialInterval: '200ms',
    maximumInterval: '5s',
    maximumAttempts: 5,
    nonRetryableErrorTypes: [RunFailureType.BudgetUncountable],
  },
});
// Settle: a few minutes of attempts, then the run goes on. A reservation left unsettled stays held,
// which only ever counts too much, never too little; the budget workflow lists it for an operator.
const { settleBudget } = proxyActivities<BudgetActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '200ms', maximumInterval: '30s', maximumAttempts: 10 },
});

const ruleOf = (call: ToolCall): 'spend' | 'egress' => (call.decl.spend?.budgets?.length ? 'spend' : 'egress');

/** What the call pays and sends: as the gate read it, or read here for a call no gate saw. */
function leavingOf(call: ToolCall, sent: Record<string, unknown>, verdict: GateVerdict | undefined) {
  if (verdict?.leaving) return verdict.leaving;
  let outbound: Outbound;
  let payment: Payment | undefined;
  try {
    outbound = outboundOf(call.decl, sent);
  } catch (err) {
    return refusal(
      StepErrorCode.Refused,
      'egress',
      `the destination of ${call.toolId} could not be read: ${String(err)}`,
    );
  }
  try {
    payment = paymentOf(call.decl, sent);
  } catch (err) {
    return refusal(
      StepErrorCode.Refused,
      'spend',
      `the payment ${call.toolId} would make could not be read: ${String(err)}`,
    );
  }
  return { outbound, payment };
}

/** The reserve request, or undefined when the tool declares no budget across runs. */
export function budgetRequest(
  call: ToolCall,
  sent: Record<string, unknown>,
  verdict: GateVerdict | undefined,
  principal: string,
  ticket: string,
  effectKey: string,
): BudgetReserveRequest | Refusal | undefined {
  if (!hasBudgets(call.decl)) return undefined;
  const leaving = leavingOf(call, sent, verdict);
  if ('refused' in leaving) return leaving;
  const { outbound, payment } = leaving;
  const egress = call.decl.egress ? { destinations: outbound.destinations, bytes: outboundBytes(outbound) } : undefined;
  // The worker derives the claims again from its own manifest; here they only decide whether to ask.
  const claims = budgetClaims(call.decl, payment, egress);
  if (!('claims' in claims)) return refusal(StepErrorCode.Refused, claims.rule, claims.reason);
  if (claims.claims.length === 0) return undefined;
  return {
    principal,
    toolId: call.toolId,
    ticket,
    reservation: idempotencyKey(workflowInfo().workflowId, effectKey),
    ...(payment ? { payment: { payee: payment.payee, currency: payment.currency, minor: String(payment.minor) } } : {}),
    ...(egress ? { egress: { ...egress, destinations: [...egress.destinations] } } : {}),
  };
}

/** Reserves before the send: the reservation, or the refusal naming the period and window. */
export async function reserveBudgets(call: ToolCall, req: BudgetReserveRequest): Promise<Reservation | Refusal> {
  const held: Reservation = {
    principal: req.principal,
    toolId: req.toolId,
    ticket: req.ticket,
    reservation: req.reservation,
  };
  let answer;
  try {
    answer = await reserveBudget.executeWithOptions({ summary: `budget ${call.toolId.replace(/^tool:\/\//, '')}` }, [
      req,
    ]);
  } catch (err) {
    // Whether an attempt reserved is unknown: give it back (settling first leaves a record a late reserve finds).
    await settleBudgets(held, 'release');
    const why = (err as { cause?: Error }).cause?.message ?? String(err);
    return refusal(StepErrorCode.Refused, ruleOf(call), `the budgets of ${call.toolId} could not be reserved: ${why}`);
  }
  return answer.ok ? held : refusal(StepErrorCode.Refused, answer.rule, answer.reason);
}

/** Keeps or gives back what the call reserved, whatever becomes of the run meanwhile; a settle that cannot be made leaves it held. */
export async function settleBudgets(r: Reservation, outcome: 'commit' | 'release'): Promise<void> {
  try {
    await CancellationScope.nonCancellable(() =>
      settleBudget.executeWithOptions({ summary: `budget ${outcome}` }, [
        { principal: r.principal, toolId: r.toolId, ticket: r.ticket, reservation: r.reservation, outcome },
      ]),
    );
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
  }
}

/**
 * After a failed send: landed (its output lost) is kept, refused, failed or aborted is given back,
 * and an unknown outcome (in doubt, cancelled) keeps its reservation held until someone settles it.
 */
export function settleAfterFailure(r: Reservation, err: unknown): Promise<void> | undefined {
  if (!StepError.is(err) || err.code === StepErrorCode.InDoubt) return undefined;
  return settleBudgets(r, err.code === StepErrorCode.OutputLost ? 'commit' : 'release');
}
