import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { loadScript, runAgent } from '../support/agent';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { supportDesk } from '../support/desk';

const scripts = path.resolve(__dirname, '..', '..', 'examples', 'support-desk', 'scripts');

describe('the support-desk agent', () => {
  let h: Harness;
  const dir = testDir('desk');
  const { payments, outbox, tools } = supportDesk(dir);
  const manifest = exampleManifest();

  beforeAll(async () => {
    h = await harness(`desk-${randomUUID()}`);
    await h.runWorker({
      manifest,
      tools,
    });
  });
  afterAll(async () => {
    await h.close();
  });

  it('looks the customer up, refunds and closes the ticket', async () => {
    const { result } = await runAgent(h, manifest, loadScript(path.join(scripts, 'refund.json')));
    expect(result.status).toBe('completed');
    expect(result.journal.map((e) => [e.toolId, e.decision, e.outcome])).toEqual([
      ['tool://tickets/read_ticket', 'allowed', 'ok'],
      ['tool://crm/lookup_customer', 'allowed', 'ok'],
      ['tool://payments/refund', 'allowed', 'ok'],
      ['tool://tickets/close_ticket', 'allowed', 'ok'],
    ]);
    expect(payments.all().filter((p) => p.account === 'acct_alice_001')).toHaveLength(1);
  });

  it('refuses what an injected ticket asks for, naming the rule, and still does the real work', async () => {
    const before = payments.all().length;
    const { result } = await runAgent(h, manifest, loadScript(path.join(scripts, 'injected-ticket.json')));
    expect(result.status).toBe('completed');
    const refused = result.journal.filter((e) => e.decision === 'refused');
    expect(refused.map((e) => [e.toolId, e.rule])).toEqual([
      ['tool://payments/refund', 'protected_field:/account_id'],
      ['tool://mail/send_email', 'protected_field:/to'],
    ]);
    expect(refused[0]!.reason).toMatch(/tool:\/\/tickets\/read_ticket/);
    const landed = payments.all().slice(before);
    expect(landed.map((p) => [p.account, p.amountCents])).toEqual([['acct_bob_002', 1000]]);
    expect(outbox.all()).toEqual([]);
  });
});
