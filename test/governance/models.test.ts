// The OpenAI-compatible provider (@ai-sdk/openai-compatible) against a real HTTP server speaking Chat Completions, and the CLI.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { buildProgram } from '../../cli';
import { readJournal } from '../../client';
import { createTools } from '../../examples/support-desk/tools';
import type { AgentRunInput, AgentRunResult } from '../../workflows/agent/run';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { startFakeChat, type ChatRequest, type Reply } from '../support/fake-chat';
import { historyOf } from '../support/history';

const SECRET = `sk-test-${randomUUID()}`;

/** Every payload in a history, decoded, as one text to search. */
function payloadText(value: unknown): string {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (!v || typeof v !== 'object') return;
    if (v instanceof Uint8Array) return void out.push(Buffer.from(v).toString('utf8'));
    for (const x of Object.values(v)) walk(x);
  };
  walk(value);
  return out.join('\n');
}

/** Looks the customer up, then answers with what the lookup returned. */
function lookupThenAnswer(req: ChatRequest): Reply {
  const toolResults = req.body.messages.filter((m) => m.role === 'tool');
  return toolResults.length === 0
    ? { tool_calls: [{ id: 'call_abc', name: 'crm__lookup_customer', arguments: '{"email": "chen@example.com"}' }] }
    : { content: `Chen's account is ${JSON.parse(toolResults[0]!.content!).account_id}.` };
}

