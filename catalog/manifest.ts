// Workflow-safe: the manifest's shape, parsed with zod. Strict: an unknown key is an error.
import { z } from 'zod';
import { ApproversDecl } from './approvers';
import { ModelsDecl, PrincipalsDecl } from './authority';
import { LimitsDecl } from './caps-decl';
import { durationMs } from './duration';
import { SENSITIVITY_LEVELS } from './sensitivity';

// Workflow code imports these from their own modules, which build no schema when a run starts.
export { SENSITIVITY_LEVELS, sensitivityRank, type Sensitivity } from './sensitivity';
export { durationMs } from './duration';
export { nameOf, serverOf } from './tool-id';

export const Safety = { ReadOnly: 'read_only', Idempotent: 'idempotent', Mutating: 'mutating' } as const;
export type Safety = (typeof Safety)[keyof typeof Safety];
/** Weakest first: a tool may declare itself stricter than the manifest, never laxer. */
export const SAFETY_ORDER: readonly Safety[] = ['read_only', 'idempotent', 'mutating'];

export const Recovery = { Retry: 'retry', Reconcile: 'reconcile', Fail: 'fail', Escalate: 'escalate' } as const;
export type Recovery = (typeof Recovery)[keyof typeof Recovery];

const duration = z
  .union([
    z.number().int().nonnegative(),
    z.string().regex(/^\d+(\.\d+)?\s*(ms|s|m|h|d)$/, 'a duration such as "250ms", "30s", "5m", "1h"'),
  ])
  .describe('duration');

const jsonPointer = z.string().regex(/^(\/([^~/]|~[01])*)+$/, 'a JSON pointer such as "/recipient"');
const toolId = z
  .string()
  .regex(
    /^(tool:\/\/[a-z0-9][a-z0-9_.-]*\/[A-Za-z0-9_.-]+|ext:[a-z0-9][a-z0-9_.-]*:[A-Za-z0-9_.-]+)$/,
    'a tool identity "tool://server/name" or "ext:<plugin>:<name>"',
  );
const sourceId = z
  .string()
  .regex(
    /^(user:\/\/[a-z]+|tool:\/\/[^/]+\/[^/]+|ext:[^:]+:.+)$/,
    'a source "user://prompt", "tool://server/name" or "ext:<plugin>:<name>"',
  );

const serverName = z.string().regex(/^[a-z0-9][a-z0-9_.-]*$/, 'a lower-case server name');

export const ServerDecl = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('in_process'),
    /** Module exporting the tools; the worker loads it unless given its own `--tools`. */
    module: z.string().optional(),
  }),
  z.strictObject({
    kind: z.literal('mcp_stdio'),
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().optional(),
    /** A tool on the server that answers "did the call with this idempotency key land?". */
    reconcile_tool: z.string().optional(),
  }),
  z.strictObject({
    kind: z.literal('mcp_http'),
    url: z.string().url(),
    reconcile_tool: z.string().optional(),
  }),
  z.strictObject({
    kind: z.literal('extension'),
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().optional(),
    idle_timeout: duration.default('60s'),
    reconcile_tool: z.string().optional(),
  }),
]);
export type ServerDecl = z.infer<typeof ServerDecl>;

export const RetryDecl = z.strictObject({
  initial_interval: duration.default('1s'),
  backoff_coefficient: z.number().min(1).default(2),
  maximum_interval: duration.default('30s'),
  /** 0 means unlimited, as in Temporal. */
  maximum_attempts: z.number().int().nonnegative().default(5),
});
export type RetryDecl = z.infer<typeof RetryDecl>;

export const ProtectedFieldDecl = z.union([
  z.strictObject({
    pointer: jsonPointer,
    /** Satisfied only by a value that an allowed source produced in this run, from a trusted call. */
    from_sources: z.array(sourceId).min(1),
  }),
  z.strictObject({
    pointer: jsonPointer,
    /** Free text such as an email body may carry untrusted data. */
    accepts_untrusted: z.literal(true),
  }),
]);
export type ProtectedFieldDecl = z.infer<typeof ProtectedFieldDecl>;

