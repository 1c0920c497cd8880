// The namespace as a trust boundary, on the secured multi-service cluster (issue 22, server side).
// A real `toolplane worker` (a worker's credential) serves toolplane's task queue. A rogue party
// holding a run starter's credential runs a worker of its own to reach the tools around the gate:
// R1 starts delegatedCall as a child on toolplane's task queue, R2 schedules performTool there
// (test/fixtures/rogue/workflows.ts). The server refuses the rogue worker's polls, so neither
// workflow takes a step and no refund lands. Clients without a credential, or with a certificate of
// another CA, are refused; the operator loop (list, approve, cancel) works with an operator's token
// and not with a starter's.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection, WorkflowNotFoundError, type ConnectionOptions } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import type { Manifest } from '../../catalog/manifest';
import { paymentsStore } from '../../examples/support-desk/payments-store';
import { spawnWorker, writeManifest, type WorkerProcess } from '../../scripts/worker-process';
import type { ToolRunResult } from '../../workflows/tool-run';
import type { RogueInput } from '../fixtures/rogue/workflows';
import { agentInput } from '../support/agent';
import { startTestCluster, type TestCluster } from '../support/cluster';
import { exampleManifest } from '../support/env';
import { waitFor } from '../support/wait';

const root = path.resolve(__dirname, '..', '..');
const PERMISSION_DENIED = 7;
const ATTACKER = 'acct_attacker_666';

let tc: TestCluster;
let worker: WorkerProcess;
let storeDir: string;
let rogueBundle: string;
const taskQueue = `secured-${randomUUID()}`;
const clients: { close(): Promise<void> }[] = [];

// The mail tool asks a person when the gate questions a call: a run waits for an approval.
const base = exampleManifest();
const askable: Manifest = {
  ...base,
  tools: base.tools.map((t) => (t.id === 'tool://mail/send_email' ? { ...t, approval: 'on_violation' } : t)),
};

async function client(role: 'starter' | 'operator' | 'worker'): Promise<Client> {
  const connection = await Connection.connect(tc.cluster.connectOptions(role));
  clients.push(connection);
  return new Client({ connection, namespace: tc.cluster.namespace });
}

/** The gRPC status code of a failed call, searched through its causes. */
function grpcCode(err: unknown): number | undefined {
  for (let e: unknown = err; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number') return code;
  }
  return undefined;
}

async function codeOf(p: Promise<unknown>): Promise<number | 'ok' | 'not found'> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 'not found';
    return grpcCode(err) ?? -1;
  }
}

beforeAll(async () => {
  tc = await startTestCluster('cluster-security');
  storeDir = path.join(tc.dir, 'stores');
  const manifestFile = writeManifest(tc.dir, askable);
  worker = spawnWorker({
    address: tc.cluster.address,
    env: tc.cluster.env('worker'),
    manifestFile,
    taskQueue,
    storeDir,
    workflowBundle: tc.workflowBundle,
  });
  rogueBundle = path.join(tc.dir, 'rogue-bundle.js');
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../fixtures/rogue/workflows') });
  fs.writeFileSync(rogueBundle, code);
  await waitFor('the toolplane worker to poll', 120_000, () => worker.output().includes('polling'), 250);
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await worker?.stop();
  await tc?.close();
});

it('serves toolplane with the right credentials: a run starter starts a refund that the worker performs', async () => {
  // The control for the refusals below: the worker is there and its store records what lands.
  const starter = await client('starter');
  const memo = `control-${randomUUID()}`;
  const result = (await starter.workflow.execute('toolRun', {
    taskQueue,
    workflowId: `secured-control-${randomUUID()}`,
    args: [
      {
        grants: ['tool://payments/refund'],
        principal: 'agent:test',
        calls: [
          {
            toolId: 'tool://payments/refund',
            args: { account_id: 'acct_alice_001', amount_cents: 100, currency: 'EUR', memo },
          },
        ],
      },
    ],
  })) as ToolRunResult;
  expect(result.status).toBe('completed');
  expect(
    paymentsStore(storeDir)
      .all()
      .filter((p) => p.memo === memo),
  ).toHaveLength(1);
});

