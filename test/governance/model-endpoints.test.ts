// Attack 5 (issue 21): a principal with no grant for the worker's paid endpoint runs it with the
// worker's key. Reproduced on both paths — agentRun's model turns and a workflow's own `generateText`
// through @temporalio/ai-sdk — and refused, typed (ModelRefused), before any request reaches the
// endpoint (a real HTTP server that records what it is sent); a granted principal gets its answers.
import { randomUUID } from 'node:crypto';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import { Worker } from '@temporalio/worker';
import { ToolplanePlugin } from '../../plugin';
import type { PrincipalDecl } from '../../catalog/authority';
import type { Manifest } from '../../catalog/manifest';
import { createTools } from '../../examples/support-desk/tools';
import type { AgentRunInput, AgentRunResult } from '../../workflows/agent/run';
import type { ModelCallInput } from '../support/ai-sdk-workflows';
import { aiSdkAgentBundle, runAiSdkAgent, runAiSdkAgentWorker } from '../support/ai-sdk-agent';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { startFakeChat, type ChatRequest, type Reply } from '../support/fake-chat';
import { historyOf } from '../support/history';

const entry = (d: Partial<PrincipalDecl> = {}): PrincipalDecl => ({
  tools: '*',
  capabilities: [],
  models: '*',
  share_facts_with: [],
  ...d,
});

/** Looks the customer up, then answers with what the lookup returned; a bare prompt gets a greeting. */
function answer(req: ChatRequest): Reply {
  if (!req.body.tools?.length) return { content: 'Hello from the paid endpoint.' };
  const toolResults = req.body.messages.filter((m) => m.role === 'tool');
  return toolResults.length === 0
    ? { tool_calls: [{ id: 'call_1', name: 'crm__lookup_customer', arguments: '{"email": "chen@example.com"}' }] }
    : { content: `Chen's account is ${JSON.parse(toolResults[0]!.content!).account_id}.` };
}

/** The type of the typed refusal somewhere in a failure's cause chain. */
function refusalOf(err: unknown): { type?: string; message?: string } | undefined {
  for (let e = err as { cause?: unknown; type?: string; message?: string } | undefined; e; e = e.cause as typeof e)
    if (e.type) return { type: e.type, message: e.message };
  return undefined;
}

