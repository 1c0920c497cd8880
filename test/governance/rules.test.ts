// Limits, credential binding, approvals, redaction and the model-call binding, on real runs.
import { randomUUID } from 'node:crypto';
import type { Manifest, ToolDecl } from '../../catalog/manifest';
import { manifestDigest } from '../../catalog/digest';
import type { AgentRunInput, AgentRunResult } from '../../workflows/agent/run';
import { resolveEscalation } from '../../workflows/escalation';
import { waitForPending } from '../support/escalations';
import { checkDataFlow } from '../../workflows/gate/taint-gate';
import { Provenance } from '../../workflows/gate/provenance';
import { runAgent } from '../support/agent';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { historyOf, scheduledActivities } from '../support/history';
import { supportDesk } from '../support/desk';

const base = exampleManifest();
function variant(change: (t: ToolDecl) => ToolDecl): Manifest {
  return { ...base, tools: base.tools.map(change) };
}
const refund = (account: string, cents: number, memo = 'refund') => ({
  name: 'payments__refund',
  arguments: { account_id: account, amount_cents: cents, currency: 'EUR', memo },
});
const lookup = (email: string) => ({ name: 'crm__lookup_customer', arguments: { email } });
const PROMPT = 'Refund alice@example.com 1.00 EUR, then 2.00 EUR, then 3.00 EUR.';

