// The AI SDK example: a @temporalio/ai-sdk agent (generateText in the workflow, the `ai` package's
// mock language model behind the worker's provider) governed by its tool definitions alone.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { buildProgram } from '../../cli';
import type { ScriptedTurn } from '../../examples/ai-sdk-agent/scripted-model';
import { loadScript } from '../support/agent';
import { aiSdkAgentBundle, aiSdkAgentInput, runAiSdkAgent, runAiSdkAgentWorker } from '../support/ai-sdk-agent';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { historyOf } from '../support/history';
import { supportDesk } from '../support/desk';

const scripts = path.resolve(__dirname, '..', '..', 'examples', 'support-desk', 'scripts');

describe('the AI SDK agent, governed by its tool definitions', () => {
  let h: Harness;
  let agent: Awaited<ReturnType<typeof runAiSdkAgentWorker>>;
  const dir = testDir('ai-sdk-desk');
  const { payments, outbox, tools } = supportDesk(dir);
  const manifest = exampleManifest();

  beforeAll(async () => {
    h = await harness(`ai-sdk-desk-${randomUUID()}`);
    agent = await runAiSdkAgentWorker(h, {
      manifest,
      tools,
    });
  });
  afterAll(async () => {
    await agent?.shutdown();
    await h.close();
  });

  it('refuses what an injected ticket asks for, tells the model why, and shows it in toolplane show and describe', async () => {
    const before = payments.all().length;
    const script = loadScript(path.join(scripts, 'injected-ticket.json'));
    const { result, workflowId } = await runAiSdkAgent(
      h,
      agent.taskQueue,
      aiSdkAgentInput(manifest, { prompt: script.prompt, turns: script.turns as ScriptedTurn[] }),
    );
    expect(result.text).toMatch(/^Refunded Bob's 10.00 EUR late fee/);
    expect(result.journal.map((e) => [e.toolId, e.decision, e.rule ?? null, e.outcome])).toEqual([
      ['tool://tickets/read_ticket', 'allowed', null, 'ok'],
      ['tool://crm/lookup_customer', 'allowed', null, 'ok'],
      ['tool://payments/refund', 'refused', 'protected_field:/account_id', 'refused'],
      ['tool://mail/send_email', 'refused', 'protected_field:/to', 'refused'],
      ['tool://payments/refund', 'allowed', null, 'ok'],
      ['tool://tickets/close_ticket', 'allowed', null, 'ok'],
    ]);
    // The model's own call ids are the journal's.
    expect(result.journal[2]!.modelCallId).toBe('call_2_0');
    // Only the real refund landed; the attacker's account got nothing and no mail left.
    expect(
      payments
        .all()
        .slice(before)
        .map((p) => [p.account, p.amountCents]),
    ).toEqual([['acct_bob_002', 1000]]);
    expect(outbox.all()).toEqual([]);

    // The model's next turn (an @temporalio/ai-sdk activity) carried the refusal's rule and reason as the tool result.
    const modelInputs = (await historyOf(h.client, workflowId))
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'invokeModel')
      .map((e) =>
        JSON.stringify(
          defaultPayloadConverter.fromPayload(e.activityTaskScheduledEventAttributes!.input!.payloads![0]!),
        ),
      );
    expect(modelInputs).toHaveLength(7);
    expect(modelInputs[3]).toContain('protected_field:/account_id');
    expect(modelInputs[3]).toMatch(/tool:\/\/tickets\/read_ticket/);

    // `toolplane show` lists the run's effects, the refusals with their rules, like any agentRun's.
    const cli = async (...args: string[]): Promise<unknown> => {
      const lines: string[] = [];
      process.env.TEMPORAL_ADDRESS = process.env.TOOLPLANE_TEST_ADDRESS;
      try {
        await buildProgram((l) => lines.push(l)).parseAsync(['node', 'toolplane', ...args, '--json']);
      } finally {
        delete process.env.TEMPORAL_ADDRESS;
      }
      return JSON.parse(lines.join('\n'));
    };
    const shown = (await cli('show', workflowId)) as {
      status: string;
      effects: { toolId: string; decision: string; rule?: string; effectKey?: string }[];
    };
    expect(shown.status).toBe('COMPLETED');
    expect(shown.effects.map((e) => [e.toolId, e.decision, e.rule ?? null])).toEqual(
      result.journal.map((e) => [e.toolId, e.decision, e.rule ?? null]),
    );
    expect(shown.effects.filter((e) => e.effectKey).map((e) => e.effectKey)).toEqual(
      result.journal.filter((e) => e.effectKey).map((e) => e.effectKey),
    );
    // What the Web UI and `toolplane list --refused` read: the run's ToolplaneRefusals search attribute.
    expect(await cli('describe', workflowId)).toMatchObject({ status: 'COMPLETED', refusals: 2, waitingFor: 'none' });

    // generateText ran in the workflow: its history replays with the same code, deciding the same.
    const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
    await expect(
      Worker.runReplayHistory(
        { workflowBundle: await aiSdkAgentBundle(), replayName: 'ai-sdk-agent' },
        history,
        workflowId,
      ),
    ).resolves.toBeUndefined();
  });
});
