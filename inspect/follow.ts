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

const QUERY_TIMEOUT_MS = 5000;

/** Runs a call on the handle's connection with a deadline. */
export function withinMs<T>(handle: WorkflowHandle, ms: number, fn: () => Promise<T>): Promise<T> {
  return handle.client.connection.withDeadline(Date.now() + ms, fn);
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
  let inFlight: Promise<unknown> = Promise.resolve();
  const result = handle.result().finally(() => (done = true)) as Promise<R>;
  while (!done) {
    await Promise.race([result.catch(() => undefined), new Promise((r) => setTimeout(r, intervalMs))]);
    if (done) break;
    // A query waits for a worker; without one it must not hold the loop past the run's end.
    const journal = withinMs(handle, QUERY_TIMEOUT_MS, () => handle.query(journalQuery)).catch(() => []);
    inFlight = journal;
    flush(
      await Promise.race([
        journal,
        result.then(
          () => [] as JournalEntry[],
          () => [] as JournalEntry[],
        ),
      ]),
    );
  }
  // The caller closes the connection next: no query may still be running (or retrying) on it.
  await inFlight;
  const value = await result;
  flush((value as { journal?: JournalEntry[] }).journal ?? []);
  return value;
}