describe('model providers', () => {
  let h: Harness;
  let fake: Awaited<ReturnType<typeof startFakeChat>>;
  let baseUrl: string;
  const exporter = new InMemorySpanExporter();

  beforeAll(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    fake = await startFakeChat(lookupThenAnswer);
    baseUrl = fake.baseUrl;
    process.env.TOOLPLANE_TEST_MODEL_KEY = SECRET;
    process.env.TOOLPLANE_STORE_DIR = testDir('models');
    h = await harness(`models-${randomUUID()}`);
    // The worker owns its endpoints and the key variable; runs only name them.
    const models = {
      fake: {
        provider: 'openai-compatible' as const,
        base_url: baseUrl,
        api_key_env: 'TOOLPLANE_TEST_MODEL_KEY',
        models: ['gpt-test'],
      },
      scripted: { provider: 'scripted' as const },
      played: {
        provider: 'scripted' as const,
        script: [
          { tool_calls: [{ name: 'crm__lookup_customer', arguments: { email: 'bob@example.com' } }] },
          { final: 'Bob is a customer.' },
        ],
      },
    };
    await h.runWorker({ manifest: { ...exampleManifest(), models }, tools: createTools() });
  });
  afterAll(async () => {
    await h.close();
    await fake.close();
    trace.disable();
    context.disable();
  });

  it('runs an agent on an OpenAI-compatible server; the API key never enters history or spans', async () => {
    const workflowId = `openai-${randomUUID()}`;
    const input: AgentRunInput = {
      prompt: "What is chen@example.com's account?",
      principal: 'agent:test',
      grants: ['tool://crm/lookup_customer'],
      model: { endpoint: 'fake', model: 'gpt-test' },
    };
    const result: AgentRunResult = await h.client.workflow.execute('agentRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [input],
    });
    expect(result).toMatchObject({ status: 'completed', answer: "Chen's account is acct_chen_003." });
    // A routine call (allowed, sent once, completed) is counted in the result; the history lists it.
    expect(result.journal).toEqual([]);
    expect(result.routineCalls).toBe(1);
    expect(result.summary).toMatchObject({ calls: 1, allowed: 1 });
    expect((await readJournal(h.client, workflowId)).effects).toEqual([
      expect.objectContaining({ position: 0, toolId: 'tool://crm/lookup_customer', attempts: 1, outcome: 'ok' }),
    ]);
    expect(result.usage).toMatchObject({ turns: 2, inputTokens: 240, outputTokens: 60 });

    // The model saw only the granted tool, under its offered name, and the key went only to the server.
    expect(fake.requests[0]!.body.tools!.map((t) => t.function.name)).toEqual(['crm__lookup_customer']);
    expect(fake.requests.every((r) => r.auth === `Bearer ${SECRET}`)).toBe(true);
    const history = payloadText(await historyOf(h.client, workflowId));
    expect(history).not.toContain(SECRET);
    expect(history).toContain('TOOLPLANE_TEST_MODEL_KEY');

    const spans = exporter.getFinishedSpans();
    const chat = spans.filter((s) => s.name === 'chat gpt-test');
    expect(chat).toHaveLength(2);
    expect(chat[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-test',
      'gen_ai.response.model': 'gpt-test-2026',
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 30,
      'gen_ai.response.id': 'chatcmpl-1',
      'gen_ai.response.finish_reasons': ['tool_calls'],
    });
    expect(chat[1]!.attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);
    const tool = spans.find((s) => s.name === 'execute_tool lookup_customer')!;
    expect(tool.attributes['gen_ai.tool.call.id']).toBe('call_abc');
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain(SECRET);
  });

  it.each([
    [
      'a URL and a key variable of its own (the old input shape)',
      { provider: 'openai', model: 'gpt-test', baseUrl: 'ATTACKER', apiKeyEnv: 'TOOLPLANE_TEST_MODEL_KEY' },
      /may not set provider, model|may not set/,
    ],
    [
      'an endpoint the worker does not declare',
      { endpoint: 'attacker' },
      /model endpoint "attacker" is not declared by this worker/,
    ],
    [
      'a model the endpoint does not serve',
      { endpoint: 'fake', model: 'gpt-expensive' },
      /does not serve "gpt-expensive"/,
    ],
    ['an endpoint plus its own URL', { endpoint: 'fake', baseUrl: 'ATTACKER' }, /may not set baseUrl/],
  ])('refuses a run that names %s before any request, and reads no secret', async (_what, model, reason) => {
    const attacker = await startFakeChat(() => ({ content: 'stolen' }));
    try {
      const asked = JSON.parse(JSON.stringify(model).replace('ATTACKER', attacker.baseUrl)) as AgentRunInput['model'];
      const workflowId = `secret-${randomUUID()}`;
      const run = h.client.workflow.execute('agentRun', {
        taskQueue: h.taskQueue,
        workflowId,
        args: [{ prompt: 'hi', principal: 'agent:test', model: asked }],
      });
      const failure = await run.then(
        () => undefined,
        (err: unknown) => err as { cause?: { type?: string; message?: string } },
      );
      expect(failure?.cause).toMatchObject({ type: 'ModelRefused', message: expect.stringMatching(reason) });
      expect(attacker.requests).toHaveLength(0);
      const history = payloadText(await historyOf(h.client, workflowId));
      expect(history).not.toContain(SECRET);
      expect(history).not.toContain('modelTurn');
    } finally {
      await attacker.close();
    }
  });

  it('plays the script the worker declares for an endpoint; the script never enters history', async () => {
    const workflowId = `played-${randomUUID()}`;
    const result = await h.client.workflow.execute('agentRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [{ prompt: 'Who is Bob?', principal: 'agent:test', model: { endpoint: 'played' } }],
    });
    const r = result as AgentRunResult;
    expect(r.answer).toBe('Bob is a customer.');
    expect(r.routineCalls).toBe(1);
    const { effects } = await readJournal(h.client, workflowId);
    expect(effects.map((e) => [e.toolId, e.outcome])).toEqual([['tool://crm/lookup_customer', 'ok']]);
    // The model's turns are the worker's: the run's input and its turns carry the endpoint's name only.
    const turns = (await historyOf(h.client, workflowId)).filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'modelTurn',
    );
    expect(turns.length).toBeGreaterThan(0);
    expect(payloadText(turns)).not.toContain('Bob is a customer.');
  });

  it('does not record a model call id over 256 bytes on the span', async () => {
    exporter.reset();
    const longId = `call_${'x'.repeat(300)}`;
    const input: AgentRunInput = {
      prompt: 'Look up chen@example.com.',
      principal: 'agent:test',
      grants: ['tool://crm/lookup_customer'],
      // The model's call id is in the call's entry: the result lists every call.
      fullJournal: true,
      model: {
        endpoint: 'scripted',
        script: [
          { tool_calls: [{ id: longId, name: 'crm__lookup_customer', arguments: { email: 'chen@example.com' } }] },
          { final: 'x' },
        ],
      },
    };
    const result: AgentRunResult = await h.client.workflow.execute('agentRun', {
      taskQueue: h.taskQueue,
      workflowId: `longid-${randomUUID()}`,
      args: [input],
    });
    expect(result.journal[0]).toMatchObject({ modelCallId: longId, outcome: 'ok' });
    const span = exporter.getFinishedSpans().find((s) => s.name === 'execute_tool lookup_customer')!;
    expect(span.attributes['gen_ai.tool.call.id']).toBeUndefined();
    expect(span.attributes['toolplane.effect_key']).toBe(result.journal[0]!.effectKey);
  });

  it('client.ts run --json prints the final result and journal', async () => {
    const lines: string[] = [];
    process.env.TEMPORAL_ADDRESS = process.env.TOOLPLANE_TEST_ADDRESS;
    try {
      await buildProgram((l) => lines.push(l)).parseAsync([
        'node',
        'toolplane',
        'run',
        '--principal',
        'agent:cli',
        '--model',
        `scripted:${path.resolve(__dirname, '..', '..', 'examples', 'support-desk', 'scripts', 'injected-ticket.json')}`,
        '--task-queue',
        h.taskQueue,
        '--json',
      ]);
    } finally {
      delete process.env.TEMPORAL_ADDRESS;
    }
    const out = JSON.parse(lines.join('\n'));
    expect(out.status).toBe('completed');
    // The link is that of the server used: a local dev server's UI at its port + 1000.
    const uiPort = Number(process.env.TOOLPLANE_TEST_ADDRESS!.split(':').pop()) + 1000;
    expect(out.webUi).toMatch(new RegExp(`^http://localhost:${uiPort}/namespaces/default/workflows/agent-`));
    expect(
      out.effects.map((e: { tool: string; decision: string; rule: string | null; outcome: string }) => [
        e.tool,
        e.decision,
        e.rule,
        e.outcome,
      ]),
    ).toEqual([
      ['tool://tickets/read_ticket', 'allowed', null, 'ok'],
      ['tool://crm/lookup_customer', 'allowed', null, 'ok'],
      ['tool://payments/refund', 'refused', 'protected_field:/account_id', 'refused'],
      ['tool://mail/send_email', 'refused', 'protected_field:/to', 'refused'],
      ['tool://payments/refund', 'allowed', null, 'ok'],
      ['tool://tickets/close_ticket', 'allowed', null, 'ok'],
    ]);
    expect(out.effects[4].key).toMatch(/^ek-[A-Za-z0-9_-]{43}$/);
  });
});
