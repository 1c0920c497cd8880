// Workflow-safe: what a call counts against its principal's budgets across runs (the manifest's
// `spend.budgets` and `egress.budgets`), and the UTC-aligned windows those budgets are kept in.
import { durationMs } from './duration';
import type { ToolDecl } from './manifest';
import type { Payment } from './spend';

/** One amount a call adds to one counter of its principal, for one period, against one limit. */
export interface BudgetClaim {
  rule: 'spend' | 'egress';
  /** What is counted, one name per counter: `spend/EUR/payee/<payee>`, `spend/EUR/all`, `egress/<destination>`. */
  counter: string;
  /** The declared period, e.g. `1d`. */
  period: string;
  /** Minor units or bytes, as a decimal string (bigint-safe). */
  amount: string;
  limit: string;
  /** The unit and what it goes to, for a reason a person reads: `EUR minor units paid to de89…`. */
  what: string;
}

/** Where a call's bytes go, as the gate measured them. */
export interface BudgetEgress {
  destinations: readonly string[];
  bytes: number;
}

export type BudgetClaims = { claims: BudgetClaim[] } | { rule: 'spend' | 'egress'; reason: string };

/** True when the tool declares any budget across runs: only such a call asks the budget workflow. */
export function hasBudgets(decl: ToolDecl): boolean {
  return (decl.spend?.budgets?.length ?? 0) > 0 || (decl.egress?.budgets?.length ?? 0) > 0;
}

/**
 * The claims one call makes, from the worker's declaration of the tool and what the call pays and
 * sends. A payment in a currency a declared budget does not name is refused (fail closed).
 */
export function budgetClaims(
  decl: ToolDecl,
  payment: Payment | undefined,
  egress: BudgetEgress | undefined,
): BudgetClaims {
  const claims: BudgetClaim[] = [];
  const p = payment;
  for (const b of p ? (decl.spend?.budgets ?? []) : []) {
    if (!p) break;
    const limit = b.max_minor[p.currency];
    if (limit === undefined)
      return {
        rule: 'spend',
        reason: `${decl.id} declares no ${b.period} ${b.per} budget for ${p.currency}, so it may not pay in it`,
      };
    const perPayee = b.per === 'payee';
    claims.push({
      rule: 'spend',
      counter: perPayee ? `spend/${p.currency}/payee/${p.payee}` : `spend/${p.currency}/all`,
      period: b.period,
      amount: String(p.minor),
      limit: String(limit),
      what: perPayee ? `${p.currency} minor units paid to ${p.payee}` : `${p.currency} minor units paid in all`,
    });
  }
  const e = egress && egress.bytes > 0 ? egress : undefined;
  for (const b of e ? (decl.egress?.budgets ?? []) : [])
    for (const d of e?.destinations ?? [])
      claims.push({
        rule: 'egress',
        counter: `egress/${d}`,
        period: b.period,
        amount: String(e!.bytes),
        limit: String(b.max_bytes),
        what: `bytes sent to ${d}`,
      });
  return { claims };
}

/** The window of `period` that `at` (epoch ms) falls in: aligned to UTC, end exclusive. */
export function windowOf(period: string, at: number): { start: number; end: number } {
  const ms = durationMs(period);
  const start = Math.floor(at / ms) * ms;
  return { start, end: start + ms };
}

/** `1d 2026-12-01T00:00Z–2026-12-02T00:00Z`: how a reason and the operator view name a window. */
export function windowName(period: string, start: number, end: number): string {
  const t = (ms: number) => new Date(ms).toISOString().replace(/:00\.000Z$/, 'Z');
  return `${period} ${t(start)}–${t(end)}`;
}
