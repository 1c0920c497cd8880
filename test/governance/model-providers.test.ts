// Model turns through the AI SDK's providers against real HTTP servers: an Anthropic-compatible
// endpoint, and how each provider's failures become typed, retried-or-final Temporal failures.
import { randomUUID } from 'node:crypto';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { buildProgram } from '../../cli';
import type { ModelsDecl } from '../../catalog/authority';
import { createTools } from '../../examples/support-desk/tools';
import type { AgentRunInput, AgentRunResult } from '../../workflows/agent/run';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { startFakeAnthropic, toolResults, type AnthropicReply, type MessagesRequest } from '../support/fake-anthropic';
import { startFakeChat, type ChatRequest, type Reply } from '../support/fake-chat';
import type { FailureReply } from '../support/fake-http';

const CHAT_KEY = `sk-chat-${randomUUID()}`;
const CLAUDE_KEY = `sk-ant-${randomUUID()}`;

/** Looks the customer up, then answers with what the lookup returned (Messages API). */
function claudeLookupThenAnswer(req: MessagesRequest): AnthropicReply {
  const results = toolResults(req);
  return results.length === 0
    ? { tool_use: [{ id: 'toolu_01', name: 'crm__lookup_customer', input: { email: 'chen@example.com' } }] }
    : { text: `Chen's account is ${(JSON.parse(results[0]!) as { account_id: string }).account_id}.` };
}

/** The same task over Chat Completions. */
function chatLookupThenAnswer(req: ChatRequest): Reply {
  const results = req.body.messages.filter((m) => m.role === 'tool');
  return results.length === 0
    ? { tool_calls: [{ id: 'call_01', name: 'crm__lookup_customer', arguments: '{"email":"chen@example.com"}' }] }
    : { content: `Chen's account is ${(JSON.parse(results[0]!.content!) as { account_id: string }).account_id}.` };
}

