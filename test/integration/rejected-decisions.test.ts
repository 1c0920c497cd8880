// A decision the run rejects (a mistyped effect key, a repeated or mismatched answer) must never
// brick the run: after a worker restart, the run replays, takes the next decision and completes.
// Every update toolplane handles is tried rejected and repeated before a restart.
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import type { Manifest } from '../../catalog/manifest';
import { pendingEscalations, resolveEscalation, type EscalationDecision } from '../../workflows/escalation';
import { WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_PATH } from '../../runtime/workflow-modules';
import { workflowSpanSinks } from '../../activities/telemetry';
import { idempotencyKey } from '../../common/effect-key';
import { effectsFromHistory } from '../../inspect/journal';
import type { AgentRunResult } from '../../workflows/agent/run';
import type { ToolRunResult } from '../../workflows/tool-run';
import type { Tool } from '../../activities/tool';
import { loadManifest } from '../../runtime/manifest-file';
import { SCENARIO_MANIFEST, scenarioTools } from '../support/scenario-tools';
import { agentInput } from '../support/agent';
import { supportDesk } from '../support/desk';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { waitForPending } from '../support/escalations';
import { waitFor } from '../support/wait';
import { STREAM_APPEND_UPDATE, STREAM_MESSAGE_REFUSED } from '../../common/stream-protocol';

