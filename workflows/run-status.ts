// Workflow-safe: what an operator sees of a run without opening it: the ToolplaneRefusals and
// ToolplaneWaitingFor search attributes (upserted only when they change) and the run's current
// details in the Web UI (effects allowed, refused by rule, waiting for whom, until when).
import { setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { REFUSALS, WAITING_FOR, WaitingFor } from '../common/search-attributes';
import type { PendingEscalation } from './escalation';
import type { JournalEntry } from './journal';

export interface RunStatus {
  refusals: number;
  waitingFor: WaitingFor;
}

function waitingFor(pending: readonly PendingEscalation[]): WaitingFor {
  return pending.some((p) => p.kind === 'approval')
    ? WaitingFor.Approval
    : pending.length > 0
      ? WaitingFor.Escalation
      : WaitingFor.None;
}

const refused = (e: JournalEntry) => e.decision === 'refused' || e.decision === 'denied';

/** `2026-12-01 14:03 UTC`: a deadline as people read it. */
export function readableTime(ms: number): string {
  return `${new Date(ms).toISOString().replace('T', ' ').slice(0, 16)} UTC`;
}

/** How the run's calls were decided so far, counted as each call settles (never by rescanning the journal). */
export class CallTally {
  /** Calls in the journal, settled or not. */
  calls = 0;
  approved = 0;
  refusals = 0;
  readonly byRule = new Map<string, number>();

  /** A call entered the journal. */
  opened(): void {
    this.calls++;
  }

  /** A call returned, failed or was refused: its decision is final. */
  settled(e: JournalEntry): void {
    if (e.decision === 'approved') this.approved++;
    else if (refused(e)) {
      this.refusals++;
      const rule = `${e.decision} by ${e.rule ?? '?'}`;
      this.byRule.set(rule, (this.byRule.get(rule) ?? 0) + 1);
    }
  }
}

/** Markdown for the Web UI's Current Details: what waits first, then the effects so far. */
export function detailsOf(tally: CallTally, pending: readonly PendingEscalation[]): string {
  const lines: string[] = [];
  for (const p of pending)
    lines.push(
      `**Waiting for ${p.kind === 'approval' ? 'approval' : 'a person (in doubt)'}** until ${readableTime(p.deadline)}: ` +
        `#${p.position} ${p.toolId}, effect ${p.effectKey.slice(0, 15)}…: ${p.reason}`,
    );
  if (tally.calls > 0) {
    // A call not yet settled counts as allowed (its provisional decision), unless it waits for a person.
    const allowed = tally.calls - tally.approved - tally.refusals - pending.length;
    const parts = [
      ...(allowed > 0 ? [`${allowed} allowed`] : []),
      ...(tally.approved ? [`${tally.approved} approved`] : []),
      ...[...tally.byRule].map(([r, n]) => `${n} ${r}`),
    ];
    lines.push(
      `**Effects**: ${tally.calls} calls: ${parts.join(', ')}${pending.length ? `, ${pending.length} waiting` : ''}`,
    );
  }
  return lines.join('\n\n');
}

/**
 * Publishes a run's status, upserting the search attributes only when they change from what the
 * run started with (no refusals, waiting for nobody: what the client sets at start and a chain
 * carries), so a run with nothing to report spends no events on it.
 */
export class RunStatusBoard {
  private last?: RunStatus;
  /** Refusals of the runs this one continues: a chain counts as one run. */
  carriedRefusals = 0;
  readonly tally = new CallTally();

  /** Refusals over the whole chain. */
  refusals(): number {
    return this.carriedRefusals + this.tally.refusals;
  }

  publish(pending: readonly PendingEscalation[]): void {
    setCurrentDetails(detailsOf(this.tally, pending));
    const last = (this.last ??= { refusals: this.carriedRefusals, waitingFor: WaitingFor.None });
    const now: RunStatus = { refusals: this.refusals(), waitingFor: waitingFor(pending) };
    if (now.refusals === last.refusals && now.waitingFor === last.waitingFor) return;
    upsertSearchAttributes([
      { key: REFUSALS, value: now.refusals },
      { key: WAITING_FOR, value: now.waitingFor },
    ]);
    this.last = now;
  }
}