it('refuses every poll of a task queue to a run starter and to an operator, and lets a worker poll', async () => {
  const poll = (c: Client, kind: 'workflow' | 'activity', queue: string) => {
    const req = { namespace: tc.cluster.namespace, taskQueue: { name: queue }, identity: 'security-test' };
    // A long poll that is let in waits for a task: a deadline ends it (DEADLINE_EXCEEDED, or an empty answer).
    return c.connection.withDeadline(Date.now() + 3000, (): Promise<unknown> =>
      kind === 'workflow' ? c.workflowService.pollWorkflowTaskQueue(req) : c.workflowService.pollActivityTaskQueue(req),
    );
  };
  for (const role of ['starter', 'operator'] as const) {
    const c = await client(role);
    for (const kind of ['workflow', 'activity'] as const)
      expect({ role, kind, code: await codeOf(poll(c, kind, taskQueue)) }).toEqual({
        role,
        kind,
        code: PERMISSION_DENIED,
      });
  }
  // A worker's credential is let in (on a queue of its own, so that it takes no task of toolplane's).
  const w = await client('worker');
  for (const kind of ['workflow', 'activity'] as const)
    expect({ kind, code: await codeOf(poll(w, kind, `control-${randomUUID()}`)) }).not.toEqual({
      kind,
      code: PERMISSION_DENIED,
    });
});

it('refuses a rogue worker with a run starter credential its poll: R1 (delegatedCall as its child) and R2 (performTool on the toolplane queue) take no step, nothing reaches the tool', async () => {
  const starter = await client('starter');
  const operator = await client('operator');
  const rogueQueue = `rogue-${randomUUID()}`;
  // R1 starts delegatedCall as its child on toolplane's task queue; R2 schedules performTool there.
  const attacks = await Promise.all(
    (['rogueDelegate', 'roguePerform'] as const).map(async (workflowType) => {
      const memo = `rogue-${workflowType}-${randomUUID()}`;
      const input: RogueInput = { toolplaneQueue: taskQueue, account: ATTACKER, memo };
      const handle = await starter.workflow.start(workflowType, {
        taskQueue: rogueQueue,
        workflowId: `rogue-${workflowType}-${randomUUID()}`,
        args: [input],
      });
      return { workflowType, memo, handle };
    }),
  );

  const native = await NativeConnection.connect(tc.cluster.connectOptions('starter'));
  clients.push(native);
  const rogue = await Worker.create({
    connection: native,
    namespace: tc.cluster.namespace,
    taskQueue: rogueQueue,
    workflowBundle: { codePath: rogueBundle },
  });
  // The worker stops on the refused poll; a deadline guards against one that would poll on.
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    rogue.run().then(
      () => 'ran',
      (err: unknown) => err,
    ),
    new Promise((r) => (timer = setTimeout(() => r('still polling after 180 s'), 180_000))),
  ]);
  clearTimeout(timer);
  if (rogue.getState() === 'RUNNING') rogue.shutdown();
  expect(String((outcome as Error).message ?? outcome)).toMatch(/PermissionDenied|PERMISSION_DENIED|unauthorized/i);

  for (const { workflowType, memo, handle } of attacks) {
    // Its workflow never started a task: no child, no activity, and the refund is nowhere.
    const events = (await handle.fetchHistory()).events ?? [];
    expect({ workflowType, started: events.filter((e) => e.workflowTaskStartedEventAttributes).length }).toEqual({
      workflowType,
      started: 0,
    });
    expect(events.some((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)).toBe(false);
    expect(events.some((e) => e.activityTaskScheduledEventAttributes)).toBe(false);
    expect(await codeOf(operator.workflow.getHandle(`${handle.workflowId}/delegated-0`).describe())).toBe('not found');
    expect(
      paymentsStore(storeDir)
        .all()
        .filter((p) => p.account === ATTACKER || p.memo === memo),
    ).toEqual([]);
    await operator.workflow.getHandle(handle.workflowId).terminate('security test: the rogue run');
  }
});

describe('clients without the right credential', () => {
  const reach = async (options: ConnectionOptions) => {
    let connection: Connection | undefined;
    try {
      connection = await Connection.connect({ ...options, connectTimeout: 5000 });
      const c = new Client({ connection, namespace: tc.cluster.namespace });
      await c.workflow.start('toolRun', { taskQueue, workflowId: `refused-${randomUUID()}`, args: [{}] });
      return 'ok';
    } catch (err) {
      return grpcCode(err) ?? (err as Error).message;
    } finally {
      await connection?.close().catch(() => undefined);
    }
  };

  it('refuses a client without TLS, one without a client certificate, and one without a token', async () => {
    const { ca, client: cert, tokens } = tc.cluster.credentials!;
    const caOnly = { serverRootCACertificate: fs.readFileSync(ca), serverNameOverride: 'localhost' };
    const certPair = { crt: fs.readFileSync(cert.cert), key: fs.readFileSync(cert.key) };
    // Plaintext, even with a valid token: the frontend speaks TLS only.
    expect(await reach({ address: tc.cluster.address, apiKey: tokens.operator, tls: false })).not.toBe('ok');
    // TLS without a client certificate: the handshake is refused.
    expect(await reach({ address: tc.cluster.address, tls: caOnly, apiKey: tokens.operator })).not.toBe('ok');
    // The certificate without a token: through TLS, and then refused by the authorizer.
    expect(await reach({ address: tc.cluster.address, tls: { ...caOnly, clientCertPair: certPair } })).toBe(
      PERMISSION_DENIED,
    );
    // A token signed by another key.
    const forged = `${tokens.operator.split('.').slice(0, 2).join('.')}.${Buffer.alloc(64).toString('base64url')}`;
    expect(
      await reach({ address: tc.cluster.address, tls: { ...caOnly, clientCertPair: certPair }, apiKey: forged }),
    ).toBe(PERMISSION_DENIED);
  });

  it('refuses a client whose certificate another CA signed, whatever token it holds', async () => {
    const { ca, wrongCa, tokens } = tc.cluster.credentials!;
    const tls = {
      serverRootCACertificate: fs.readFileSync(ca),
      serverNameOverride: 'localhost',
      clientCertPair: { crt: fs.readFileSync(wrongCa.cert), key: fs.readFileSync(wrongCa.key) },
    };
    const outcome = await reach({ address: tc.cluster.address, tls, apiKey: tokens.operator });
    expect(outcome).not.toBe('ok');
    expect(outcome).not.toBe(PERMISSION_DENIED); // refused at the handshake, before any authorizer
    await expect(
      NativeConnection.connect({ address: tc.cluster.address, tls, apiKey: tokens.worker }).then(async (c) => {
        await c.close();
        return 'connected';
      }),
    ).rejects.toThrow();
  });
});

