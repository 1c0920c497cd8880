// Workflow-safe: a tool declaration's `spend`: the money a call moves and the principal's limits on it.
import { z } from 'zod';
import { budgetPeriod } from './egress-decl';
import { jsonPointer } from './manifest-fields';

const minorUnits = z
  .union([
    z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
    z.string().regex(/^\d{1,30}$/, 'an amount in minor units, digits only'),
  ])
  .meta({
    title: 'minor units',
    description: 'An amount in minor units (cents): a whole number, or digits as a string.',
    examples: [500000],
  });
const currencyCode = z
  .string()
  .regex(/^[A-Z]{3}$/, 'an ISO 4217 code such as "EUR"')
  .meta({ title: 'currency code', description: 'An ISO 4217 currency code.', examples: ['EUR'] });

const perCurrency = z
  .record(currencyCode, minorUnits)
  .refine((r) => Object.keys(r).length > 0, 'at least one currency')
  .meta({ description: 'Amounts in minor units by currency code.', examples: [{ EUR: 500000 }] });

/**
 * Money one principal may move per window over all of its runs, per currency in minor units:
 * `per: payee` to any one payee, `per: principal` to all payees together. Kept by the principal's
 * budget workflow (`toolplane-budget/<principal>`): a call reserves its amount there before the
 * send, keeps it when it lands, gives it back when it is refused or fails, and holds it while its
 * outcome is unknown. A currency the budget does not name is refused (fail closed).
 *
 * @example
 * ```yaml
 * spend:
 *   amount: /amount_cents
 *   currency: EUR
 *   payee: /recipient
 *   max_minor_per_payee: { EUR: 500000 }          # per run
 *   budgets:                                        # across runs
 *     - { period: 1d, per: payee, max_minor: { EUR: 500000 } }
 *     - { period: 1h, per: principal, max_minor: { EUR: 1000000 } }
 * ```
 */
export const SpendBudgetDecl = z
  .strictObject({
    period: budgetPeriod.describe('The window: such as "1h" or "1d", dividing a UTC day.'),
    per: z
      .enum(['payee', 'principal'])
      .describe('`payee`: the limit is per payee; `principal`: for all payees together.'),
    max_minor: perCurrency.describe(
      'The most per window, per currency, in minor units; a currency not named is refused.',
    ),
  })
  .describe('A limit across runs: money one principal may move per window.');
export type SpendBudgetDecl = z.infer<typeof SpendBudgetDecl>;

/**
 * Money a call moves, read from its arguments, and the most the run may pay one payee, per
 * currency, in minor units (cents). A currency without a limit is refused (fail closed).
 * `amount_unit: major` reads decimal amounts ("12.34") and converts them exactly. `budgets` limit
 * what a principal pays across runs over a period (see `SpendBudgetDecl`).
 */
export const SpendDecl = z
  .strictObject({
    amount: jsonPointer.meta({ description: 'The argument holding the amount.', examples: ['/amount_cents'] }),
    amount_unit: z
      .enum(['minor', 'major'])
      .default('minor')
      .describe('`minor`: whole minor units (cents); `major`: decimal amounts ("12.34"), converted exactly.'),
    currency: z.union([jsonPointer, currencyCode]).meta({
      description: 'A pointer to the currency in the arguments, or one fixed ISO 4217 code.',
      examples: ['EUR'],
    }),
    payee: jsonPointer.describe('The argument naming who is paid.'),
    max_minor_per_payee: perCurrency.describe(
      'The most one run may pay one payee, per currency, in minor units; a currency not named is refused.',
    ),
    budgets: z.array(SpendBudgetDecl).optional().describe("Limits across the principal's runs."),
  })
  .describe('Money a call moves, read from its arguments, and the most a run may pay each payee.');
export type SpendDecl = z.infer<typeof SpendDecl>;
