// Worker-wide caps: the worker's manifest caps every run (and tightens per principal); a run's own
// limits only tighten the caps, never loosen them. On real runs of agentRun and of the AI SDK example.
import { randomUUID } from 'node:crypto';
import type { Manifest } from '../../catalog/manifest';
import type { PrincipalDecl } from '../../catalog/authority';
import { ActivityName } from '../../common/names';
import { capsFor } from '../../catalog/authority';
import { createAuthorizeActivities } from '../../activities/authorize';
import { TicketIssuer } from '../../activities/identity/tickets';
import { ManifestInvalid } from '../../catalog/errors';
import type { Tool } from '../../activities/tool';
import type { AgentRunInput, AgentRunResult } from '../../workflows/agent/run';
import { agentInput, runAgent } from '../support/agent';
import { aiSdkAgentInput, runAiSdkAgent, runAiSdkAgentWorker } from '../support/ai-sdk-agent';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { historyOf, scheduledActivities } from '../support/history';
import { supportDesk } from '../support/desk';
import { waitFor } from '../support/wait';

const base = exampleManifest();
const refund = (cents: number) => ({
  name: 'payments__refund',
  arguments: { account_id: 'acct_alice_001', amount_cents: cents, currency: 'EUR', memo: 'refund' },
});
const lookup = { name: 'crm__lookup_customer', arguments: { email: 'alice@example.com' } };
const PROMPT = 'Refund alice@example.com 1.00 EUR, then 2.00 EUR, then 3.00 EUR.';
const script = {
  prompt: PROMPT,
  turns: [
    { tool_calls: [lookup] },
    { tool_calls: [refund(100)] },
    { tool_calls: [refund(200)] },
    { tool_calls: [refund(300)] },
    { final: 'done' },
  ],
};
/** A principals entry with the defaults the manifest's schema gives. */
const entry = (d: Partial<PrincipalDecl> = {}): PrincipalDecl => ({
  tools: '*',
  capabilities: [],
  models: '*',
  share_facts_with: [],
  ...d,
});
const rules = (r: AgentRunResult) => r.journal.map((e) => e.rule ?? e.outcome);
const performed = async (h: Harness, workflowId: string) =>
  scheduledActivities(await historyOf(h.client, workflowId)).filter((a) => a.type === ActivityName.Perform).length;

