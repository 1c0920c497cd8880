// The MCP gateway under SIGKILL (issue 32): a real process is killed while a refund is in flight, a new
// one starts, and the MCP SDK's own Client (Streamable HTTP, bearer token) repeats the call under its
// idempotencyKey. The client gets the call's one outcome; the payments store holds one refund, sent once.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Manifest } from '../../catalog/manifest';
import { idempotencyKey } from '../../common/effect-key';
import { mcpSessionWorkflowId } from '../../common/gateway-protocol';
import { paymentsStore } from '../../examples/support-desk/payments-store';
import { createGateway, type Gateway } from '../../gateway/gateway';
import { spawnNode as spawnProcess, writeManifest, type WorkerProcess } from '../../scripts/worker-process';
import { freePort } from '../../scripts/dev-server';
import { harness, testAddress, testDir, type Harness } from '../support/env';
import { waitFor } from '../support/wait';
import { historyOf, scheduledActivities } from '../support/history';
import { testIssuer, type TestIssuer } from '../support/identity';
import { spawnTestWorker } from '../support/worker-process';
import { deskManifest, gatewayToken, mcpClient, sessionIdOf } from '../gateway/support';

const root = path.resolve(__dirname, '..', '..');
const TICKET_KEY = Buffer.alloc(32, 11).toString('base64url');
/** Long enough for a lost call to be noticed and recovered on a busy machine (the SDK's default is 60 s). */
const CALL_TIMEOUT_MS = 120_000;

/** The gateway's support desk with timeouts short enough that a call lost with its process is noticed in seconds. */
function fastManifest(startToClose = '3s'): Manifest {
  const m = deskManifest();
  return { ...m, tools: m.tools.map((t) => ({ ...t, timeouts: { ...t.timeouts, start_to_close: startToClose } })) };
}

type GatewayProcess = WorkerProcess;

/** A node process with the suite's ticket key, which the gateway and the worker share. */
const spawnNode = (args: string[], storeDir: string, env: Record<string, string> = {}): GatewayProcess =>
  spawnProcess(args, storeDir, { TOOLPLANE_TICKET_KEY: TICKET_KEY, ...env });

interface GatewaySetup {
  manifestFile: string;
  identityFile: string;
  taskQueue: string;
  port: number;
  resource: string;
  storeDir: string;
  env?: Record<string, string>;
}

/** A real `toolplane gateway` process (worker and MCP server in one), through the package's bin. */
function spawnGateway(opts: GatewaySetup): GatewayProcess {
  const args = [
    path.join(root, 'bin', 'toolplane.js'),
    'gateway',
    '--manifest',
    opts.manifestFile,
    '--tools',
    path.join(root, 'examples', 'support-desk', 'tools'),
    '--identity',
    opts.identityFile,
    '--task-queue',
    opts.taskQueue,
    '--address',
    testAddress(),
    '--port',
    String(opts.port),
    '--resource',
    opts.resource,
    '--workflow-bundle',
    process.env.TOOLPLANE_TEST_BUNDLE!,
  ];
  return spawnNode(args, opts.storeDir, opts.env);
}

/** A process running only createGateway (test/support/gateway-child.ts); the worker runs elsewhere. */
function spawnGatewayOnly(opts: GatewaySetup): GatewayProcess {
  return spawnNode(['--import', 'tsx', path.join(root, 'test', 'support', 'gateway-child.ts')], opts.storeDir, {
    TOOLPLANE_TEST_ADDRESS: testAddress(),
    GATEWAY_TASK_QUEUE: opts.taskQueue,
    GATEWAY_MANIFEST: opts.manifestFile,
    GATEWAY_IDENTITY: opts.identityFile,
    GATEWAY_PORT: String(opts.port),
    GATEWAY_RESOURCE: opts.resource,
  });
}

async function ready(g: GatewayProcess): Promise<void> {
  let ended = false;
  void g.exited.then(() => (ended = true));
  await waitFor('the gateway to listen', 120_000, () => ended || g.output().includes('[gateway] MCP endpoint'));
  if (ended) throw new Error(`the gateway process exited before listening:\n${g.output()}`);
}

/**
 * Sends `call` as a real client does after its server went away: the first send on a connection pooled to
 * the dead process may fail in transport, and the client repeats the same call (same key) until answered.
 */
async function callUntilAnswered(
  client: McpClient,
  call: { name: string; arguments: Record<string, unknown>; _meta: { idempotencyKey: string } },
): Promise<CallToolResult> {
  const end = Date.now() + CALL_TIMEOUT_MS;
  for (;;) {
    try {
      return (await client.callTool(call, undefined, { timeout: CALL_TIMEOUT_MS })) as CallToolResult;
    } catch (err) {
      if (!/fetch failed|ECONNRESET|ECONNREFUSED|terminated|socket/i.test((err as Error).message) || Date.now() > end)
        throw err;
    }
  }
}

