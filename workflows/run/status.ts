// Workflow-safe: what a run says of itself where operators look (its Current Details, beside
// run-status.ts's board): the one-line summary, how it ended, and each settled call.
import { ContinueAsNew, isCancellation } from '@temporalio/workflow';
import type { JournalEntry } from '../../common/journal';
import type { ToolCatalog } from '../../catalog/tool-catalog';
import { failureMessage, type RunEnd, type RunStatusBoard } from '../run-status';
import { recordRefusal } from '../run-span';

/** As long as the Summary `startAgentRun` gives a run. */
const SUMMARY_CHARS = 200;

/** The Current Details' first line: what the run is about, in one line. */
export function summaryHeadline(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return `**Summary**: ${line.length > SUMMARY_CHARS ? `${line.slice(0, SUMMARY_CHARS - 1)}…` : line}`;
}

/** How a run that lets `err` out ended; none for a run continuing as new, which has not ended. */
export function runEnd(err: unknown): RunEnd | undefined {
  if (err instanceof ContinueAsNew) return undefined;
  return isCancellation(err) ? { how: 'cancelled' } : { how: 'failed', message: failureMessage(err) };
}

/** A call settled (`done`: the tool was called): the board counts it, a refusal is recorded on the span. */
export function callSettled(status: RunStatusBoard, catalog: ToolCatalog, e: JournalEntry, done: boolean): void {
  if (done) status.toolCalled(e.toolId);
  status.tally.settled(e);
  // The declaration's description only for the span of a refusal: an allowed call looks nothing up.
  if (e.decision === 'refused' || e.decision === 'denied')
    recordRefusal(e, catalog.declared(e.toolId)?.decl.description);
}
