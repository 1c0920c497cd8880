import { CallTally, detailsOf } from '../../workflows/run-status';
import type { JournalEntry } from '../../workflows/journal';
import type { PendingEscalation } from '../../workflows/escalation';

const entry = (position: number, decision: JournalEntry['decision'], rule?: string): JournalEntry => ({
  position,
  toolId: 'tool://crm/lookup_customer',
  decision,
  attempts: 0,
  recovery: 'none',
  ...(rule ? { rule } : {}),
});

describe('Current Details, counted as calls settle', () => {
  it('counts settled decisions by rule, unsettled calls as allowed and waiting calls apart', () => {
    const tally = new CallTally();
    for (let i = 0; i < 5; i++) tally.opened();
    tally.settled(entry(0, 'allowed'));
    tally.settled(entry(1, 'refused', 'taint:/to'));
    tally.settled(entry(2, 'approved', 'approval'));
    tally.settled(entry(3, 'refused', 'taint:/to'));
    // #4 is in flight and waits for a person.
    const waiting: PendingEscalation = {
      effectKey: 'ek-0123456789abcdef',
      toolId: 'tool://payments/refund',
      position: 4,
      reason: 'needs approval',
      deadline: Date.UTC(2026, 11, 1, 14, 3),
      kind: 'approval',
    };
    expect(detailsOf(tally, [waiting])).toBe(
      '**Waiting for approval** until 2026-12-01 14:03 UTC: #4 tool://payments/refund, effect ek-0123456789ab…: needs approval' +
        '\n\n**Effects**: 5 calls: 1 allowed, 1 approved, 2 refused by taint:/to, 1 waiting',
    );
    expect(tally.refusals).toBe(2);
    // Once it is denied, it is a refusal like any other.
    tally.settled(entry(4, 'denied', 'approval'));
    expect(detailsOf(tally, [])).toBe(
      '**Effects**: 5 calls: 1 allowed, 1 approved, 2 refused by taint:/to, 1 denied by approval',
    );
    expect(tally.refusals).toBe(3);
  });

  it('says nothing before the first call', () => {
    expect(detailsOf(new CallTally(), [])).toBe('');
  });
});
