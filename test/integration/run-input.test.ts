// Bad input never leaves a run stuck: the client refuses it before starting anything, and a workflow that
// receives one anyway (a raw client) fails at once with a typed, non-retryable error.
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { startAgentRun, startToolRun, RunInputInvalid, type AgentRunInput } from '../../client';
import { agentInput } from '../support/agent';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { historyOf } from '../support/history';
import { supportDesk } from '../support/desk';

describe('a run with bad input', () => {
  let h: Harness;
  const manifest = exampleManifest();
  const dir = testDir('run-input');
  const { payments, tools } = supportDesk(dir);
  const good = (extra: Partial<AgentRunInput> = {}) =>
    agentInput(manifest, { prompt: 'Refund alice', turns: [{ final: 'done' }] }, extra);

  beforeAll(async () => {
    h = await harness(`run-input-${randomUUID()}`);
    await h.runWorker({
      manifest,
      tools,
    });
  });
  afterAll(() => h.close());

  async function neverStarted(workflowId: string) {
    await expect(h.client.workflow.getHandle(workflowId).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  }

  it.each([
    ['a deadline that is no duration', { limits: { deadline: 'soon' } }, /limits\.deadline: must be a duration/],
    ['a turn limit of zero', { limits: { maxTurns: 0 } }, /limits\.maxTurns: must be at least 1/],
    ['a turn limit that is no number', { limits: { maxTurns: NaN } }, /limits\.maxTurns/],
    [
      'a script turn of the wrong shape',
      { model: { endpoint: 'scripted', script: [{ say: 'hi' }] } },
      /model\.script\[0\]: each turn must be/,
    ],
    ['a grant that is no tool identity', { grants: ['payments/refund'] }, /grants\[0\]: must be a tool identity/],
  ])('is refused by the client before it starts: %s', async (_label, extra, says) => {
    const workflowId = `run-input-${randomUUID()}`;
    const err = await startAgentRun(h.client, good(extra as Partial<AgentRunInput>), {
      taskQueue: h.taskQueue,
      workflowId,
    }).catch((e: unknown) => e);
    expect(RunInputInvalid.is(err)).toBe(true);
    expect((err as RunInputInvalid).code).toBe('RunInputInvalid');
    expect((err as Error).message).toMatch(says);
    await neverStarted(workflowId);
  });

  it('is refused by the client when it grants a tool the manifest does not declare', async () => {
    const workflowId = `run-input-${randomUUID()}`;
    const input = good({ grants: ['tool://payments/refund', 'tool://payments/wire_transfer'] });
    const err = await startAgentRun(h.client, input, { taskQueue: h.taskQueue, workflowId, manifest }).catch(
      (e: unknown) => e as Error,
    );
    expect(RunInputInvalid.is(err)).toBe(true);
    expect((err as Error).message).toMatch(
      /grants\[1\]: tool:\/\/payments\/wire_transfer is not a tool the manifest declares/,
    );
    await neverStarted(workflowId);
    const tool = await startToolRun(
      h.client,
      { principal: 'agent:test', grants: ['tool://nowhere/x'], calls: [] },
      { taskQueue: h.taskQueue, workflowId, manifest },
    ).catch((e: unknown) => e);
    expect(RunInputInvalid.is(tool)).toBe(true);
    await neverStarted(workflowId);
  });

  it.each([
    ['agentRun', { ...agentInput(exampleManifest(), { prompt: 'x', turns: [] }), limits: { deadline: 'soon' } }],
    ['toolRun', { principal: 'agent:test', calls: [{ toolId: 'refund', args: {} }] }],
    ['agentRun', null],
    ['toolRun', null],
  ])('started by a raw client, fails its %s at once: typed, not retried (input %j)', async (workflowType, input) => {
    const workflowId = `run-input-${randomUUID()}`;
    const err = await h.client.workflow
      .execute(workflowType, { taskQueue: h.taskQueue, workflowId, args: [input] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause).toMatchObject({ type: 'RunInputInvalid', nonRetryable: true });
    expect((cause as Error).message).toMatch(
      input === null ? /input/ : workflowType === 'agentRun' ? /limits\.deadline/ : /calls\[0\]\.toolId/,
    );
    // One workflow task, and no activity: nothing was done and nothing was retried.
    const events = await historyOf(h.client, workflowId);
    expect(events.filter((e) => e.workflowTaskFailedEventAttributes)).toHaveLength(0);
    expect(events.filter((e) => e.activityTaskScheduledEventAttributes)).toHaveLength(0);
    expect(payments.all()).toHaveLength(0);
  });
});
