// Exactly once for an MCP client that sends no idempotency key (issue 48): a keyless tools/call whose
// stream drops and that the client re-issues under a new request id lands once, through a gateway
// restart too; a deliberate repeat under its own key lands again, as does a repeat after the window.
// A real worker, the suite's dev server, raw JSON-RPC for the calls (ids and drops under the test's
// control) and the MCP SDK's client for the session and the lookup.
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { Worker } from '@temporalio/worker';
import type { Ctx, Tool } from '../../activities/tool';
import { workflowSpanSinks } from '../../activities/telemetry';
import type { Manifest } from '../../catalog/manifest';
import { issueSessionPass } from '../../activities/identity/session-pass';
import { MCP_SESSION_WORKFLOW, mcpSessionWorkflowId, type McpSessionInput } from '../../common/gateway-protocol';
import type { RunIdentity } from '../../common/ticket';
import { createGateway, type Gateway } from '../../gateway/gateway';
import { SessionClient } from '../../gateway/session-client';
import { WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_PATH } from '../../runtime/workflow-modules';
import { keylessRepeatWindowMs, DEFAULT_KEYLESS_REPEAT_WINDOW_MS } from '../../workflows/mcp/same-call';
import { supportDesk } from '../support/desk';
import { harness, testDir, type Harness } from '../support/env';
import { testIssuer, type TestIssuer } from '../support/identity';
import { waitFor } from '../support/wait';
import { deskManifest, gatewayToken, mcpClient, post, sessionIdOf } from './support';

const REFUND = 'tool://payments/refund';
const CLOSE = 'tool://tickets/close_ticket';
/** Short, so the test can outwait it; the in-flight repeats below do not depend on it. */
const WINDOW_MS = 3000;
const TICKET_KEY = Buffer.alloc(32, 9).toString('base64url');
const ACCOUNT = 'acct_alice_001';

const manifest: Manifest = (() => {
  const base = deskManifest();
  return {
    ...base,
    tools: base.tools.map((t) =>
      t.id === REFUND
        ? { ...t, keyless_repeat_window: `${WINDOW_MS}ms` }
        : // An idempotent tool's window is off unless declared: this one declares it (the continue-as-new test).
          t.id === CLOSE
          ? { ...t, keyless_repeat_window: '10m' }
          : t,
    ),
  };
})();

let h: Harness;
let issuer: TestIssuer;
let gateway: Gateway;
let desk: ReturnType<typeof supportDesk>;
const opened: McpClient[] = [];

/** Holds the next refunds in the tool until released, so a test can drop a stream while a call is surely in flight. */
const hold = {
  held: false,
  entered: 0,
  waiting: [] as (() => void)[],
  engage() {
    this.held = true;
    this.entered = 0;
  },
  release() {
    this.held = false;
    for (const go of this.waiting.splice(0)) go();
  },
};

function heldRefund(inner: Tool): Tool {
  return {
    ...(inner.origin ? { origin: inner.origin } : {}),
    def: () => inner.def(),
    async call(ctx: Ctx, input: unknown) {
      if (hold.held) {
        hold.entered++;
        await new Promise<void>((go) => hold.waiting.push(go));
      }
      return inner.call(ctx, input);
    },
    reconcile: (ctx, key) => inner.reconcile!(ctx, key),
  };
}

function startGateway(port?: number, resource?: string): Promise<Gateway> {
  return createGateway({
    client: h.client,
    taskQueue: h.taskQueue,
    manifest,
    identity: issuer.identity,
    ticketKey: TICKET_KEY,
    ...(port !== undefined ? { port } : {}),
    ...(resource !== undefined ? { resource } : {}),
  });
}

beforeAll(async () => {
  h = await harness(`gateway-keyless-${process.pid}`);
  issuer = await testIssuer();
  desk = supportDesk(testDir('gateway-keyless'));
  const tools = desk.tools.map((t) => (t.def().id === REFUND ? heldRefund(t) : t));
  await h.runWorker({
    manifest,
    tools,
    identity: issuer.identity,
    insecureAssertedPrincipals: false,
    ticketKey: TICKET_KEY,
  });
  gateway = await startGateway();
});

// A test that failed while the tool held a call lets it go, so the next test's calls are not held.
afterEach(() => hold.release());

afterAll(async () => {
  hold.release();
  for (const c of opened) await c.close();
  await gateway?.close();
  await h?.close();
});

