// Workflow-safe: what an operator sees of a run without opening it: the ToolplaneRefusals and
// ToolplaneWaitingFor search attributes (upserted only when they change) and the run's current
// details in the Web UI (effects allowed, refused by rule, waiting for whom, until when).
import { patched, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { Patch } from '../common/names';
import { REFUSALS, WAITING_FOR, WaitingFor } from '../common/search-attributes';
import type { PendingEscalation } from './escalation';
import type { JournalEntry } from './journal';

export interface RunStatus {
  refusals: number;
  waitingFor: WaitingFor;
}

export function statusOf(journal: readonly JournalEntry[], pending: readonly PendingEscalation[]): RunStatus {
  return {
    refusals: journal.filter((e) => e.decision === 'refused' || e.decision === 'denied').length,
    waitingFor: pending.some((p) => p.kind === 'approval')
      ? WaitingFor.Approval
      : pending.length > 0
        ? WaitingFor.Escalation
        : WaitingFor.None,
  };
}

/** `2026-12-01 14:03 UTC`: a deadline as people read it. */
export function readableTime(ms: number): string {
  return `${new Date(ms).toISOString().replace('T', ' ').slice(0, 16)} UTC`;
}

/** Markdown for the Web UI's Current Details: what waits first, then the effects so far. */
export function detailsOf(journal: readonly JournalEntry[], pending: readonly PendingEscalation[]): string {
  const lines: string[] = [];
  for (const p of pending)
    lines.push(
      `**Waiting for ${p.kind === 'approval' ? 'approval' : 'a person (in doubt)'}** until ${readableTime(p.deadline)}: ` +
        `#${p.position} ${p.toolId}, effect ${p.effectKey.slice(0, 15)}…: ${p.reason}`,
    );
  if (journal.length > 0) {
    // A call waiting for a person is counted as waiting, not by its provisional decision.
    const waiting = new Set(pending.map((p) => p.position));
    const count = (d: JournalEntry['decision']) =>
      journal.filter((e) => e.decision === d && !waiting.has(e.position)).length;
    const byRule = new Map<string, number>();
    for (const e of journal)
      if (e.decision === 'refused' || e.decision === 'denied')
        byRule.set(`${e.decision} by ${e.rule ?? '?'}`, (byRule.get(`${e.decision} by ${e.rule ?? '?'}`) ?? 0) + 1);
    const parts = [
      ...(count('allowed') ? [`${count('allowed')} allowed`] : []),
      ...(count('approved') ? [`${count('approved')} approved`] : []),
      ...[...byRule].map(([r, n]) => `${n} ${r}`),
    ];
    lines.push(
      `**Effects**: ${journal.length} calls: ${parts.join(', ')}${pending.length ? `, ${pending.length} waiting` : ''}`,
    );
  }
  return lines.join('\n\n');
}

/** Publishes a run's status; a run started before this existed (no patch marker) gets the details, not the search attributes. */
export class RunStatusBoard {
  private last?: RunStatus;
  private enabled?: boolean;
  /** Refusals of the runs this one continues: a chain counts as one run. */
  carriedRefusals = 0;

  publish(journal: readonly JournalEntry[], pending: readonly PendingEscalation[]): void {
    setCurrentDetails(detailsOf(journal, pending));
    this.enabled ??= patched(Patch.OperatorStatus);
    if (!this.enabled) return;
    const now = statusOf(journal, pending);
    now.refusals += this.carriedRefusals;
    if (this.last && now.refusals === this.last.refusals && now.waitingFor === this.last.waitingFor) return;
    upsertSearchAttributes([
      { key: REFUSALS, value: now.refusals },
      { key: WAITING_FOR, value: now.waitingFor },
    ]);
    this.last = now;
  }
}
