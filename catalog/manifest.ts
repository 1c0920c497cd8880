// Workflow-safe: the manifest's shape, parsed with zod. Strict: an unknown key is an error.
import { z } from 'zod';
import { ApproversDecl } from './approvers';
import { ModelsDecl, PrincipalsDecl } from './authority';
import { LimitsDecl } from './caps-decl';
import { durationMs, durationText } from './duration';
import { SENSITIVITY_LEVELS } from './sensitivity';
import { toolIdText } from './tool-id';

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
  .union([z.number().int().nonnegative(), durationText('a duration such as "250ms", "30s", "5m", "1h"')])
  .meta({
    title: 'duration',
    description: 'A duration: whole milliseconds, or a number with a unit ms, s, m, h or d.',
    examples: ['30s'],
  });

const jsonPointer = z
  .string()
  .regex(/^(\/([^~/]|~[01])*)+$/, 'a JSON pointer such as "/recipient"')
  .meta({ title: 'JSON pointer', description: "A JSON pointer into the call's arguments.", examples: ['/recipient'] });
const toolId = toolIdText('a tool identity "tool://server/name" or "ext:<plugin>:<name>"').meta({
  title: 'tool identity',
  description: 'A tool identity: "tool://<server>/<name>", or "ext:<plugin>:<name>" for an extension tool.',
  examples: ['tool://crm/lookup_customer'],
});
const sourceId = z
  .string()
  .regex(
    /^(user:\/\/[a-z]+|tool:\/\/[^/]+\/[^/]+|ext:[^:]+:.+)$/,
    'a source "user://prompt", "tool://server/name" or "ext:<plugin>:<name>"',
  )
  .meta({
    title: 'source',
    description: 'A source of values: "user://prompt", or the identity of the tool that produced them.',
    examples: ['tool://crm/lookup_customer'],
  });

const serverName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_.-]*$/, 'a lower-case server name')
  .meta({
    title: 'server name',
    description: "A server name: lower case, the <server> of its tools' identities.",
    examples: ['crm'],
  });
const sensitivity = z.enum(SENSITIVITY_LEVELS).meta({
  title: 'sensitivity',
  description: 'A sensitivity level, lowest first: public, internal, confidential, secret.',
});

const reconcileTool = z
  .string()
  .optional()
  .describe(
    'A tool on the server that answers "did the call with this idempotency key land?" (`recovery: reconcile`).',
  );

/** How the worker starts a child process (an MCP server over stdio, an extension). */
const childProcess = {
  command: z.string().min(1).describe('The program to start.'),
  args: z.array(z.string()).default([]).describe('Its arguments.'),
  env: z
    .record(z.string(), z.string())
    .optional()
    .describe("Environment variables set for it, on top of the worker's own."),
  cwd: z.string().optional().describe("Its working directory. Absent: the worker's."),
};

export const ServerDecl = z
  .discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('in_process').describe("Tools implemented in the worker's own process (TypeScript)."),
      module: z
        .string()
        .optional()
        .describe(
          'A module exporting the tools, relative to the working directory; `toolplane worker` loads it unless given `--tools`. Absent: the tools are passed to the plugin.',
        ),
    }),
    z.strictObject({
      kind: z
        .literal('mcp_stdio')
        .describe('An MCP server the worker starts as a child process and speaks to over stdio, per call.'),
      ...childProcess,
      reconcile_tool: reconcileTool,
    }),
    z.strictObject({
      kind: z.literal('mcp_http').describe('An MCP server reached over Streamable HTTP.'),
      url: z.string().url().describe("The server's MCP endpoint."),
      reconcile_tool: reconcileTool,
    }),
    z.strictObject({
      kind: z
        .literal('extension')
        .describe(
          'A dormant extension process (MCP over stdio) with `ext:` tools: started only when an authorised call needs it and the run holds the extension-runtime capability.',
        ),
      ...childProcess,
      idle_timeout: duration
        .default('60s')
        .describe('How long the started extension may sit unused before it is stopped.'),
      reconcile_tool: reconcileTool,
    }),
  ])
  .describe("Where a server's tools run, chosen by `kind`.");
