// The gateway on both MCP revisions with real clients: the MCP TypeScript SDK client (2025-11-25), the
// stateless 2026-07-28 wire as raw requests, the AI SDK MCP client (which discovers 2026-07-28 first),
// and the Python `mcp` 2.3 client in its default (discover first) and legacy (initialize) modes. Also: the
// host's declared request (`Toolplane-Request`), and the Host / Origin guard.
import { execFile } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { createMCPClient } from '@ai-sdk/mcp';
import { generateText, isStepCount } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { conversationSessionId } from '../../activities/identity/session-pass';
import { mcpSessionWorkflowId } from '../../common/gateway-protocol';
import type { Gateway } from '../../gateway/gateway';
import { encodeDeclaredRequest } from '../../gateway/host-request';
import { playScript } from '../../examples/ai-sdk-agent/scripted-model';
import { harness, testDir, type Harness } from '../support/env';
import { supportDesk } from '../support/desk';
import { testIssuer, type TestIssuer } from '../support/identity';
import { pythonWithMcp } from '../support/python-mcp';
import { deskBehindGateway, deskManifest, gatewayToken, post, sessionIdOf } from './support';

const run = promisify(execFile);
const manifest = deskManifest();
const TICKET_KEY = Buffer.alloc(32, 11).toString('base64url');
const APP_ORIGIN = 'https://app.example';
let h: Harness;
let issuer: TestIssuer;
let gateway: Gateway;
let desk: ReturnType<typeof supportDesk>;
const opened: McpClient[] = [];

beforeAll(async () => {
  h = await harness(`gateway-rev-${process.pid}`);
  issuer = await testIssuer();
  desk = supportDesk(testDir('gateway-rev'));
  gateway = await deskBehindGateway(h, {
    manifest,
    issuer,
    tools: desk.tools,
    ticketKey: TICKET_KEY,
    allowedOrigins: [APP_ORIGIN],
  });
});

afterAll(async () => {
  for (const c of opened) await c.close();
  await gateway?.close();
  await h?.close();
});

const token = (subject: string, groups?: string[]) => gatewayToken(issuer, gateway.resource, subject, groups);
const mailsTo = (to: string) => desk.outbox.all().filter((m) => m.to === to);
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
});

/** The TS SDK client (2025-11-25), with extra headers on every request as a host sets them. */
async function sdkClient(bearer: string, headers: Record<string, string> = {}, sessionId?: string) {
  const client = new SdkClient({ name: 'toolplane-rev-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(gateway.url), {
    requestInit: { headers: { Authorization: `Bearer ${bearer}`, ...headers } },
    ...(sessionId ? { sessionId } : {}),
  });
  await client.connect(transport);
  opened.push(client);
  return client;
}

