// A client reads a run's stream (tokens and effects) while the worker serving it is killed with SIGKILL
// mid-answer and another started: the client sees the tokens before the run completes, none lost,
// none twice, and every effect event exactly once.
import { randomUUID } from 'node:crypto';
import { manifestDigest } from '../../catalog/digest';
import type { Manifest } from '../../catalog/manifest';
import { RunTopic, type TokensEvent } from '../../common/run-events';
import { STREAM_TAIL_QUERY, type StreamTail } from '../../common/stream-protocol';
import type { ScriptTurn } from '../../common/wire';
import { streamRun, type StreamedEvent } from '../../inspect/stream-run';
import type { AgentRunInput, AgentRunResult } from '../../workflows/agent/run';
import { writeManifest, type WorkerProcess } from '../../scripts/worker-process';
import { spawnTestWorker } from '../support/worker-process';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';

const WORDS = Array.from({ length: 40 }, (_, i) => `word${i}`);
const ANSWER = `Bob's account is acct_bob_002. ${WORDS.join(' ')} done.`;

const script: ScriptTurn[] = [
  { tool_calls: [{ name: 'crm__lookup_customer', arguments: { email: 'bob@example.com' } }] },
  { final: ANSWER },
];

async function waitFor(what: string, check: () => boolean, ms = 120_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('streaming a run across a worker killed mid-answer', () => {
  let h: Harness;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    h = await harness('unused');
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await h.close();
  });

  it('delivers every token once and in order, before the run completes, and every effect once', async () => {
    const base = exampleManifest();
    // The worker's scripted model writes its answer a word every 150 ms: slow enough to be killed mid-answer.
    const manifest: Manifest = { ...base, models: { scripted: { provider: 'scripted', token_delay: '150ms' } } };
    const dir = testDir('stream');
    const manifestFile = writeManifest(dir, manifest);
    const taskQueue = `stream-${randomUUID()}`;
    const workflowId = `stream-${randomUUID()}`;
    const start = () => {
      const w = spawnTestWorker({
        manifestFile,
        taskQueue,
        storeDir: dir,
      });
      workers.push(w);
      return w;
    };
    const first = start();
    const input: AgentRunInput = {
      prompt: "What is Bob's account?",
      principal: 'agent:test',
      grants: ['tool://crm/lookup_customer'],
      manifestDigest: manifestDigest(manifest),
      model: { endpoint: 'scripted', script },
      fullJournal: true,
    };
    const handle = await h.client.workflow.start('agentRun', { taskQueue, workflowId, args: [input] });

    const events: StreamedEvent[] = [];
    let runningWhenFirstToken: boolean | undefined;
    const reading = (async () => {
      for await (const e of streamRun(h.client, workflowId)) {
        if (e.type === 'tokens' && runningWhenFirstToken === undefined)
          runningWhenFirstToken = (await handle.describe()).status.name === 'RUNNING';
        events.push(e);
      }
    })();
    const tokens = () => events.filter((e): e is TokensEvent & { offset: number } => e.type === 'tokens');
    const tokenCount = () => tokens().reduce((n, e) => n + e.deltas.length, 0);

    // Some of the answer has arrived: the worker dies mid-answer, another takes over.
    await waitFor('the first tokens', () => tokenCount() >= 5);
    first.child.kill('SIGKILL');
    await first.exited;
    expect(tokenCount()).toBeLessThan(WORDS.length);
    start();

    const result: AgentRunResult = await handle.result();
    await reading;
    expect(result).toMatchObject({ status: 'completed', answer: ANSWER });
    expect(runningWhenFirstToken).toBe(true);

    // Tokens: one turn wrote them, their indices run 0, 1, 2, ... without a gap or a repeat, and they spell the answer.
    const turns = new Set(tokens().map((e) => e.turn));
    expect([...turns]).toEqual(['turn-2']);
    const indices = tokens().flatMap((e) => e.deltas.map((_, i) => e.index + i));
    expect(indices).toEqual(indices.map((_, i) => i));
    expect(
      tokens()
        .flatMap((e) => e.deltas)
        .join(''),
    ).toBe(ANSWER);

    // Effects: each once, in the order they happened, carrying the journal's effect key.
    const effects = events.filter((e) => e.type !== 'tokens');
    expect(effects.map((e) => e.type)).toEqual([
      'turn-completed',
      'call-decided',
      'call-landed',
      'turn-completed',
      'run-completed',
    ]);
    const key = result.journal[0]!.effectKey;
    expect(effects.filter((e) => e.type === 'call-decided' || e.type === 'call-landed')).toEqual([
      expect.objectContaining({ position: 0, toolId: 'tool://crm/lookup_customer', effectKey: key }),
      expect.objectContaining({ position: 0, toolId: 'tool://crm/lookup_customer', effectKey: key }),
    ]);
    expect(effects.at(-2)).toMatchObject({ type: 'turn-completed', turn: 'turn-2', text: ANSWER });
    expect(effects.at(-1)).toMatchObject({ type: 'run-completed', status: 'completed', answer: ANSWER });
    // Offsets only grow: nothing was read twice.
    const offsets = events.map((e) => e.offset);
    expect(offsets).toEqual([...offsets].sort((a, b) => a - b));

    // What the run's stream holds (read back from the closed run): the killed attempt's tokens and the
    // retry's, from index 0 again; the client above delivered each index once.
    const tail = await handle.query<StreamTail, [number]>(STREAM_TAIL_QUERY, 0);
    const published = tail.items
      .filter((i) => i.topic === RunTopic.Tokens)
      .map((i) => i.data as TokensEvent)
      .filter((e) => e.index === 0);
    expect(published.length).toBeGreaterThanOrEqual(2);
  });
});
