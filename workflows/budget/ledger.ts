// Workflow-safe: the state of one principal's budgets across runs, and the two steps that change it.
// Each step checks and changes in one synchronous call: the budget workflow runs one update handler
// at a time, so no two reservations can both pass a check that only one of them fits.
import { windowName, windowOf, type BudgetClaim } from '../../catalog/budget';
import type {
  BudgetState,
  CounterTotals,
  ReservationRecord,
  ReservationStatus,
  ReserveUpdate,
  SettleUpdate,
  WindowState,
} from '../../common/budget-protocol';
import type { BudgetAnswer } from '../../common/budget-wire';
import {
  BudgetRefusedReason,
  RESERVE_SKEW_MS,
  RESERVE_VALID_MS,
  sealOf,
  type BudgetSeals,
} from '../../common/budget-proof';

/**
 * How long a settled or refused reservation's id is remembered, so that a reserve repeated under it
 * (a retried activity whose first attempt's update arrived late) is answered, not counted again.
 * Activities retry within seconds to minutes; an hour is far beyond any of them.
 */
export const REMEMBER_MS = 3_600_000;

export const emptyBudgetState = (): BudgetState => ({ windows: {}, reservations: {} });

const windowKey = (period: string, start: number) => `${period}@${start}`;

function totalsOf(state: BudgetState, claim: BudgetClaim, now: number): { key: string; totals: CounterTotals } {
  const { start, end } = windowOf(claim.period, now);
  const key = windowKey(claim.period, start);
  const w = (state.windows[key] ??= { period: claim.period, start, end, counters: {} });
  const totals = (w.counters[claim.counter] ??= { spent: '0', reserved: '0' });
  return { key, totals };
}

function refusalOf(
  claim: BudgetClaim,
  w: WindowState,
  t: CounterTotals,
  after: bigint,
  principal: string,
): BudgetAnswer {
  return {
    ok: false,
    rule: claim.rule,
    reason:
      `${claim.amount} more ${claim.what} would bring ${principal}'s total in the ${windowName(w.period, w.start, w.end)} ` +
      `window to ${after} (${t.spent} spent, ${t.reserved} reserved), over its ${claim.period} budget of ${claim.limit}`,
  };
}

/** Checks every claim and, only when all fit, reserves them all: one step, nothing awaited. */
export function reserve(
  state: BudgetState,
  req: Omit<ReserveUpdate, 'issuedAt' | 'mac'>,
  principal: string,
  now: number,
  seals?: BudgetSeals,
): BudgetAnswer {
  const known = state.reservations[req.reservation];
  if (known) return known.answer;
  const added = new Map<string, bigint>();
  const parts: ReservationRecord['parts'] = [];
  for (const claim of req.claims) {
    const { key, totals } = totalsOf(state, claim, now);
    const slot = `${key} ${claim.counter}`;
    const before = BigInt(totals.spent) + BigInt(totals.reserved) + (added.get(slot) ?? 0n);
    const after = before + BigInt(claim.amount);
    if (after > BigInt(claim.limit)) {
      const answer = refusalOf(claim, state.windows[key]!, totals, after, principal);
      state.reservations[req.reservation] = {
        status: 'refused',
        toolId: req.toolId,
        run: req.run,
        parts: [],
        answer,
        at: now,
        forgetAt: now + REMEMBER_MS,
        ...(seals ? { seals } : {}),
      };
      return answer;
    }
    added.set(slot, (added.get(slot) ?? 0n) + BigInt(claim.amount));
    parts.push({ window: key, counter: claim.counter, amount: claim.amount });
  }
  for (const p of parts) {
    const t = state.windows[p.window]!.counters[p.counter]!;
    t.reserved = String(BigInt(t.reserved) + BigInt(p.amount));
  }
  const answer: BudgetAnswer = { ok: true };
  state.reservations[req.reservation] = {
    status: 'held',
    toolId: req.toolId,
    run: req.run,
    parts,
    answer,
    at: now,
    ...(seals ? { seals } : {}),
  };
  return answer;
}

/**
 * Commit (the call landed: reserved becomes spent) or release (it did not: reserved is given back).
 * Settling an unknown id leaves a record, so a reserve that arrives after it is not counted.
 */
