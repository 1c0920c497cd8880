// Workflow-safe: what the run says about each effect, queryable and returned with the result.
// The run writes it; the stream, the CLI and clients read it.

export type Decision = 'allowed' | 'refused' | 'approved' | 'denied';

export type RecoveryPath =
  | 'none'
  | 'retried'
  | 'reconciled_landed'
  | 'reconciled_resent'
  | 'reconcile_unknown'
  | 'escalated_retry'
  | 'escalated_landed'
  | 'escalated_abort'
  | 'escalation_expired'
  | 'in_doubt_failed';

/** Where a reset run's effect was performed: the run it was reset from (or an earlier one), and the event of its outcome. */
export interface AdoptedFrom {
  runId: string;
  eventId: number;
}

export type Outcome = 'ok' | 'refused' | 'in_doubt' | 'failed' | 'aborted';

export interface JournalEntry {
  position: number;
  toolId: string;
  effectKey?: string;
  decision: Decision;
  /** The rule that decided, for refusals and approvals: `unreachable`, `taint:/recipient`, ... */
  rule?: string;
  reason?: string;
  /** Who approved or denied the call, for calls a person decided. */
  decidedBy?: string;
  /**
   * Values the run's principal was asked to vouch for (`principal_confirms`), in the order asked: the
   * argument, the value, who answered and how (`expired`: nobody did by the deadline).
   */
  confirmations?: {
    pointer: string;
    value: string | number;
    answer: 'confirmed' | 'rejected' | 'expired';
    by?: string;
  }[];
  /**
   * Sends: the perform activities this run scheduled for the call, each of which may have reached the
   * tool (the first under the effect key; a resend, after a rejection, a reconcile's `not_landed` or a
   * person's `retry`, or a `retry` tool's next try, under `<key>.<n>`); each send is one Temporal
   * attempt (in runs recorded before `Patch.SendsCounted`, Temporal's own retries of a `retry` tool's
   * send were that one send). 0 for a call refused before any activity existed, and for a delegated
   * call (a tool that runs independently), whose child run's journal counts its sends.
   */
  attempts: number;
  /**
   * Of `attempts`, the sends the tool answered with a failure (what `retry.maximum_attempts` counts);
   * absent when none.
   */
  toolFailures?: number;
  /**
   * Of `attempts`, the sends no worker finished: the worker died or vanished, or the server lost the
   * task (a start-to-close or heartbeat timeout; what `retry.infrastructure_attempts` counts); absent
   * when none.
   */
  lostSends?: number;
  /**
   * A run an operator reset did not send this call: the run it was reset from had completed it, with
   * the same effect key and arguments, and its output is that run's (`attempts` is 0).
   */
  adoptedFrom?: AdoptedFrom;
  /** The path the recovery state machine took: so far while the call runs, then the final one. */
  recovery: RecoveryPath;
  outcome?: Outcome;
  error?: { code: string; message: string };
  modelCallId?: string;
  /** Values the gate replaced with the exact trusted value they matched (protected fields). */
  substitutions?: { pointer: string; written: string; sent: string }[];
  /** The workflow waived the trust rules for this call (`acceptUntrusted`), as the tool's declaration allows, and why. */
  acceptedUntrusted?: { reason: string };
  /** Facts the tool's output repeated (`ctx.cite`), as the worker verified them: trusted origin or why not. */
  cited?: { trusted: boolean; origin?: string; reason?: string }[];
  /** For extension tools: the lease's lifecycle in this run. */
  lease?: { id: string; states: LeaseState[] };
}

export type LeaseState = 'granted' | 'started' | 'committed' | 'released';

/** What a routine call's entry holds: nothing the history does not say too. */
const ROUTINE_FIELDS: ReadonlySet<string> = new Set([
  'position',
  'toolId',
  'effectKey',
  'decision',
  'attempts',
  'recovery',
  'outcome',
  'modelCallId',
]);

/**
 * A routine call: allowed, sent once under its effect key, completed, with nothing else to say (no
 * rule, person, confirmation, substitution, waiver, citation, lease, failure or adoption). An agent
 * run's result counts these (`routineCalls`) rather than listing them: the run's history holds each
 * one's send and outcome, and `readJournal` shows them. Any field beyond these makes a call notable.
 */
export function isRoutine(e: JournalEntry): boolean {
  if (e.decision !== 'allowed' || e.attempts !== 1 || e.recovery !== 'none' || e.outcome !== 'ok') return false;
  if (e.effectKey === undefined) return false;
  for (const [k, v] of Object.entries(e)) if (v !== undefined && !ROUTINE_FIELDS.has(k)) return false;
  return true;
}

/** The entries a result lists: every one with `full`, else the calls that are not routine, and how many were left out. */
export function listed(entries: readonly JournalEntry[], full: boolean): { journal: JournalEntry[]; routine: number } {
  if (full) return { journal: [...entries], routine: 0 };
  const journal = entries.filter((e) => !isRoutine(e));
  return { journal, routine: entries.length - journal.length };
}