let ids = 100;
/** One 2026-07-28 request as the revision sends it: version in the header and `_meta`, Mcp-Method mirrored. */
async function modern(
  bearer: string,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  const meta = {
    ...(params._meta as object | undefined),
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const body = JSON.stringify({ jsonrpc: '2.0', id: ids++, method, params: { ...params, _meta: meta } });
  return post(gateway.url, body, {
    Authorization: `Bearer ${bearer}`,
    'MCP-Protocol-Version': '2026-07-28',
    'Mcp-Method': method,
    ...(typeof params.name === 'string' ? { 'Mcp-Name': params.name } : {}),
    ...headers,
  });
}

type RpcResult = {
  result?: Record<string, unknown> & { isError?: boolean };
  error?: { code: number; message: string };
};
const resultOf = (r: { json: unknown }) => (r.json as RpcResult).result!;

/** The decoded update arguments in a session's history (what the run recorded of each call). */
async function recordedCalls(workflowId: string): Promise<string> {
  const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? [])
    .flatMap((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.args?.payloads ?? [])
    .map((p) => Buffer.from(p.data ?? new Uint8Array()).toString('utf8'))
    .join('\n');
}

describe('Host and Origin (DNS rebinding)', () => {
  test('a browser Origin not allowed: 403 naming allowedOrigins; an allowed one and none at all work', async () => {
    const bearer = await token('agent:desk');
    const evil = await post(gateway.url, INIT, { Authorization: `Bearer ${bearer}`, Origin: 'http://evil.example' });
    expect(evil.status).toBe(403);
    expect(JSON.stringify(evil.json)).toMatch(/Origin http:\/\/evil\.example is not allowed.*allowedOrigins/);
    // Refused before the bearer is read: a page cannot probe the gateway with or without a token.
    expect((await post(gateway.url, INIT, { Origin: 'http://evil.example' })).status).toBe(403);
    const app = await post(gateway.url, INIT, { Authorization: `Bearer ${bearer}`, Origin: APP_ORIGIN });
    expect(app.status).toBe(200);
    const none = await post(gateway.url, INIT, { Authorization: `Bearer ${bearer}` });
    expect(none.status).toBe(200);
  });

  test('a Host that is not one of the gateway’s names: 403 naming allowedHosts; localhost names work', async () => {
    const bearer = await token('agent:desk');
    const port = new URL(gateway.url).port;
    const answer = (host: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(
          gateway.url,
          {
            method: 'POST',
            headers: {
              Host: host,
              Authorization: `Bearer ${bearer}`,
              'Content-Type': 'application/json',
              Accept: 'application/json, text/event-stream',
            },
          },
          (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end(INIT);
      });
    const rebound = await answer(`attacker.example:${port}`);
    expect(rebound.status).toBe(403);
    expect(rebound.body).toMatch(/Host .*attacker\.example.* allowedHosts/);
    expect((await answer(`localhost:${port}`)).status).toBe(200);
    expect((await answer(`127.0.0.1:${port}`)).status).toBe(200);
  });
});

describe('2026-07-28: the stateless wire', () => {
  test('server/discover advertises both revisions; an unknown later version is refused with them (-32022)', async () => {
    const bearer = await token('agent:desk');
    const discovered = await modern(bearer, 'server/discover');
    expect(discovered.status).toBe(200);
    expect(resultOf(discovered)).toMatchObject({
      resultType: 'complete',
      supportedVersions: ['2026-07-28', '2025-11-25'],
      capabilities: { tools: {} },
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'toolplane' } },
    });
    const later = await post(gateway.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover' }), {
      Authorization: `Bearer ${bearer}`,
      'MCP-Protocol-Version': '2027-01-01',
    });
    expect(later.status).toBe(400);
    expect(later.json).toMatchObject({
      error: { code: -32022, data: { supported: ['2026-07-28', '2025-11-25'], requested: '2027-01-01' } },
    });
  });

  test('a header that disagrees with the body: 400 HeaderMismatch (-32020); an unknown method: 404 -32601', async () => {
    const bearer = await token('agent:desk');
    const mismatch = await modern(bearer, 'tools/list', {}, { 'Mcp-Method': 'tools/call' });
    expect(mismatch.status).toBe(400);
    expect(mismatch.json).toMatchObject({ error: { code: -32020, message: expect.stringMatching(/Mcp-Method/) } });
    const unknown = await modern(bearer, 'resources/list');
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ error: { code: -32601 } });
    // No Mcp-Session-Id is needed, none is minted.
    const listed = await modern(bearer, 'tools/list');
    expect(listed.status).toBe(200);
    expect(listed.headers.get('mcp-session-id')).toBeNull();
  });

  test('one run per conversation: provenance across calls, a retried key lands once, another subject gets its own run', async () => {
    const bearer = await token('agent:desk');
    const conv = { 'Toolplane-Conversation': 'conv-refund-1' };
    const found = await modern(
      bearer,
      'tools/call',
      {
        name: 'crm__lookup_customer',
        arguments: { email: 'bob@example.com' },
      },
      conv,
    );
    expect(resultOf(found).isError).toBeFalsy();
    const refund = {
      name: 'payments__refund',
      arguments: { account_id: 'acct_bob_002', amount_cents: 1000, currency: 'EUR' },
      _meta: { idempotencyKey: 'conv-refund-1/a' },
    };
    const landed = resultOf(await modern(bearer, 'tools/call', refund, conv));
    expect(landed).toMatchObject({ resultType: 'complete', structuredContent: { status: 'refunded' } });
    // The connection broke; the client re-issues the request (a new request id, the same key).
    const repeated = resultOf(await modern(bearer, 'tools/call', refund, conv));
    expect((repeated._meta as Record<string, unknown>)['toolplane/effectKey']).toBe(
      (landed._meta as Record<string, unknown>)['toolplane/effectKey'],
    );
    expect(desk.payments.all().filter((p) => p.account === 'acct_bob_002')).toHaveLength(1);

    // The account read from a ticket's text in this conversation is refused by the protected field.
    await modern(bearer, 'tools/call', { name: 'tickets__read_ticket', arguments: { ticket_id: 'T-101' } }, conv);
    const injected = resultOf(
      await modern(
        bearer,
        'tools/call',
        {
          name: 'payments__refund',
          arguments: { account_id: 'acct_attacker_991', amount_cents: 95000, currency: 'EUR' },
          _meta: { idempotencyKey: 'conv-refund-1/b' },
        },
        conv,
      ),
    );
    expect(injected).toMatchObject({ isError: true, _meta: { 'toolplane/status': 'refused' } });
    expect(desk.payments.all().filter((p) => p.account === 'acct_attacker_991')).toHaveLength(0);

    const key = Buffer.from(TICKET_KEY, 'base64url');
    const mine = mcpSessionWorkflowId(conversationSessionId(key, 'agent:desk', 'conv-refund-1'));
    expect((await h.client.workflow.getHandle(mine).describe()).status.name).toBe('RUNNING');
    // Another subject naming the same conversation reaches a run of its own, never this one.
    const reader = await token('rita', ['readers']);
    const theirs = await modern(
      reader,
      'tools/call',
      {
        name: 'crm__lookup_customer',
        arguments: { email: 'alice@example.com' },
      },
      conv,
    );
    expect(resultOf(theirs).isError).toBeFalsy();
    const other = mcpSessionWorkflowId(conversationSessionId(key, 'rita', 'conv-refund-1'));
    expect(other).not.toBe(mine);
    expect((await h.client.workflow.getHandle(other).describe()).status.name).toBe('RUNNING');
    expect(await recordedCalls(mine)).not.toContain('alice@example.com');
  });
});

