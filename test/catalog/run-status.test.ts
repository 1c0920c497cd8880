import {
  ARGS_CHARS,
  CallTally,
  detailsOf,
  failureMessage,
  REASON_CHARS,
  REFUSALS_NAMED,
  updatePayload,
} from '../../workflows/run-status';
import type { JournalEntry } from '../../common/journal';
import type { PendingEscalation } from '../../workflows/escalation';

const entry = (position: number, decision: JournalEntry['decision'], rule?: string): JournalEntry => ({
  position,
  toolId: 'tool://crm/lookup_customer',
  decision,
  attempts: 0,
  recovery: 'none',
  ...(rule ? { rule } : {}),
});

const KEY = `ek-${'0123456789abcdef'.repeat(4)}`;
const waiting: PendingEscalation = {
  effectKey: KEY,
  toolId: 'tool://payments/refund',
  position: 4,
  reason: 'needs approval',
  deadline: Date.UTC(2026, 11, 1, 14, 3),
  kind: 'approval',
};
/** The update's data as a block of its own, indented as the Web UI's editor indents it. */
const approveIt = [
  '```json',
  '{',
  `  "effectKey": "${KEY}",`,
  '  "decision": "approve",',
  '  "by": "web-ui"',
  '}',
  '```',
].join('\n');

