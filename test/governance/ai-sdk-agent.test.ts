// The AI SDK example: a @temporalio/ai-sdk agent (generateText in the workflow, the `ai` package's
// mock language model behind the worker's provider) governed by its tool definitions alone.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { buildProgram } from '../../cli';
import type { ScriptedTurn } from '../../examples/ai-sdk-agent/scripted-model';
import { loadScript } from '../support/agent';
import { aiSdkAgentInput, runAiSdkAgent, runAiSdkAgentWorker, withToolplaneSource } from '../support/ai-sdk-agent';
import { AI_SDK_AGENT_WORKFLOWS } from '../../examples/ai-sdk-agent/worker';
import { replayOptions } from '../../cli/replay';
import { manifestDigest } from '../../catalog/digest';
import { waitFor } from '../support/wait';
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
    // What the Web UI and `toolplane list --refused` read: the run's ToolplaneRefusals search attribute;
    // its principal and manifest are the worker's answer, which the run labelled itself with.
    expect(await cli('describe', workflowId)).toMatchObject({
      type: 'aiSdkAgent',
      status: 'COMPLETED',
      summary: script.prompt,
      principal: 'agent:test',
      manifestDigest: manifestDigest(manifest),
      refusals: 2,
      waitingFor: 'none',
    });
    // Listed as an agentRun is: `list` selects every run that opened a StepCtx, whatever its type.
    const listed = await waitFor('the run in toolplane list', 30_000, async () => {
      const { query, runs } = (await cli('list', '--principal', 'agent:test', '--refused', '--limit', '100')) as {
        query: string;
        runs: { workflowId: string; type: string; principal?: string; refusals: number }[];
      };
      expect(query).not.toMatch(/WorkflowType/);
      return runs.find((r) => r.workflowId === workflowId);
    });
    expect(listed).toMatchObject({ type: 'aiSdkAgent', principal: 'agent:test', refusals: 2 });
    // The Web UI's Current Details (its metadata query): what the run was asked, then its effects.
    const { currentDetails } = await h.client.workflow
      .getHandle(workflowId)
      .query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    expect(currentDetails!.split('\n\n')[0]).toBe(`**Summary**: ${script.prompt}`);
    expect(currentDetails).toMatch(/1 refused by protected_field:\/account_id, 1 refused by protected_field:\/to/);

    // generateText ran in the workflow: its history replays with the same code, deciding the same,
    // bundled as `toolplane replay --workflows` bundles it (with the AI SDK plugin's polyfills).
    const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
    const options = replayOptions(AI_SDK_AGENT_WORKFLOWS);
    expect(options.plugins?.map((p) => p.name)).toEqual(['AiSDKPlugin']);
    await expect(
      Worker.runReplayHistory(
        {
          ...options,
          // Only so the example's `toolplane/*` imports reach the source, as in its worker's bundle.
          bundlerOptions: { webpackConfigHook: withToolplaneSource },
        },
        history,
        workflowId,
      ),
    ).resolves.toBeUndefined();
  });
});