describe('model endpoints per principal (attack 5)', () => {
  let h: Harness;
  let paid: Awaited<ReturnType<typeof startFakeChat>>;
  let agent: Awaited<ReturnType<typeof runAiSdkAgentWorker>>;
  let manifest: Manifest;
  const KEY = `sk-paid-${randomUUID()}`;

  beforeAll(async () => {
    paid = await startFakeChat(answer);
    process.env.TOOLPLANE_TEST_PAID_KEY = KEY;
    process.env.TOOLPLANE_STORE_DIR = testDir('endpoints');
    const base = exampleManifest();
    manifest = {
      ...base,
      models: {
        paid: {
          provider: 'openai-compatible',
          base_url: paid.baseUrl,
          api_key_env: 'TOOLPLANE_TEST_PAID_KEY',
          models: ['gpt-paid'],
        },
        scripted: { provider: 'scripted' },
      },
      principals: {
        'agent:desk': entry({ models: ['paid'] }),
        // Every tool, but no endpoint but the free one.
        'agent:free': entry({ models: ['scripted'] }),
      },
    };
    h = await harness(`endpoints-${randomUUID()}`);
    await h.runWorker({ manifest, tools: createTools() });
    agent = await runAiSdkAgentWorker(h, { manifest, tools: createTools() });
  });
  afterAll(async () => {
    await agent?.shutdown();
    await h?.close();
    await paid?.close();
  });

  const failed = async (run: Promise<unknown>) =>
    run.then(
      () => undefined,
      (err: unknown) => refusalOf(err),
    );

  describe('on the agent path', () => {
    it.each([
      ['a principal whose entry grants no endpoint but another', 'agent:free'],
      ['a principal the manifest does not name', 'agent:stranger'],
    ])('refuses %s the paid endpoint before any model turn', async (_what, principal) => {
      const before = paid.requests.length;
      const workflowId = `paid-${randomUUID()}`;
      const input: AgentRunInput = { prompt: 'hi', principal, model: { endpoint: 'paid' } };
      const refusal = await failed(
        h.client.workflow.execute('agentRun', { taskQueue: h.taskQueue, workflowId, args: [input] }),
      );
      expect(refusal).toMatchObject({
        type: 'ModelRefused',
        message: expect.stringMatching(/may not use model endpoint "paid"/),
      });
      expect(paid.requests.length).toBe(before);
      const scheduled = (await historyOf(h.client, workflowId)).filter((e) => e.activityTaskScheduledEventAttributes);
      expect(scheduled).toEqual([]);
    });

    it('answers a principal granted the endpoint (benign control), with the worker’s key', async () => {
      const before = paid.requests.length;
      const input: AgentRunInput = {
        prompt: "What is chen@example.com's account?",
        principal: 'agent:desk',
        grants: ['tool://crm/lookup_customer'],
        model: { endpoint: 'paid', model: 'gpt-paid' },
      };
      const result: AgentRunResult = await h.client.workflow.execute('agentRun', {
        taskQueue: h.taskQueue,
        workflowId: `paid-${randomUUID()}`,
        args: [input],
      });
      expect(result).toMatchObject({ status: 'completed', answer: "Chen's account is acct_chen_003." });
      expect(paid.requests.slice(before).map((r) => r.auth)).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);
    });
  });

  describe('on the AI SDK path', () => {
    const modelCall = (input: ModelCallInput, workflowId = `ai-sdk-paid-${randomUUID()}`) =>
      h.client.workflow.execute('modelCall', { taskQueue: agent.taskQueue, workflowId, args: [input] }) as Promise<{
        text: string;
        mac?: string;
      }>;

    it('refuses a principal without the grant that asks for the endpoint: the worker decides at open', async () => {
      const before = paid.requests.length;
      for (const principal of ['agent:free', 'agent:stranger']) {
        const refusal = await failed(modelCall({ principal, modelId: 'paid/gpt-paid', ask: true, via: 'governed' }));
        expect(refusal).toMatchObject({ type: 'ModelRefused' });
        // The example agent, the same way.
        const example = await failed(
          runAiSdkAgent(h, agent.taskQueue, { prompt: 'hi', principal, model: 'paid/gpt-paid' }),
        );
        expect(example).toMatchObject({
          type: 'ModelRefused',
          message: expect.stringMatching(/may not use model endpoint "paid"/),
        });
      }
      expect(paid.requests.length).toBe(before);
    });

    it('refuses a model id the workflow names outside the manifest, or with no ticket, or with another run’s', async () => {
      const before = paid.requests.length;
      // Granted, asked for, answered: the benign control, and the MAC a thief would read from its history.
      const granted = await modelCall({
        principal: 'agent:desk',
        modelId: 'paid/gpt-paid',
        ask: true,
        via: 'governed',
      });
      expect(granted.text).toBe('Hello from the paid endpoint.');
      expect(paid.requests.length).toBe(before + 1);
      expect(paid.requests.at(-1)!.auth).toBe(`Bearer ${KEY}`);
      // What went to the endpoint carries no ticket.
      expect(JSON.stringify(paid.requests.at(-1)!.body)).not.toContain(granted.mac!);

      const attempts: [string, ModelCallInput, RegExp][] = [
        [
          // The plugin's own provider, no ticket: the worker's provider checks every call.
          'no ticket',
          { principal: 'agent:free', modelId: 'paid/gpt-paid', via: 'raw' },
          /model:paid refused: the request carries no ticket this worker issued/,
        ],
        [
          'a granted run’s MAC, presented by another run',
          {
            principal: 'agent:free',
            modelId: 'paid/gpt-paid',
            via: 'raw',
            presented: { principal: 'agent:desk', ticket: granted.mac! },
          },
          /model:paid refused/,
        ],
        [
          // Not asked for at open, so the ticket holds no permit: refused in the workflow, no activity.
          'a governed model the run never asked for',
          { principal: 'agent:desk', modelId: 'paid/gpt-paid', via: 'governed' },
          /holds no permit for model endpoint "paid"/,
        ],
        [
          'a model id outside the manifest (the old AI SDK path)',
          { principal: 'agent:desk', modelId: 'gpt-paid', via: 'raw' },
          /model:gpt-paid refused/,
        ],
      ];
      for (const [what, input, reason] of attempts) {
        const refusal = await failed(modelCall(input));
        expect({ what, refusal }).toEqual({
          what,
          refusal: { type: 'ModelRefused', message: expect.stringMatching(reason) },
        });
      }
      expect(paid.requests.length).toBe(before + 1);
    });

    it('refuses a model the endpoint does not serve even under the run’s own ticket', async () => {
      const before = paid.requests.length;
      // The run asks for the endpoint's default model; its workflow then names another one of the same endpoint.
      const refusal = await failed(
        modelCall({ principal: 'agent:desk', modelId: 'paid/gpt-expensive', ask: true, via: 'governed' }),
      );
      expect(refusal).toMatchObject({
        type: 'ModelRefused',
        message: expect.stringMatching(/does not serve "gpt-expensive"/),
      });
      expect(paid.requests.length).toBe(before);
    });

    it('runs the example agent on the paid endpoint for a granted principal (benign control)', async () => {
      const before = paid.requests.length;
      const { result } = await runAiSdkAgent(h, agent.taskQueue, {
        prompt: "What is chen@example.com's account?",
        principal: 'agent:desk',
        grants: ['tool://crm/lookup_customer'],
        model: 'paid/gpt-paid',
      });
      expect(result.text).toBe("Chen's account is acct_chen_003.");
      expect(result.journal.map((e) => [e.toolId, e.outcome])).toEqual([['tool://crm/lookup_customer', 'ok']]);
      expect(paid.requests.length).toBe(before + 2);
    });
  });

  it('guards the AI SDK plugin’s model activities on a toolplane worker wired with a provider of its own', async () => {
    // The mistake the guard is for: the plugin given the endpoint's provider directly, not modelProvider().
    const taskQueue = `${h.taskQueue}-raw-provider`;
    const worker = await Worker.create({
      connection: h.native,
      taskQueue,
      workflowBundle: await aiSdkAgentBundle(),
      plugins: [
        new ToolplanePlugin({ manifest, tools: createTools(), insecureAssertedPrincipals: true }),
        new AiSdkPlugin({
          modelProvider: createOpenAICompatible({ name: 'paid', baseURL: paid.baseUrl, apiKey: KEY }),
        }),
      ],
    });
    const done = worker.run();
    try {
      const call = (input: ModelCallInput) =>
        h.client.workflow.execute('modelCall', { taskQueue, workflowId: `raw-${randomUUID()}`, args: [input] });
      const before = paid.requests.length;
      for (const modelId of ['gpt-paid', 'paid/gpt-paid'])
        expect(await failed(call({ principal: 'agent:free', modelId, via: 'raw' }))).toMatchObject({
          type: 'ModelRefused',
          message: expect.stringMatching(/refused: the request carries no ticket this worker issued/),
        });
      expect(paid.requests.length).toBe(before);
      // Under the run's ticket the call goes ahead (benign control).
      await expect(
        call({ principal: 'agent:desk', modelId: 'paid/gpt-paid', ask: true, via: 'governed' }),
      ).resolves.toMatchObject({ text: 'Hello from the paid endpoint.' });
      expect(paid.requests.length).toBe(before + 1);
    } finally {
      worker.shutdown();
      await done;
    }
  });
});