export function settle(
  state: BudgetState,
  req: Pick<SettleUpdate, 'reservation' | 'outcome' | 'run'>,
  now: number,
  seals?: BudgetSeals,
  releasedBy?: string,
): ReservationStatus {
  const known = state.reservations[req.reservation];
  const status: ReservationStatus = req.outcome === 'commit' ? 'committed' : 'released';
  if (!known) {
    state.reservations[req.reservation] = {
      status,
      parts: [],
      answer: { ok: false, rule: 'spend', reason: 'this call was settled before its reservation arrived' },
      at: now,
      forgetAt: now + REMEMBER_MS,
      ...(seals ? { seals } : {}),
    };
    return status;
  }
  // Only the run that reserved settles its reservation (or an operator, whose release names no run).
  if (known.status !== 'held' || (req.run !== undefined && known.run !== undefined && req.run !== known.run))
    return known.status;
  for (const p of known.parts) {
    const t = state.windows[p.window]?.counters[p.counter];
    if (!t) continue;
    t.reserved = String(BigInt(t.reserved) - BigInt(p.amount));
    if (status === 'committed') t.spent = String(BigInt(t.spent) + BigInt(p.amount));
  }
  known.status = status;
  known.forgetAt = now + REMEMBER_MS;
  if (releasedBy !== undefined) known.releasedBy = releasedBy;
  return status;
}

/** Why a message is refused before it enters history: its reason, what the sender is told, and details. */
export interface MessageRefusal {
  reason: BudgetRefusedReason;
  message: string;
  details?: Record<string, unknown>;
}

const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/**
 * The reserve validator's check, before anything enters history: shaped as the worker sends it,
 * fresh, and for a reservation not yet recorded. Its MAC is the worker's to check (the handler asks).
 */
export function reserveRefusal(state: BudgetState, req: unknown, now: number): MessageRefusal | undefined {
  const r = (typeof req === 'object' && req !== null ? req : {}) as Partial<Record<keyof ReserveUpdate, unknown>>;
  if (!isText(r.reservation) || !isText(r.toolId) || !Array.isArray(r.claims) || !isText(r.mac))
    return {
      reason: BudgetRefusedReason.Malformed,
      message:
        "a reserve is the worker's own message: it names a reservation, a tool and claims, under the worker's MAC; this one carries none",
    };
  if (typeof r.issuedAt !== 'number' || r.issuedAt > now + RESERVE_SKEW_MS || r.issuedAt < now - RESERVE_VALID_MS)
    return {
      reason: BudgetRefusedReason.Stale,
      message: `the reserve for ${r.reservation} was not made in the last ${RESERVE_VALID_MS / 60_000} minutes; a replayed reserve counts nothing`,
    };
  const known = state.reservations[r.reservation];
  if (known)
    return {
      reason: BudgetRefusedReason.AlreadyReserved,
      message: `${r.reservation} is already recorded (${known.status}); it is answered, never counted again`,
      details: { answer: known.answer, status: known.status },
    };
  return undefined;
}

/**
 * The settle validator's check: `accept` when the proof opens the held reservation's seal, `ask` when
 * the workflow holds no seal to check it against (the worker beside it checks), else the refusal.
 */
export function settleCheck(state: BudgetState, req: unknown): 'accept' | 'ask' | MessageRefusal {
  const r = (typeof req === 'object' && req !== null ? req : {}) as Partial<Record<keyof SettleUpdate, unknown>>;
  if (!isText(r.reservation) || (r.outcome !== 'commit' && r.outcome !== 'release'))
    return { reason: BudgetRefusedReason.Malformed, message: 'a settle names a reservation and commit or release' };
  if (!isText(r.proof))
    return {
      reason: BudgetRefusedReason.Malformed,
      message:
        `a settle of ${r.reservation} carries no proof: only the worker settles its calls' reservations; ` +
        'an operator releases a held one with `toolplane budget release` and their own credential',
    };
  const known = state.reservations[r.reservation];
  if (!known?.seals) return 'ask';
  if (sealOf(r.proof) !== known.seals[r.outcome])
    return {
      reason: BudgetRefusedReason.BadProof,
      message: `the proof is not the worker's for a ${r.outcome} of ${r.reservation}; nothing was settled`,
    };
  if (known.status !== 'held')
    return {
      reason: BudgetRefusedReason.AlreadySettled,
      message: `${r.reservation} is already ${known.status}`,
      details: { status: known.status },
    };
  return 'accept';
}

/** Forgets records past their time and windows that ended long enough ago with nothing reserved. */
export function prune(state: BudgetState, now: number): boolean {
  let changed = false;
  for (const [id, r] of Object.entries(state.reservations))
    if (r.forgetAt !== undefined && r.forgetAt <= now) {
      delete state.reservations[id];
      changed = true;
    }
  for (const [key, w] of Object.entries(state.windows))
    if (w.end + REMEMBER_MS <= now && Object.values(w.counters).every((t) => t.reserved === '0')) {
      delete state.windows[key];
      changed = true;
    }
  return changed;
}

export const isEmpty = (state: BudgetState): boolean =>
  Object.keys(state.windows).length === 0 && Object.keys(state.reservations).length === 0;
