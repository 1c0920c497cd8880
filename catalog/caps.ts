// Workflow-safe, builds no schema: the worker's caps on every run (the manifest's `limits`, tightened
// per principal). A run's own limits may only tighten them: the effective limit is the tighter of the two.
import type { LimitsDecl } from './caps-decl';
import { durationMs } from './duration';

/**
 * The worker's caps on one run, as `authorizeRun` answers them; a run's own `Limits` extends them.
 * Absent keys are not capped.
 */
export interface RunCaps {
  maxTurns?: number;
  maxToolCalls?: number;
  /** Model tokens, input and output together. */
  maxTokens?: number;
  maxCostMicros?: number;
  /** From the start of the run, e.g. "10m" (a duration as the manifest writes it, or milliseconds). */
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
  return Object.keys(caps).length > 0 ? caps : undefined;
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
  return Object.keys(out).length > 0 ? out : undefined;
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
