// Facts that carry their provenance: the memory example across runs, a worker without a key, key
// rotation, and the seed's checklist for a tool that creates trusted state.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { detachedCtx } from '../../activities/ctx';
import { ToolRegistry } from '../../activities/tool-registry';
import { Cancelled, ProvenanceMissing } from '../../activities/tool-errors';
import { FailureType } from '../../catalog/failure-types';
import { loadManifest } from '../../runtime/manifest-file';
import { generateLedgerKey, type LedgerConfig } from '../../ledger/keys';
import { verifyProducedBy } from '../../ledger/verify';
import { ATTACKER_IBAN, createTools, factStore, latestFact, MY_IBAN, paymentStore } from '../../examples/memory/tools';
import { loadScript, runAgent } from '../support/agent';
import { harness, testDir, type Harness } from '../support/env';

const example = path.resolve(__dirname, '..', '..', 'examples', 'memory');
const manifest = loadManifest(path.join(example, 'manifest.yaml')).manifest;
const script = (name: string) => loadScript(path.join(example, 'scripts', `${name}.json`));
const ids = (tools: { def(): { id: string } }[]) => tools.map((t) => t.def().id);

describe('facts with provenance (examples/memory)', () => {
  const k1 = generateLedgerKey('k1');
  const k2 = generateLedgerKey('k2');
  const dir = testDir('memory');
  const facts = factStore(dir);
  const payments = paymentStore(dir);
  let h: Harness;

  beforeAll(async () => {
    h = await harness(`memory-${randomUUID()}`);
    await h.runWorker({ manifest, tools: createTools(dir), ledger: { keyId: k1.keyId, privateKey: k1.privateKey } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('keeps its tools, names and schemas as the manifest declares them', () => {
    const tools = createTools(dir);
    expect(ids(tools)).toEqual([
      'tool://memory/remember',
      'tool://memory/recall',
      'tool://mail/read_inbox',
      'tool://bank/send_money',
    ]);
    expect(() => new ToolRegistry(tools).assertMatches(manifest)).not.toThrow();
    const remember = tools[0]!.def();
    expect(remember.safety).toBe('idempotent');
    expect(remember.inputSchema).toMatchObject({ required: ['key', 'value'], additionalProperties: false });
    expect(manifest.tools.find((t) => t.id === remember.id)!.requires_ledger).toBe(true);
  });

  it('a fact remembered from the user words pays in a later run; one an injection stored does not', async () => {
    const run1 = await runAgent(h, manifest, script('remember-iban'));
    expect(run1.result.journal.map((e) => [e.toolId, e.decision, e.outcome])).toEqual([
      ['tool://memory/remember', 'allowed', 'ok'],
    ]);
    const mine = latestFact(facts, 'my_iban')!;
    expect(mine.args.value).toBe(MY_IBAN);
    expect(mine.produced_by).toMatchObject({
      workflowId: run1.workflowId,
      effectKey: run1.result.journal[0]!.effectKey,
      toolId: 'tool://memory/remember',
      decision: 'allowed',
      trustedArgs: true,
      keyId: 'k1',
    });
    // What is stored names digests and identities, never the values it was written with.
    expect(JSON.stringify(mine.produced_by)).not.toContain(MY_IBAN);

    const injected = await runAgent(h, manifest, script('inbox'));
    expect(injected.result.journal.map((e) => [e.toolId, e.decision, e.outcome])).toEqual([
      ['tool://mail/read_inbox', 'allowed', 'ok'],
      ['tool://memory/remember', 'allowed', 'ok'],
    ]);
    expect(latestFact(facts, 'landlord_iban')!.produced_by).toMatchObject({ trustedArgs: false });

    const run2 = await runAgent(h, manifest, script('pay-rent'));
    expect(run2.result.journal.map((e) => [e.toolId, e.decision, e.rule ?? null])).toEqual([
      ['tool://memory/recall', 'allowed', null],
      ['tool://bank/send_money', 'allowed', null],
      ['tool://memory/recall', 'allowed', null],
      ['tool://bank/send_money', 'refused', 'protected_field:/recipient'],
    ]);
    expect(run2.result.journal[3]!.reason).toMatch(/tool:\/\/memory\/recall/);
    // The journal says what each recalled fact was worth, and where it came from.
    expect(run2.result.journal[0]!.cited).toEqual([
      {
        trusted: true,
        origin: expect.stringMatching(new RegExp(`^${run1.workflowId}/.+/${run1.result.journal[0]!.effectKey}$`)),
      },
    ]);
    expect(run2.result.journal[2]!.cited).toEqual([
      expect.objectContaining({ trusted: false, reason: 'the origin call had untrusted arguments' }),
    ]);
    const landed = payments.all().map((p) => [p.recipient, p.amount_cents]);
    expect(landed).toEqual([[MY_IBAN, 1200]]);
  });

  it('a genuine reference copied onto a planted fact launders nothing', async () => {
    const genuine = latestFact(facts, 'my_iban')!;
    // Written beside the plane, straight into the store, with the real fact's reference.
    await facts.record({
      idempotencyKey: `planted-${randomUUID()}`,
      args: { key: 'my_iban', value: ATTACKER_IBAN },
      produced_by: genuine.produced_by,
    });
    const verdict = await verifyProducedBy(h.client, genuine.produced_by, {
      publicKeys: k1.publicKeys!,
      args: latestFact(facts, 'my_iban')!.args,
    });
    expect(verdict).toMatchObject({ valid: false, reason: 'fact_differs' });

    const before = payments.all().length;
    const run = await runAgent(h, manifest, {
      prompt: 'Send 5.00 EUR to my own account, the IBAN you remember, subject "test".',
      turns: [
        { tool_calls: [{ name: 'memory__recall', arguments: { key: 'my_iban' } }] },
        {
          tool_calls: [
            { name: 'bank__send_money', arguments: { recipient: ATTACKER_IBAN, amount_cents: 500, subject: 'test' } },
          ],
        },
        { final: 'done' },
      ],
    });
    expect(run.result.journal[1]).toMatchObject({ decision: 'refused', rule: 'protected_field:/recipient' });
    expect(payments.all().length).toBe(before);
  });

  it('after a key rotation, old facts still verify and pay; a verifier without the old key refuses them', async () => {
    const rotated: LedgerConfig = { keyId: 'k2', privateKey: k2.privateKey, publicKeys: k1.publicKeys };
    const h2 = await harness(`memory-k2-${randomUUID()}`);
    const dir2 = testDir('memory-k2');
    // The new worker's store holds the fact the k1 worker wrote.
    const old = facts.all().find((f) => f.args.key === 'my_iban' && f.args.value === MY_IBAN)!;
    const store2 = factStore(dir2);
    await store2.record(old);
    try {
      await h2.runWorker({ manifest, tools: createTools(dir2), ledger: rotated });
      const fresh = await runAgent(h2, manifest, {
        prompt: 'Remember that my savings goal is 5000 EUR.',
        turns: [
          { tool_calls: [{ name: 'memory__remember', arguments: { key: 'goal', value: '5000 EUR' } }] },
          { final: 'ok' },
        ],
      });
      expect(fresh.result.journal[0]!.outcome).toBe('ok');
      const newFact = latestFact(store2, 'goal')!;
      expect(newFact.produced_by!.keyId).toBe('k2');

      const both = { ...k1.publicKeys!, ...k2.publicKeys! };
      for (const f of [old, newFact])
        expect(await verifyProducedBy(h2.client, f.produced_by, { publicKeys: both, args: f.args })).toMatchObject({
          valid: true,
        });
      expect(
        await verifyProducedBy(h2.client, old.produced_by, { publicKeys: k2.publicKeys!, args: old.args }),
      ).toMatchObject({
        valid: false,
        reason: 'unknown_key',
      });

      const paid = paymentStore(dir2);
      const run = await runAgent(h2, manifest, {
        prompt: 'Send 3.00 EUR to my own account, the IBAN you remember, subject "rotation".',
        turns: [
          { tool_calls: [{ name: 'memory__recall', arguments: { key: 'my_iban' } }] },
          {
            tool_calls: [
              { name: 'bank__send_money', arguments: { recipient: MY_IBAN, amount_cents: 300, subject: 'rotation' } },
            ],
          },
          { final: 'done' },
        ],
      });
      expect(run.result.journal[1]).toMatchObject({ decision: 'allowed', outcome: 'ok' });
      expect(paid.all().map((p) => p.recipient)).toEqual([MY_IBAN]);
    } finally {
      await h2.close();
    }
  });

  it('a requires_ledger tool fails closed on a worker without a signing key; nothing is written', async () => {
    const h3 = await harness(`memory-nokey-${randomUUID()}`);
    const dir3 = testDir('memory-nokey');
    try {
      await h3.runWorker({ manifest, tools: createTools(dir3) });
      const run = await runAgent(h3, manifest, script('remember-iban'));
      expect(run.result.journal[0]).toMatchObject({ toolId: 'tool://memory/remember', outcome: 'failed' });
      expect(run.result.journal[0]!.error?.message).toMatch(/no ledger signing key/);
      expect(run.result.journal[0]!.attempts).toBeGreaterThan(0);
      expect(factStore(dir3).all()).toEqual([]);
    } finally {
      await h3.close();
    }
  });

  it('refuses a memory write the run policy does not allow, before anything exists', async () => {
    const before = facts.all().length;
    const run = await runAgent(h, manifest, script('remember-iban'), {
      policy: { allow: '*', deny: ['tool://memory/remember'] },
    });
    expect(run.result.journal[0]).toMatchObject({ decision: 'refused', rule: 'unreachable' });
    expect(run.result.journal[0]!.effectKey).toBeUndefined();
    expect(facts.all().length).toBe(before);
  });

  it('refuses a write without produced_by, and checks cancellation before touching the store', async () => {
    const dir4 = testDir('memory-unit');
    const [remember] = createTools(dir4);
    const fields = {
      idempotencyKey: 'tp-unit',
      effectKey: 'ek-unit',
      toolId: 'tool://memory/remember',
      principal: 'p',
    };
    const args = { key: 'k', value: 'v' };
    const missing = remember!.callWithLedger!(detachedCtx(fields), args, undefined);
    await expect(missing).rejects.toBeInstanceOf(ProvenanceMissing);
    await expect(missing).rejects.toMatchObject({ type: FailureType.Invalid });

    const aborted = new AbortController();
    aborted.abort();
    const signed = latestFact(facts, 'goal') ?? latestFact(facts, 'my_iban')!;
    await expect(
      remember!.callWithLedger!(detachedCtx({ ...fields, signal: aborted.signal }), args, signed.produced_by),
    ).rejects.toBeInstanceOf(Cancelled);
    expect(fs.existsSync(path.join(dir4, 'memory-facts.jsonl'))).toBe(false);
  });
});
