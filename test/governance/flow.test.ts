// Protected fields forward the trusted bytes; a turn's decisions use what the model had read.
import { randomUUID } from 'node:crypto';
import type { Manifest, ToolDecl } from '../../catalog/manifest';
import { Provenance, USER_PROMPT } from '../../workflows/gate/provenance';
import { checkDataFlow } from '../../workflows/gate/taint-gate';
import { runAgent } from '../support/agent';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { historyOf, scheduledActivities } from '../support/history';
import { LOOK_ALIKES, type LookAlike } from './lookalikes';
import { supportDesk } from '../support/desk';

const base = exampleManifest();
const CRM_ACCOUNT = 'acct_alice_001';
const lookup = { name: 'crm__lookup_customer', arguments: { email: 'alice@example.com' } };
const refund = (account: string) => ({
  name: 'payments__refund',
  arguments: { account_id: account, amount_cents: 2500, currency: 'EUR', memo: 'duplicate charge' },
});
const email = (n: number) => ({
  name: 'mail__send_email',
  arguments: { to: 'alice@example.com', subject: `Refund ${n}`, body: 'Your refund is on its way.' },
});

describe('data flow: exact values and turn snapshots', () => {
  const dir = testDir('flow');
  const { payments, tools: deskTools } = supportDesk(dir);
  const tools = () => deskTools;
  const rigs: Harness[] = [];
  async function deployed(manifest: Manifest): Promise<Harness> {
    const h = await harness(`flow-${randomUUID()}`);
    await h.runWorker({ manifest, tools: tools() });
    rigs.push(h);
    return h;
  }
  let h: Harness;
  beforeAll(async () => {
    h = await deployed(base);
  });
  afterAll(async () => {
    for (const r of rigs) await r.close();
  });

  it.each(['full-width', 'case', 'byte-order mark'] as LookAlike[])(
    'forwards the CRM account id byte for byte when the model retypes it (%s)',
    async (kind) => {
      const written = LOOK_ALIKES[kind](CRM_ACCOUNT);
      expect(written).not.toBe(CRM_ACCOUNT);
      const { result, workflowId } = await runAgent(h, base, {
        prompt: 'Refund alice@example.com 25.00 EUR for the duplicate charge.',
        turns: [{ tool_calls: [lookup] }, { tool_calls: [refund(written)] }, { final: 'done' }],
      });
      expect(result.journal[1]).toMatchObject({
        decision: 'allowed',
        outcome: 'ok',
        substitutions: [{ pointer: '/account_id', written, sent: CRM_ACCOUNT }],
      });
      const sent = scheduledActivities(await historyOf(h.client, workflowId)).find(
        (a) => a.input?.toolId === 'tool://payments/refund',
      )!;
      expect((sent.input!.args as { account_id: string }).account_id).toBe(CRM_ACCOUNT);
      expect(payments.all().at(-1)!.account).toBe(CRM_ACCOUNT);
    },
  );

  it('refuses a look-alike that matches two different exact values from trusted productions, rather than pick one', () => {
    const decl: ToolDecl = base.tools.find((t) => t.id === 'tool://payments/refund')!;
    const prov = new Provenance();
    prov.produce('Refund 1.00 EUR.', {
      source: USER_PROMPT,
      trusted: true,
      callTrusted: true,
      sensitivity: 'internal',
    });
    const crm = {
      source: 'tool://crm/lookup_customer',
      trusted: false,
      callTrusted: true,
      sensitivity: 'internal' as const,
    };
    prov.produce({ account_id: 'acct_alice_001' }, crm);
    prov.produce({ account_id: 'ACCT_ALICE_001' }, crm);
    expect(
      checkDataFlow(decl, { account_id: 'Acct_Alice_001', amount_cents: 100, currency: 'EUR' }, prov),
    ).toMatchObject({
      allow: false,
      rule: 'protected_field:/account_id',
      reason: expect.stringMatching(/2 different values.*rather than picking/),
    });
    // The exact bytes of one of them are not a look-alike: nothing to pick.
    expect(
      checkDataFlow(decl, { account_id: 'acct_alice_001', amount_cents: 100, currency: 'EUR' }, prov),
    ).toMatchObject({ allow: true, args: { account_id: 'acct_alice_001' } });
  });

  it("decides a turn's calls on what the model had read when it wrote them, not on which read finished first", async () => {
    // Refunds in the global lane: behind two emails, the concurrent CRM read has long finished.
    const serial = {
      ...base,
      tools: base.tools.map((t) => (t.id === 'tool://payments/refund' ? { ...t, concurrency: undefined } : t)),
    };
    const hs = await deployed(serial);
    const before = payments.all().length;
    const turn = [lookup, email(1), email(2), refund(CRM_ACCOUNT)];
    const { result } = await runAgent(hs, serial, {
      prompt: 'Refund alice@example.com 25.00 EUR and email her twice.',
      turns: [{ tool_calls: turn }, { final: 'done' }],
    });
    expect(result.journal.map((e) => [e.toolId, e.outcome])).toEqual([
      ['tool://crm/lookup_customer', 'ok'],
      ['tool://mail/send_email', 'ok'],
      ['tool://mail/send_email', 'ok'],
      ['tool://payments/refund', 'refused'],
    ]);
    expect(result.journal[3]).toMatchObject({
      rule: 'protected_field:/account_id',
      reason: expect.stringMatching(/written by the model/),
    });
    expect(payments.all().length).toBe(before);
  });
});
