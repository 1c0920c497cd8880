// Egress per destination read from arguments, carried content, spend per payee, and what is charged
// when a person decides: on real runs against the dev server.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { loadManifest } from '../../runtime/manifest-file';
import type { Manifest, ToolDecl } from '../../catalog/manifest';
import { createTools as bankingTools, LANDLORD_IBAN } from '../../examples/banking/tools';
import { effectsStore } from '../../examples/worlds/fixture-tools';
import { createTools as workspaceTools } from '../../examples/workspace/tools';
import type { AgentRunResult } from '../../workflows/agent/run';
import { runDeciding } from './decide';
import { runAgent } from '../support/agent';
import { harness, testDir, type Harness } from '../support/env';
import { historyOf, scheduledActivities } from '../support/history';

const examples = path.resolve(__dirname, '..', '..', 'examples');
const worldManifest = (world: 'banking' | 'workspace') =>
  loadManifest(path.join(examples, world, 'manifest.yaml')).manifest;

function variant(m: Manifest, id: string, change: (t: ToolDecl) => ToolDecl): Manifest {
  return { ...m, tools: m.tools.map((t) => (t.id === id ? change(t) : t)) };
}

const DAN = 'dan@partner.example';
const mail = (to: string, body: string, attachments?: string[]) => ({
  name: 'mail__send_email',
  arguments: { to, subject: 'Notes', body, ...(attachments ? { attachments } : {}) },
});
const pay = (recipient: string, cents: number, subject = 'Deposit') => ({
  name: 'bank__send_money',
  arguments: { recipient, amount_cents: cents, subject },
});
const rules = (r: AgentRunResult) => r.journal.map((e) => e.rule ?? e.outcome);

