// Workflow-safe: how the principals' budget workflow is asked, and the state it answers with. The
// workflow (workflows/budget/) serves these updates; the worker's budget activities reserve and settle
// through them (update-with-start), each message proven the worker's (common/budget-proof.ts); an
// operator releases an in-doubt call's reservation with `releaseBudget` and their own credential
// (`toolplane budget release`), and reads the windows with `budgetWindows`. Both sides import this file.
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { BudgetClaim } from '../catalog/budget';
import type { BudgetSeals } from './budget-proof';
import type { BudgetAnswer } from './budget-wire';

/**
 * Minor units or bytes, as decimal strings.
 *
 * @experimental
 */
export interface CounterTotals {
  spent: string;
  reserved: string;
}

/**
 * One budget window: its period, its bounds, and the totals of each counter in it.
 *
 * @experimental
 */
export interface WindowState {
  period: string;
  /** Epoch ms, UTC-aligned; `end` exclusive. */
  start: number;
  end: number;
  counters: Record<string, CounterTotals>;
}

/**
 * Where a reservation stands: held until its call is settled, then committed or released; or refused.
 *
 * @experimental
 */
export type ReservationStatus = 'held' | 'committed' | 'released' | 'refused';

/**
 * One reservation as the budget workflow keeps it, by its id, so a repeated reserve answers the same.
 *
 * @experimental
 */
export interface ReservationRecord {
  status: ReservationStatus;
  toolId?: string;
  /** The run that asked (`workflowId`), for the operator. */
  run?: string;
  /** What the reservation added, per window and counter. */
  parts: { window: string; counter: string; amount: string }[];
  /** What a repeated reserve under this id answers. */
  answer: BudgetAnswer;
  /** Epoch ms when it was made. */
  at: number;
  /** When a settled or refused record may be forgotten; a held one never is until it is settled. */
  forgetAt?: number;
  /** The hashes of the worker's settle proofs for this reservation (common/budget-proof.ts). */
  seals?: BudgetSeals;
  /** Who released it by hand: the operator's verified subject. */
  releasedBy?: string;
}

/**
 * Everything the budget workflow carries across continue-as-new: the windows and the dedupe records.
 *
 * @experimental
 */
export interface BudgetState {
  windows: Record<string, WindowState>;
  reservations: Record<string, ReservationRecord>;
}

/** What the reserve update carries: the claims the worker derived from its manifest, under the worker's MAC. */
export interface ReserveUpdate {
  reservation: string;
  toolId: string;
  run?: string;
  claims: BudgetClaim[];
  /** Epoch ms when the worker made the message (a replay past `RESERVE_VALID_MS` is refused). */
  issuedAt: number;
  /** The worker's MAC over the budget workflow id and all of the above (`reserveMacFields`). */
  mac: string;
}

/**
 * What the `settleBudget` update carries: the reservation, and whether its call's amount is spent or given back.
 *
 * @experimental
 */
export interface SettleUpdate {
  reservation: string;
  outcome: 'commit' | 'release';
  /** The run settling (its workflow id, as the worker's activity saw it). */
  run?: string;
  /** The worker's settle proof for this reservation and outcome, which the reservation's seal names. */
  proof: string;
}

/**
 * What the `releaseBudget` update carries: an operator gives back a held reservation (an in-doubt call
 * that did not land), with their own credential, which the worker verifies.
 *
 * @experimental
 */
export interface ReleaseUpdate {
  reservation: string;
  /** The operator's credential (a JWT from an issuer the worker trusts), spent on this one release. */
  credential: string;
  /** Why, recorded with the release. */
  reason?: string;
}

/**
 * What a hand release answers: the reservation is released, by the verified subject.
 *
 * @experimental
 */
export interface ReleaseAnswer {
  status: 'released';
  by: string;
}

/** What the budget workflow asks the worker beside it (a local activity) about a worker message. */
export interface BudgetProofRequest {
  /** `reserve`: check `mac` over the reserve; `settle`: check `proof` for a reservation the workflow does not hold. */
  kind: 'reserve' | 'settle';
  reserve?: ReserveUpdate;
  settle?: { reservation: string; outcome: 'commit' | 'release'; proof: string };
}

/** What the budget workflow asks the worker beside it about an operator's release. */
export interface BudgetReleaseRequest {
  reservation: string;
  toolId?: string;
  credential: string;
  /** The principal whose budget it is: never their own operator unless the manifest allows it. */
  principal: string;
}

/**
 * The budget workflow's input: empty at first, its own state when it continues as new.
 *
 * @experimental
 */
export interface BudgetCounterInput {
  /** The state a run before this one continued with. */
  state?: BudgetState;
  /** Continue as new after this many history events (default 10,000, or sooner when Temporal suggests it). */
  maxHistoryEvents?: number;
}

/** The budget workflow's signature, as a client starting it (update-with-start) types it. */
export type BudgetCounterWorkflow = (input?: BudgetCounterInput) => Promise<void>;

export const reserveBudgetUpdate = defineUpdate<BudgetAnswer, [ReserveUpdate]>('reserveBudget');
/**
 * Settles a reservation: the worker's activity after a call, with its proof. Anyone else is refused.
 *
 * @experimental
 */
export const settleBudgetUpdate = defineUpdate<ReservationStatus, [SettleUpdate]>('settleBudget');
/**
 * An operator releases a held reservation (an in-doubt call that did not land) with their credential.
 *
 * @experimental
 */
export const releaseBudgetUpdate = defineUpdate<ReleaseAnswer, [ReleaseUpdate]>('releaseBudget');
/**
 * The budget workflow's windows and reservations, as it holds them now.
 *
 * @experimental
 */
export const budgetWindowsQuery = defineQuery<BudgetState>('budgetWindows');
