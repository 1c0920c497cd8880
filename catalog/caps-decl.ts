// The manifest's `limits` section, parsed with zod: the worker's caps on every run (see caps.ts).
import { z } from 'zod';
import { DURATION_PATTERN, durationMs, durationText } from './duration';

const positiveDuration = z
  .union(
    [
      z.number().int().positive('must be a positive number of milliseconds'),
      durationText('a duration such as "90s", "10m" or "1h"')
        // The pattern reports a string that is no duration; only a zero one is left to refuse.
        .refine((d) => !DURATION_PATTERN.test(d) || durationMs(d) > 0, 'must be longer than zero'),
    ],
    { error: 'a duration such as "90s", "10m" or "1h" (or milliseconds)' },
  )
  .meta({
    title: 'duration',
    description: 'A positive duration: milliseconds, or a number with a unit ms, s, m, h or d.',
    examples: ['10m'],
  });

/**
 * The most any one run may use on this worker; every cap is optional. Top-level in the manifest
 * (`limits:`), it binds every run; in a principal's entry (`principals.<name>.limits`), it tightens
 * that for the principal's runs (never loosens: to give one principal more, raise the worker-wide
 * cap and tighten the others under `"*"`). A run's own `limits` only tighten the result.
 *
 * @example
 * ```yaml
 * limits:                   # every run on this worker
 *   max_turns: 40
 *   max_tool_calls: 100
 *   max_cost_micros: 5000000
 *   deadline: 1h            # from the start of the run (a continued chain: of its first run)
 * principals:
 *   "agent:intern":
 *     limits: { max_tool_calls: 10, deadline: 10m }
 * ```
 */
export const LimitsDecl = z
  .strictObject({
    max_turns: z.number().int().positive().optional().describe('Model turns a run may take.'),
    max_tool_calls: z.number().int().nonnegative().optional().describe('Tool calls a run may make (0: none).'),
    max_tokens: z.number().int().positive().optional().describe('Model tokens, input and output together.'),
    max_cost_micros: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe("Cost in micro-units: the tools' `cost_micros` and what model turns report."),
    deadline: positiveDuration.optional().describe('How long a run may take from its start, such as "10m".'),
    max_delegation_depth: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('How deep independent tools may delegate (0: not at all).'),
  })
  .describe("Caps on every run; a run's own limits only tighten them. Every cap is optional: absent, uncapped.");
export type LimitsDecl = z.infer<typeof LimitsDecl>;