describe('the worker caps what any run may use', () => {
  const dir = testDir('caps');
  const desk = supportDesk(dir);
  const rigs: Harness[] = [];

  async function deployed(manifest: Manifest, tools: Tool[] = desk.tools): Promise<Harness> {
    const h = await harness(`caps-${randomUUID()}`);
    await h.runWorker({ manifest, tools });
    rigs.push(h);
    return h;
  }
  afterAll(async () => {
    for (const r of rigs) await r.close();
  });

  describe('tool calls capped at 2 by the worker', () => {
    const capped: Manifest = { ...base, limits: { max_tool_calls: 2 } };
    let h: Harness;
    beforeAll(async () => {
      h = await deployed(capped);
    });

    it('refuses the third call of a run that asked for 10, with the worker’s rule, and performs two', async () => {
      const { result, workflowId } = await runAgent(h, capped, script, { limits: { maxToolCalls: 10 } });
      expect(rules(result)).toEqual(['ok', 'ok', 'worker_limit:tool_calls', 'worker_limit:tool_calls']);
      expect(result.journal[2]!.reason).toMatch(/the worker's cap: its manifest's limits\.max_tool_calls is 2/);
      expect(await performed(h, workflowId)).toBe(2);
    });

    it('caps a run that asked for no limits at all', async () => {
      const { result } = await runAgent(h, capped, script);
      expect(rules(result)).toEqual(['ok', 'ok', 'worker_limit:tool_calls', 'worker_limit:tool_calls']);
    });

    it('keeps a run’s own limit when it is tighter than the cap, under the run’s own rule', async () => {
      const { result, workflowId } = await runAgent(h, capped, script, { limits: { maxToolCalls: 1 } });
      expect(rules(result)).toEqual(['ok', 'limit:tool_calls', 'limit:tool_calls', 'limit:tool_calls']);
      expect(result.journal[1]!.reason).not.toMatch(/worker/);
      expect(await performed(h, workflowId)).toBe(1);
    });

    it('caps the AI SDK path’s governed tools too (step.scope.caps), whatever limits the workflow passes', async () => {
      const agent = await runAiSdkAgentWorker(h, { manifest: capped, tools: desk.tools });
      try {
        const { result } = await runAiSdkAgent(h, agent.taskQueue, {
          ...aiSdkAgentInput(capped, { prompt: PROMPT, turns: script.turns }),
          limits: { maxToolCalls: 10 },
        });
        expect(result.journal.map((e) => e.rule ?? e.outcome)).toEqual([
          'ok',
          'ok',
          'worker_limit:tool_calls',
          'worker_limit:tool_calls',
        ]);
        expect(result.usage.toolCalls).toBe(2);
      } finally {
        await agent.shutdown();
      }
    });
  });

  it('ends an AI SDK run at the worker’s turn cap, typed, after the model calls it allows', async () => {
    const manifest: Manifest = { ...base, limits: { max_turns: 2 } };
    const h = await deployed(manifest);
    const agent = await runAiSdkAgentWorker(h, { manifest, tools: desk.tools });
    try {
      const workflowId = `caps-ai-sdk-turns-${randomUUID()}`;
      const failure = await h.client.workflow
        .execute('aiSdkAgent', {
          taskQueue: agent.taskQueue,
          workflowId,
          args: [{ ...aiSdkAgentInput(manifest, { prompt: PROMPT, turns: script.turns }), limits: { maxTurns: 10 } }],
        })
        .then(
          () => undefined,
          (err: unknown) => (err as { cause?: { type?: string; message?: string; details?: unknown[] } }).cause,
        );
      expect(failure).toMatchObject({
        type: 'LimitReached',
        message: expect.stringMatching(/limits\.max_turns is 2/),
        details: [expect.objectContaining({ rule: 'worker_limit:turns' })],
      });
      const models = (await historyOf(h.client, workflowId)).filter(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'invokeModel',
      );
      expect(models).toHaveLength(2);
    } finally {
      await agent.shutdown();
    }
  });

  it('ends a run at the worker’s turn cap, saying it is the worker’s', async () => {
    const manifest: Manifest = { ...base, limits: { max_turns: 2 } };
    const h = await deployed(manifest);
    const { result } = await runAgent(h, manifest, script, { limits: { maxTurns: 10 } });
    expect(result).toMatchObject({ status: 'limit', rule: 'worker_limit:turns' });
    expect(result.reason).toMatch(/limits\.max_turns is 2/);
    expect(result.journal).toHaveLength(2);
  });

  it('tightens the worker-wide cap per principal, never loosens it', async () => {
    const manifest: Manifest = {
      ...base,
      limits: { max_tool_calls: 2 },
      principals: {
        'agent:intern': entry({ limits: { max_tool_calls: 1 } }),
        // Asks for more than the worker-wide cap: still held to it.
        'agent:batch': entry({ limits: { max_tool_calls: 50 } }),
        '*': entry(),
      },
    };
    const h = await deployed(manifest);
    const intern = await runAgent(h, manifest, script, { principal: 'agent:intern' });
    expect(rules(intern.result)).toEqual([
      'ok',
      'worker_limit:tool_calls',
      'worker_limit:tool_calls',
      'worker_limit:tool_calls',
    ]);
    const batch = await runAgent(h, manifest, script, { principal: 'agent:batch', limits: { maxToolCalls: 10 } });
    expect(rules(batch.result)).toEqual(['ok', 'ok', 'worker_limit:tool_calls', 'worker_limit:tool_calls']);
  });

  describe('deadline', () => {
    it('ends a run that asked for an hour at the worker’s deadline, and one that asked for less at its own', async () => {
      const manifest: Manifest = { ...base, limits: { deadline: 1 } };
      const h = await deployed(manifest);
      const capped = await runAgent(h, manifest, script, { limits: { deadline: '1h' } });
      expect(capped.result).toMatchObject({ status: 'limit', rule: 'worker_limit:deadline' });
      expect(capped.result.reason).toMatch(/limits\.deadline is 1\)/);

      const roomy: Manifest = { ...base, limits: { deadline: '1h' } };
      const h2 = await deployed(roomy);
      const own = await runAgent(h2, roomy, script, { limits: { deadline: 1 } });
      expect(own.result).toMatchObject({ status: 'limit', rule: 'limit:deadline' });
    });

    it('counts the worker’s deadline from the start of the run: the turn after it passes is not taken', async () => {
      // The lookup waits until the test lets it go, which it does once the worker's 2 s have passed.
      let entered: number | undefined;
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      const held: Tool = {
        ...desk.tools[0]!,
        async call(ctx, input) {
          entered = Date.now();
          await released;
          return desk.tools[0]!.call(ctx, input);
        },
      };
      const manifest: Manifest = { ...base, limits: { deadline: '2s' } };
      const h = await deployed(manifest, [held, ...desk.tools.slice(1)]);
      const workflowId = `caps-deadline-${randomUUID()}`;
      const input: AgentRunInput = agentInput(manifest, script, { limits: { deadline: '1h' } });
      const run = h.client.workflow.execute('agentRun', { taskQueue: h.taskQueue, workflowId, args: [input] });
      const start = await waitFor('the lookup to be called', 30_000, () => entered);
      await waitFor('the worker’s 2 s deadline to pass', 30_000, () => Date.now() > start + 2_500);
      release();
      const result: AgentRunResult = await run;
      expect(result).toMatchObject({ status: 'limit', rule: 'worker_limit:deadline' });
      expect(rules(result)).toEqual(['ok']);
    });
  });
});

