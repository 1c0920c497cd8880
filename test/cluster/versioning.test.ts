// Worker Versioning on the multi-service cluster: a deploy of a changed pipeline while runs wait for
// a person. Version A (the released workflows) starts runs that wait for an approval; version B, whose
// agentRun issues one more command (test/fixtures/versioning/workflows-b.ts), is deployed and made
// current. A's runs are pinned: they finish on A's worker, and B's code never replays them (it could
// not: the test replays an A history on B's code and gets the non-determinism error). New runs start
// on B. A chain that waits on A and continues as new after B is current goes on on A: the server
// hands a pinned run's version to the run that continues it. Both versions are real `toolplane
// worker` processes (`--deployment-name`, `--build-id`).
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import type { Manifest } from '../../catalog/manifest';
import { workflowSpanSinks } from '../../activities/telemetry';
import { idempotencyKey } from '../../common/effect-key';
import { outbox } from '../../examples/support-desk/tools/mail';
import { spawnWorker, writeManifest, type WorkerProcess } from '../../scripts/worker-process';
import { writeWorkflowBundle } from '../../scripts/workflow-bundle';
import { resolveEscalation } from '../../workflows/escalation';
import type { AgentRunResult } from '../../workflows/agent/run';
import { agentInput } from '../support/agent';
import { makeCurrent, tasksOf, versionOf } from '../support/deployment';
import { exampleManifest } from '../support/env';
import { waitForPending } from '../support/escalations';
import { startTestCluster, type TestCluster } from '../support/cluster';

const DEPLOYMENT = 'toolplane-versioning-test';
const RUNS_PER_VERSION = 3;

let tc: TestCluster;
let bundleB: string;

beforeAll(async () => {
  tc = await startTestCluster('cluster-versioning');
  bundleB = path.join(tc.dir, 'workflow-bundle-b.js');
  await writeWorkflowBundle(bundleB, require.resolve('../fixtures/versioning/workflows-b'), { sources: false });
});
afterAll(async () => {
  await tc?.close();
});

// The mail tool asks a person when the gate questions a call: a run waits there as long as nobody answers.
const base = exampleManifest();
const askable: Manifest = {
  ...base,
  tools: base.tools.map((t) => (t.id === 'tool://mail/send_email' ? { ...t, approval: 'on_violation' } : t)),
};

/** A ticket read, then a mail to an address no trusted source produced (it waits for approval), then the answer. */
function script(to: string) {
  return {
    prompt: 'Handle ticket T-101.',
    turns: [
      { tool_calls: [{ name: 'tickets__read_ticket', arguments: { ticket_id: 'T-101' } }] },
      { tool_calls: [{ name: 'mail__send_email', arguments: { to, subject: 'ticket T-101', body: to } }] },
      { final: 'done' },
    ],
  };
}

/** A mail first (it waits for approval), then a ticket read: with a continue-as-new after every turn's calls, three runs. */
const chainScript = {
  prompt: 'Handle ticket T-101.',
  turns: [
    {
      tool_calls: [
        { name: 'mail__send_email', arguments: { to: 'chain@auditor.example', subject: 's', body: 'chain' } },
      ],
    },
    { tool_calls: [{ name: 'tickets__read_ticket', arguments: { ticket_id: 'T-101' } }] },
    { final: 'done' },
  ],
};

