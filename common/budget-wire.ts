// Workflow-safe: what a run and the budget workflow ask the worker's budget activities, and their answers.
import { ActivityName } from './names';
import type { BudgetProofRequest, BudgetReleaseRequest } from './budget-protocol';
import type { BudgetSeals } from './budget-proof';

/**
 * A call's amounts, to reserve against its principal's budgets across runs before the send. The
 * worker derives the claims (counters, periods, limits) from its own manifest's declaration of the
 * tool; the run states only what the call pays and sends.
 */
export interface BudgetReserveRequest {
  principal: string;
  toolId: string;
  /** The run's ticket MAC for the tool: only a run the worker authorized counts against a budget. */
  ticket: string;
  /** The call's idempotency key (the run's workflow id and the effect key): the update id, so a retried activity never counts twice. */
  reservation: string;
  /** What the call pays, as the gate read it; minor units as a decimal string. */
  payment?: { payee: string; currency: string; minor: string };
  /** Where the call's bytes go and how many, as the gate measured them. */
  egress?: { destinations: string[]; bytes: number };
}

/** The budget workflow's answer: reserved, or refused naming the rule, the period and the window. @experimental */
export type BudgetAnswer = { ok: true } | { ok: false; rule: 'spend' | 'egress'; reason: string };

/** `commit`: the call landed, what it reserved is spent. `release`: it did not, the reservation is given back. */
export interface BudgetSettleRequest {
  principal: string;
  toolId: string;
  ticket: string;
  reservation: string;
  outcome: 'commit' | 'release';
}

export interface BudgetActivities {
  [ActivityName.ReserveBudget](req: BudgetReserveRequest): Promise<BudgetAnswer>;
  [ActivityName.SettleBudget](req: BudgetSettleRequest): Promise<void>;
}

/** What the budget workflow asks the worker beside it (local activities only; see common/budget-proof.ts). */
export interface BudgetProofActivities {
  /** The message is the worker's: the reservation's seals; else a final `BudgetMessageRefused`. */
  [ActivityName.VerifyBudgetProof](req: BudgetProofRequest): Promise<{ seals: BudgetSeals }>;
  /** The credential is an operator's who may release this reservation: their verified subject. */
  [ActivityName.AuthorizeBudgetRelease](req: BudgetReleaseRequest): Promise<{ by: string; issuer: string }>;
}