describe("the host's declared request (Toolplane-Request)", () => {
  const email = { to: 'dana@example.org', subject: 'Your summary', body: 'As asked.' };
  const request = 'Look up chen@example.com, then email dana@example.org a summary.';

  test('2025-11-25 (TS SDK client): a recipient the user named, after a result, is sent; without the header refused', async () => {
    const bearer = await token('agent:desk');
    const plain = await sdkClient(bearer);
    await plain.callTool({ name: 'crm__lookup_customer', arguments: { email: 'chen@example.com' } });
    const refused = await plain.callTool({
      name: 'mail__send_email',
      arguments: email,
      _meta: { idempotencyKey: 'm1' },
    });
    expect(refused).toMatchObject({ isError: true, _meta: { 'toolplane/status': 'refused' } });
    expect(mailsTo('dana@example.org')).toHaveLength(0);

    const host = await sdkClient(bearer, { 'Toolplane-Request': encodeDeclaredRequest(request) });
    await host.callTool({ name: 'crm__lookup_customer', arguments: { email: 'chen@example.com' } });
    const sent = await host.callTool({ name: 'mail__send_email', arguments: email, _meta: { idempotencyKey: 'm2' } });
    expect(sent.isError).toBeFalsy();
    expect(mailsTo('dana@example.org')).toHaveLength(1);
    // Recorded in the run: the declaration is in the call's update, in the session's history.
    expect(await recordedCalls(mcpSessionWorkflowId(sessionIdOf(host)))).toContain(request);
  });

  test("a declaration sent with a token of another subject, into this principal's session: 403, nothing recorded", async () => {
    const owner = await sdkClient(await token('agent:desk'));
    await owner.listTools();
    const sessionId = sessionIdOf(owner);
    const forged = await post(
      gateway.url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'mail__send_email', arguments: email },
      }),
      {
        Authorization: `Bearer ${await token('mallory', ['readers'])}`,
        'Mcp-Session-Id': sessionId,
        'MCP-Protocol-Version': '2025-11-25',
        'Toolplane-Request': encodeDeclaredRequest('email dana@example.org'),
      },
    );
    expect(forged.status).toBe(403);
    expect(JSON.stringify(forged.json)).toMatch(/not issued to mallory/);
    // Nothing started: the session's run does not exist, so nothing of the declaration is in any history.
    await expect(h.client.workflow.getHandle(mcpSessionWorkflowId(sessionId)).describe()).rejects.toThrow(/not found/i);
    const bad = await post(gateway.url, INIT, {
      Authorization: `Bearer ${await token('agent:desk')}`,
      'Toolplane-Request': 'not base64url!',
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json)).toMatch(/Toolplane-Request/);
  });

  test('2026-07-28 (AI SDK MCP client, which discovers first): the declared recipient is sent once', async () => {
    const bearer = await token('agent:desk');
    const mcp = await createMCPClient({
      transport: {
        type: 'http',
        url: gateway.url,
        headers: {
          Authorization: `Bearer ${bearer}`,
          'Toolplane-Conversation': 'ai-sdk-1',
          'Toolplane-Request': encodeDeclaredRequest(request.replace('dana', 'erin')),
        },
      },
    });
    try {
      const tools = await mcp.tools();
      const script = [
        { tool_calls: [{ name: 'crm__lookup_customer', arguments: { email: 'chen@example.com' } }] },
        { tool_calls: [{ name: 'mail__send_email', arguments: { ...email, to: 'erin@example.org' } }] },
        { final: 'sent' },
      ];
      const model = new MockLanguageModelV4({
        doGenerate: (options) => Promise.resolve(playScript({ ...options, providerOptions: { scripted: { script } } })),
      });
      const result = await generateText({ model, tools, prompt: request, stopWhen: isStepCount(5) });
      expect(result.text).toBe('sent');
      expect(mailsTo('erin@example.org')).toHaveLength(1);
      const wid = mcpSessionWorkflowId(
        conversationSessionId(Buffer.from(TICKET_KEY, 'base64url'), 'agent:desk', 'ai-sdk-1'),
      );
      expect(await recordedCalls(wid)).toContain('erin@example.org');
    } finally {
      await mcp.close();
    }
  });
});