export type ServerDecl = z.infer<typeof ServerDecl>;

export const RetryDecl = z
  .strictObject({
    initial_interval: duration.default('1s').describe('The wait before the first retry.'),
    backoff_coefficient: z.number().min(1).default(2).describe('Each wait is the previous one times this.'),
    maximum_interval: duration.default('30s').describe('The longest wait between attempts.'),
    maximum_attempts: z
      .number()
      .int()
      .nonnegative()
      .default(5)
      .describe('Attempts in all, the first included; 0 means unlimited, as in Temporal.'),
  })
  .describe("How often and how far apart a failed call is tried again (Temporal's retry policy).");
export type RetryDecl = z.infer<typeof RetryDecl>;

export const ProtectedFieldDecl = z
  .union([
    z.strictObject({
      pointer: jsonPointer.describe('The argument the rule protects.'),
      from_sources: z
        .array(sourceId)
        .min(1)
        .describe(
          'Satisfied only by a value equal to one an allowed source produced in this run, from a trusted call; every source of the value must be listed.',
        ),
    }),
    z.strictObject({
      pointer: jsonPointer.describe('The argument the rule protects.'),
      accepts_untrusted: z
        .literal(true)
        .describe('The argument is free text (such as an email body) that may carry untrusted data.'),
    }),
  ])
  .describe('A field rule: where an argument of a mutating tool may come from.');
export type ProtectedFieldDecl = z.infer<typeof ProtectedFieldDecl>;

export const RedactionDecl = z
  .strictObject({
    pointer: jsonPointer.describe('The argument to redact.'),
    replace_with: z.string().default('[redacted]').describe("What replaces the argument's value."),
    lowers_to: sensitivity
      .default('public')
      .describe('The sensitivity the field carries after redaction. Redaction never raises trust.'),
  })
  .describe('Replaces an argument too sensitive for the tool instead of refusing the call; recorded in history.');
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
  }, 'a period that divides a UTC day evenly (such as 15m, 1h, 6h or 1d), so its windows align to UTC')
  .meta({
    title: 'budget period',
    description: 'A budget window: whole minutes, hours or days that divide a UTC day, aligned to UTC.',
    examples: ['1d'],
  });

/**
 * Bytes one principal may send one destination per window, over all of its runs (the per-run
 * limit is `max_bytes_per_run`). Counted by the principal's budget workflow, reserved before the
 * send and kept only when the call lands.
 */
export const EgressBudgetDecl = z
  .strictObject({
    period: budgetPeriod.describe('The window: such as "1h" or "1d", dividing a UTC day.'),
    per: z.literal('destination').default('destination').describe('What is counted separately: each destination.'),
    max_bytes: z.number().int().positive().describe('Bytes the principal may send one destination per window.'),
  })
  .describe('A limit across runs: bytes one principal may send one destination per window.');
export type EgressBudgetDecl = z.infer<typeof EgressBudgetDecl>;

/**
 * Where a call's bytes go. `destination` is one fixed label for the tool; `destinations` names
 * JSON pointers into the arguments whose values are the destinations (each element of an array
 * counts: a list of addresses is several destinations). Bytes are summed per normalised
 * destination over the run; `budgets` count them across runs too, per principal and window.
 */
const maxBytesPerRun = z
  .number()
  .int()
  .positive()
  .describe('Bytes the run may send one destination, arguments and carried content together.');
const egressBudgets = z.array(EgressBudgetDecl).optional().describe("Limits across the principal's runs.");

export const EgressDecl = z
  .union([
    z.strictObject({
      destination: z.string().min(1).describe('One fixed label for where every call of this tool sends.'),
      max_bytes_per_run: maxBytesPerRun,
      budgets: egressBudgets,
    }),
    z.strictObject({
      destinations: z
        .array(jsonPointer)
        .min(1)
        .describe('Pointers to the arguments naming the destinations; each element of an array counts as one.'),
      max_bytes_per_run: maxBytesPerRun,
      budgets: egressBudgets,
    }),
  ])
  .describe("Where a call's bytes go, and how many a run may send each destination.");
