// Workflow-safe: what the call pipeline tells the run's stream about one call (a view for clients;
// nothing decides from it): that it goes out, and how it ended.
import type { JournalEntry } from '../../common/journal';
import type { EffectEvent } from '../../common/run-events';

/** The call's journal entry as it stands, for an event (a copy: the entry changes after). */
const snapshot = (entry: JournalEntry): JournalEntry => JSON.parse(JSON.stringify(entry)) as JournalEntry;

/** The event that tells the call goes out. */
export function decidedEvent(entry: JournalEntry, key: string): EffectEvent {
  return {
    type: 'call-decided',
    position: entry.position,
    toolId: entry.toolId,
    effectKey: key,
    decision: entry.decision === 'approved' ? 'approved' : 'allowed',
    entry: snapshot(entry),
  };
}

/** The event that tells how the call ended. */
export function settledEvent(entry: JournalEntry, done: boolean): EffectEvent {
  const base = { position: entry.position, toolId: entry.toolId, entry: snapshot(entry) };
  if (done) return { type: 'call-landed', ...base, effectKey: entry.effectKey ?? '' };
  const keyed = { ...base, ...(entry.effectKey ? { effectKey: entry.effectKey } : {}) };
  if (entry.outcome === 'refused')
    return {
      type: 'call-refused',
      ...keyed,
      ...(entry.rule ? { rule: entry.rule } : {}),
      reason: entry.reason ?? entry.error?.message ?? 'refused',
    };
  return { type: 'call-failed', ...keyed };
}