describe('rejected and repeated decisions, then a worker restart', () => {
  const dir = testDir('rejected-decisions');
  const { outbox, tools } = supportDesk(dir);
  const base = exampleManifest();
  // The mail tool asks a person when the gate questions a call, instead of refusing it.
  const askable: Manifest = {
    ...base,
    tools: base.tools.map((t) => (t.id === 'tool://mail/send_email' ? { ...t, approval: 'on_violation' } : t)),
  };
  // Two mails to an address no trusted source produced: each waits for a person.
  const script = {
    prompt: 'Handle ticket T-101.',
    turns: [
      { tool_calls: [{ name: 'tickets__read_ticket', arguments: { ticket_id: 'T-101' } }] },
      {
        tool_calls: [{ name: 'mail__send_email', arguments: { to: 'first@auditor.example', subject: 's', body: '1' } }],
      },
      {
        tool_calls: [
          { name: 'mail__send_email', arguments: { to: 'second@auditor.example', subject: 's', body: '2' } },
        ],
      },
      { final: 'done' },
    ],
  };
  let h: Harness;
  beforeAll(async () => {
    h = await harness(`rejected-${randomUUID()}`);
  });
  afterAll(() => h.close());

  /** A worker that serves until `stop()`: a restart is a stop and a new one (its cache is gone). */
  async function serve(
    setup: { manifest: Manifest; tools: Tool[] } = { manifest: askable, tools },
  ): Promise<{ stop(): Promise<void> }> {
    const worker = await h.startWorker(setup);
    const done = worker.run();
    return {
      async stop() {
        worker.shutdown();
        await done;
      },
    };
  }

  async function rejected(handle: WorkflowHandle, decision: EscalationDecision): Promise<string> {
    const err: unknown = await handle.executeUpdate(resolveEscalation, { args: [decision] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
    return String((err as WorkflowUpdateFailedError).cause?.message);
  }

  async function restartedAndApproved(workflowId: string, stale: (handle: WorkflowHandle) => Promise<void>) {
    const handle = h.client.workflow.getHandle(workflowId);
    let worker = await serve();
    const first = await waitForPending(handle);
    await stale(handle);
    await handle.executeUpdate(resolveEscalation, {
      args: [{ effectKey: first.effectKey, decision: 'approve', by: 'supervisor' }],
    });
    // The answer repeated, and answered again after the call went ahead: refused, nothing changes.
    expect(await rejected(handle, { effectKey: first.effectKey, decision: 'approve', by: 'supervisor' })).toMatch(
      /no call is waiting for a decision under effect key/,
    );
    const second = await waitFor('the second call to wait', 120_000, async () =>
      (await handle.query(pendingEscalations)).find((p) => p.effectKey !== first.effectKey),
    );
    await worker.stop();
    worker = await serve();
    try {
      await handle.executeUpdate(resolveEscalation, {
        args: [{ effectKey: second.effectKey, decision: 'approve', by: 'supervisor' }],
      });
      const result = (await handle.result()) as AgentRunResult;
      expect(result.answer).toBe('done');
      const approved = result.journal.filter((e) => e.decision === 'approved');
      expect(approved.map((e) => e.position)).toEqual([1, 2]);
      // Each approved mail landed once, under this run's idempotency keys.
      const keys = new Set(approved.map((e) => idempotencyKey(workflowId, e.effectKey!)));
      const sent = outbox.all().filter((m) => keys.has(m.idempotencyKey));
      expect(sent.map((m) => m.to).sort()).toEqual(['first@auditor.example', 'second@auditor.example']);
    } finally {
      await worker.stop();
    }
    // What an operator reads: each call approved once; the refused attempts are no decisions.
    const history = await handle.fetchHistory();
    const effects = effectsFromHistory(history.events ?? []);
    expect(effects.filter((v) => v.toolId === 'tool://mail/send_email').map((v) => v.personDecisions)).toEqual([
      ['approve by supervisor'],
      ['approve by supervisor'],
    ]);
    await replays(handle);
  }

  /** The whole history replays with the current code. */
  async function replays(handle: WorkflowHandle): Promise<void> {
    await Worker.runReplayHistory(
      {
        workflowsPath: WORKFLOWS_PATH,
        interceptors: { workflowModules: WORKFLOW_INTERCEPTOR_MODULES },
        sinks: workflowSpanSinks(),
      },
      await handle.fetchHistory(),
      handle.workflowId,
    );
  }

  async function start(): Promise<string> {
    const workflowId = `rejected-${randomUUID()}`;
    await h.client.workflow.start('agentRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [agentInput(askable, script)],
    });
    return workflowId;
  }

  it('a mistyped effect key, then the right one, then a restart: the run completes and replays', async () => {
    const workflowId = await start();
    await restartedAndApproved(workflowId, async (handle) => {
      expect(await rejected(handle, { effectKey: 'ek-mistyped', decision: 'approve', by: 'supervisor' })).toMatch(
        /no call is waiting for a decision under effect key ek-mistyped/,
      );
    });
  });

  it("a forged token batch first (refused by the stream's validator), then the right decision, then a restart: the run completes and replays", async () => {
    const workflowId = await start();
    await restartedAndApproved(workflowId, async (handle) => {
      // The run's first update: refused before history (a speculative task the server drops).
      const tokens = [{ type: 'tokens', turn: 'turn-1', attempt: 1, index: 0, deltas: ['forged'] }];
      const err: unknown = await handle
        .executeUpdate(STREAM_APPEND_UPDATE, { args: [{ publisher: 'forger', sequence: 1, tokens, sig: 'x' }] })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
      expect((err as WorkflowUpdateFailedError).cause).toMatchObject({ type: STREAM_MESSAGE_REFUSED });
    });
  });

  it('an answer of the wrong kind (resolve on an approval), then a restart: the run completes and replays', async () => {
    const workflowId = await start();
    await restartedAndApproved(workflowId, async (handle) => {
      const [pending] = await handle.query(pendingEscalations);
      expect(await rejected(handle, { effectKey: pending!.effectKey, decision: 'retry' })).toMatch(
        /"retry" does not answer a approval question/,
      );
    });
  });

  it('in-doubt decisions: a wrong key, an approval where a resolution is asked, a repeated retry, then a restart', async () => {
    const manifest = loadManifest(SCENARIO_MANIFEST).manifest;
    const scenario = scenarioTools(testDir('rejected-in-doubt'));
    const setup = { manifest, tools: scenario.tools };
    const calls = [1, 2].map((n) => ({
      toolId: 'tool://flaky/notify',
      args: { to: `ops-${n}@example.com`, text: `${n}` },
    }));
    const handle = await h.client.workflow.start('toolRun', {
      taskQueue: h.taskQueue,
      workflowId: `rejected-in-doubt-${randomUUID()}`,
      args: [{ manifest, grants: manifest.tools.map((t) => t.id), principal: 'agent:test', calls }],
    });
    let worker = await serve(setup);
    const first = await waitForPending(handle);
    expect(first.kind).toBe('in_doubt');
    expect(await rejected(handle, { effectKey: 'ek-nope', decision: 'retry' })).toMatch(/no call is waiting/);
    expect(await rejected(handle, { effectKey: first.effectKey, decision: 'approve' })).toMatch(
      /"approve" does not answer a in_doubt question/,
    );
    await handle.executeUpdate(resolveEscalation, { args: [{ effectKey: first.effectKey, decision: 'retry' }] });
    expect(await rejected(handle, { effectKey: first.effectKey, decision: 'retry' })).toMatch(/no call is waiting/);
    const second = await waitFor('the second call to wait', 120_000, async () =>
      (await handle.query(pendingEscalations)).find((p) => p.effectKey !== first.effectKey),
    );
    await worker.stop();
    worker = await serve(setup);
    try {
      await handle.executeUpdate(resolveEscalation, { args: [{ effectKey: second.effectKey, decision: 'retry' }] });
      const result = (await handle.result()) as ToolRunResult;
      expect(result.outputs).toEqual([{ delivered: true }, { delivered: true }]);
      expect(result.journal.map((e) => e.recovery)).toEqual(['escalated_retry', 'escalated_retry']);
    } finally {
      await worker.stop();
    }
    // Each call was sent twice (the in-doubt send and the one a person asked for), never a third time.
    for (const c of calls)
      expect(scenario.store.all().filter((r) => JSON.stringify(r.args) === JSON.stringify(c.args))).toHaveLength(2);
    await replays(handle);
  });
});