export const RedactionDecl = z.strictObject({
  pointer: jsonPointer,
  replace_with: z.string().default('[redacted]'),
  /** The sensitivity the field carries after redaction. Redaction never raises trust. */
  lowers_to: z.enum(SENSITIVITY_LEVELS).default('public'),
});
export type RedactionDecl = z.infer<typeof RedactionDecl>;

/**
 * A budget period: whole minutes, hours or days that divide a UTC day (`1m`, `15m`, `1h`, `6h`, `1d`).
 * Windows are aligned to it in UTC: a `1d` window is a UTC calendar day, a `1h` window a clock hour.
 */
export const budgetPeriod = z
  .string()
  .regex(/^[1-9]\d*(m|h|d)$/, 'a period such as "1h" or "1d"')
  .refine((p) => {
    if (!/^[1-9]\d*(m|h|d)$/.test(p)) return true; // the pattern above reports it
    const ms = durationMs(p);
    return ms <= 86_400_000 && 86_400_000 % ms === 0;
  }, 'a period that divides a UTC day evenly (such as 15m, 1h, 6h or 1d), so its windows align to UTC');

/**
 * Bytes one principal may send one destination per window, over all of its runs (the per-run
 * limit is `max_bytes_per_run`). Counted by the principal's budget workflow, reserved before the
 * send and kept only when the call lands.
 */
export const EgressBudgetDecl = z.strictObject({
  period: budgetPeriod,
  per: z.literal('destination').default('destination'),
  max_bytes: z.number().int().positive(),
});
export type EgressBudgetDecl = z.infer<typeof EgressBudgetDecl>;

/**
 * Where a call's bytes go. `destination` is one fixed label for the tool; `destinations` names
 * JSON pointers into the arguments whose values are the destinations (each element of an array
 * counts: a list of addresses is several destinations). Bytes are summed per normalised
 * destination over the run; `budgets` count them across runs too, per principal and window.
 */
export const EgressDecl = z.union([
  z.strictObject({
    destination: z.string().min(1),
    max_bytes_per_run: z.number().int().positive(),
    budgets: z.array(EgressBudgetDecl).optional(),
  }),
  z.strictObject({
    destinations: z.array(jsonPointer).min(1),
    max_bytes_per_run: z.number().int().positive(),
    budgets: z.array(EgressBudgetDecl).optional(),
  }),
]);
export type EgressDecl = z.infer<typeof EgressDecl>;

/**
 * What a call sends beside its bound arguments (an attachment named by id, a file it uploads).
 * `pointer` names the arguments that reference it; `resolve: tool` means the tool's own
 * `carried(ctx, args)` says how many bytes and how sensitive, in an activity before the send.
 * `redaction`: where the content is too sensitive for the tool, the referencing argument is
 * replaced (by default with nothing to carry) instead of refusing.
 */
export const CarriedDecl = z.strictObject({
  pointer: jsonPointer,
  resolve: z.literal('tool'),
  redaction: z
    .strictObject({
      replace_with: z.unknown().default([]),
      lowers_to: z.enum(SENSITIVITY_LEVELS).default('public'),
    })
    .optional(),
});
export type CarriedDecl = z.infer<typeof CarriedDecl>;

const minorUnits = z.union([
  z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  z.string().regex(/^\d{1,30}$/, 'an amount in minor units, digits only'),
]);
const currencyCode = z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 code such as "EUR"');

const perCurrency = z
  .record(currencyCode, minorUnits)
  .refine((r) => Object.keys(r).length > 0, 'at least one currency');

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
export const SpendBudgetDecl = z.strictObject({
  period: budgetPeriod,
  per: z.enum(['payee', 'principal']),
  max_minor: perCurrency,
});
export type SpendBudgetDecl = z.infer<typeof SpendBudgetDecl>;

/**
 * Money a call moves, read from its arguments, and the most the run may pay one payee, per
 * currency, in minor units (cents). A currency without a limit is refused (fail closed).
 * `amount_unit: major` reads decimal amounts ("12.34") and converts them exactly. `budgets` limit
 * what a principal pays across runs over a period (see `SpendBudgetDecl`).
 */
