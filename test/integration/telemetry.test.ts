import { randomUUID } from 'node:crypto';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Worker } from '@temporalio/worker';
import { loadManifest } from '../../catalog/manifest-file';
import type { ToolRunResult } from '../../workflows/tool-run';
import { harness, testDir, type Harness } from '../support/env';
import { SCENARIO_MANIFEST, scenarioTools } from '../support/scenario-tools';

const manifest = loadManifest(SCENARIO_MANIFEST).manifest;

describe('OpenTelemetry spans of tool executions', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  let h: Harness;

  beforeAll(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(provider);
    h = await harness(`otel-${randomUUID()}`);
  });
  afterAll(async () => {
    await h.close();
    trace.disable();
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
      ['execute_tool tool://flaky/read', 1, 'none', 'ToolRejected'],
      ['execute_tool tool://flaky/read', 2, 'none', null],
      ['execute_tool tool://flaky/charge', 1, 'none', 'ToolInDoubt'],
      ['reconcile_tool tool://flaky/charge', 1, 'reconcile', null],
      ['execute_tool tool://flaky/charge', 1, 'reconciled_resent', null],
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
      { workflowBundle: { codePath: process.env.TOOLPLANE_TEST_BUNDLE! } },
      history,
      workflowId,
    );
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