/** `toolplane <args>` as a separate process with a role's environment (TLS files and token). */
function toolplane(role: 'starter' | 'operator', ...args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'cli.ts'), ...args], {
      cwd: root,
      env: { ...process.env, ...tc.cluster.env(role) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

it('runs the operator loop with an operator credential: list, approve, cancel; a starter may do none of it', async () => {
  const starter = await client('starter');
  const script = (to: string) => ({
    prompt: 'Handle ticket T-101.',
    turns: [
      { tool_calls: [{ name: 'tickets__read_ticket', arguments: { ticket_id: 'T-101' } }] },
      { tool_calls: [{ name: 'mail__send_email', arguments: { to, subject: 'ticket T-101', body: to } }] },
      { final: 'done' },
    ],
  });
  const start = (label: string) =>
    starter.workflow.start('agentRun', {
      taskQueue,
      workflowId: `secured-${label}-${randomUUID()}`,
      args: [agentInput(askable, script(`${label}@auditor.example`))],
    });
  const approved = await start('approve');
  const cancelled = await start('cancel');

  // Both wait for a person; the operator finds them.
  const waiting = await waitFor('both runs to wait for an approval', 120_000, async () => {
    const r = await toolplane('operator', 'list', '--waiting', '--json');
    if (r.code !== 0) throw new Error(r.out);
    const ids = (JSON.parse(r.out) as { runs: { workflowId: string }[] }).runs.map((x) => x.workflowId);
    return [approved.workflowId, cancelled.workflowId].every((id) => ids.includes(id)) ? ids : undefined;
  });
  expect(waiting).toEqual(expect.arrayContaining([approved.workflowId, cancelled.workflowId]));

  // A run starter may not list or cancel (the server refuses, and the CLI says so).
  const listed = await toolplane('starter', 'list', '--waiting');
  expect({ code: listed.code, refused: /PERMISSION_DENIED/.test(listed.out) }).toEqual({ code: 1, refused: true });
  expect(listed.out).toContain('The Temporal server refused this credential');
  const cancelByStarter = await toolplane('starter', 'cancel', cancelled.workflowId);
  expect(cancelByStarter.code).toBe(1);
  expect(cancelByStarter.out).toMatch(/PERMISSION_DENIED/);

  // Approve: the effect key from `escalations`, then `approve`; the run completes.
  const pending = await toolplane('operator', 'escalations', approved.workflowId, '--json');
  expect(pending.code).toBe(0);
  const [escalation] = (JSON.parse(pending.out) as { pending: { effectKey: string; kind: string }[] }).pending;
  expect(escalation?.kind).toBe('approval');
  const approve = await toolplane('operator', 'approve', approved.workflowId, escalation!.effectKey, '--by', 'ops');
  expect({ code: approve.code, out: approve.code === 0 ? '' : approve.out }).toEqual({ code: 0, out: '' });
  expect((await approved.result()).status).toBe('completed');

  // Cancel.
  const cancel = await toolplane('operator', 'cancel', cancelled.workflowId);
  expect({ code: cancel.code, out: cancel.code === 0 ? '' : cancel.out }).toEqual({ code: 0, out: '' });
  const operator = await client('operator');
  await waitFor('the cancelled run to close', 60_000, async () => {
    const d = await operator.workflow.getHandle(cancelled.workflowId).describe();
    return d.status.name !== 'RUNNING' ? d.status.name : undefined;
  });
});
