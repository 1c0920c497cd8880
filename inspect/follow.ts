// Follows a run as it happens: one line per effect, when it is decided and when it ends.
import type { WorkflowHandle } from '@temporalio/client';
import type { JournalEntry } from '../workflows/journal';
import { journalQuery } from '../workflows/journal-query';

export function effectLine(e: JournalEntry): string {
  const what =
    e.decision === 'refused' || e.decision === 'denied'
      ? `${e.decision} by ${e.rule}: ${e.reason}`
      : `${e.decision}${e.rule ? ` (${e.rule})` : ''} → ${e.outcome ?? 'running'}${e.recovery !== 'none' ? ` via ${e.recovery}` : ''}`;
  return `  #${e.position} ${e.toolId}  ${what}`;
}

/** Prints each effect once it has an outcome; resolves with the run's result. */
export async function follow<R>(handle: WorkflowHandle, print: (line: string) => void, intervalMs = 250): Promise<R> {
  const printed = new Set<number>();
  const flush = (journal: JournalEntry[]) => {
    for (const e of journal) {
      if (printed.has(e.position) || e.outcome === undefined) continue;
      printed.add(e.position);
      print(effectLine(e));
    }
  };
  let done = false;
  const result = handle.result().finally(() => (done = true)) as Promise<R>;
  while (!done) {
    await Promise.race([result.catch(() => undefined), new Promise((r) => setTimeout(r, intervalMs))]);
    if (done) break;
    flush(await handle.query(journalQuery).catch(() => []));
  }
  const value = await result;
  flush((value as { journal?: JournalEntry[] }).journal ?? []);
  return value;
}
