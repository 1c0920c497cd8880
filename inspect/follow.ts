// Follows a run as it happens: one line per effect once it ends, in position order, and a line
// when a person approves a call, at the time they do.
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

/** How long a query may wait for a worker (none may poll, or the run's workflow task may be failing). */
export const QUERY_TIMEOUT_MS = 5000;

/** Runs a call on the handle's connection with a deadline. */
export function withinMs<T>(handle: WorkflowHandle, ms: number, fn: () => Promise<T>): Promise<T> {
  return handle.client.connection.withDeadline(Date.now() + ms, fn);
}

/** The line that reports a person's approval, printed when the run's journal first shows it. */
export function approvalLine(e: JournalEntry): string {
  return `  #${e.position} ${e.toolId}  approved by ${e.decidedBy ?? 'a person'}; the call goes ahead`;
}

/**
 * What a follower prints of successive journals: each effect once it has an outcome, in position
 * order (an effect still under way holds back those after it, which concurrent calls may finish
 * first), and each approval as soon as it shows. `end` prints what is left, in order.
 */
export class JournalPrinter {
  private readonly printed = new Set<number>();
  private readonly approved = new Set<number>();

  lines(journal: JournalEntry[], end = false): string[] {
    const out: string[] = [];
    const ordered = [...journal].sort((a, b) => a.position - b.position);
    const announce = (e: JournalEntry) => {
      if (e.decision !== 'approved' || this.approved.has(e.position) || this.printed.has(e.position)) return;
      this.approved.add(e.position);
      out.push(approvalLine(e));
    };
    // In position order: an approval is announced after the effects before it that have ended (seen in
    // the same poll, they come first), and before its own effect's line.
    let held = false;
    for (const e of ordered) {
      if (this.printed.has(e.position)) continue;
      held ||= e.outcome === undefined && !end;
      announce(e);
      if (held) continue;
      this.printed.add(e.position);
      out.push(effectLine(e));
    }
    return out;
  }
}

/** Prints each effect once it has an outcome, in position order, and approvals as they happen; resolves with the run's result. */
export async function follow<R>(handle: WorkflowHandle, print: (line: string) => void, intervalMs = 250): Promise<R> {
  const printer = new JournalPrinter();
  const flush = (journal: JournalEntry[], end = false) => {
    for (const l of printer.lines(journal, end)) print(l);
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
  flush((value as { journal?: JournalEntry[] }).journal ?? [], true);
  return value;
}
