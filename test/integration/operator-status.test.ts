// What an operator reads of a run that has not completed: the search attributes `describe` (and the
// Web UI's list) shows, and the run's Current Details (the Web UI's metadata query), while it runs,
// once it is cancelled while a call waits for a person, and once it failed while one waited.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import type { Tool } from '../../activities/tool';
import { parseManifest } from '../../runtime/manifest-file';
import { startAgentRun } from '../../client';
import { TOOLS_CALLED, WAITING_FOR, REFUSALS } from '../../common/search-attributes';
import { pendingEscalations } from '../../workflows/escalation';
import { agentInput } from '../support/agent';
import { waitForPending } from '../support/escalations';
import { writeWorkflowBundle } from '../../scripts/workflow-bundle';
import { harness, testDir, type Harness } from '../support/env';

const { manifest } = parseManifest(
  `
version: 1
name: operator-status
servers:
  ops: { kind: in_process }
tools:
  - id: tool://ops/read
    description: Read a record.
    input_schema: &rec { type: object, properties: { id: { type: string } }, required: [id], additionalProperties: false }
    safety: read_only
    recovery: retry
  - id: tool://ops/apply
    description: Apply a change; a person approves each one.
    input_schema: *rec
    safety: mutating
    honours_idempotency_key: true
    recovery: retry
    approval: always
`,
  'operator-status.yaml',
);

const tools: Tool[] = manifest.tools.map((d) => ({
  origin: 'builtin',
  def: () => ({ id: d.id, description: d.description, inputSchema: d.input_schema, safety: d.safety }),
  async call(_ctx, input) {
    return { done: (input as { id: string }).id };
  },
}));

const call = (tool: string, id: string) => ({ name: `ops__${tool}`, arguments: { id } });

/** What the operator reads: `describe`'s status and search attributes, and Current Details. */
async function operatorView(handle: WorkflowHandle) {
  const d = await handle.describe();
  const metadata: { currentDetails?: string } = await handle.query('__temporal_workflow_metadata');
  return {
    status: d.status.name,
    toolsCalled: d.typedSearchAttributes.get(TOOLS_CALLED),
    waitingFor: d.typedSearchAttributes.get(WAITING_FOR),
    refusals: d.typedSearchAttributes.get(REFUSALS),
    details: metadata.currentDetails ?? '',
  };
}

describe("the operator's view of a run that did not complete", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness(`operator-status-${randomUUID()}`);
    await h.runWorker({ manifest, tools });
  });
  afterAll(async () => {
    await h.close();
  });

  it('a running run lists the tools it called; cancelled while a call waits, it waits for nobody and says so', async () => {
    const handle = await startAgentRun(
      h.client,
      agentInput(manifest, {
        prompt: 'Read r1, then apply it.',
        turns: [
          // ops__nope is declared nowhere: refused before anything happens.
          { tool_calls: [call('read', 'r1'), call('nope', 'r1')] },
          { tool_calls: [call('apply', 'r1')] },
          { final: 'done' },
        ],
      }),
      { taskQueue: h.taskQueue, workflowId: `status-cancelled-${randomUUID()}` },
    );
    const pending = await waitForPending(handle);
    const running = await operatorView(handle);
    expect(running).toMatchObject({
      status: 'RUNNING',
      toolsCalled: ['tool://ops/read'],
      waitingFor: 'approval',
      refusals: 1,
    });
    // The whole effect key, and the update's exact input, ready to paste into the Web UI.
    expect(running.details).toContain(`**Waiting for approval** until `);
    expect(running.details).toContain(`#2 tool://ops/apply`);
    expect(running.details).toContain(`Effect key: \`${pending.effectKey}\``);
    const payload = /\n```json\n(\{\n[\s\S]*?\n\})\n```(\n|$)/.exec(running.details)?.[1];
    expect(JSON.parse(payload!)).toEqual({ effectKey: pending.effectKey, decision: 'approve', by: 'web-ui' });
    // Which call was refused, by which rule.
    expect(running.details).toContain('**Refused**: #1 ops__nope (refused by unreachable: ');

    await handle.cancel();
    const err = await handle.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    const cancelled = await operatorView(handle);
    expect(cancelled).toMatchObject({
      status: 'CANCELLED',
      toolsCalled: ['tool://ops/read'],
      waitingFor: 'none',
      refusals: 1,
    });
    expect(cancelled.details).toMatch(/^\*\*Cancelled\*\*: the run waits for nobody\./);
    expect(cancelled.details).toContain(
      `**Wait cancelled**: #2 tool://ops/apply (effect \`${pending.effectKey}\`) waited for approval; nobody decided it.`,
    );
    expect(cancelled.details).not.toContain('Waiting for');
    expect(cancelled.details).toContain(
      '**Effects**: 3 calls: 1 allowed, 1 refused by unreachable, 1 undecided (cancelled)',
    );
    expect(await handle.query(pendingEscalations)).toEqual([]);
  });

  it('a run that fails while a call waits for a person waits for nobody, and says why it failed', async () => {
    // toolplane's own runs turn a call's failure into the call's result; a team's own workflow may fail
    // while a call waits, and tells StepCtx it ended.
    const own = await harness(`operator-status-own-${randomUUID()}`);
    const bundle = path.join(testDir('own-workflows'), 'bundle.js');
    await writeWorkflowBundle(bundle, path.resolve(__dirname, '..', 'fixtures', 'own-workflows'), { sources: false });
    await own.runWorker({ manifest, tools, workflowBundle: { codePath: bundle } });
    try {
      const handle = await own.client.workflow.start('applyUnlessGivenUp', {
        taskQueue: own.taskQueue,
        workflowId: `status-failed-${randomUUID()}`,
        args: ['agent:test'],
        typedSearchAttributes: [
          { key: REFUSALS, value: 0 },
          { key: WAITING_FOR, value: 'none' },
        ],
      });
      await waitForPending(handle);
      expect(await operatorView(handle)).toMatchObject({
        status: 'RUNNING',
        toolsCalled: ['tool://ops/read'],
        waitingFor: 'approval',
      });
      await handle.signal('giveUp', 'the change window closed');
      const err = await handle.result().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      const failed = await operatorView(handle);
      expect(failed).toMatchObject({ status: 'FAILED', toolsCalled: ['tool://ops/read'], waitingFor: 'none' });
      expect(failed.details).toMatch(/^\*\*Failed\*\*: gave up: the change window closed\n/);
      expect(failed.details).not.toContain('Waiting for');
      expect(await handle.query(pendingEscalations)).toEqual([]);
    } finally {
      await own.close();
    }
  });
});
