// `verifyProducedBy`: a reference is valid only when a known key signed exactly these fields and the
// run's history holds the entry it describes; each refusal names its reason. And what a tool's Ctx
// knows of its run: identity, effect key, remaining budget.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Ctx, Tool } from '../../activities/tool';
import { ToolDecl, type Manifest } from '../../catalog/manifest';
import { loadManifest } from '../../runtime/manifest-file';
import { generateLedgerKey, LedgerSigner, loadLedgerKeyFile } from '../../ledger/keys';
import type { LedgerRef } from '../../common/ledger-ref';
import { argsDigest } from '../../ledger/ref';
import { formatVerdict, verifyProducedBy } from '../../ledger/verify';
import { createTools, factStore, latestFact, MY_IBAN } from '../../examples/memory/tools';
import { loadScript, runAgent } from '../support/agent';
import { main } from '../../cli/main';
import { harness, testAddress, testDir, type Harness } from '../support/env';

const example = path.resolve(__dirname, '..', '..', 'examples', 'memory');
const memory = loadManifest(path.join(example, 'manifest.yaml')).manifest;

const probeDecl = ToolDecl.parse({
  id: 'tool://probe/ctx',
  description: 'Reports what its Ctx knows.',
  input_schema: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
  safety: 'read_only',
  recovery: 'retry',
  egress: { destinations: ['/to'], max_bytes_per_run: 1000 },
  cost_micros: 100,
});
const manifest: Manifest = {
  ...memory,
  servers: { ...memory.servers, probe: { kind: 'in_process' } },
  tools: [...memory.tools, probeDecl],
};

