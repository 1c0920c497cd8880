// Workflow-safe: amounts of money as integers of minor units (cents), read exactly; never floats.
import { ValueUnreadable } from './errors';

/** ISO 4217 minor-unit exponents that are not 2. */
const EXPONENTS: Record<string, number> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
};

export function currencyExponent(currency: string): number {
  return EXPONENTS[currency] ?? 2;
}

function digitsOf(value: unknown): string {
  if (typeof value === 'string') return value.trim();
  // A number is read through its shortest decimal spelling, which round-trips exactly ("0.29").
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new ValueUnreadable(`an amount must be a number or a decimal string, not ${JSON.stringify(value)}`);
}

/**
 * `minor`: an integer of minor units already. `major`: a decimal in the currency's unit, with at
 * most as many decimals as the currency has minor units. Anything else throws.
 */
export function toMinorUnits(value: unknown, unit: 'minor' | 'major', currency: string): bigint {
  const text = digitsOf(value);
  if (unit === 'minor') {
    if (!/^\d{1,30}$/.test(text))
      throw new ValueUnreadable(`${JSON.stringify(value)} is not a whole, non-negative number of minor units`);
    return BigInt(text);
  }
  const m = /^(\d{1,30})(?:\.(\d+))?$/.exec(text);
  if (!m) throw new ValueUnreadable(`${JSON.stringify(value)} is not a non-negative decimal amount`);
  const exponent = currencyExponent(currency);
  const fraction = m[2] ?? '';
  if (fraction.length > exponent)
    throw new ValueUnreadable(
      `${JSON.stringify(value)} has more decimals than ${currency} has minor units (${exponent})`,
    );
  return BigInt(m[1]!) * 10n ** BigInt(exponent) + BigInt(fraction.padEnd(exponent, '0') || '0');
}
