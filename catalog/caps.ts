// Workflow-safe: the worker's caps on every run (the manifest's `limits`, tightened per principal).
// A run's own limits may only tighten them: the effective limit is the tighter of the two.
import { z } from 'zod';
import { durationMs } from './duration';

const positiveDuration = z.union(
  [
    z.number().int().positive('must be a positive number of milliseconds'),
    z
      .string()
      .regex(/^\d+(\.\d+)?\s*(ms|s|m|h|d)$/, 'a duration such as "90s", "10m" or "1h"')
      .refine((d) => durationMs(d) > 0, 'must be longer than zero'),
  ],
  { error: 'a duration such as "90s", "10m" or "1h" (or milliseconds)' },
);

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
export const LimitsDecl = z.strictObject({
  /** Model turns. */
  max_turns: z.number().int().positive().optional(),
  /** Tool calls (0: the run may call no tool). */
  max_tool_calls: z.number().int().nonnegative().optional(),
  /** Model tokens, input and output together. */
  max_tokens: z.number().int().positive().optional(),
  /** Cost in micro-units: the tools' `cost_micros` and what model turns report. */
  max_cost_micros: z.number().int().nonnegative().optional(),
  /** From the start of the run, such as "10m". */
  deadline: positiveDuration.optional(),
  /** How deep independent tools may delegate (0: not at all). */
  max_delegation_depth: z.number().int().nonnegative().optional(),
});
export type LimitsDecl = z.infer<typeof LimitsDecl>;

/**
 * The worker's caps on one run, as `authorizeRun` answers them (in the shape of a run's `Limits`).
 * Absent keys are not capped.
 */
export interface RunCaps {
  maxTurns?: number;
  maxToolCalls?: number;
  maxTokens?: number;
  maxCostMicros?: number;
  /** As the manifest writes it; from the start of the run. */
  deadline?: string | number;
  maxDelegationDepth?: number;
}

/** The caps, by the name a run's `Limits` gives each and the name the manifest gives it. */
export const CAPPED = {
  maxTurns: 'max_turns',
  maxToolCalls: 'max_tool_calls',
  maxTokens: 'max_tokens',
  maxCostMicros: 'max_cost_micros',
  deadline: 'deadline',
  maxDelegationDepth: 'max_delegation_depth',
} as const satisfies Record<keyof RunCaps, keyof LimitsDecl>;
export type CappedLimit = keyof typeof CAPPED;
const CAPPED_KEYS = Object.keys(CAPPED) as CappedLimit[];

const size = (key: CappedLimit, v: string | number): number => (key === 'deadline' ? durationMs(v) : Number(v));

/** The manifest's `limits` section in a run's terms; undefined when it caps nothing. */
export function capsOf(decl: LimitsDecl | undefined): RunCaps | undefined {
  if (!decl) return undefined;
  const caps: Record<string, string | number> = {};
  for (const key of CAPPED_KEYS) {
    const v = decl[CAPPED[key]];
    if (v !== undefined) caps[key] = v;
  }
  return Object.keys(caps).length > 0 ? (caps) : undefined;
}

/** For each cap, the tighter of the two (absent in one: the other's). */
export function tighterCaps(a: RunCaps | undefined, b: RunCaps | undefined): RunCaps | undefined {
  if (!a || !b) return a ?? b;
  const out: Record<string, string | number> = {};
  for (const key of CAPPED_KEYS) {
    const x = a[key];
    const y = b[key];
    const v = x === undefined ? y : y === undefined ? x : size(key, y) < size(key, x) ? y : x;
    if (v !== undefined) out[key] = v;
  }
  return out;
}

/** For each cap, the looser of the two (absent in either: uncapped). The union of a subject's groups. */
export function looserCaps(a: RunCaps | undefined, b: RunCaps | undefined): RunCaps | undefined {
  if (!a || !b) return undefined;
  const out: Record<string, string | number> = {};
  for (const key of CAPPED_KEYS) {
    const x = a[key];
    const y = b[key];
    if (x !== undefined && y !== undefined) out[key] = size(key, y) > size(key, x) ? y : x;
  }
  return Object.keys(out).length > 0 ? (out) : undefined;
}

/**
 * A run's limits within the worker's caps: for each capped limit, the run's own where it is at
 * least as tight, else the worker's; `byWorker` names the limits the worker's cap set.
 */
export function withinCaps<L extends Partial<Record<CappedLimit, string | number | undefined>>>(
  own: L,
  caps: RunCaps | undefined,
): { limits: L; byWorker: CappedLimit[] } {
  if (!caps) return { limits: own, byWorker: [] };
  const limits: Record<string, unknown> = { ...own };
  const byWorker: CappedLimit[] = [];
  for (const key of CAPPED_KEYS) {
    const cap = caps[key];
    const mine = own[key];
    if (cap === undefined) continue;
    if (mine === undefined || size(key, cap) < size(key, mine)) {
      limits[key] = cap;
      byWorker.push(key);
    }
  }
  return { limits: limits as L, byWorker };
}
