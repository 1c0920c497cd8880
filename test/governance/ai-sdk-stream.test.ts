// The AI SDK path streams: a workflow of one's own calls `streamText` with `governedModel`, and a
// client reading the run's stream (`streamRun`) sees the model's words as they are written.
import { randomUUID } from 'node:crypto';
import { scriptedProvider } from '../../examples/ai-sdk-agent/scripted-model';
import { streamRun, type StreamedEvent } from '../../inspect/stream-run';
import { runAiSdkAgentWorker } from '../support/ai-sdk-agent';
import { supportDesk } from '../support/desk';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';

const ANSWER = Array.from({ length: 20 }, (_, i) => `w${i}`).join(' ');

describe('streamText with governedModel', () => {
  let h: Harness;
  let agent: Awaited<ReturnType<typeof runAiSdkAgentWorker>>;

  beforeAll(async () => {
    h = await harness(`ai-sdk-stream-${randomUUID()}`);
    const { tools } = supportDesk(testDir('ai-sdk-stream'));
    agent = await runAiSdkAgentWorker(
      h,
      { manifest: exampleManifest(), tools },
      { scripted: scriptedProvider({ tokenDelayMs: 100 }) },
    );
  });
  afterAll(async () => {
    await agent?.shutdown();
    await h.close();
  });

  it('streams the model text to the client before the run completes', async () => {
    const workflowId = `ai-sdk-stream-${randomUUID()}`;
    const handle = await h.client.workflow.start('streamedModelCall', {
      taskQueue: agent.taskQueue,
      workflowId,
      args: [{ principal: 'agent:test', script: [{ final: ANSWER }] }],
    });
    const events: StreamedEvent[] = [];
    let runningAtFirstToken: boolean | undefined;
    for await (const e of streamRun(h.client, workflowId)) {
      if (e.type === 'tokens' && runningAtFirstToken === undefined)
        runningAtFirstToken = (await handle.describe()).status.name === 'RUNNING';
      events.push(e);
    }
    const result = (await handle.result()) as { text: string };
    expect(result.text).toBe(ANSWER);
    expect(runningAtFirstToken).toBe(true);
    const tokens = events.flatMap((e) => (e.type === 'tokens' ? [e] : []));
    expect(new Set(tokens.map((e) => e.turn)).size).toBe(1);
    expect(tokens[0]!.turn).toMatch(/^call-/);
    expect(tokens.flatMap((e) => e.deltas).join('')).toBe(ANSWER);
    // Streamed in more than one piece: the words arrived as they were written.
    expect(tokens.length).toBeGreaterThan(1);
  });
});
