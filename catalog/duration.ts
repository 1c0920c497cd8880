// Workflow-safe: the duration grammar, written here once. A manifest, a run's limits and a model
// endpoint's pacing all write durations as whole milliseconds or a number with a unit.
import { z } from 'zod';
import { ValueUnreadable } from './errors';

/** What each unit is worth in milliseconds. */
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
type DurationUnit = keyof typeof UNIT_MS;

/** A duration as text: a number, optional spaces, and one of the units `ms`, `s`, `m`, `h`, `d`. */
export const DURATION_PATTERN = /^\d+(\.\d+)?\s*(ms|s|m|h|d)$/;

/** A duration string checked against the grammar; `message` says what a wrong one should have been. */
export function durationText(message: string): z.ZodString {
  return z.string().regex(DURATION_PATTERN, message);
}

/** Temporal accepts "30s"-style strings and milliseconds. */
export function durationMs(d: string | number): number {
  if (typeof d === 'number') return d;
  const m = DURATION_PATTERN.exec(d);
  if (!m) throw new ValueUnreadable(`not a duration: ${d}`);
  return parseFloat(d) * UNIT_MS[m[2] as DurationUnit];
}
