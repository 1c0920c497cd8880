// Workflow-safe: a tool declaration's egress and carried content, and the budget period windows are aligned to.
import { z } from 'zod';
import { durationMs } from './duration';
import { jsonPointer, sensitivity } from './manifest-fields';

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
