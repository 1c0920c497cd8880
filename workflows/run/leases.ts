// Workflow-safe: the leases a run holds, in its memo (visible in the Web UI and kept in history), and
// those the runs before it (of a continued chain) took and did not release.
import { upsertMemo } from '@temporalio/workflow';
import type { JournalEntry } from '../../common/journal';
import type { LeaseRecord } from '../step-ctx';

export class RunLeases {
  /** Leases the runs before this one (of a continued chain) took and did not release. */
  private carried: LeaseRecord[] = [];

  /** The run's journal: each call's entry holds the lease it took. */
  constructor(private readonly journal: readonly JournalEntry[]) {}

  /** The lease lifecycle, in the run's memo: visible in the Web UI and kept in history. */
  all(): LeaseRecord[] {
    return [...this.carried, ...this.journal.flatMap((e) => (e.lease ? [e.lease] : []))];
  }

  record(): void {
    upsertMemo({
      toolplaneLeases: Object.fromEntries(this.all().map((l) => [l.id, l.states.join(' → ')])),
    });
  }

  /** Ends every lease the run still holds. */
  release(): void {
    const held = this.all().filter((l) => l.states.at(-1) !== 'released');
    if (held.length === 0) return;
    for (const l of held) l.states.push('released');
    this.record();
  }

  /** The leases not yet released, as the run that continues this one picks them up. */
  held(): LeaseRecord[] {
    return this.all()
      .filter((l) => l.states.at(-1) !== 'released')
      .map((l) => ({ id: l.id, states: [...l.states] }));
  }

  /** Picks up the leases the continued run still held. */
  resume(leases: readonly LeaseRecord[]): void {
    this.carried = leases.map((l) => ({ id: l.id, states: [...l.states] }));
  }
}