/** Every run of a chain, first to last, by following each history's continued-as-new event. */
async function chainRuns(
  client: Client,
  workflowId: string,
  firstRunId: string,
): Promise<{ runId: string; history: temporal.api.history.v1.IHistory }[]> {
  const runs: { runId: string; history: temporal.api.history.v1.IHistory }[] = [];
  let runId: string | undefined = firstRunId;
  while (runId) {
    const history: temporal.api.history.v1.IHistory = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    runs.push({ runId, history });
    runId = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return runs;
}

it('a deploy while runs wait: A finishes its runs, B starts the new ones, nothing fails or repeats', async () => {
  const dir = path.join(tc.dir, 'versioning');
  fs.mkdirSync(dir, { recursive: true });
  const storeDir = path.join(dir, 'stores');
  const manifestFile = writeManifest(dir, askable);
  const taskQueue = `versioning-${randomUUID()}`;
  const connection = await Connection.connect(tc.cluster.connectOptions('operator'));
  const client = new Client({ connection });
  const workers: WorkerProcess[] = [];
  const deploy = (buildId: string, workflowBundle: string): WorkerProcess => {
    const w = spawnWorker({
      address: tc.cluster.address,
      env: tc.cluster.env('worker'),
      manifestFile,
      taskQueue,
      storeDir,
      workflowBundle,
      args: ['--deployment-name', DEPLOYMENT, '--build-id', buildId],
    });
    workers.push(w);
    return w;
  };
  const start = async (
    label: string,
  ): Promise<{ handle: WorkflowHandleWithFirstExecutionRunId; to: string; chain?: boolean }[]> => {
    const started = [];
    for (let i = 0; i < RUNS_PER_VERSION; i++) {
      const to = `${label}-${i}@auditor.example`;
      const handle = await client.workflow.start('agentRun', {
        taskQueue,
        workflowId: `versioning-${label}-${i}-${randomUUID()}`,
        args: [agentInput(askable, script(to))],
      });
      started.push({ handle, to });
    }
    return started;
  };
  const identity = (w: WorkerProcess) => `${w.pid}@${os.hostname()}`;

  try {
    // Version A: the first deploy, made current; its runs wait for a person.
    const a = deploy('A', tc.workflowBundle);
    await makeCurrent(client, DEPLOYMENT, 'A');
    const onA = await start('a');
    onA.push({
      to: 'chain@auditor.example',
      chain: true,
      handle: await client.workflow.start('agentRun', {
        taskQueue,
        workflowId: `versioning-chain-${randomUUID()}`,
        args: [agentInput(askable, chainScript, { continueAsNewAfterEvents: 1 })],
      }),
    });
    const pendingA = await Promise.all(onA.map((r) => waitForPending(r.handle)));

    // Version B, with a changed pipeline, deployed beside A and made current while A's runs wait.
    const b = deploy('B', bundleB);
    await makeCurrent(client, DEPLOYMENT, 'B');
    const onB = await start('b');
    const pendingB = await Promise.all(onB.map((r) => waitForPending(r.handle)));
    for (const r of onA)
      expect({ run: r.to, ...(await versionOf(client, r.handle.workflowId)) }).toEqual({
        run: r.to,
        behavior: 'PINNED',
        deploymentName: DEPLOYMENT,
        buildId: 'A',
      });
    for (const r of onB)
      expect({ run: r.to, ...(await versionOf(client, r.handle.workflowId)) }).toEqual({
        run: r.to,
        behavior: 'PINNED',
        deploymentName: DEPLOYMENT,
        buildId: 'B',
      });

    // The approvals arrive after B is current: each run goes on, and ends, where it started.
    const all = [
      ...onA.map((r, i) => ({ ...r, pending: pendingA[i]! })),
      ...onB.map((r, i) => ({ ...r, pending: pendingB[i]! })),
    ];
    for (const r of all)
      await r.handle.executeUpdate(resolveEscalation, {
        args: [{ effectKey: r.pending.effectKey, decision: 'approve', by: 'supervisor' }],
      });
    // A handle's result follows the chain to its last run.
    const results = (await Promise.all(all.map((r) => r.handle.result()))) as AgentRunResult[];
    expect(results.map((r) => r.answer)).toEqual(all.map(() => 'done'));

    for (const [runs, worker, buildId, firstCommand] of [
      [onA, a, 'A', 'markerRecorded'], // the released agentRun opens with the worker's answer (a local activity)
      [onB, b, 'B', 'timerStarted'], // B's opens with its extra timer
    ] as const) {
      for (const r of runs) {
        const chain = await chainRuns(client, r.handle.workflowId, r.handle.firstExecutionRunId);
        // The chain: its first run waited on A; the two it continued into started after B was current.
        expect({ run: r.to, runs: chain.length }).toEqual({ run: r.to, runs: r.chain ? 3 : 1 });
        for (const [i, { runId, history }] of chain.entries()) {
          const t = tasksOf(history);
          const run = `${r.to} run ${i + 1}`;
          expect({ run, failed: t.failedWorkflowTasks, firstCommand: t.firstCommand }).toEqual({
            run,
            failed: [],
            firstCommand,
          });
          // Every workflow task, before and after the deploy, completed by this version's worker; every activity ran there.
          expect({
            run,
            tasks: new Set(t.workflowTasks.map((w) => `${w.identity} ${w.buildId} ${w.behavior}`)),
          }).toEqual({
            run,
            tasks: new Set([`${identity(worker)} ${buildId} PINNED`]),
          });
          expect({ run, activityWorkers: new Set(t.activityWorkers) }).toEqual({
            run,
            activityWorkers: new Set([identity(worker)]),
          });
          expect(t.activityWorkers.length).toBeGreaterThanOrEqual(1); // a chain's last run: its final model turn alone
          expect({ run, ...(await versionOf(client, r.handle.workflowId, runId)) }).toEqual({
            run,
            behavior: 'PINNED',
            deploymentName: DEPLOYMENT,
            buildId,
          });
        }
      }
    }

    // Each approved mail went out once, under its run's idempotency key; no call arrived twice.
    const mail = outbox(storeDir);
    expect(mail.repeats()).toBe(0);
    const sent = mail.all();
    expect(sent.map((m) => m.to).sort()).toEqual(all.map((r) => r.to).sort());
    for (const r of all)
      expect(sent.find((m) => m.to === r.to)?.idempotencyKey).toBe(
        idempotencyKey(r.handle.workflowId, r.pending.effectKey),
      );

    // Why pinning matters here: B's code cannot replay a history A wrote, while A's replays it.
    const historyA = await onA[0]!.handle.fetchHistory();
    const replay = (codePath: string) =>
      Worker.runReplayHistory(
        { workflowBundle: { codePath }, sinks: workflowSpanSinks() },
        historyA,
        onA[0]!.handle.workflowId,
      );
    await expect(replay(tc.workflowBundle)).resolves.toBeUndefined();
    await expect(replay(bundleB)).rejects.toThrow(/[Nn]ondeterminism|DeterminismViolation/);
  } finally {
    for (const w of workers) await w.stop();
    await connection.close();
  }
});