describe('the Python mcp 2.3 client', () => {
  const script = path.join(__dirname, 'python-client.py');
  let python: string;
  beforeAll(() => {
    python = pythonWithMcp();
  }, 300_000);

  async function playPython(mode: 'auto' | 'legacy', conversation: string, account: string, email: string) {
    const spec = {
      headers: {
        Authorization: `Bearer ${await token('agent:desk')}`,
        'Toolplane-Conversation': conversation,
      },
      calls: [
        { name: 'crm__lookup_customer', arguments: { email } },
        {
          name: 'payments__refund',
          arguments: { account_id: account, amount_cents: 300, currency: 'USD' },
          key: `${conversation}/r`,
        },
        {
          name: 'payments__refund',
          arguments: { account_id: account, amount_cents: 300, currency: 'USD' },
          key: `${conversation}/r`,
        },
      ],
    };
    const { stdout } = await run(python, [script, gateway.url, mode, JSON.stringify(spec)], { timeout: 60_000 });
    return JSON.parse(stdout) as {
      protocolVersion: string;
      tools: string[];
      calls: { isError: boolean; text: string; meta: Record<string, unknown> }[];
    };
  }

  test.each([
    ['auto', '2026-07-28'],
    ['legacy', '2025-11-25'],
  ] as const)('mode %s speaks %s; its same-key retry lands once', async (mode, version) => {
    const account = mode === 'auto' ? 'acct_alice_001' : 'acct_chen_003';
    const email = mode === 'auto' ? 'alice@example.com' : 'chen@example.com';
    const before = desk.payments.all().filter((p) => p.account === account && p.currency === 'USD').length;
    const out = await playPython(mode, `py-${mode}`, account, email);
    expect(out.protocolVersion).toBe(version);
    expect(out.tools).toContain('payments__refund');
    expect(out.calls.map((c) => c.isError)).toEqual([false, false, false]);
    expect(out.calls[2]!.meta['toolplane/effectKey']).toBe(out.calls[1]!.meta['toolplane/effectKey']);
    expect(desk.payments.all().filter((p) => p.account === account && p.currency === 'USD')).toHaveLength(before + 1);
  });
});