/** The tool activities the session's run scheduled for its calls to `toolId`, in order. */
async function activitiesFor(h: Harness, sessionId: string, toolId: string): Promise<string[]> {
  const events = await historyOf(h.client, mcpSessionWorkflowId(sessionId));
  return scheduledActivities(events)
    .filter((a) => JSON.stringify(a.input ?? {}).includes(toolId))
    .map((a) => a.type);
}

describe('the MCP gateway SIGKILLed mid-call', () => {
  const manifest = fastManifest();
  let h: Harness;
  let issuer: TestIssuer;
  const processes: { stop(): Promise<void> }[] = [];
  const clients: McpClient[] = [];

  beforeAll(async () => {
    h = await harness(`gateway-fault-${process.pid}`);
    issuer = await testIssuer();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close().catch(() => {});
    await Promise.all(processes.splice(0).map((p) => p.stop()));
  });
  afterAll(() => h?.close());

  function world(name: string, m: Manifest = manifest) {
    const dir = testDir(name);
    const identityFile = path.join(dir, 'identity.json');
    fs.writeFileSync(identityFile, JSON.stringify(issuer.identity));
    return { dir, identityFile, manifestFile: writeManifest(dir, m), taskQueue: `${name}-${randomUUID()}` };
  }

  async function open(url: string, token: string, sessionId?: string): Promise<McpClient> {
    const c = await mcpClient(url, token, sessionId);
    clients.push(c);
    return c;
  }

  const refund = (key: string, memo: string) => ({
    name: 'payments__refund',
    arguments: { account_id: 'acct_alice_001', amount_cents: 2500, currency: 'EUR', memo },
    _meta: { idempotencyKey: key },
  });

  /** What a user relies on after the crash: one outcome, under one effect key, and one refund that was sent once. */
  function expectOneRefund(dir: string, sessionId: string, memo: string, outcome: CallToolResult) {
    expect(outcome.isError).toBeFalsy();
    const effectKey = outcome._meta?.['toolplane/effectKey'];
    expect(typeof effectKey).toBe('string');
    const payments = paymentsStore(dir);
    const landed = payments.all();
    expect(landed).toHaveLength(1);
    expect(landed[0]).toMatchObject({
      memo,
      account: 'acct_alice_001',
      idempotencyKey: idempotencyKey(mcpSessionWorkflowId(sessionId), effectKey as string),
    });
    expect(outcome.structuredContent).toEqual({ payment_id: landed[0]!.id, status: 'refunded', duplicate: false });
    expect(payments.repeats()).toBe(0);
  }

  test('`toolplane gateway` killed while the refund is in flight; a new one answers the retry with the one outcome', async () => {
    const w = world('gateway-kill');
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/mcp`;
    const gateway = (env?: Record<string, string>) => {
      const g = spawnGateway({ ...w, port, resource: url, storeDir: w.dir, env });
      processes.push(g);
      return g;
    };
    const first = gateway({ TOOLPLANE_HOLD_AT: 'refund', TOOLPLANE_HOLD_DIR: w.dir });
    await ready(first);

    const token = await gatewayToken(issuer, url, 'agent:desk');
    const client = await open(url, token);
    const sessionId = sessionIdOf(client);
    expect(
      (await client.callTool({ name: 'crm__lookup_customer', arguments: { email: 'alice@example.com' } })).isError,
    ).toBeFalsy();

    const memo = `gateway-kill-${randomUUID()}`;
    const call = refund('refund-alice-kill', memo);
    const inFlight = client.callTool(call, undefined, { timeout: CALL_TIMEOUT_MS }).then(
      (answer) => ({ answer }),
      (err: unknown) => ({ err }),
    );
    await waitFor('the refund to be in flight in the gateway', 60_000, () =>
      fs.readdirSync(w.dir).includes(`held-${first.child.pid}`),
    );
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    // The client's request died with the process: no outcome, and nothing was sent to the payments service.
    expect(await inFlight).toEqual({ err: expect.anything() });
    expect(paymentsStore(w.dir).all()).toEqual([]);

    fs.writeFileSync(path.join(w.dir, 'release'), '');
    await ready(gateway());
    // The same Client keeps its session id and repeats the call under the same idempotencyKey.
    const outcome = await callUntilAnswered(client, call);
    expectOneRefund(w.dir, sessionId, memo, outcome);

    // A fresh connection to the same session, repeating the key: the same outcome, nothing sent.
    const again = await open(url, token, sessionId);
    const repeated = (await again.callTool(call)) as CallToolResult;
    expect(repeated._meta?.['toolplane/effectKey']).toBe(outcome._meta?.['toolplane/effectKey']);
    expect(repeated.structuredContent).toEqual(outcome.structuredContent);
    expectOneRefund(w.dir, sessionId, memo, outcome);

    // The run lost the first send with the process, found it had not landed, and sent it once.
    expect(await activitiesFor(h, sessionId, 'tool://payments/refund')).toEqual([
      'performTool',
      'reconcileTool',
      'performTool',
    ]);
    const run = await h.client.workflow.getHandle(mcpSessionWorkflowId(sessionId)).describe();
    expect(run.status.name).toBe('RUNNING');
  });

  test('the gateway alone killed while its worker holds the refund; a new gateway answers the retry, and nothing was lost', async () => {
    // The worker stays up, so the held attempt must outlive the restart: a timeout no busy machine reaches.
    const w = world('gateway-only-kill', fastManifest('120s'));
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/mcp`;
    const gateway = () => {
      const g = spawnGatewayOnly({ ...w, port, resource: url, storeDir: w.dir });
      processes.push(g);
      return g;
    };
    const worker = spawnTestWorker({
      manifestFile: w.manifestFile,
      taskQueue: w.taskQueue,
      storeDir: w.dir,
      args: ['--identity', w.identityFile],
      env: { TOOLPLANE_TICKET_KEY: TICKET_KEY, TOOLPLANE_HOLD_AT: 'refund', TOOLPLANE_HOLD_DIR: w.dir },
    });
    processes.push(worker);
    const first = gateway();
    await ready(first);

    const token = await gatewayToken(issuer, url, 'agent:desk');
    const client = await open(url, token);
    const sessionId = sessionIdOf(client);
    const looked = await client.callTool(
      { name: 'crm__lookup_customer', arguments: { email: 'alice@example.com' } },
      undefined,
      { timeout: CALL_TIMEOUT_MS },
    );
    expect(looked.isError).toBeFalsy();

    const memo = `gateway-only-kill-${randomUUID()}`;
    const call = refund('refund-alice-gateway-only', memo);
    const inFlight = client.callTool(call, undefined, { timeout: CALL_TIMEOUT_MS }).then(
      (answer) => ({ answer }),
      (err: unknown) => ({ err }),
    );
    await waitFor('the refund to be in flight in the worker', 60_000, () =>
      fs.readdirSync(w.dir).includes(`held-${worker.pid}`),
    );
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(await inFlight).toEqual({ err: expect.anything() });
    expect(paymentsStore(w.dir).all()).toEqual([]);

    await ready(gateway());
    // The retry is sent while the call may still be held (it then waits for it) or after it finished: one outcome either way.
    const retried = callUntilAnswered(client, call);
    fs.writeFileSync(path.join(w.dir, 'release'), '');
    const outcome = await retried;
    expectOneRefund(w.dir, sessionId, memo, outcome);

    // The gateway's death cost the run nothing: the refund was sent by its one performTool, nothing reconciled.
    expect(await activitiesFor(h, sessionId, 'tool://payments/refund')).toEqual(['performTool']);
    expect(worker.child.exitCode).toBeNull();
  });

  test('the worker killed after the refund committed; the gateway stays up and answers the one outcome', async () => {
    const w = world('gateway-worker-kill');
    const worker = (killAt?: string) => {
      const p = spawnTestWorker({
        manifestFile: w.manifestFile,
        taskQueue: w.taskQueue,
        storeDir: w.dir,
        killAt,
        args: ['--identity', w.identityFile],
        env: { TOOLPLANE_TICKET_KEY: TICKET_KEY },
      });
      processes.push(p);
      return p;
    };
    const gateway: Gateway = await createGateway({
      client: h.client,
      taskQueue: w.taskQueue,
      manifest,
      identity: issuer.identity,
      ticketKey: TICKET_KEY,
    });
    processes.push({ stop: () => gateway.close() });
    // Every desk tool kills its process at after_commit when told, so the lookup runs on a worker that is not told.
    const calm = worker();

    const token = await gatewayToken(issuer, gateway.resource, 'agent:desk');
    const client = await open(gateway.url, token);
    const sessionId = sessionIdOf(client);
    const looked = await client.callTool(
      { name: 'crm__lookup_customer', arguments: { email: 'alice@example.com' } },
      undefined,
      { timeout: CALL_TIMEOUT_MS },
    );
    expect(looked.isError).toBeFalsy();
    await calm.stop();
    const dying = worker('after_commit');

    const memo = `worker-kill-${randomUUID()}`;
    const call = refund('refund-alice-worker-kill', memo);
    const inFlight = client.callTool(call, undefined, { timeout: CALL_TIMEOUT_MS });
    const ended = await dying.exited;
    expect({ signal: ended.signal, said: dying.output().includes('SIGKILL at after_commit') }).toEqual({
      signal: 'SIGKILL',
      said: true,
    });
    expect(paymentsStore(w.dir).all()).toHaveLength(1);
    worker();

    // The gateway held the client's request; the new worker recovers the call and the request is answered.
    const outcome = (await inFlight) as CallToolResult;
    expectOneRefund(w.dir, sessionId, memo, outcome);

    // The client repeats the call (as after a dropped connection): the same outcome, nothing sent.
    const repeated = (await client.callTool(call)) as CallToolResult;
    expect(repeated._meta?.['toolplane/effectKey']).toBe(outcome._meta?.['toolplane/effectKey']);
    expect(repeated.structuredContent).toEqual(outcome.structuredContent);
    expectOneRefund(w.dir, sessionId, memo, outcome);

    // The run found the lost call had landed and sent nothing again.
    expect(await activitiesFor(h, sessionId, 'tool://payments/refund')).toEqual(['performTool', 'reconcileTool']);
  });
});