export type EgressDecl = z.infer<typeof EgressDecl>;

/**
 * What a call sends beside its bound arguments (an attachment named by id, a file it uploads).
 * `pointer` names the arguments that reference it; `resolve: tool` means the tool's own
 * `carried(ctx, args)` says how many bytes and how sensitive, in an activity before the send.
 * `redaction`: where the content is too sensitive for the tool, the referencing argument is
 * replaced (by default with nothing to carry) instead of refusing.
 */
export const CarriedDecl = z
  .strictObject({
    pointer: jsonPointer.describe('The argument that references the carried content (an attachment id, a file).'),
    resolve: z
      .literal('tool')
      .describe("The tool's own `carried(ctx, args)` says how many bytes and how sensitive, before the send."),
    redaction: z
      .strictObject({
        replace_with: z
          .unknown()
          .default([])
          .describe('What replaces the referencing argument (any JSON value); by default nothing to carry.'),
        lowers_to: sensitivity.default('public').describe('The sensitivity of the argument after replacement.'),
      })
      .optional()
      .describe('Where the content is too sensitive for the tool: replace the reference instead of refusing.'),
  })
  .describe('What a call sends beside its bound arguments, gated like an argument and counted toward egress.');
export type CarriedDecl = z.infer<typeof CarriedDecl>;

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

export const ConcurrencyDecl = z
  .discriminatedUnion('class', [
    z.strictObject({ class: z.literal('shared').describe('Runs beside any other call, as read-only calls do.') }),
    z.strictObject({
      class: z.literal('keyed').describe('Serialized with calls whose `key` argument has the same value.'),
      key: jsonPointer.describe('The argument whose value names the lane.'),
    }),
    z.strictObject({ class: z.literal('serialize').describe("One at a time, in the run's serial lane.") }),
    z.strictObject({
      class: z.literal('independent').describe('Runs as its own child workflow (a subagent), with its own lane.'),
    }),
  ])
  .describe(
    "Which scheduling lane the tool's calls take. Absent: read-only calls run concurrently, the others one at a time in the serial lane.",
  );
export type ConcurrencyDecl = z.infer<typeof ConcurrencyDecl>;

