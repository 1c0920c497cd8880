// Workflow-safe: money per payee per run. The worker's manifest sets the limit; a run may only tighten it.
import type { ToolDecl } from '../../catalog/manifest';
import type { Payment } from '../../catalog/spend';

/** Paid so far, per currency, per normalised payee, in minor units as decimal strings (bigint-safe). */
export type SpentMinor = Record<string, Record<string, string>>;

/** The lower of the manifest's limit and the run's, for this currency; undefined when the manifest sets none. */
export function spendLimit(
  decl: ToolDecl,
  currency: string,
  runLimits: Record<string, number | string> | undefined,
): bigint | undefined {
  const declared = decl.spend?.max_minor_per_payee[currency];
  if (declared === undefined) return undefined;
  const worker = BigInt(declared);
  const asked = runLimits?.[currency];
  if (asked === undefined) return worker;
  // A limit the run cannot state exactly tightens to nothing (fail closed), never loosens.
  const run = /^\d{1,30}$/.test(String(asked)) ? BigInt(String(asked)) : 0n;
  return run < worker ? run : worker;
}

export type SpendVerdict = { ok: true } | { ok: false; rule: 'spend'; reason: string };

export function checkSpend(
  decl: ToolDecl,
  payment: Payment,
  spent: SpentMinor,
  runLimits: Record<string, number | string> | undefined,
): SpendVerdict {
  const limit = spendLimit(decl, payment.currency, runLimits);
  if (limit === undefined)
    return {
      ok: false,
      rule: 'spend',
      reason: `${decl.id} declares no spend limit for ${payment.currency}, so it may not pay in it`,
    };
  const before = BigInt(spent[payment.currency]?.[payment.payee] ?? '0');
  const after = before + payment.minor;
  if (after > limit) {
    return {
      ok: false,
      rule: 'spend',
      reason: `paying ${payment.minor} ${payment.currency} minor units to ${payment.payee} would bring this run's total for that payee to ${after}, over its limit of ${limit}`,
    };
  }
  return { ok: true };
}

export function chargeSpend(spent: SpentMinor, payment: Payment): void {
  const byPayee = (spent[payment.currency] ??= {});
  byPayee[payment.payee] = String(BigInt(byPayee[payment.payee] ?? '0') + payment.minor);
}