describe('caps as the manifest declares them', () => {
  it('are the tighter of the worker-wide section and the principal’s entry; a subject’s groups give the loosest', () => {
    const manifest = {
      limits: { max_tool_calls: 10, deadline: '1h' },
      principals: {
        'agent:a': { limits: { max_tool_calls: 3, deadline: '2h' } },
        'group:ops': { limits: { max_tool_calls: 5, max_turns: 4 } },
        'group:dev': { limits: { max_tool_calls: 7 } },
        '*': {},
      },
    };
    expect(capsFor(manifest, { principal: 'agent:a' })).toEqual({ maxToolCalls: 3, deadline: '1h' });
    expect(capsFor(manifest, { principal: 'u', groups: ['ops'] })).toEqual({
      maxToolCalls: 5,
      maxTurns: 4,
      deadline: '1h',
    });
    // dev leaves turns uncapped: the union of the groups does too.
    expect(capsFor(manifest, { principal: 'u', groups: ['ops', 'dev'] })).toEqual({ maxToolCalls: 7, deadline: '1h' });
    expect(capsFor(manifest, { principal: 'other' })).toEqual({ maxToolCalls: 10, deadline: '1h' });
    expect(capsFor({}, { principal: 'other' })).toBeUndefined();
  });

  it('refuse a worker whose manifest declares a bad cap, typed', () => {
    const tickets = new TicketIssuer(Buffer.alloc(32, 1));
    const bad = (m: Partial<Manifest>) => () => createAuthorizeActivities({ manifest: { ...base, ...m }, tickets });
    expect(bad({ limits: { max_tool_calls: -1 } })).toThrow(ManifestInvalid);
    expect(bad({ limits: { deadline: '0s' } })).toThrow(/limits\.deadline: must be longer than zero/);
    expect(bad({ principals: { a: entry({ limits: { max_turns: 1.5 } }) } })).toThrow(
      /principals\["a"\]\.limits\.max_turns/,
    );
    expect(bad({ limits: { max_tool_calls: 2 } })).not.toThrow();
  });
});
