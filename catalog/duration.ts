// Workflow-safe: durations as a manifest writes them.
/** Temporal accepts "30s"-style strings and milliseconds. */
export function durationMs(d: string | number): number {
  if (typeof d === 'number') return d;
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/.exec(d);
  if (!m) throw new Error(`not a duration: ${d}`);
  const n = Number(m[1]);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'ms'];
  return n * unit;
}
