// Workflow-safe: a run's journal in a few numbers. A long run returns this for the whole chain of
// runs it continued through; the entries themselves are in each run's history (`toolplane show`).
import type { JournalEntry } from '../common/journal';

export interface JournalSummary {
  /** Runs in the chain, this one included. */
  runs: number;
  calls: number;
  allowed: number;
  refused: number;
  approved: number;
  denied: number;
  /** Calls whose outcome is `failed`, `in_doubt` or `aborted`. */
  unsettled: number;
}

export const EMPTY_SUMMARY: JournalSummary = {
  runs: 0,
  calls: 0,
  allowed: 0,
  refused: 0,
  approved: 0,
  denied: 0,
  unsettled: 0,
};

/** `base` (the runs before) plus this run's entries. */
export function summarize(entries: readonly JournalEntry[], base: JournalSummary = EMPTY_SUMMARY): JournalSummary {
  const s = { ...base, runs: base.runs + 1, calls: base.calls + entries.length };
  for (const e of entries) {
    s[e.decision]++;
    if (e.outcome === 'failed' || e.outcome === 'in_doubt' || e.outcome === 'aborted') s.unsettled++;
  }
  return s;
}
