// Workflow-safe: how the principals' budget workflow is asked, and the state it answers with. The
// workflow (workflows/budget/) serves these updates; the worker's budget activities reserve and settle
// through them (update-with-start), and an operator settles an in-doubt call's reservation through
// `settleBudget` and reads the windows with `budgetWindows`. Both sides import this file.
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { BudgetClaim } from '../catalog/budget';
import type { BudgetAnswer } from './wire';

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

/** What the reserve update carries: the claims the worker derived from its manifest. */
export interface ReserveUpdate {
  reservation: string;
  toolId: string;
  run?: string;
  claims: BudgetClaim[];
}

/**
 * What the `settleBudget` update carries: the reservation, and whether its call's amount is spent or given back.
 *
 * @experimental
 */
export interface SettleUpdate {
  reservation: string;
  outcome: 'commit' | 'release';
  /** The run settling (its workflow id, as the worker's activity saw it); an operator's settle names none. */
  run?: string;
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
 * Settles a reservation (the worker's activity after a call, or an operator for an in-doubt call's reservation).
 *
 * @experimental
 */
export const settleBudgetUpdate = defineUpdate<ReservationStatus, [SettleUpdate]>('settleBudget');
/**
 * The budget workflow's windows and reservations, as it holds them now.
 *
 * @experimental
 */
export const budgetWindowsQuery = defineQuery<BudgetState>('budgetWindows');