describe('Current Details, counted as calls settle', () => {
  it('counts settled decisions by rule, names refused calls, and shows how to answer a waiting call', () => {
    const tally = new CallTally();
    for (let i = 0; i < 5; i++) tally.opened();
    tally.settled(entry(0, 'allowed'));
    tally.settled(entry(1, 'refused', 'taint:/to'));
    tally.settled(entry(2, 'approved', 'approval'));
    tally.settled(entry(3, 'refused', 'taint:/to'));
    // #4 is in flight and waits for a person.
    expect(detailsOf(tally, [waiting])).toBe(
      [
        '**Waiting for approval** until 2026-12-01 14:03 UTC: #4 tool://payments/refund: needs approval',
        `Effect key: \`${KEY}\``,
        'To approve it in the Web UI: **More Actions → Send an Update**, name `resolveEscalation`, with this data ' +
          '(`"deny"` for `"approve"` refuses it; `"by"` names who decided):',
        approveIt,
        '**Refused**: #1 tool://crm/lookup_customer (refused by taint:/to), #3 tool://crm/lookup_customer (refused by taint:/to)',
        '**Effects**: 5 calls: 1 allowed, 1 approved, 2 refused by taint:/to, 1 waiting',
      ].join('\n\n'),
    );
    expect(tally.refusals).toBe(2);
    // Once it is denied, it is a refusal like any other.
    tally.settled(entry(4, 'denied', 'approval'));
    expect(detailsOf(tally, [])).toBe(
      '**Refused**: #1 tool://crm/lookup_customer (refused by taint:/to), #3 tool://crm/lookup_customer (refused by taint:/to), ' +
        '#4 tool://crm/lookup_customer (denied by approval)' +
        '\n\n**Effects**: 5 calls: 1 allowed, 1 approved, 2 refused by taint:/to, 1 denied by approval',
    );
    expect(tally.refusals).toBe(3);
  });

  it("a refusal shows its reason (a spend refusal's amount and limit); a waiting approval shows what it will send", () => {
    const tally = new CallTally();
    tally.opened();
    const spend =
      "paying 60000 EUR minor units to acct_x would bring this run's total for that payee to 60000, over its limit of 50000";
    tally.settled({ ...entry(0, 'refused', 'spend'), toolId: 'tool://bank/transfer', reason: spend });
    tally.opened();
    tally.settled({ ...entry(1, 'refused', 'taint:/body'), reason: `x${'y'.repeat(1000)}` });
    const asked: PendingEscalation = {
      ...waiting,
      args: { account_id: 'acct_1', amount_cents: 1000, memo: 'a `quoted` memo', note: 'z'.repeat(2000) },
    };
    const details = detailsOf(tally, [asked], { workflowId: 'wf-1' });
    expect(details).toContain(`**Refused**: #0 tool://bank/transfer (refused by spend: ${spend}), #1 `);
    // Bounded: a long reason is cut, saying how much was left out.
    expect(details).toContain(`(refused by taint:/body: x${'y'.repeat(REASON_CHARS - 1)}… (701 more characters))`);
    // What the call sends once approved, as inline code that holds its backticks, bounded too.
    const sends = details.split('\n\n').find((l) => l.startsWith('Sends: '))!;
    expect(
      sends.startsWith('Sends: ``{ "account_id": "acct_1", "amount_cents": 1000, "memo": "a `quoted` memo", '),
    ).toBe(true);
    const spaced = JSON.stringify(asked.args, null, 1).replace(/\n\s*/g, ' ');
    expect(sends).toMatch(new RegExp(`… \\(${spaced.length - ARGS_CHARS} more characters\\)\`\`$`));
    expect(details).toContain('Or from a shell: `npx toolplane approve wf-1 ' + KEY + '`');
  });

  it('the payload is the exact input of the update: JSON, with the full effect key', () => {
    expect(JSON.parse(updatePayload(waiting))).toEqual({ effectKey: KEY, decision: 'approve', by: 'web-ui' });
    expect(JSON.parse(updatePayload(waiting, 'deny'))).toEqual({ effectKey: KEY, decision: 'deny', by: 'web-ui' });
    // An in-doubt call's default is the one that sends nothing again.
    const inDoubt: PendingEscalation = { ...waiting, kind: 'in_doubt' };
    expect(JSON.parse(updatePayload(inDoubt))).toMatchObject({ decision: 'abort' });
    expect(() => updatePayload(inDoubt, 'approve')).toThrow(/does not answer an? in_doubt question/);
    expect(detailsOf(new CallTally(), [inDoubt])).toContain(
      `**Waiting for a person (in doubt)** until 2026-12-01 14:03 UTC: #4 tool://payments/refund: needs approval`,
    );
  });

  it('names the latest refused calls and counts the earlier ones', () => {
    const tally = new CallTally();
    for (let i = 0; i < REFUSALS_NAMED + 3; i++) {
      tally.opened();
      tally.settled(entry(i, 'refused', 'unreachable'));
    }
    const refused = detailsOf(tally, []).split('\n\n')[0]!;
    expect(refused).toMatch(/^\*\*Refused\*\*: #3 tool:\/\/crm\/lookup_customer \(refused by unreachable\), /);
    expect(refused).toMatch(/#12 tool:\/\/crm\/lookup_customer \(refused by unreachable\), and 3 earlier$/);
  });

  it('a run that ended says how, and a wait a cancellation cut short is no longer waiting', () => {
    const tally = new CallTally();
    for (let i = 0; i < 2; i++) tally.opened();
    tally.settled(entry(0, 'allowed'));
    expect(detailsOf(tally, [], { cutShort: [waiting], end: { how: 'cancelled' } })).toBe(
      '**Cancelled**: the run waits for nobody.' +
        `\n\n**Wait cancelled**: #4 tool://payments/refund (effect \`${KEY}\`) waited for approval; nobody decided it.` +
        '\n\n**Effects**: 2 calls: 1 allowed, 1 undecided (cancelled)',
    );
    expect(
      detailsOf(tally, [], { end: { how: 'failed', message: 'Child Workflow execution failed: terminated' } }),
    ).toMatch(/^\*\*Failed\*\*: Child Workflow execution failed: terminated\n\n\*\*Effects\*\*: 2 calls: 2 allowed$/);
  });

  it('a failure reads with its causes', () => {
    const err = new Error('Activity task failed', { cause: new Error('the model refused the key') });
    expect(failureMessage(err)).toBe('Activity task failed: the model refused the key');
    expect(failureMessage('plain')).toBe('plain');
  });

  it('says nothing before the first call', () => {
    expect(detailsOf(new CallTally(), [])).toBe('');
  });
});
