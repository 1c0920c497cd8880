// Follows a run as it happens: one line per effect once it ends, in position order, and a line
// when a person approves a call, at the time they do.
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { JournalEntry } from '../common/journal';
import { journalQuery } from '../workflows/journal-query';
import { streamRun } from './stream-run';

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
  let seen: JournalEntry[] = [];
  const result = handle.result().finally(() => (done = true)) as Promise<R>;
  while (!done) {
    await Promise.race([result.catch(() => undefined), new Promise((r) => setTimeout(r, intervalMs))]);
    if (done) break;
    // A query waits for a worker; without one it must not hold the loop past the run's end.
    const journal = withinMs(handle, QUERY_TIMEOUT_MS, () => handle.query(journalQuery)).catch(() => []);
    inFlight = journal;
    const polled = await Promise.race([
      journal,
      result.then(
        () => [] as JournalEntry[],
        () => [] as JournalEntry[],
      ),
    ]);
    if (polled.length > 0) seen = polled;
    flush(polled);
  }
  // The caller closes the connection next: no query may still be running (or retrying) on it.
  await inFlight;
  const value = await result;
  let last = finalJournal(value, seen);
  if (last.missing > 0) {
    // The result counted routine calls no poll saw: the run's journal answers them (a worker replays it).
    const asked = await withinMs(handle, QUERY_TIMEOUT_MS, () => handle.query(journalQuery)).catch(() => []);
    last = finalJournal(value, asked);
  }
  flush(last.journal, true);
  return value;
}

/**
 * The journal to print last: the result's entries over those seen while the run went (an agent run's
 * result lists its calls that are not routine, and counts the others), and how many of the calls the
 * result counted are in neither.
 */
export function finalJournal(
  value: unknown,
  seen: Iterable<JournalEntry>,
): { journal: JournalEntry[]; missing: number } {
  const r = (value ?? {}) as { journal?: JournalEntry[]; routineCalls?: number };
  const byPosition = new Map<number, JournalEntry>();
  for (const e of seen) byPosition.set(e.position, e);
  const listedHere = r.journal ?? [];
  for (const e of listedHere) byPosition.set(e.position, e);
  const journal = [...byPosition.values()];
  return { journal, missing: Math.max(0, listedHere.length + (r.routineCalls ?? 0) - journal.length) };
}

/** Where a stream follower prints: whole lines, and (on a terminal) text as it is written. */
export interface FollowOutput {
  line(l: string): void;
  /** Writes text without ending the line; absent, a turn's text is printed as one line when it ends. */
  write?(text: string): void;
}

/**
 * Follows a run through its stream (`streamRun`), no polling: the model's text as it is written
 * (`  model: ...`), each effect once it has an outcome, in position order, and approvals as they
 * happen; resolves with the run's result.
 */
export async function followStream<R>(
  client: Client,
  handle: WorkflowHandle,
  out: FollowOutput,
  options: { tokens?: boolean } = {},
): Promise<R> {
  const printer = new JournalPrinter();
  const entries = new Map<number, JournalEntry>();
  let open: string | undefined;
  const endText = () => {
    if (open === undefined) return;
    if (out.write) out.write('\n');
    else out.line(`  model: ${open}`);
    open = undefined;
  };
  const flush = (journal: JournalEntry[], end = false) => {
    const lines = printer.lines(journal, end);
    if (lines.length) endText();
    for (const l of lines) out.line(l);
  };
  const result = handle.result() as Promise<R>;
  // The run's end is its result's: a stream that fails (no worker to answer the tail) only stops the printing.
  const stop = new AbortController();
  const reading = (async () => {
    for await (const e of streamRun(client, handle.workflowId, {
      tokens: options.tokens !== false,
      signal: stop.signal,
    })) {
      if (e.type === 'tokens') {
        const text = e.deltas.join('');
        if (open === undefined && out.write) out.write('  model: ');
        open = (open ?? '') + text;
        out.write?.(text);
      } else if (e.type === 'turn-completed') {
        // A turn whose text came at once (no tokens streamed) is printed whole.
        if (open === undefined && e.text) out.line(`  model: ${e.text}`);
        endText();
      } else if ('entry' in e) {
        entries.set(e.position, e.entry);
        flush([...entries.values()]);
      }
    }
  })().catch(() => undefined);
  // What the run published last is read by query once it has closed; a run whose workers are gone
  // answers none, and its result (below) says what there is to say.
  const value = await result.finally(async () => {
    await Promise.race([reading, new Promise((r) => setTimeout(r, QUERY_TIMEOUT_MS * 2).unref())]);
    stop.abort();
    await reading;
  });
  endText();
  flush(finalJournal(value, entries.values()).journal, true);
  return value;
}
