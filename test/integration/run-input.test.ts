// Bad input never leaves a run stuck: the client refuses it before starting anything, and a workflow that
// receives one anyway (a raw client) fails at once with a typed, non-retryable error.
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { startAgentRun, startToolRun, RunInputInvalid, type AgentRunInput } from '../../client';
import { agentInput } from '../support/agent';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { historyOf } from '../support/history';
import type { Manifest } from '../../catalog/manifest';
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

  it.each(['__proto__', 'constructor', 'toString'])(
    'a principal named %s is a name, not a lookup: the run is refused at once, typed, on a worker with principals',
    async (principal) => {
      const withPrincipals: Manifest = {
        ...manifest,
        principals: { 'agent:desk': { tools: '*', capabilities: [], models: '*', share_facts_with: [] } },
      };
      const p = await harness(`run-input-principals-${randomUUID()}`);
      try {
        await p.runWorker({ manifest: withPrincipals, tools });
        const workflowId = `run-input-${randomUUID()}`;
        const err = await p.client.workflow
          .execute('agentRun', {
            taskQueue: p.taskQueue,
            workflowId,
            args: [
              agentInput(manifest, { prompt: 'Refund alice', turns: [{ final: 'done' }] }, { principal, grants: [] }),
            ],
          })
          .catch((e: unknown) => e);
        // Not agent:desk, and no "*" entry: no endpoint for it, refused by name (a lookup into Object would throw).
        expect((err as WorkflowFailedError).cause).toMatchObject({
          type: 'ModelRefused',
          message: `${principal} may not use model endpoint "scripted" on this worker (its principals entry lists the endpoints it may)`,
        });
        const events = await historyOf(p.client, workflowId);
        expect(events.filter((e) => e.workflowTaskFailedEventAttributes)).toHaveLength(0);
      } finally {
        await p.close();
      }
    },
  );

  it('a model answer too large for history fails the run at once, typed, and is not asked again', async () => {
    const big = {
      ...manifest,
      models: { big: { provider: 'scripted' as const, script: [{ final: 'x'.repeat(1_500_000) }] } },
    };
    const m = await harness(`run-input-big-${randomUUID()}`);
    try {
      await m.runWorker({ manifest: big, tools });
      const workflowId = `run-input-${randomUUID()}`;
      const err = await m.client.workflow
        .execute('agentRun', {
          taskQueue: m.taskQueue,
          workflowId,
          args: [{ prompt: 'Say a lot', principal: 'agent:test', model: { endpoint: 'big' } }],
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect((err as WorkflowFailedError).cause?.cause).toMatchObject({
        type: 'ModelOutputTooLarge',
        nonRetryable: true,
        message: expect.stringMatching(/answered \d+ bytes, more than the 1048576 a turn may record/),
      });
    } finally {
      await m.close();
    }
  });
});
