// The effect key is the activity id of every call in every recorded history: its value for a given call
// and position never changes, however it is computed. These keys are pinned from the committed histories
// (test/histories/*.json, each the activity id of the call shown at its position in its run) and from
// calls that take the key's other paths (nested arguments, non-ASCII text, -0, null and false).
import fs from 'node:fs';
import path from 'node:path';
import { canonicalJson } from '../../catalog/digest';
import { effectKey, type EffectDescriptor } from '../../common/effect-key';

const REFUND = 'tool://payments/refund';
const CLOSE = 'tool://tickets/close_ticket';
const READ = 'tool://tickets/read_ticket';
const CRM = 'tool://crm/lookup_customer';
const alice = { account_id: 'acct_alice_001', amount_cents: 2500, currency: 'EUR' };

/** [descriptor, position, key, the history whose activity id it is]. */
const recorded: [EffectDescriptor, number, string, string][] = [
  [{ tool: READ, args: { ticket_id: 'T-101' } }, 0, 'ek-tMF20iIbTqfjXLJiIZ_fPYp0FKlTgdGDkJ8UEra_YCU', 'agent-approval'],
  [
    { tool: 'tool://mail/send_email', args: { to: 'auditor@partner.example', subject: 'x', body: 'y' } },
    1,
    'ek-M-6-Rmrx_78TkiuFVoF-JEloz_u7JnBtFT3DNkG3FZU',
    'agent-approved',
  ],
  [
    { tool: CRM, args: { email: 'alice@example.com' } },
    1,
    'ek-c6qz4d6rdVSEyXJrsHMmYmOBDjm55PlU8ZdEcp8YTF8',
    'agent-refund',
  ],
  [
    { tool: CRM, args: { email: 'alice@example.com' } },
    4,
    'ek-VH8TYPb3MzfpUTHWXVzKKUJHeJSo5w64yyUwAEXR8Aw',
    'agent-concurrent-budgeted',
  ],
  [
    { tool: REFUND, args: { ...alice, memo: 'Duplicate charge on order 5512' } },
    2,
    'ek-fFr69vonMQg0sxoE_xSZTBx8EUuBp1KhdBW-jwYlODw',
    'agent-refund',
  ],
  [
    { tool: REFUND, args: { ...alice, memo: 'Second duplicate charge on order 5512' } },
    6,
    'ek-VqcrohabE2sWicNj8_0JmHgpL8O2BPykGw6kaRMmVSY',
    'agent-concurrent-budgeted',
  ],
  [
    {
      tool: REFUND,
      args: { account_id: 'acct_bob_002', amount_cents: 1000, currency: 'EUR', memo: 'Late fee refund' },
    },
    4,
    'ek-KRxiC4VZUY_MDBtYJ_ZKYtrDFt4OcSXEcg6qj0TEOeY',
    'agent-injected-ticket',
  ],
  [
    { tool: CLOSE, args: { ticket_id: 'T-101', resolution: 'Refunded the 10.00 EUR late fee.' } },
    5,
    'ek-Ag4Yf04A0xnVpEAm_5AwGK7qV16i5KQFbzdtLCdDpjo',
    'long-run-continued',
  ],
  [
    { tool: 'tool://flaky/charge', args: { account: 'acct-2', cents: 700, mode: 'in_doubt_not_landed' } },
    1,
    'ek-Ybx7902MoRB6Ac4TmeyTZ8QqCpt6IZp06Ws5HaMMyNw',
    'reconciled',
  ],
  [
    { tool: 'tool://flaky/read', args: { q: 'balance' } },
    0,
    'ek-NprnCdj6CzDEArzTOacPHUBJl4js6YXKWMkgXRgo19o',
    'retried',
  ],
];

/** Keys of calls the histories do not make, taken from the key as it was when these were pinned. */
const other: [EffectDescriptor, number, string][] = [
  [
    { tool: 'tool://mail/send_email', args: { to: 'zoë@example.com', subject: 'Grüße 😀', body: 'line\n"two"' } },
    12,
    'ek-cysmZgYWMRd7VcsoS-f8Mt6yJq7Wyo-ujTpsRH7HkCg',
  ],
  [
    { tool: 'tool://crm/search', args: { filter: { status: ['open', 'new'], since: 1.5e-7 }, limit: 20 } },
    40,
    'ek-XapIOgRHugV9wXSO1OxEQmFc1LbXWke2ldLQaWOCcVU',
  ],
  [
    { tool: REFUND, args: { amount_cents: -0, currency: 'EUR', note: null, dry: false } },
    7,
    'ek-Rb1idNsbb9vjacsM5Nh69QtIHMnAhqhmRS62AhAEit8',
  ],
];

/** The activity ids a committed history scheduled. */
function activityIds(name: string): string[] {
  const file = path.join(__dirname, '..', 'histories', `${name}.json`);
  const history = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    events: { activityTaskScheduledEventAttributes?: { activityId: string } }[];
  };
  return history.events.flatMap((e) =>
    e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityId] : [],
  );
}

describe('the effect key', () => {
  it.each(recorded)('of %j at %d is %s, the activity id %s recorded', (descriptor, position, key, history) => {
    expect(activityIds(history)).toContain(key);
    expect(effectKey(descriptor, position)).toBe(key);
  });

  it.each(other)('of %j at %d is %s', (descriptor, position, key) => {
    expect(effectKey(descriptor, position)).toBe(key);
  });

  it.each([...recorded, ...other].map(([descriptor, position]): [EffectDescriptor, number] => [descriptor, position]))(
    'of %j at %d is the same key when the arguments come with their canonical JSON already written',
    (descriptor, position) => {
      const written = { of: descriptor.args, json: canonicalJson(descriptor.args) };
      expect(effectKey(descriptor, position, written)).toBe(effectKey(descriptor, position));
    },
  );

  it('reads JSON handed to it only for those very arguments, not for an equal copy or other arguments', () => {
    const [descriptor, position, key] = recorded[4]!;
    const args = descriptor.args as Record<string, unknown>;
    expect(effectKey(descriptor, position, { of: { ...args }, json: '{"account_id":"acct_mallory"}' })).toBe(key);
    expect(effectKey(descriptor, position, { of: args, json: '{"account_id":"acct_mallory"}' })).not.toBe(key);
  });

  it('names the position and the arguments: another of either is another effect', () => {
    const [descriptor, position, key] = recorded[4]!;
    expect(effectKey(descriptor, position + 1)).not.toBe(key);
    expect(effectKey({ ...descriptor, args: { ...alice, memo: 'Duplicate charge on order 5513' } }, position)).not.toBe(
      key,
    );
  });
});