export const SpendDecl = z.strictObject({
  amount: jsonPointer,
  amount_unit: z.enum(['minor', 'major']).default('minor'),
  /** A pointer to the currency in the arguments, or one fixed code. */
  currency: z.union([jsonPointer, currencyCode]),
  payee: jsonPointer,
  max_minor_per_payee: perCurrency,
  budgets: z.array(SpendBudgetDecl).optional(),
});
export type SpendDecl = z.infer<typeof SpendDecl>;

export const ConcurrencyDecl = z.discriminatedUnion('class', [
  z.strictObject({ class: z.literal('shared') }),
  z.strictObject({ class: z.literal('keyed'), key: jsonPointer }),
  z.strictObject({ class: z.literal('serialize') }),
  z.strictObject({ class: z.literal('independent') }),
]);
export type ConcurrencyDecl = z.infer<typeof ConcurrencyDecl>;

export const ToolDecl = z.strictObject({
  id: toolId,
  description: z.string().min(1),
  input_schema: z.record(z.string(), z.unknown()),
  /** MCP-style hints. Informational: they never grant trust or relax safety. */
  annotations: z.record(z.string(), z.unknown()).optional(),
  safety: z.enum(['read_only', 'idempotent', 'mutating']),
  /** The provider deduplicates by the idempotency key handed to it. */
  honours_idempotency_key: z.boolean().default(false),
  recovery: z.enum(['retry', 'reconcile', 'fail', 'escalate']),
  retry: RetryDecl.default(RetryDecl.parse({})),
  /** Whether a failure that reached the provider may be tried again, within `retry`. */
  retries_landed: z.boolean().default(false),
  timeouts: z
    .strictObject({ start_to_close: duration.default('30s'), heartbeat: duration.optional() })
    .default({ start_to_close: '30s' }),
  escalation: z.strictObject({ deadline: duration.default('24h') }).optional(),
  sensitivity: z
    .strictObject({
      max: z.enum(SENSITIVITY_LEVELS).default('internal'),
      output: z.enum(SENSITIVITY_LEVELS).default('internal'),
    })
    .default({ max: 'internal', output: 'internal' }),
  protected_fields: z.array(ProtectedFieldDecl).default([]),
  redactions: z.array(RedactionDecl).default([]),
  egress: EgressDecl.optional(),
  carried: CarriedDecl.optional(),
  spend: SpendDecl.optional(),
  /** Whom the credential this tool presents names; `run` means the run's own principal. */
  credential: z.strictObject({ principal: z.string().min(1) }).optional(),
  concurrency: ConcurrencyDecl.optional(),
  /** `on_violation`: a gate violation asks a person instead of refusing outright. */
  approval: z.enum(['none', 'on_violation', 'always']).default('none'),
  requires_ledger: z.boolean().default(false),
  /** Cost charged to the run's budget per call, in micro-units of the budget's currency. */
  cost_micros: z.number().int().nonnegative().default(0),
});
export type ToolDecl = z.infer<typeof ToolDecl>;
export type ToolDeclInput = z.input<typeof ToolDecl>;

export const Manifest = z.strictObject({
  version: z.literal(1),
  name: z.string().min(1).optional(),
  servers: z.record(serverName, ServerDecl),
  tools: z.array(ToolDecl),
  /** Which principals may be granted which tools and capabilities. */
  principals: PrincipalsDecl.optional(),
  /** The model endpoints this worker serves, by name; a run names one. */
  models: ModelsDecl.optional(),
  /**
   * Who may decide calls that wait for a person (approve or deny an approval, resolve an in-doubt
   * call), per tool: verified subjects and groups. Declaring it needs a worker with an `identity`
   * (the worker refuses to start without one); an approval then carries the approver's credential.
   */
  approvers: ApproversDecl.optional(),
  /** Caps on every run this worker serves (see `LimitsDecl`); a run's own limits only tighten them. */
  limits: LimitsDecl.optional(),
});
export type Manifest = z.infer<typeof Manifest>;
export type ManifestInput = z.input<typeof Manifest>;