/** A session of `agent:desk` in which Alice's account came from the CRM; the raw calls go to it. */
async function session(): Promise<{
  sessionId: string;
  headers: Record<string, string>;
  call: (id: number, args: string, meta?: Record<string, string>) => ReturnType<typeof post>;
}> {
  const token = await gatewayToken(issuer, gateway.resource, 'agent:desk');
  const client = await mcpClient(gateway.url, token);
  opened.push(client);
  const found = await client.callTool({ name: 'crm__lookup_customer', arguments: { email: 'alice@example.com' } });
  expect(found.isError).toBeFalsy();
  const sessionId = sessionIdOf(client);
  const headers = {
    Authorization: `Bearer ${token}`,
    'Mcp-Session-Id': sessionId,
    'Mcp-Protocol-Version': '2025-11-25',
  };
  return { sessionId, headers, call: (id, args, meta) => post(gateway.url, callBody(id, args, meta), headers) };
}

/** A keyless `tools/call` of the refund; `args` is the arguments' JSON text, in the order the client wrote it. */
function callBody(id: number, args: string, meta?: Record<string, string>): string {
  const m = meta ? `,"_meta":${JSON.stringify(meta)}` : '';
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"payments__refund","arguments":${args}${m}}}`;
}

const refundOf = (amount: number) => `{"account_id":"${ACCOUNT}","amount_cents":${amount},"currency":"EUR"}`;
const landed = (amount: number) => desk.payments.all().filter((p) => p.account === ACCOUNT && p.amountCents === amount);

interface CallAnswer {
  result: { isError?: boolean; structuredContent?: { payment_id: string }; _meta?: Record<string, string> };
}
const answerOf = (res: { json: unknown }) => (res.json as CallAnswer).result;

/** Sends a call and drops its connection once the tool holds it: the client gave up on the stream. */
async function droppedCall(url: string, body: string, headers: Record<string, string>): Promise<void> {
  const aborted = new AbortController();
  const sent = fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body,
    signal: aborted.signal,
  }).then(
    () => 'answered',
    (err: { name?: string }) => err.name,
  );
  await waitFor('the tool to hold the call', 30_000, () => hold.entered >= 1);
  aborted.abort();
  expect(await sent).toBe('AbortError');
}

/** The updates the session's run accepted so far (each a call request that reached it). */
async function acceptedUpdates(sessionId: string): Promise<number> {
  const history = await h.client.workflow.getHandle(`toolplane-mcp/${sessionId}`).fetchHistory();
  return (history.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length;
}

async function replays(sessionId: string): Promise<void> {
  const handle = h.client.workflow.getHandle(`toolplane-mcp/${sessionId}`);
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

describe('the window a tool declares', () => {
  test('absent: ten minutes for a mutating tool, off for read-only and idempotent ones; declared: as declared', () => {
    expect(keylessRepeatWindowMs({ safety: 'mutating' })).toBe(DEFAULT_KEYLESS_REPEAT_WINDOW_MS);
    expect(DEFAULT_KEYLESS_REPEAT_WINDOW_MS).toBe(600_000);
    expect(keylessRepeatWindowMs({ safety: 'read_only' })).toBe(0);
    expect(keylessRepeatWindowMs({ safety: 'idempotent' })).toBe(0);
    expect(keylessRepeatWindowMs({ safety: 'mutating', keyless_repeat_window: 0 })).toBe(0);
    expect(keylessRepeatWindowMs({ safety: 'idempotent', keyless_repeat_window: '1m' })).toBe(60_000);
  });
});

describe('a keyless call is one call by what it does', () => {
  test('its stream dropped mid-call, re-issued under a new request id: it lands once and the retry gets its result', async () => {
    const { sessionId, headers, call } = await session();
    const before = await acceptedUpdates(sessionId);
    hold.engage();
    await droppedCall(gateway.url, callBody(10, refundOf(2501)), headers);
    // The client re-issues the call with a new request id, as MCP 2026-07-28 requires after a broken stream.
    const retried = call(11, refundOf(2501));
    await waitFor('the retry to reach the run', 30_000, async () => (await acceptedUpdates(sessionId)) >= before + 2);
    expect(hold.entered).toBe(1); // the retry reached the run while the first call was in flight, and was not sent
    hold.release();
    const retry = answerOf(await retried);
    expect(retry.isError).toBeFalsy();
    expect(landed(2501)).toHaveLength(1);
    expect(retry.structuredContent?.payment_id).toBe(landed(2501)[0]!.id);
    expect(retry._meta?.['toolplane/sameCallAs']).toMatch(/^rpc:10:/);
    // Re-issued again after it ended (within the window): the same answer, still one refund.
    const again = answerOf(await call(12, refundOf(2501)));
    expect(again.structuredContent).toEqual(retry.structuredContent);
    expect(again._meta?.['toolplane/effectKey']).toBe(retry._meta?.['toolplane/effectKey']);
    expect(landed(2501)).toHaveLength(1);
    await replays(sessionId);
  });

  test('the gateway restarted between the drop and the retry: still once', async () => {
    const { sessionId, headers } = await session();
    const before = await acceptedUpdates(sessionId);
    hold.engage();
    await droppedCall(gateway.url, callBody(20, refundOf(2502)), headers);
    const port = Number(new URL(gateway.url).port);
    const resource = gateway.resource;
    await gateway.close();
    gateway = await startGateway(port, resource);
    // A pooled connection to the old process may fail the first send, as after any restart.
    const send = () => post(gateway.url, callBody(21, refundOf(2502)), headers);
    const retried = send().catch((err: Error) => {
      if (!/fetch failed/.test(err.message)) throw err;
      return send();
    });
    await waitFor('the retry to reach the run', 30_000, async () => (await acceptedUpdates(sessionId)) >= before + 2);
    expect(hold.entered).toBe(1);
    hold.release();
    const retry = answerOf(await retried);
    expect(retry.isError).toBeFalsy();
    expect(landed(2502)).toHaveLength(1);
    expect(retry.structuredContent?.payment_id).toBe(landed(2502)[0]!.id);
    expect(retry._meta?.['toolplane/sameCallAs']).toMatch(/^rpc:20:/);
  });

  test('the arguments in another order are the same call (canonical JSON)', async () => {
    const { call } = await session();
    const first = answerOf(await call(30, refundOf(2503)));
    expect(first.isError).toBeFalsy();
    const reordered = answerOf(await call(31, `{"currency":"EUR","amount_cents":2503,"account_id":"${ACCOUNT}"}`));
    expect(reordered.structuredContent).toEqual(first.structuredContent);
    expect(reordered._meta?.['toolplane/sameCallAs']).toMatch(/^rpc:30:/);
    expect(landed(2503)).toHaveLength(1);
  });

  test('after the window a repeat is a new call and lands again', async () => {
    const { sessionId, call } = await session();
    const first = answerOf(await call(40, refundOf(2504)));
    expect(first.isError).toBeFalsy();
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS + 500));
    const later = answerOf(await call(41, refundOf(2504)));
    expect(later.isError).toBeFalsy();
    expect(later._meta?.['toolplane/sameCallAs']).toBeUndefined();
    expect(later.structuredContent?.payment_id).not.toBe(first.structuredContent?.payment_id);
    expect(landed(2504)).toHaveLength(2);
    await replays(sessionId);
  });
});

describe('across continue-as-new', () => {
  test("a keyless repeat in the continued run answers the first run's call", async () => {
    const sessions = new SessionClient({ client: h.client, taskQueue: h.taskQueue, ticketKey: TICKET_KEY });
    const who: RunIdentity = { principal: 'agent:desk', groups: [], issuer: 'https://issuer.test' };
    const sid = sessions.newSessionId(who);
    const workflowId = mcpSessionWorkflowId(sid);
    const pass = issueSessionPass(Buffer.from(TICKET_KEY, 'base64url'), workflowId, who, 60_000);
    const first = await h.client.workflow.start(MCP_SESSION_WORKFLOW, {
      taskQueue: h.taskQueue,
      workflowId,
      args: [{ pass, continueAsNewAfterCalls: 1 } satisfies McpSessionInput],
    });
    const args = { ticket_id: 'T-101', resolution: 'Refunded.' };
    const closed = await sessions.call(sid, who, { key: 'rpc:1', toolId: CLOSE, args });
    expect(closed.status).toBe('completed');
    await waitFor('the session to continue as new', 60_000, async () =>
      (await h.client.workflow.getHandle(workflowId).describe()).runId !== first.firstExecutionRunId ? true : undefined,
    );
    const repeat = await sessions.call(sid, who, { key: 'rpc:2', toolId: CLOSE, args });
    expect(repeat).toEqual({ ...closed, sameCallAs: 'rpc:1' });
    expect(desk.closed.all().filter((c) => c.ticket_id === 'T-101')).toHaveLength(1);
    await sessions.end(sid);
  });
});

describe('a deliberate repeat', () => {
  test('two identical calls under two keys land twice', async () => {
    const { call } = await session();
    const a = answerOf(await call(50, refundOf(2505), { idempotencyKey: 'refund-a' }));
    const b = answerOf(await call(51, refundOf(2505), { idempotencyKey: 'refund-b' }));
    expect(a.isError).toBeFalsy();
    expect(b.isError).toBeFalsy();
    expect(b._meta?.['toolplane/sameCallAs']).toBeUndefined();
    expect(landed(2505)).toHaveLength(2);
  });
});