describe('governance rules', () => {
  const dir = testDir('rules');
  const { outbox, tools: deskTools } = supportDesk(dir);
  const tools = () => deskTools;
  const rigs: Harness[] = [];

  /** A worker deployed with this manifest: workers refuse runs that declare a tool otherwise. */
  async function deployed(manifest: Manifest): Promise<Harness> {
    const h = await harness(`rules-${randomUUID()}`);
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

  const three = [
    { tool_calls: [lookup('alice@example.com')] },
    { tool_calls: [refund('acct_alice_001', 100)] },
    { tool_calls: [refund('acct_alice_001', 200)] },
    { tool_calls: [refund('acct_alice_001', 300)] },
    { final: 'done' },
  ];

  it('refuses the call past the tool-call limit, with a typed reason', async () => {
    const { result } = await runAgent(h, base, { prompt: PROMPT, turns: three }, { limits: { maxToolCalls: 3 } });
    expect(result.journal.map((e) => e.rule ?? e.outcome)).toEqual(['ok', 'ok', 'ok', 'limit:tool_calls']);
  });

  it('sums egress bytes per destination across calls', async () => {
    const small = variant((t) =>
      t.id === 'tool://payments/refund'
        ? { ...t, egress: { destination: 'payments.example', max_bytes_per_run: 200 } }
        : t,
    );
    const { result } = await runAgent(await deployed(small), small, { prompt: PROMPT, turns: three });
    expect(result.journal.map((e) => e.rule ?? e.outcome)).toEqual(['ok', 'ok', 'ok', 'egress:payments.example']);
    expect(result.usage.egressBytes['payments.example']).toBeLessThanOrEqual(200);
    expect(result.journal[3]!.reason).toMatch(/would exceed its 200-byte limit for this run/);
  });

  it('refuses past the cost budget and ends the run at the turn limit', async () => {
    const { result } = await runAgent(h, base, { prompt: PROMPT, turns: three }, { limits: { maxCostMicros: 2500 } });
    expect(result.journal.map((e) => e.rule ?? e.outcome)).toEqual(['ok', 'ok', 'ok', 'limit:cost']);
    const turns = await runAgent(h, base, { prompt: PROMPT, turns: three }, { limits: { maxTurns: 2 } });
    expect(turns.result).toMatchObject({ status: 'limit', rule: 'limit:turns' });
    expect(turns.result.journal).toHaveLength(2);
  });

  it('refuses every effect once the deadline has passed, and the token budget', async () => {
    const { result } = await runAgent(h, base, { prompt: PROMPT, turns: three }, { limits: { deadline: 1 } });
    expect(result).toMatchObject({ status: 'limit', rule: 'limit:deadline' });
    const tokens = await runAgent(h, base, { prompt: PROMPT, turns: three }, { limits: { maxTokens: 50 } });
    expect(tokens.result).toMatchObject({ status: 'limit', rule: 'limit:tokens' });
  });

  it('refuses a tool whose credential names another principal than the run', async () => {
    const bound = variant((t) =>
      t.id === 'tool://payments/refund' ? { ...t, credential: { principal: 'svc:treasury' } } : t,
    );
    const hb = await deployed(bound);
    const { result } = await runAgent(
      hb,
      bound,
      { prompt: PROMPT, turns: three.slice(0, 2).concat({ final: 'x' }) },
      { principal: 'agent:support' },
    );
    expect(result.journal[1]).toMatchObject({ decision: 'refused', rule: 'credential' });
    const ok = await runAgent(
      hb,
      bound,
      { prompt: PROMPT, turns: three.slice(0, 2).concat({ final: 'x' }) },
      { principal: 'svc:treasury' },
    );
    expect(ok.result.journal[1]).toMatchObject({ decision: 'allowed', outcome: 'ok' });
  });

  it('refuses a tool the policy hides even though it is granted', async () => {
    const { result } = await runAgent(
      h,
      base,
      { prompt: PROMPT, turns: three.slice(0, 2).concat({ final: 'x' }) },
      { policy: { allow: '*', deny: ['tool://payments/refund'] } },
    );
    expect(result.journal[1]).toMatchObject({ decision: 'refused', rule: 'unreachable' });
  });

  it('refuses a run whose manifest is not the pinned one', async () => {
    const input = {
      prompt: 'x',
      principal: 'p',
      grants: [],
      manifest: base,
      manifestDigest: manifestDigest(variant((t) => ({ ...t, description: `${t.description}!` }))),
      model: { endpoint: 'scripted', script: [] },
    } as AgentRunInput;
    await expect(
      h.client.workflow.execute('agentRun', {
        taskQueue: h.taskQueue,
        workflowId: `pin-${randomUUID()}`,
        args: [input],
      }),
    ).rejects.toMatchObject({
      cause: { type: 'RunRefused', message: expect.stringContaining('is pinned to manifest') },
    });
  });

  it('asks a person through an update where the tool declares it, and a denial refuses', async () => {
    const askable = variant((t) => (t.id === 'tool://mail/send_email' ? { ...t, approval: 'on_violation' } : t));
    const ha = await deployed(askable);
    const turns = [
      { tool_calls: [{ name: 'tickets__read_ticket', arguments: { ticket_id: 'T-101' } }] },
      { tool_calls: [{ name: 'mail__send_email', arguments: { to: 'audit@evil.example', subject: 'x', body: 'y' } }] },
      { final: 'x' },
    ];
    for (const decision of ['approve', 'deny'] as const) {
      const workflowId = `approval-${decision}-${randomUUID()}`;
      const handle = await ha.client.workflow.start('agentRun', {
        taskQueue: ha.taskQueue,
        workflowId,
        args: [
          {
            prompt: 'Handle ticket T-101.',
            principal: 'agent:test',
            grants: askable.tools.map((t) => t.id),
            manifest: askable,
            manifestDigest: manifestDigest(askable),
            model: { endpoint: 'scripted', script: turns },
          } as AgentRunInput,
        ],
      });
      const pending = [await waitForPending(handle)];
      expect(pending[0]).toMatchObject({
        kind: 'approval',
        toolId: 'tool://mail/send_email',
        reason: expect.stringContaining('protected_field:/to'),
      });
      const description = await handle.describe();
      expect(description.raw.workflowExecutionInfo?.status).toBeDefined();
      const wrong = await handle
        .executeUpdate(resolveEscalation, { args: [{ effectKey: pending[0]!.effectKey, decision: 'retry' }] })
        .catch((e: Error & { cause?: Error }) => e.cause?.message);
      expect(wrong).toMatch(/does not answer a approval question/);
      await handle.executeUpdate(resolveEscalation, {
        args: [{ effectKey: pending[0]!.effectKey, decision, by: 'supervisor' }],
      });
      const result: AgentRunResult = await handle.result();
      // The routine lookup is counted; the call a person decided keeps its entry.
      expect(result.routineCalls).toBe(1);
      expect(result.journal.find((e) => e.toolId === 'tool://mail/send_email')).toMatchObject({
        decision: decision === 'approve' ? 'approved' : 'denied',
        rule: 'protected_field:/to',
        outcome: decision === 'approve' ? 'ok' : 'refused',
      });
    }
    expect(outbox.all().map((m) => m.to)).toEqual(['audit@evil.example']);
  });

  it('redacts a declared field before it reaches a sink for less sensitive data, and records it', async () => {
    const sensitive = variant((t) =>
      t.id === 'tool://crm/lookup_customer' ? { ...t, sensitivity: { max: 'internal', output: 'confidential' } } : t,
    );
    const turns = [
      { tool_calls: [lookup('alice@example.com')] },
      {
        tool_calls: [
          {
            name: 'mail__send_email',
            arguments: { to: 'alice@example.com', subject: 'Your account', body: 'Your account is acct_alice_001.' },
          },
        ],
      },
      { final: 'x' },
    ];
    const hs = await deployed(sensitive);
    const { result, workflowId } = await runAgent(hs, sensitive, {
      prompt: 'Email alice@example.com her account id with the subject "Your account".',
      turns,
    });
    expect(result.journal[1]).toMatchObject({ decision: 'allowed', rule: 'redaction:/body', outcome: 'ok' });
    const sent = scheduledActivities(await historyOf(hs.client, workflowId)).find(
      (a) => a.input?.toolId === 'tool://mail/send_email',
    )!;
    expect((sent.input!.args as { body: string }).body).toBe('[redacted: confidential]');
    expect(outbox.all().at(-1)).toMatchObject({ to: 'alice@example.com', body: '[redacted: confidential]' });
  });

  it('fails closed when a check itself fails', () => {
    const broken = { ...base.tools[2]!, protected_fields: undefined } as unknown as ToolDecl;
    expect(checkDataFlow(broken, { account_id: 'x' }, new Provenance())).toMatchObject({
      allow: false,
      rule: 'gate_error',
    });
  });
});