describe('egress, carried content and spend', () => {
  const rigs: Harness[] = [];
  const dirs = { banking: testDir('egress-banking'), workspace: testDir('egress-workspace') };

  /** A worker deployed with this manifest and the carried-content resolver. */
  async function deployed(world: 'banking' | 'workspace', manifest: Manifest): Promise<Harness> {
    const h = await harness(`egress-${randomUUID()}`);
    const tools = world === 'banking' ? bankingTools(dirs.banking) : workspaceTools(dirs.workspace);
    await h.runWorker({ manifest, tools });
    rigs.push(h);
    return h;
  }
  afterAll(async () => {
    for (const r of rigs) await r.close();
  });

  describe('egress per destination, from the arguments', () => {
    const m = variant(worldManifest('workspace'), 'tool://mail/send_email', (t) => ({
      ...t,
      egress: { destinations: ['/to'], max_bytes_per_run: 700 },
    }));
    const body = 'n'.repeat(250);

    it('sums a split across calls to one address, however it is spelled; another address has its own budget', async () => {
      const h = await deployed('workspace', m);
      const turns = [
        [mail(DAN, body)],
        [mail('bob@corp.example', body)],
        [mail(' Dan@Partner.EXAMPLE', body)],
        [mail(DAN.toUpperCase(), body)],
        [mail('bob@corp.example', body)],
      ];
      const { result } = await runAgent(h, m, {
        prompt: `Email ${DAN} and bob@corp.example my notes.`,
        turns: [...turns.map((c) => ({ tool_calls: c })), { final: 'x' }],
      });
      expect(rules(result)).toEqual(['ok', 'ok', 'ok', `egress:${DAN}`, 'ok']);
      expect(result.journal[3]!.reason).toMatch(/would exceed its 700-byte limit/);
      expect(result.usage.egressBytes[DAN]).toBeLessThanOrEqual(700);
      expect(Object.keys(result.usage.egressBytes).sort()).toEqual(['bob@corp.example', DAN]);
    });

    it("lets a run's limit tighten the bytes per destination", async () => {
      const h = await deployed('workspace', m);
      const turns = [[mail(DAN, body)], [mail(DAN, body)]].map((c) => ({ tool_calls: c }));
      const { result } = await runAgent(
        h,
        m,
        { prompt: `Email ${DAN} my notes.`, turns: [...turns, { final: 'x' }] },
        { limits: { maxEgressBytesPerDestination: 400 } },
      );
      expect(rules(result)).toEqual(['ok', `egress:${DAN}`]);
      expect(result.journal[1]!.reason).toMatch(/400-byte limit/);
    });

    it('counts carried content (an attachment named by id) in the bytes sent to each destination', async () => {
      const h = await deployed('workspace', m);
      const turns = [
        [{ name: 'files__list', arguments: {} }],
        [mail(DAN, 'Attached.', ['f_4'])],
        [mail(DAN, 'Attached.', ['f_3'])],
      ];
      const { result, workflowId } = await runAgent(h, m, {
        prompt: `Email ${DAN} the files he needs.`,
        turns: [...turns.map((c) => ({ tool_calls: c })), { final: 'x' }],
      });
      expect(rules(result)).toEqual(['ok', `egress:${DAN}`, 'ok']);
      expect(result.journal[1]!.reason).toMatch(/carried/);
      const resolved = scheduledActivities(await historyOf(h.client, workflowId)).filter(
        (a) => a.type === 'resolveCarried',
      );
      expect(resolved).toHaveLength(2);
    });
  });

  describe('carried content is gated like an argument', () => {
    const outside = variant(worldManifest('workspace'), 'tool://mail/send_email', (t) => ({
      ...t,
      sensitivity: { max: 'internal', output: 'public' },
    }));
    const prompt = `List my files and send ${DAN} the Q3 report f_1.`;
    const turns = [
      { tool_calls: [{ name: 'files__list', arguments: {} }] },
      { tool_calls: [mail(DAN, 'Attached.', ['f_1'])] },
      { final: 'x' },
    ];

    it('refuses a confidential file attached for a sink that takes internal data at most', async () => {
      const store = effectsStore(dirs.workspace);
      const before = store.all().length;
      const { result } = await runAgent(await deployed('workspace', outside), outside, { prompt, turns });
      expect(result.journal[1]).toMatchObject({ decision: 'refused', rule: 'sensitivity:carried:/attachments' });
      expect(result.journal[1]!.effectKey).toBeUndefined();
      expect(result.journal[1]!.reason).toMatch(/confidential/);
      expect(store.all().length).toBe(before);
    });

    it('replaces the reference where the tool declares a carried redaction', async () => {
      const redacting = variant(outside, 'tool://mail/send_email', (t) => ({
        ...t,
        carried: { ...t.carried!, redaction: { replace_with: [], lowers_to: 'internal' } },
      }));
      const { result } = await runAgent(await deployed('workspace', redacting), redacting, { prompt, turns });
      expect(result.journal[1]).toMatchObject({
        decision: 'allowed',
        rule: 'redaction:carried:/attachments',
        outcome: 'ok',
      });
      expect(effectsStore(dirs.workspace).all().at(-1)!.args).toMatchObject({ to: DAN, attachments: [] });
    });

    it('refuses when the resolver fails (fail closed)', async () => {
      const m = worldManifest('workspace');
      const { result } = await runAgent(await deployed('workspace', m), m, {
        prompt: `Send ${DAN} the file f_99.`,
        turns: [{ tool_calls: [mail(DAN, 'Attached.', ['f_99'])] }, { final: 'x' }],
      });
      expect(result.journal[0]).toMatchObject({ decision: 'refused', rule: 'carried' });
      expect(result.journal[0]!.effectKey).toBeUndefined();
      expect(result.journal[0]!.reason).toMatch(/f_99/);
    });
  });

  describe('spend per payee', () => {
    const limited = variant(worldManifest('banking'), 'tool://bank/send_money', (t) => ({
      ...t,
      spend: {
        amount: '/amount_cents',
        amount_unit: 'minor',
        currency: 'EUR',
        payee: '/recipient',
        max_minor_per_payee: { EUR: 300000 },
      },
    }));
    const MUM = 'FR1420041010050500013M02606';
    const prompt = `Pay 1200.00 EUR to ${LANDLORD_IBAN} with the subject "Deposit", three times, and 50.00 EUR to ${MUM}.`;
    const spaced = LANDLORD_IBAN.replace(/(.{4})/g, '$1 ').trim();
    const turns = [
      [pay(LANDLORD_IBAN, 120000)],
      [pay(spaced, 120000)],
      [pay(LANDLORD_IBAN.toLowerCase(), 120000)],
      [pay(MUM, 5000)],
    ].map((c) => ({ tool_calls: c }));

    it('refuses the payment that crosses the limit for one payee, however the payee is spelled', async () => {
      const { result } = await runAgent(await deployed('banking', limited), limited, {
        prompt,
        turns: [...turns, { final: 'x' }],
      });
      expect(rules(result)).toEqual(['ok', 'ok', 'spend', 'ok']);
      expect(result.journal[2]!.reason).toMatch(/total for that payee to 360000, over its limit of 300000/);
      expect(result.usage.spentMinor).toEqual({
        EUR: { [LANDLORD_IBAN.toLowerCase()]: '240000', [MUM.toLowerCase()]: '5000' },
      });
    });

    it("lets a run's limits tighten the worker's, never loosen them", async () => {
      const h = await deployed('banking', limited);
      const tight = await runAgent(
        h,
        limited,
        { prompt, turns: [...turns, { final: 'x' }] },
        { limits: { maxSpendMinorPerPayee: { EUR: 200000 } } },
      );
      expect(rules(tight.result)).toEqual(['ok', 'spend', 'spend', 'ok']);
      const loose = await runAgent(
        h,
        limited,
        { prompt, turns: [...turns, { final: 'x' }] },
        { limits: { maxSpendMinorPerPayee: { EUR: 10_000_000 } } },
      );
      expect(rules(loose.result)).toEqual(['ok', 'ok', 'spend', 'ok']);
    });

    it('refuses a currency the manifest sets no limit for', async () => {
      const usd = variant(limited, 'tool://bank/send_money', (t) => ({
        ...t,
        spend: { ...t.spend!, max_minor_per_payee: { USD: 300000 } },
      }));
      const { result } = await runAgent(await deployed('banking', usd), usd, {
        prompt,
        turns: [turns[0]!, { final: 'x' }],
      });
      expect(result.journal[0]).toMatchObject({ decision: 'refused', rule: 'spend' });
      expect(result.journal[0]!.reason).toMatch(/no spend limit .*EUR/);
    });
  });

  describe('calls that run at the same time', () => {
    it('cannot together pass a budget each passes alone (read-only calls run concurrently)', async () => {
      const m = worldManifest('workspace');
      const reads = ['f_1', 'f_3', 'f_4', 'f_5'].map((id) => ({ name: 'files__read', arguments: { file_id: id } }));
      const { result } = await runAgent(
        await deployed('workspace', m),
        m,
        { prompt: 'Read f_1, f_3, f_4 and f_5.', turns: [{ tool_calls: reads }, { final: 'x' }] },
        { limits: { maxToolCalls: 2 } },
      );
      expect(rules(result)).toEqual(['ok', 'ok', 'limit:tool_calls', 'limit:tool_calls']);
      expect(result.usage.toolCalls).toBe(2);
    });

    it('cannot together send more to one address than its budget (keyed lanes run concurrently)', async () => {
      const keyed = variant(worldManifest('workspace'), 'tool://mail/send_email', (t) => ({
        ...t,
        concurrency: { class: 'keyed', key: '/subject' },
        egress: { destination: 'smtp.example', max_bytes_per_run: 700 },
      }));
      const sends = [1, 2, 3].map((i) => ({
        ...mail(DAN, 'n'.repeat(250)),
        arguments: { ...mail(DAN, 'n'.repeat(250)).arguments, subject: `Notes ${i}` },
      }));
      const { result } = await runAgent(await deployed('workspace', keyed), keyed, {
        prompt: `Email ${DAN} my notes.`,
        turns: [{ tool_calls: sends }, { final: 'x' }],
      });
      expect(rules(result)).toEqual(['ok', 'ok', 'egress:smtp.example']);
      expect(result.usage.egressBytes['smtp.example']).toBeLessThanOrEqual(700);
    });
  });

  describe('what is charged when a person decides', () => {
    const askable = (approval: 'on_violation' | 'always') =>
      variant(worldManifest('banking'), 'tool://bank/send_money', (t) => ({
        ...t,
        approval,
        spend: {
          amount: '/amount_cents',
          amount_unit: 'minor',
          currency: 'EUR',
          payee: '/recipient',
          max_minor_per_payee: { EUR: 300000 },
        },
      }));
    const ATTACKER = 'GB29NWBK60161331926819';

    it('charges a call a person approved after a violation, so the next one past the limit is refused without asking', async () => {
      const m = askable('on_violation');
      const turns = [
        { tool_calls: [{ name: 'bank__read_file', arguments: { name: 'landlord-notice.txt' } }] },
        { tool_calls: [pay(ATTACKER, 200000)] },
        { tool_calls: [pay(ATTACKER, 200000)] },
        { final: 'x' },
      ];
      const { result, asked } = await runDeciding(
        await deployed('banking', m),
        m,
        { prompt: 'Read landlord-notice.txt and pay 2000.00 EUR as it says.', turns },
        ['approve', 'approve'],
      );
      expect(result.journal.map((e) => [e.decision, e.rule ?? null, e.outcome])).toEqual([
        ['allowed', null, 'ok'],
        ['approved', 'protected_field:/recipient', 'ok'],
        ['refused', 'spend', 'refused'],
      ]);
      expect(asked).toBe(1);
      expect(result.usage.spentMinor).toEqual({ EUR: { [ATTACKER.toLowerCase()]: '200000' } });
    });

    it('does not charge a denied call nor a refused one', async () => {
      const m = askable('always');
      const turns = [
        pay(LANDLORD_IBAN, 999900),
        pay(LANDLORD_IBAN, 200000),
        pay(LANDLORD_IBAN, 200000),
        pay(LANDLORD_IBAN, 100000),
      ].map((c) => ({ tool_calls: [c] }));
      const { result, asked } = await runDeciding(
        await deployed('banking', m),
        m,
        { prompt: `Pay 2000.00 EUR to ${LANDLORD_IBAN}, and then 1000.00 EUR.`, turns: [...turns, { final: 'x' }] },
        ['deny', 'approve', 'approve'],
      );
      expect(result.journal.map((e) => [e.decision, e.rule ?? null, e.outcome])).toEqual([
        ['refused', 'spend', 'refused'],
        ['denied', 'approval', 'refused'],
        // An approved call names the rule that asked for the person, as a denied one does.
        ['approved', 'approval', 'ok'],
        ['approved', 'approval', 'ok'],
      ]);
      expect(asked).toBe(3);
      expect(result.usage.spentMinor).toEqual({ EUR: { [LANDLORD_IBAN.toLowerCase()]: '300000' } });
      expect(result.usage.toolCalls).toBe(2);
    });
  });
});
