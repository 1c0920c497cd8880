// Workflow-safe: one tool a run may reach, as the manifest's `tools` declares it.
import { z } from 'zod';
import { ConcurrencyDecl, ProtectedFieldDecl, RedactionDecl, RetryDecl } from './call-rules-decl';
import { CarriedDecl, EgressDecl } from './egress-decl';
import { duration, sensitivity, toolId } from './manifest-fields';
import { resultPointer } from './result-place';
import { SpendDecl } from './spend-decl';

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
      'How often and how far apart a failed call is tried again, under the same idempotency key; a send no worker finished is counted apart.',
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
    principal_records: z
      .array(resultPointer)
      .optional()
      .describe(
        "Places in this tool's result that hold the principal's own records (their contacts, files, events): a whole value found there vouches for itself even when untrusted text steered the lookup, unless it is one of the call's own arguments. Field rules naming this tool (or such a place) then admit it.",
      ),
    requires_request: z
      .boolean()
      .optional()
      .describe(
        "The action itself must be asked for: a call runs without a question only when the run named this tool in the grants it asked for (the host narrowed the run to the principal's request); otherwise, once every other rule lets it through, the run asks its principal about this very call (tool and arguments) and sends nothing unless they say yes. For actions whose every field an injection can fill (a message to a known user, a calendar event, deleting a listed file).",
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
    keyless_repeat_window: duration
      .optional()
      .describe(
        'Through the MCP gateway: a call sent without an idempotency key that repeats an earlier call of the session (same tool, same canonical arguments) while it is in flight, or within this long after it ended, gets its outcome instead of being sent again. Absent: `10m` for `mutating` tools, `0` (off) for `read_only` and `idempotent` ones. A deliberate repeat sends a new `idempotencyKey`.',
      ),
  })
  .describe('One tool a run may reach: identity, schema, safety, recovery, sensitivity and field rules.');
export type ToolDecl = z.infer<typeof ToolDecl>;
export type ToolDeclInput = z.input<typeof ToolDecl>;
