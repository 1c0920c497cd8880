// `toolplane gateway` as a user runs it: one process holding the worker and the MCP server. Killed
// with SIGKILL in the middle of a refund (after the payment service committed it, before the call's
// outcome was recorded), restarted on the same port: the client repeats the call under its key and
// gets the one refund; the payment store holds one.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { paymentsStore } from '../../examples/support-desk/payments-store';
import { freePort } from '../../scripts/dev-server';
import { testAddress, testDir } from '../support/env';
import { testIssuer, type TestIssuer } from '../support/identity';
import { waitFor } from '../support/wait';
import { deskManifest, gatewayToken, mcpClient, sessionIdOf } from '../gateway/support';

const root = path.resolve(__dirname, '..', '..');
const TICKET_KEY = Buffer.alloc(32, 11).toString('base64url');
let issuer: TestIssuer;
let dir: string;
let port: number;
let resource: string;
let client: Client;
const taskQueue = `gateway-cli-${process.pid}`;
const running: ChildProcess[] = [];

interface GatewayProcess {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

function startGateway(env: Record<string, string> = {}): GatewayProcess {
  const args = ['--import', 'tsx', path.join(root, 'cli.ts'), 'gateway'];
  args.push(
    '--manifest',
    path.join(dir, 'manifest.json'),
    '--tools',
    path.join(root, 'examples', 'support-desk', 'tools'),
  );
  args.push('--identity', path.join(dir, 'identity.json'), '--task-queue', taskQueue, '--address', testAddress());
  args.push('--port', String(port), '--resource', resource, '--workflow-bundle', process.env.TOOLPLANE_TEST_BUNDLE!);
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: {
      ...process.env,
      TOOLPLANE_STORE_DIR: dir,
      TOOLPLANE_TICKET_KEY: TICKET_KEY,
      TOOLPLANE_STICKY_TIMEOUT: '1s',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, output: () => out };
}

async function ready(g: GatewayProcess): Promise<void> {
  await waitFor('the gateway to serve', 60_000, () => {
    if (g.child.exitCode !== null) throw new Error(`the gateway exited: ${g.output()}`);
    return g.output().includes('[gateway] MCP endpoint');
  });
}

beforeAll(async () => {
  issuer = await testIssuer();
  dir = testDir('gateway-cli');
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(deskManifest()));
  fs.writeFileSync(path.join(dir, 'identity.json'), JSON.stringify(issuer.identity));
  port = await freePort();
  resource = `http://127.0.0.1:${port}/mcp`;
  client = new Client({ connection: await Connection.connect({ address: testAddress() }) });
});

afterAll(async () => {
  for (const c of running) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await client?.connection.close();
});

test('SIGKILLed mid-refund and restarted, the gateway answers the repeated call with the one refund', async () => {
  // The support desk's fault points kill at any tool's commit: the lookup runs on a process without one.
  const first = startGateway();
  await ready(first);
  const token = await gatewayToken(issuer, resource, 'agent:desk');
  const mcp = await mcpClient(resource, token);
  const sessionId = sessionIdOf(mcp);
  expect((await mcp.listTools()).tools.map((t) => t.name)).toContain('payments__refund');
  const found = await mcp.callTool({ name: 'crm__lookup_customer', arguments: { email: 'alice@example.com' } });
  expect(found.isError).toBeFalsy();
  await mcp.close();
  first.child.kill('SIGKILL');
  await first.exited;

  // This one kills itself after the payment service committed the refund: the call's answer is lost.
  const crashing = startGateway({ TOOLPLANE_KILL_AT: 'after_commit' });
  await ready(crashing);
  const refund = {
    name: 'payments__refund',
    arguments: { account_id: 'acct_alice_001', amount_cents: 4200, currency: 'EUR' },
    _meta: { idempotencyKey: 'refund-across-a-crash' },
  };
  const lost = await mcpClient(resource, token, sessionId);
  await expect(lost.callTool(refund)).rejects.toThrow();
  expect(await crashing.exited).toEqual({ code: null, signal: 'SIGKILL' });
  await lost.close().catch(() => undefined);
  const store = paymentsStore(dir);
  expect(store.all().filter((p) => p.amountCents === 4200)).toHaveLength(1);

  // Restarted: the client repeats the call under its key and gets the one refund.
  const restarted = startGateway();
  await ready(restarted);
  const again = await mcpClient(resource, token, sessionId);
  const outcome = await again.callTool(refund, undefined, { timeout: 120_000 });
  expect(outcome.isError).toBeFalsy();
  expect(outcome.structuredContent).toMatchObject({ status: 'refunded' });
  expect(store.all().filter((p) => p.amountCents === 4200)).toHaveLength(1);
  await again.close();

  restarted.child.kill('SIGINT');
  expect(await restarted.exited).toEqual({ code: 0, signal: null });
}, 240_000);

// Issue 48: a host that sends no idempotency key re-issues the call under a new request id.
test('SIGKILLed mid-refund sent without a key and restarted, the re-issued call (a new request id) gets the one refund', async () => {
  const first = startGateway();
  await ready(first);
  const token = await gatewayToken(issuer, resource, 'agent:desk');
  const mcp = await mcpClient(resource, token);
  const sessionId = sessionIdOf(mcp);
  const found = await mcp.callTool({ name: 'crm__lookup_customer', arguments: { email: 'alice@example.com' } });
  expect(found.isError).toBeFalsy();
  await mcp.close();
  first.child.kill('SIGKILL');
  await first.exited;

  const crashing = startGateway({ TOOLPLANE_KILL_AT: 'after_commit' });
  await ready(crashing);
  const refund = {
    name: 'payments__refund',
    arguments: { account_id: 'acct_alice_001', amount_cents: 4300, currency: 'EUR' },
  };
  // A client resuming a session sends no initialize: this call is request id 0.
  const lost = await mcpClient(resource, token, sessionId);
  await expect(lost.callTool(refund)).rejects.toThrow();
  expect(await crashing.exited).toEqual({ code: null, signal: 'SIGKILL' });
  await lost.close().catch(() => undefined);
  const store = paymentsStore(dir);
  expect(store.all().filter((p) => p.amountCents === 4300)).toHaveLength(1);

  // Restarted: the client re-issues the call, no key, under a new request id (its list was id 0; id 1 was
  // the lookup's in the first connection, another call under a reused id).
  const restarted = startGateway();
  await ready(restarted);
  const again = await mcpClient(resource, token, sessionId);
  await again.listTools();
  const outcome = await again.callTool(refund, undefined, { timeout: 120_000 });
  expect(outcome.isError).toBeFalsy();
  expect(outcome.structuredContent).toMatchObject({ status: 'refunded' });
  expect(outcome._meta?.['toolplane/sameCallAs']).toMatch(/^rpc:0:/);
  expect(store.all().filter((p) => p.amountCents === 4300)).toHaveLength(1);
  await again.close();

  restarted.child.kill('SIGINT');
  expect(await restarted.exited).toEqual({ code: 0, signal: null });
}, 240_000);
