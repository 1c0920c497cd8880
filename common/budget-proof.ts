// Workflow-safe, shared by the budget workflow and the worker's budget activities: what proves that a
// message to `toolplane-budget/<principal>` is the worker's own (docs/budgets.md, "Who may change a
// budget"). The worker alone holds the ticket key; the budget workflow holds nothing secret, so
// everything it keeps and checks here may be read from its history without helping a forger.
//
// - A reserve carries the worker's MAC over the budget workflow's id, `reserve`, the reservation, the
//   tool, the run, the claims and when it was made. The workflow cannot check that MAC itself: it asks
//   the worker beside it (a local activity) before it counts anything.
// - That answer also gives the reservation its two seals: the SHA-256 of the worker's settle proof for
//   `commit` and for `release`. A settle proof is itself a MAC under the ticket key (over the workflow
//   id, `settle`, the reservation and the outcome), never sent before the call is settled. The
//   validator checks a settle by hashing its proof: a settle for a held reservation without the proof
//   its seal names is rejected before it enters history, and a proof read from history afterwards
//   settles nothing (its reservation is no longer held, and the other outcome's proof never appears).
import { sha256Base64url } from '../catalog/digest';
import type { BudgetClaim } from '../catalog/budget';

/** The failure type of a message the budget workflow refuses: nothing of it was counted. */
export const BUDGET_MESSAGE_REFUSED = 'BudgetMessageRefused';

/** Why a message was refused, in the failure's details. */
export const BudgetRefusedReason = {
  /** The message is not shaped as the protocol says (a proof, a MAC, a credential missing). */
  Malformed: 'malformed',
  /** The MAC or proof is not the worker's for this workflow, message and arguments. */
  BadProof: 'bad_proof',
  /** The reserve was made too long ago (or claims a time ahead of the workflow's): a replay. */
  Stale: 'stale',
  /** The reservation is already recorded: the details carry its answer (a retried or replayed reserve). */
  AlreadyReserved: 'already_reserved',
  /** The reservation was already settled: the details carry its status (a retried or replayed settle). */
  AlreadySettled: 'already_settled',
  /** No reservation is held under the id (an operator release). */
  NotHeld: 'not_held',
  /** The worker did not accept the operator's credential. */
  NotAnOperator: 'not_an_operator',
} as const;
export type BudgetRefusedReason = (typeof BudgetRefusedReason)[keyof typeof BudgetRefusedReason];

/** A reserve is taken this long after the worker made it, and no longer (REMEMBER_MS remembers it past that). */
export const RESERVE_VALID_MS = 30 * 60_000;
/** How far ahead of the workflow's clock a reserve's time may be (the worker's clock may run ahead). */
export const RESERVE_SKEW_MS = 5 * 60_000;

/**
 * The hashes of a reservation's two settle proofs: what settles it, readable by anyone.
 *
 * @experimental
 */
export interface BudgetSeals {
  commit: string;
  release: string;
}

/** The fields a reserve's MAC covers, in order. */
export function reserveMacFields(
  budgetWorkflowId: string,
  m: { reservation: string; toolId: string; run?: string; claims: BudgetClaim[]; issuedAt: number },
): unknown[] {
  return ['budget-reserve', budgetWorkflowId, m.reservation, m.toolId, m.run ?? null, m.claims, m.issuedAt];
}

/** The fields a settle proof covers, in order. */
export function settleProofFields(
  budgetWorkflowId: string,
  reservation: string,
  outcome: 'commit' | 'release',
): unknown[] {
  return ['budget-settle', budgetWorkflowId, reservation, outcome];
}

/** The seal a settle proof opens: its SHA-256, base64url. */
export function sealOf(proof: string): string {
  return sha256Base64url(proof);
}
