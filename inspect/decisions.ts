// Answering the people-in-the-loop questions of a run: what waits, and the decision that answers it.
import type { Client } from '@temporalio/client';
import {
  pendingEscalations,
  resolveEscalation,
  type EscalationDecision,
  type PendingEscalation,
} from '../workflows/escalation';

/** Calls of a run that wait for a person: approvals and in-doubt outcomes. */
export async function pendingDecisions(client: Client, workflowId: string): Promise<PendingEscalation[]> {
  return client.workflow.getHandle(workflowId).query(pendingEscalations);
}

/**
 * Who answers, as a decision carries it. On a worker with an identity, `credential` (the approver's
 * own JWT) is required and the run records its verified subject as the decider; `by` may be left
 * out (given, it must be that subject). On a worker without identity, `by` is recorded as given.
 */
export interface DecisionOptions {
  /** Who decides: free text on a worker without identity; with one, left out or the credential's subject. */
  by?: string;
  /** The approver's own credential (a JWT from an issuer the worker trusts); required by a worker with an identity. */
  credential?: string;
  /** Why (recorded in the run; a denial shows it). */
  reason?: string;
}

/**
 * Answers a waiting call. The run refuses (`WorkflowUpdateFailedError` whose cause is a
 * `DecisionRejected` failure with `{ reason }` in its details) a decision that answers no waiting
 * question, or that no declared approver's valid credential carries; the call keeps waiting.
 * Resolves to whom the run recorded as deciding.
 */
export async function decide(
  client: Client,
  workflowId: string,
  decision: EscalationDecision,
): Promise<{ by?: string }> {
  const { by } = await client.workflow.getHandle(workflowId).executeUpdate(resolveEscalation, { args: [decision] });
  return by !== undefined ? { by } : {};
}

function who(opts: DecisionOptions): Pick<EscalationDecision, 'by' | 'credential'> {
  return {
    ...(opts.by !== undefined ? { by: opts.by } : {}),
    ...(opts.credential !== undefined ? { credential: opts.credential } : {}),
  };
}

/** An approval question's answer, as `approve` and `deny` give it. */
function answerApproval(
  client: Client,
  workflowId: string,
  effectKey: string,
  decision: 'approve' | 'deny',
  opts: DecisionOptions,
): Promise<{ by?: string }> {
  return decide(client, workflowId, {
    effectKey,
    decision,
    ...who(opts),
    ...(opts.reason ? { reason: opts.reason } : {}),
  });
}

/** Approves a call that waits for a person's approval (see `decide`). */
export async function approve(
  client: Client,
  workflowId: string,
  effectKey: string,
  opts: DecisionOptions = {},
): Promise<{ by?: string }> {
  return answerApproval(client, workflowId, effectKey, 'approve', opts);
}

/**
 * The run's principal vouches for the value a call waits on them about (`principal_confirms`): it
 * becomes their words for the rest of the run, and the call is judged again. `value` is the value
 * the question names (`field.value` of the pending confirmation); another is refused (`wrong_value`).
 * On a worker with an identity only the run's own principal answers, with their own credential.
 */
export async function confirm(
  client: Client,
  workflowId: string,
  effectKey: string,
  value: string | number,
  opts: Omit<DecisionOptions, 'reason'> = {},
): Promise<{ by?: string }> {
  return decide(client, workflowId, { effectKey, decision: 'confirm', value, ...who(opts) });
}

/** The run's principal does not vouch for the value: the call is refused and nothing is sent (see `confirm`). */
export async function reject(
  client: Client,
  workflowId: string,
  effectKey: string,
  opts: DecisionOptions = {},
): Promise<{ by?: string }> {
  return decide(client, workflowId, {
    effectKey,
    decision: 'reject',
    ...who(opts),
    ...(opts.reason ? { reason: opts.reason } : {}),
  });
}

/** Denies a call that waits for a person's approval (see `decide`). */
export async function deny(
  client: Client,
  workflowId: string,
  effectKey: string,
  opts: DecisionOptions = {},
): Promise<{ by?: string }> {
  return answerApproval(client, workflowId, effectKey, 'deny', opts);
}
