// Workflow-safe: a tool declaration's per-call rules: retries, protected fields, redactions, its scheduling lane.
import { z } from 'zod';
import { duration, jsonPointer, sensitivity, sourceId } from './manifest-fields';
import { ResultPlaceDecl } from './result-place';

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
      .describe(
        "The tool's own answers in all, the first included; 0 means unlimited, as in Temporal. A send no worker finished (the worker died, the server lost the task) is not one of them.",
      ),
    infrastructure_attempts: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe(
        'How many sends of one call no worker may finish (the worker died or vanished, the server lost the task: a start-to-close or heartbeat timeout) before the call ends; each is sent again at once under the same idempotency key, without counting against `maximum_attempts`. Absent: 10; 0 means unlimited. For `retry` tools, and `reconcile` tools whose lost send did not land.',
      ),
  })
  .describe(
    'How often and how far apart a failed call is tried again, under the same idempotency key; a send no worker finished is counted apart.',
  );
export type RetryDecl = z.infer<typeof RetryDecl>;

/**
 * Which values of a protected field the run asks its principal about instead of refusing. A yes makes
 * the value the principal's words for the rest of the run, so only a rule admitting `user://prompt` asks.
 */
export const PrincipalConfirms = z
  .enum(['unknown', 'any'])
  .describe(
    "Ask the run's principal instead of refusing: `unknown`, about a value no result of the run holds (the model or the MCP client wrote it); `any`, also about one copied from an untrusted result or found by a lookup untrusted text steered. Their yes makes the value their words for the rest of the run; their no, or no answer by the tool's escalation deadline, refuses the call. Only for a rule that admits `user://prompt`. Absent: such values are refused.",
  );
export type PrincipalConfirms = z.infer<typeof PrincipalConfirms>;

export const ProtectedFieldDecl = z
  .union([
    z.strictObject({
      pointer: jsonPointer.describe('The argument the rule protects.'),
      from_sources: z
        .array(z.union([sourceId, ResultPlaceDecl]))
        .min(1)
        .describe(
          "Satisfied only by a value equal to one an allowed source produced in this run, from a trusted call; every source of the value must be listed. A source by name admits any value of its results, words inside its text included; a place (`{ source, at, where }`) admits only a whole value found there. `user://prompt` admits any span of the principal's words.",
        ),
      principal_confirms: PrincipalConfirms.optional(),
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