interface Failed {
  cause?: { type?: string; message?: string; cause?: { type?: string; message?: string; nonRetryable?: boolean } };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('model turns through AI SDK providers', () => {
  let h: Harness;
  let chat: Awaited<ReturnType<typeof startFakeChat>>;
  let claude: Awaited<ReturnType<typeof startFakeAnthropic>>;
  let chatReply: (req: ChatRequest, n: number) => Reply = chatLookupThenAnswer;
  let claudeReply: (req: MessagesRequest, n: number) => AnthropicReply = claudeLookupThenAnswer;
  const exporter = new InMemorySpanExporter();

  beforeAll(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    chat = await startFakeChat((req, n) => chatReply(req, n));
    claude = await startFakeAnthropic((req, n) => claudeReply(req, n));
    process.env.TOOLPLANE_TEST_CHAT_KEY = CHAT_KEY;
    process.env.TOOLPLANE_TEST_CLAUDE_KEY = CLAUDE_KEY;
    delete process.env.TOOLPLANE_TEST_UNSET_KEY;
    process.env.TOOLPLANE_STORE_DIR = testDir('model-providers');
    h = await harness(`model-providers-${randomUUID()}`);
    const models: ModelsDecl = {
      local: {
        provider: 'openai-compatible',
        base_url: chat.baseUrl,
        api_key_env: 'TOOLPLANE_TEST_CHAT_KEY',
        models: ['qwen3-8b'],
      },
      claude: {
        provider: 'anthropic',
        base_url: claude.baseUrl,
        api_key_env: 'TOOLPLANE_TEST_CLAUDE_KEY',
        models: ['claude-sonnet-4-5', 'claude-haiku-4-5'],
      },
      unkeyed: {
        provider: 'anthropic',
        base_url: claude.baseUrl,
        api_key_env: 'TOOLPLANE_TEST_UNSET_KEY',
        models: ['claude-haiku-4-5'],
      },
    };
    await h.runWorker({ manifest: { ...exampleManifest(), models }, tools: createTools() });
  });
  afterEach(() => {
    chatReply = chatLookupThenAnswer;
    claudeReply = claudeLookupThenAnswer;
  });
  afterAll(async () => {
    await h.close();
    await chat.close();
    await claude.close();
    trace.disable();
    context.disable();
  });

  const start = (model: AgentRunInput['model'], workflowId = `providers-${randomUUID()}`) =>
    h.client.workflow.start('agentRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [
        {
          prompt: "What is chen@example.com's account?",
          principal: 'agent:test',
          fullJournal: true,
          grants: ['tool://crm/lookup_customer'],
          model,
        } satisfies AgentRunInput,
      ],
    });

  it('runs an agent on an Anthropic-compatible server: key in x-api-key, usage, finish reasons and ids traced', async () => {
    exporter.reset();
    const before = claude.requests.length;
    const handle = await start({ endpoint: 'claude', model: 'claude-haiku-4-5' });
    const result: AgentRunResult = await handle.result();
    expect(result).toMatchObject({ status: 'completed', answer: "Chen's account is acct_chen_003." });
    expect(result.journal).toEqual([
      expect.objectContaining({ toolId: 'tool://crm/lookup_customer', modelCallId: 'toolu_01', outcome: 'ok' }),
    ]);
    expect(result.usage).toMatchObject({ turns: 2, inputTokens: 420, outputTokens: 80 });

    const sent = claude.requests.slice(before);
    expect(sent.map((r) => r.body.model)).toEqual(['claude-haiku-4-5', 'claude-haiku-4-5']);
    expect(sent.every((r) => r.apiKey === CLAUDE_KEY)).toBe(true);
    expect(sent[0]!.body.tools!.map((t) => t.name)).toEqual(['crm__lookup_customer']);
    // The second turn carries the tool result under the model's own call id.
    expect(JSON.stringify(sent[1]!.body.messages)).toContain('"tool_use_id":"toolu_01"');

    const spans = exporter.getFinishedSpans().filter((s) => s.name === 'chat claude-haiku-4-5');
    expect(spans.map((s) => s.attributes['gen_ai.response.finish_reasons'])).toEqual([['tool_calls'], ['stop']]);
    expect(spans[0]!.attributes).toMatchObject({
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-haiku-4-5',
      'gen_ai.response.model': 'claude-haiku-4-5-20260101',
      'gen_ai.response.id': expect.stringMatching(/^msg_/),
      'gen_ai.usage.input_tokens': 210,
      'gen_ai.usage.output_tokens': 40,
    });
    const tool = exporter.getFinishedSpans().find((s) => s.name === 'execute_tool lookup_customer')!;
    expect(tool.attributes['gen_ai.tool.call.id']).toBe('toolu_01');
    expect(JSON.stringify(exporter.getFinishedSpans().map((s) => s.attributes))).not.toContain(CLAUDE_KEY);
  });

  // Final failures: the same request would fail again, so it is sent once and the run fails with the type.
  const finals: [string, FailureReply, string][] = [
    ['401', { status: 401 }, 'ModelAuth'],
    ['403', { status: 403 }, 'ModelAuth'],
    [
      '400',
      { status: 400, body: JSON.stringify({ error: { message: 'max_tokens: too large' } }) },
      'ModelRequestInvalid',
    ],
  ];
  describe.each(['local', 'claude'] as const)('the %s endpoint', (endpoint) => {
    const serve = (r: FailureReply | ((n: number) => FailureReply | undefined)) => {
      const pick = (n: number) => (typeof r === 'function' ? r(n) : r);
      chatReply = (req, n) => pick(n) ?? chatLookupThenAnswer(req);
      claudeReply = (req, n) => pick(n) ?? claudeLookupThenAnswer(req);
      return endpoint === 'local' ? chat.requests : claude.requests;
    };

    it.each(finals)('a %s is final: sent once, the run fails with %s', async (_status, failure, type) => {
      const requests = serve(failure);
      const before = requests.length;
      const err = (await (await start({ endpoint })).result().catch((e: unknown) => e)) as Failed;
      expect(err.cause?.cause).toMatchObject({ type, nonRetryable: true });
      expect(err.cause!.cause!.message).toContain(`model endpoint "${endpoint}"`);
      expect(requests.length - before).toBe(1);
    });

    it('a malformed answer is a typed ModelResponseMalformed failure', async () => {
      serve({ malformed: '{"choices": "not a list", "content": 7' });
      const err = (await (await start({ endpoint })).result().catch((e: unknown) => e)) as Failed;
      expect(err.cause?.cause).toMatchObject({ type: 'ModelResponseMalformed' });
    });

    /** Fails the first request with `failure`, then answers normally. */
    const once = (failure: FailureReply) => {
      let failed = false;
      return serve(() => (failed ? undefined : ((failed = true), failure)));
    };

    it.each([
      ['a 429 with Retry-After', { status: 429, headers: { 'retry-after': '1' } }],
      ['a 503', { status: 503 }],
    ] as [string, FailureReply][])('%s is retried and the run completes', async (_what, failure) => {
      const requests = once(failure);
      const before = requests.length;
      const result: AgentRunResult = await (await start({ endpoint })).result();
      expect(result).toMatchObject({ status: 'completed', answer: "Chen's account is acct_chen_003." });
      // The failed turn was sent again: one request more than the two turns.
      expect(requests.length - before).toBe(3);
    });

    it("waits as long as the provider's Retry-After says before the next attempt", async () => {
      once({ status: 429, headers: { 'retry-after': '1800' } });
      const handle = await start({ endpoint });
      try {
        const pending = await waitFor('the rate-limited turn to wait for its next attempt', async () => {
          const d = await handle.describe();
          const p = d.raw.pendingActivities?.find((a) => a.lastFailure?.applicationFailureInfo);
          return p?.nextAttemptScheduleTime && p.lastAttemptCompleteTime ? p : undefined;
        });
        expect(pending.activityType?.name).toBe('modelTurn');
        expect(pending.lastFailure?.applicationFailureInfo).toMatchObject({ type: 'ModelRateLimited' });
        expect(Number(pending.lastFailure?.applicationFailureInfo?.nextRetryDelay?.seconds)).toBe(1800);
        // The server scheduled the next attempt half an hour out, not after the policy's one-second backoff.
        const gap = Number(pending.nextAttemptScheduleTime!.seconds) - Number(pending.lastAttemptCompleteTime!.seconds);
        expect(gap).toBeGreaterThanOrEqual(1790);
      } finally {
        await handle.terminate('test done');
      }
    });
  });

  it('an endpoint whose key variable is unset fails as ModelAuth before any request', async () => {
    const before = claude.requests.length;
    const err = (await (await start({ endpoint: 'unkeyed' })).result().catch((e: unknown) => e)) as Failed;
    expect(err.cause?.cause).toMatchObject({ type: 'ModelAuth', nonRetryable: true });
    expect(err.cause!.cause!.message).toContain('$TOOLPLANE_TEST_UNSET_KEY');
    expect(claude.requests.length).toBe(before);
  });

  it.each([
    ['an OpenAI-compatible', 'local:qwen3-8b', () => chat.requests.length],
    ['an Anthropic-compatible', 'claude:claude-sonnet-4-5', () => claude.requests.length],
  ])('toolplane run --model works with %s endpoint', async (_what, spec, sent) => {
    const before = sent();
    const lines: string[] = [];
    process.env.TEMPORAL_ADDRESS = process.env.TOOLPLANE_TEST_ADDRESS;
    try {
      await buildProgram((l) => lines.push(l)).parseAsync([
        'node',
        'toolplane',
        'run',
        '--principal',
        'agent:test',
        '--prompt',
        "What is chen@example.com's account?",
        '--model',
        spec,
        '--task-queue',
        h.taskQueue,
        '--json',
      ]);
    } finally {
      delete process.env.TEMPORAL_ADDRESS;
    }
    const out = JSON.parse(lines.join('\n')) as { status: string; answer: string; effects: { tool: string }[] };
    expect(out).toMatchObject({ status: 'completed', answer: "Chen's account is acct_chen_003." });
    expect(out.effects.map((e) => e.tool)).toEqual(['tool://crm/lookup_customer']);
    expect(sent() - before).toBe(2);
  });
});