describe('verifying produced_by', () => {
  const k1 = generateLedgerKey('k1');
  const stranger = generateLedgerKey('k9');
  const signer = new LedgerSigner(k1);
  const dir = testDir('verify');
  const seen: Ctx[] = [];
  const probe: Tool = {
    origin: 'builtin',
    def: () => ({
      id: probeDecl.id,
      description: probeDecl.description,
      inputSchema: probeDecl.input_schema,
      safety: 'read_only',
    }),
    async call(ctx) {
      seen.push(ctx);
      return { ok: true };
    },
  };
  let h: Harness;
  let ref: LedgerRef;
  let args: Record<string, unknown>;
  let run: { workflowId: string; runId: string; effectKey: string };

  beforeAll(async () => {
    h = await harness(`verify-${randomUUID()}`);
    await h.runWorker({ manifest, tools: [...createTools(dir), probe], ledger: k1 });
    const r = await runAgent(h, manifest, loadScript(path.join(example, 'scripts', 'remember-iban.json')));
    const fact = latestFact(factStore(dir), 'my_iban')!;
    ref = fact.produced_by!;
    args = fact.args;
    run = {
      workflowId: r.workflowId,
      runId: (await h.client.workflow.getHandle(r.workflowId).describe()).runId,
      effectKey: r.result.journal[0]!.effectKey!,
    };
  });
  afterAll(async () => {
    await h?.close();
  });

  const verify = (r: unknown, a: unknown = args) =>
    verifyProducedBy(h.client, r, { publicKeys: k1.publicKeys!, args: a });

  it('answers valid with the origin run and effect for a genuine fact', async () => {
    const v = await verify(ref);
    expect(v).toEqual({
      valid: true,
      origin: {
        ...run,
        toolId: 'tool://memory/remember',
        principal: 'agent:test',
        decision: 'allowed',
        trustedArgs: true,
        keyId: 'k1',
        completed: true,
      },
    });
    expect(formatVerdict(v)).toContain(`origin run: ${run.workflowId} (run ${run.runId})`);
    expect(formatVerdict(v)).toContain("principal:  agent:test (from the run's ticket)");
    expect(argsDigest({ key: 'my_iban', value: MY_IBAN })).toBe(ref.argsDigest);
  });

  /** The same text with one character changed (a data character: never only padding bits). */
  const flip = (text: string, at: number) => `${text.slice(0, at)}${text[at] === 'a' ? 'b' : 'a'}${text.slice(at + 1)}`;

  it('refuses a tampered reference: any changed field breaks the signature', async () => {
    for (const tampered of [
      { ...ref, trustedArgs: !ref.trustedArgs },
      { ...ref, effectKey: flip(ref.effectKey, ref.effectKey.length - 1) },
      { ...ref, decision: 'approved' as const },
      { ...ref, signature: flip(ref.signature, 10) },
    ])
      expect(await verify(tampered)).toMatchObject({ valid: false, reason: 'bad_signature' });
  });

  it('refuses a genuine reference replayed onto another fact', async () => {
    expect(await verify(ref, { key: 'my_iban', value: 'GB29NWBK60161331926819' })).toMatchObject({
      valid: false,
      reason: 'fact_differs',
    });
  });

  it('refuses a key it does not know, a run or effect that does not exist, and an entry that differs', async () => {
    const { keyId: _k, signature: _s, ...unsigned } = ref;
    const byStranger = new LedgerSigner(stranger).sign(unsigned);
    expect(await verify(byStranger)).toMatchObject({ valid: false, reason: 'unknown_key' });
    // Signed with the real key (a key holder's forgery, or a reset run): history still decides.
    expect(await verify(signer.sign({ ...unsigned, runId: randomUUID() }))).toMatchObject({
      valid: false,
      reason: 'no_such_run',
    });
    expect(await verify(signer.sign({ ...unsigned, effectKey: 'ek-0000' }))).toMatchObject({
      valid: false,
      reason: 'no_such_effect',
    });
    const other = { key: 'my_iban', value: 'GB29NWBK60161331926819' };
    expect(await verify(signer.sign({ ...unsigned, argsDigest: argsDigest(other) }), other)).toMatchObject({
      valid: false,
      reason: 'entry_differs',
    });
    expect(await verify(signer.sign({ ...unsigned, decision: 'approved' }))).toMatchObject({
      valid: false,
      reason: 'entry_differs',
    });
    expect(await verify({ workflowId: 'x' })).toMatchObject({ valid: false, reason: 'malformed' });
  });

  it("`toolplane verify` prints a stored fact's origin run and effect, and refuses a tampered copy", async () => {
    const keys = path.join(dir, 'public-keys.json');
    fs.writeFileSync(keys, JSON.stringify({ publicKeys: k1.publicKeys }));
    const genuine = path.join(dir, 'fact.json');
    const tampered = path.join(dir, 'fact-tampered.json');
    fs.writeFileSync(genuine, JSON.stringify({ args, produced_by: ref }));
    fs.writeFileSync(
      tampered,
      JSON.stringify({ args: { ...args, value: 'GB29NWBK60161331926819' }, produced_by: ref }),
    );
    const cli = async (...argv: string[]) => {
      const lines: string[] = [];
      const connect = argv[0] === 'verify' ? ['--address', testAddress()] : [];
      const code = await main(
        ['node', 'toolplane', ...argv, ...connect],
        (l) => lines.push(l),
        (l) => lines.push(l),
      );
      return { code, text: lines.join('\n') };
    };
    const ok = await cli('verify', genuine, '--public-keys', keys);
    expect(ok.code).toBe(0);
    expect(ok.text).toContain(`origin run: ${run.workflowId} (run ${run.runId})`);
    expect(ok.text).toContain(`effect:     ${run.effectKey} (tool://memory/remember, allowed)`);
    const bad = await cli('verify', tampered, '--public-keys', keys);
    expect(bad.code).toBe(1);
    expect(bad.text).toMatch(/^invalid \(fact_differs\)/);
    const json = await cli('verify', JSON.stringify({ ...ref, trustedArgs: false }), '--public-keys', keys, '--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.text.slice(0, json.text.lastIndexOf('}') + 1))).toMatchObject({
      valid: false,
      reason: 'bad_signature',
    });
    expect((await cli('verify', genuine)).code).toBe(2);

    // A key made by `ledger keygen` signs; its public file verifies what it signed and nothing else.
    const made = path.join(dir, 'k7.json');
    const madePublic = path.join(dir, 'k7-public.json');
    expect((await cli('ledger', 'keygen', 'k7', '--out', made, '--public-out', madePublic)).code).toBe(0);
    expect(fs.statSync(made).mode & 0o077).toBe(0);
    const { signing } = loadLedgerKeyFile(made);
    expect(loadLedgerKeyFile(madePublic)).toEqual({ signing: undefined, publicKeys: signing!.publicKeys });
    const { keyId: _k, signature: _s, ...unsigned } = ref;
    const byK7 = path.join(dir, 'by-k7.json');
    fs.writeFileSync(byK7, JSON.stringify({ args, produced_by: new LedgerSigner(signing!).sign(unsigned) }));
    expect((await cli('verify', byK7, '--public-keys', madePublic)).code).toBe(0);
    expect((await cli('verify', genuine, '--public-keys', madePublic)).text).toMatch(/^invalid \(unknown_key\)/);
  });

  it('gives a tool its run identity, effect key and what the run may still spend', async () => {
    seen.length = 0;
    const to = 'Ann@Example.org';
    const r = await runAgent(
      h,
      manifest,
      {
        prompt: `Probe twice for ${to}.`,
        turns: [
          { tool_calls: [{ name: 'probe__ctx', arguments: { to } }] },
          { tool_calls: [{ name: 'probe__ctx', arguments: { to } }] },
          { final: 'ok' },
        ],
      },
      { limits: { maxToolCalls: 5, maxCostMicros: 1000, deadline: '10m' } },
    );
    const handle = h.client.workflow.getHandle(r.workflowId);
    const d = await handle.describe();
    expect(seen.map((c) => [c.workflowId, c.runId, c.effectKey])).toEqual(
      r.result.journal.map((e) => [r.workflowId, d.runId, e.effectKey]),
    );
    const [first, second] = seen.map((c) => c.budget);
    expect(first).toMatchObject({ toolCalls: 4, costMicros: 900 });
    expect(second).toMatchObject({ toolCalls: 3, costMicros: 800 });
    const dest = Object.keys(first!.egressBytes!);
    expect(dest).toEqual(['ann@example.org']);
    const left1 = first!.egressBytes![dest[0]!]!;
    // The same arguments twice: the second call leaves what the first left, less the same bytes again.
    expect(left1).toBeGreaterThan(0);
    expect(left1).toBeLessThan(1000);
    expect(second!.egressBytes![dest[0]!]).toBe(left1 - (1000 - left1));
    expect(first!.deadline).toBeGreaterThanOrEqual(d.startTime.getTime() + 10 * 60_000 - 1000);
    expect(first!.deadline).toBe(second!.deadline);
  });
});
