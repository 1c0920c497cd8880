// Workflow-safe: the money a call moves, read from the pointers its declaration names.
import { getAt } from './json-pointer';
import type { ToolDecl } from './manifest';
import { normaliseDestination } from './destination';
import { toMinorUnits } from './money';
import { ValueUnreadable } from './errors';

export interface Payment {
  /** Normalised, so a retyped account is the same payee. */
  payee: string;
  currency: string;
  minor: bigint;
}

/** The call's payment, or undefined when it names no amount. Throws on what it cannot read exactly. */
export function paymentOf(decl: ToolDecl, args: unknown): Payment | undefined {
  const spend = decl.spend;
  if (!spend) return undefined;
  const amount = getAt(args, spend.amount);
  if (amount === undefined) return undefined;
  const rawCurrency = spend.currency.startsWith('/') ? getAt(args, spend.currency) : spend.currency;
  if (typeof rawCurrency !== 'string' || !/^[A-Za-z]{3}$/.test(rawCurrency.trim()))
    throw new ValueUnreadable(`${spend.currency} is not a currency code`);
  const currency = rawCurrency.trim().toUpperCase();
  const payee = getAt(args, spend.payee);
  if (typeof payee !== 'string' && typeof payee !== 'number')
    throw new ValueUnreadable(`${spend.payee} names no payee`);
  const normalised = normaliseDestination(payee);
  if (!normalised) throw new ValueUnreadable(`${spend.payee} names no payee`);
  return { payee: normalised, currency, minor: toMinorUnits(amount, spend.amount_unit, currency) };
}
