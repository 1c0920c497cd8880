// Workflow-safe: what the call pipeline tells the run's stream about one call (a view for clients;
// nothing decides from it): that it goes out, and how it ended. An event holds the call's journal entry
// itself: the stream copies an event as it is published (CallHost.publish), so it shows the entry as it
// stood then.
import type { JournalEntry } from '../../common/journal';
import type { EffectEvent } from '../../common/run-events';

/** The event that tells the call goes out. */
export function decidedEvent(entry: JournalEntry, key: string): EffectEvent {
  return {
    type: 'call-decided',
    position: entry.position,
    toolId: entry.toolId,
    effectKey: key,
    decision: entry.decision === 'approved' ? 'approved' : 'allowed',
    entry,
  };
}

/** The event that tells how the call ended. */
export function settledEvent(entry: JournalEntry, done: boolean): EffectEvent {
  if (done)
    return {
      type: 'call-landed',
      position: entry.position,
      toolId: entry.toolId,
      entry,
      effectKey: entry.effectKey ?? '',
    };
  const base = { position: entry.position, toolId: entry.toolId, entry };
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