export const ToolDecl = z
  .strictObject({
    id: toolId.describe('The tool\'s identity, "tool://<server>/<name>" (or "ext:<plugin>:<name>"); what grants name.'),
    description: z
      .string()
      .min(1)
      .meta({ description: 'What the tool does, as the model is told.', examples: ['Looks up a customer by email.'] }),
    input_schema: z.record(z.string(), z.unknown()).meta({
      description: 'The JSON Schema of the arguments (an object schema); calls are validated against it.',
      examples: [{ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }],
    }),
    annotations: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('MCP-style hints (such as `title`). Informational: they never grant trust or relax safety.'),
    safety: z
      .enum(['read_only', 'idempotent', 'mutating'])
      .describe(
        'What a call does to the world: `read_only` changes nothing; `idempotent` may be repeated safely; `mutating` may not.',
      ),
    honours_idempotency_key: z
      .boolean()
      .default(false)
      .describe('The provider deduplicates by the idempotency key handed to it, so a repeated call lands once.'),
    recovery: z
      .enum(['retry', 'reconcile', 'fail', 'escalate'])
      .describe(
        "What to do when a call's outcome is unknown: `retry` (read-only, or honours the idempotency key), `reconcile` with the provider by idempotency key, `escalate` to a person, or `fail`.",
      ),
    retry: RetryDecl.default(RetryDecl.parse({})).describe(
      "How often and how far apart a failed call is tried again (Temporal's retry policy).",
    ),
    retries_landed: z
      .boolean()
      .default(false)
      .describe('Whether a failure that reached the provider may be tried again, within `retry`.'),
    timeouts: z
      .strictObject({
        start_to_close: duration.default('30s').describe('The longest one attempt may take.'),
        heartbeat: duration.optional().describe('The longest a running attempt may go without a heartbeat.'),
      })
      .default({ start_to_close: '30s' })
      .describe('Time limits of each attempt (Temporal activity timeouts).'),
    escalation: z
      .strictObject({
        deadline: duration.default('24h').describe('How long a call waiting for a person waits before it fails.'),
      })
      .optional()
      .describe('How long an escalated call (approval or in-doubt) waits for a person.'),
    sensitivity: z
      .strictObject({
        max: sensitivity.default('internal').describe('The most sensitive data the tool may receive.'),
        output: sensitivity.default('internal').describe('The sensitivity of what the tool returns.'),
      })
      .default({ max: 'internal', output: 'internal' })
      .describe('How sensitive the data the tool receives and returns may be.'),
    protected_fields: z
      .array(ProtectedFieldDecl)
      .default([])
      .describe('Field rules: which arguments must come from which sources, or may carry untrusted text.'),
    accepts_untrusted_on_request: z
      .boolean()
      .optional()
      .describe(
        "Workflow code may waive this tool's trust rules (protected fields, the taint rule) for one call, saying why (`callTool(id, args, { acceptUntrusted: { reason } })`); the call's journal entry and the run's Current Details record it. Sensitivity, carried content, egress, spend and the run's limits still hold. Absent or false: such a call is refused before anything runs.",
      ),
    redactions: z
      .array(RedactionDecl)
      .default([])
      .describe('Arguments replaced before they reach the tool when too sensitive for it.'),
    egress: EgressDecl.optional(),
    carried: CarriedDecl.optional(),
    spend: SpendDecl.optional(),
    credential: z
      .strictObject({
        principal: z
          .string()
          .min(1)
          .describe(
            "The principal the credential names: `run` (the run's own principal) or a name; a run of another principal is refused the call.",
          ),
      })
      .optional()
      .describe('The credential this tool presents to its provider.'),
    concurrency: ConcurrencyDecl.optional(),
    approval: z
      .enum(['none', 'on_violation', 'always'])
      .default('none')
      .describe(
        'When a person decides: `none` (a gate violation refuses the call), `on_violation` (a violation asks a person instead), `always`.',
      ),
    requires_ledger: z
      .boolean()
      .default(false)
      .describe('The call needs a signed `produced_by` (the worker must have a ledger key).'),
    cost_micros: z
      .number()
      .int()
      .nonnegative()
      .default(0)
      .describe("Cost charged per call, in micro-units, counted toward the run's `max_cost_micros`."),
  })
  .describe('One tool a run may reach: identity, schema, safety, recovery, sensitivity and field rules.');
export type ToolDecl = z.infer<typeof ToolDecl>;
export type ToolDeclInput = z.input<typeof ToolDecl>;

export const Manifest = z
  .strictObject({
    $schema: z
      .string()
      .optional()
      .describe(
        'The JSON Schema an editor validates this file with (JSON manifests; YAML uses a yaml-language-server modeline). Ignored by toolplane and left out of the digest.',
      ),
    version: z.literal(1).describe("The manifest format's version: 1."),
    name: z.string().min(1).optional().describe('A name for the deployment, shown by `manifest check`.'),
    servers: z
      .record(serverName, ServerDecl)
      .describe('Where tools run, by server name: in-process, MCP over stdio or HTTP, or dormant extensions.'),
    tools: z.array(ToolDecl).describe('Every tool a run may reach; anything not declared here is unreachable.'),
    principals: PrincipalsDecl.optional(),
    models: ModelsDecl.optional(),
    approvers: ApproversDecl.optional(),
    limits: LimitsDecl.optional(),
  })
  .describe('A toolplane manifest: every tool a deployment may reach, who may have what, which models it serves.');
export type Manifest = z.infer<typeof Manifest>;
export type ManifestInput = z.input<typeof Manifest>;
