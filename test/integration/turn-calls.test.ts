// A turn's calls that run together (read-only, in no lane): the model reads their results in the order
// it made the calls, whatever order they finish in, and a run cancelled while one is in flight ends
// cancelled instead of waiting on it.
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import type { Tool } from '../../activities/tool';
import { parseManifest } from '../../runtime/manifest-file';
import { readJournal, startAgentRun } from '../../client';
import type { AgentRunResult } from '../../workflows/agent/run';
import { agentInput } from '../support/agent';
import { harness, type Harness } from '../support/env';
import { historyOf } from '../support/history';
import { waitFor } from '../support/wait';

const { manifest } = parseManifest(
  `
version: 1
name: turn-calls
servers:
  desk: { kind: in_process }
tools:
  - id: tool://desk/slow
    description: Read a record, slowly.
    input_schema: &rec { type: object, properties: { id: { type: string } }, required: [id], additionalProperties: false }
    safety: read_only
    recovery: retry
  - id: tool://desk/fast
    description: Read a record at once.
    input_schema: *rec
    safety: read_only
    recovery: retry
`,
  'turn-calls.yaml',
);

/** Slow reads wait until the fast reads of their turn have returned (or the run cancels them): they finish last. */
const returned = new Set<string>();
const started = new Set<string>();
const tools: Tool[] = manifest.tools.map((d) => ({
  origin: 'builtin',
  def: () => ({ id: d.id, description: d.description, inputSchema: d.input_schema, safety: d.safety }),
  async call(ctx, input) {
    const { id } = input as { id: string };
    started.add(id);
    if (d.id === 'tool://desk/slow')
      await waitFor(`the fast reads before ${id}`, 30_000, () => ctx.signal.aborted || returned.has(`after-${id}`));
    returned.add(id);
    return { read: id };
  },
}));

const call = (tool: string, id: string) => ({ name: `desk__${tool}`, arguments: { id } });

describe("a turn's calls in no lane", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness(`turn-calls-${randomUUID()}`);
    await h.runWorker({ manifest, tools });
  });
  afterAll(async () => {
    await h.close();
  });

  it('reach the model in the order it made them, though the first finishes last', async () => {
    const workflowId = `turn-calls-order-${randomUUID()}`;
    const result: AgentRunResult = await h.client.workflow.execute('agentRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [
        agentInput(
          manifest,
          {
            prompt: 'Read s1 and the rest.',
            turns: [
              { tool_calls: [call('slow', 's1'), call('fast', 'after-s1'), call('nope', 'x'), call('fast', 'f2')] },
              { final: 'done' },
            ],
          },
          { fullJournal: false },
        ),
      ],
    });
    expect(result.status).toBe('completed');
    // The result lists the refusal and counts the routine calls; the history shows each at its position,
    // though the slow read, the first, finished last.
    expect(result.journal.map((e) => [e.position, e.toolId, e.outcome])).toEqual([[2, 'desk__nope', 'refused']]);
    expect(result.routineCalls).toBe(3);
    expect(result.summary).toMatchObject({ calls: 4, allowed: 3, refused: 1 });
    const { effects } = await readJournal(h.client, workflowId);
    expect(effects.map((e) => [e.position, e.toolId, e.outcome])).toEqual([
      [0, 'tool://desk/slow', 'ok'],
      [1, 'tool://desk/fast', 'ok'],
      [2, 'desk__nope', 'refused'],
      [3, 'tool://desk/fast', 'ok'],
    ]);
    // What the second turn sent the model: the results by the position of the call in the first turn.
    const turns = (await historyOf(h.client, workflowId))
      .map((e) => e.activityTaskScheduledEventAttributes)
      .filter((a) => a?.activityType?.name === 'modelTurn')
      .map((a) => JSON.parse(Buffer.from(a!.input!.payloads![0]!.data!).toString()) as Record<string, unknown>);
    expect(turns).toHaveLength(2);
    const { values } = turns[1]!.results as { values: unknown[] };
    expect(values[0]).toEqual({ read: 's1' });
    expect(values[1]).toEqual({ read: 'after-s1' });
    expect(values[2]).toMatchObject({ error: 'Unreachable' });
    expect(values[3]).toEqual({ read: 'f2' });
  });

  it('list every call in the result when the input asks (fullJournal)', async () => {
    const result: AgentRunResult = await h.client.workflow.execute('agentRun', {
      taskQueue: h.taskQueue,
      workflowId: `turn-calls-full-${randomUUID()}`,
      args: [
        agentInput(manifest, {
          prompt: 'Read f4 and f5.',
          turns: [{ tool_calls: [call('fast', 'f4'), call('nope', 'y'), call('fast', 'f5')] }, { final: 'done' }],
        }),
      ],
    });
    expect(result.journal.map((e) => [e.position, e.decision, e.outcome])).toEqual([
      [0, 'allowed', 'ok'],
      [1, 'refused', 'refused'],
      [2, 'allowed', 'ok'],
    ]);
    expect(result.routineCalls).toBe(0);
  });

  it('a run cancelled while one is in flight ends cancelled', async () => {
    const handle = await startAgentRun(
      h.client,
      agentInput(manifest, {
        prompt: 'Read s2, which never finishes on its own.',
        turns: [{ tool_calls: [call('fast', 'f3'), call('slow', 's2')] }, { final: 'done' }],
      }),
      { taskQueue: h.taskQueue, workflowId: `turn-calls-cancel-${randomUUID()}` },
    );
    await waitFor('the slow read to start', 30_000, () => started.has('s2') && returned.has('f3'));
    await handle.cancel();
    const err = await handle.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    expect((await handle.describe()).status.name).toBe('CANCELLED');
  });
});
