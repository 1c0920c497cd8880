// Workflow-safe: a person decides what happens to a call whose outcome is unknown, or whether a
// call the gate questioned may go ahead.
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import { RunFailureType } from '../catalog/failure-types';
import { UpdateName } from '../common/names';

/**
 * What a person answers. `credential` is the approver's own token (a JWT): a worker with an identity
 * verifies it, checks the manifest's approvers, and records its verified subject as the decider; `by`
 * may then be left out (given, it must be that subject). On a worker without identity, whose manifest
 * declares no approvers, `by` is taken as given.
 */
export type EscalationDecision =
  | { effectKey: string; decision: 'retry'; by?: string; credential?: string }
  | { effectKey: string; decision: 'landed'; output: unknown; by?: string; credential?: string }
  | { effectKey: string; decision: 'abort'; by?: string; credential?: string; reason?: string }
  | { effectKey: string; decision: 'approve'; by?: string; credential?: string; reason?: string }
  | { effectKey: string; decision: 'deny'; by?: string; credential?: string; reason?: string }
  /**
   * The run's principal vouches for the value a confirmation question names (`value`, exactly as asked):
   * it becomes their words for the rest of the run. Only the principal answers: on a worker with an
   * identity, with their own credential, or relayed by the MCP gateway from their session (`relay`).
   */
  | { effectKey: string; decision: 'confirm'; value: string | number; by?: string; credential?: string; relay?: string }
  /** The principal does not vouch for it: the call is refused and nothing is sent. */
  | { effectKey: string; decision: 'reject'; by?: string; credential?: string; relay?: string; reason?: string };

/** Which decisions answer which question. */
export const DECISIONS: Record<PendingEscalation['kind'], readonly EscalationDecision['decision'][]> = {
  in_doubt: ['retry', 'landed', 'abort'],
  approval: ['approve', 'deny'],
  confirmation: ['confirm', 'reject'],
};

export interface PendingEscalation {
  effectKey: string;
  toolId: string;
  position: number;
  reason: string;
  /** Workflow time (ms) after which the call fails as InDoubt. */
  deadline: number;
  kind: 'in_doubt' | 'approval' | 'confirmation';
  /**
   * A confirmation's question: the argument, the exact value the principal is asked to vouch for, and
   * where the gate found it (or that nothing in the run holds it).
   */
  field?: { pointer: string; value: string | number; origin: string };
  /** The gate's rule an approval is asked under (the manifest's approvers may be declared per rule). */
  rule?: string;
  /**
   * An approval's arguments: exactly what the call sends once approved (after any declared
   * redaction), so the person sees what they approve. In-doubt questions leave it out.
   */
  args?: unknown;
  /** The model's id of the tool call an approval is asked for (`toolCallId` in the AI SDK), when a model made it. */
  modelCallId?: string;
  /**
   * The run's worker verifies who decides: an answer carries the approver's own credential (`credential`,
   * `toolplane approve --credential`), and a name alone is refused.
   */
  needsCredential?: true;
}

/**
 * The failure type of a decision the run refuses: no call waits under its key, it answers another
 * question, or the worker did not accept who decides. Its details carry `{ reason }`.
 */
export const DECISION_REJECTED = RunFailureType.DecisionRejected;

/** Why a decision was rejected; the call keeps waiting for a decision that stands. */
export const DecisionRejectedReason = {
  /** No call waits under the effect key (or it was decided meanwhile). */
  NotWaiting: 'not_waiting',
  /** The decision answers another kind of question (approve for an in-doubt call, ...). */
  WrongQuestion: 'wrong_question',
  /** The decision carries no credential, and this worker verifies who decides. */
  NoCredential: 'no_credential',
  /** The credential does not verify (unknown issuer, bad signature, expired, another audience or run, ...). */
  BadCredential: 'bad_credential',
  /** The verified subject is not a declared approver of this tool for this decision. */
  NotAnApprover: 'not_an_approver',
  /** The verified subject is the run's own principal, and the manifest does not let it decide its own run. */
  OwnRun: 'own_run',
  /** The decision names (`by`) someone other than the verified subject. */
  ByMismatch: 'by_mismatch',
  /** The credential already decided another call of this run: a token read from history decides nothing more. */
  Replayed: 'replayed',
  /** A confirmation names another value than the one the question asks about. */
  WrongValue: 'wrong_value',
  /** A confirmation comes from someone other than the run's own principal. */
  NotThePrincipal: 'not_the_principal',
  /** The worker could not answer (its check failed); try again. */
  Unavailable: 'unavailable',
} as const;
export type DecisionRejectedReason = (typeof DecisionRejectedReason)[keyof typeof DecisionRejectedReason];

/** What the run answers an accepted decision: who it records as deciding (the verified subject, where verified). */
export interface DecisionAccepted {
  accepted: true;
  by?: string;
}

export const resolveEscalation = defineUpdate<DecisionAccepted, [EscalationDecision]>(UpdateName.ResolveEscalation);
export const pendingEscalations = defineQuery<PendingEscalation[]>('pendingEscalations');
