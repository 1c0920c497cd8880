// The MCP gateway with real MCP clients nobody here wrote (the MCP SDK's Client over Streamable HTTP),
// a real worker and the suite's dev server: authorization, tools per principal, bad input.
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { createGateway, type Gateway } from '../../gateway/gateway';
import { createMCPClient } from '@ai-sdk/mcp';
import { generateText, isStepCount } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { harness, testDir, type Harness } from '../support/env';
import { supportDesk } from '../support/desk';
import { playScript } from '../../examples/ai-sdk-agent/scripted-model';
import { testIssuer, type TestIssuer } from '../support/identity';
import { signCredential } from '../../identity/mint';
import { waitFor } from '../support/wait';
import { deskBehindGateway, deskManifest, gatewayToken, mcpClient, post, sessionIdOf } from './support';

const manifest = deskManifest();
let h: Harness;
let issuer: TestIssuer;
let gateway: Gateway;
let desk: ReturnType<typeof supportDesk>;
const TICKET_KEY = Buffer.alloc(32, 7).toString('base64url');
const opened: McpClient[] = [];
const INITIALIZE = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test', version: '1' } };

async function open(token: string, sessionId?: string): Promise<McpClient> {
  const c = await mcpClient(gateway.url, token, sessionId);
  opened.push(c);
  return c;
}

beforeAll(async () => {
  h = await harness(`gateway-auth-${process.pid}`);
  issuer = await testIssuer();
  desk = supportDesk(testDir('gateway'));
  gateway = await deskBehindGateway(h, {
    manifest,
    issuer,
    tools: desk.tools,
    ticketKey: TICKET_KEY,
    maxArgumentBytes: 4096,
  });
});

afterAll(async () => {
  for (const c of opened) await c.close();
  await gateway?.close();
  await h?.close();
});

describe('authorization (OAuth 2.1 resource server)', () => {
  test('without a token: 401 naming the resource metadata; the metadata names the issuers', async () => {
    const res = await post(gateway.url, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', {});
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).not.toContain('invalid_token');
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    expect(metadataUrl).toBeDefined();
    const prm = (await (await fetch(metadataUrl!)).json()) as Record<string, unknown>;
    expect(prm).toMatchObject({
      resource: gateway.resource,
      authorization_servers: ['https://issuer.test'],
      bearer_methods_supported: ['header'],
    });
    const plain = (await (await fetch(new URL('/.well-known/oauth-protected-resource', gateway.url))).json()) as object;
    expect(plain).toEqual(prm);
  });

  test('a bad token, or one for another audience: 401 invalid_token; the MCP client cannot connect', async () => {
    const bad = await post(gateway.url, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', {
      Authorization: 'Bearer not.a.jwt',
    });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toMatch(/error="invalid_token".*resource_metadata="/);
    const forWorker = await issuer.approverCredential('agent:desk'); // audience: the worker's, not the gateway's
    const wrong = await post(gateway.url, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', {
      Authorization: `Bearer ${forWorker}`,
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toContain('wrong_audience');
    await expect(mcpClient(gateway.url, forWorker)).rejects.toMatchObject({ code: 401 });
  });

  test('a token the gateway verified before is refused once it expires (remembered verifications end at exp)', async () => {
    // A gateway that allows no clock skew, so the token's exp is the end for a fresh check and a remembered one alike.
    const strict = await createGateway({
      client: h.client,
      taskQueue: h.taskQueue,
      manifest,
      identity: { ...issuer.identity, clockToleranceSeconds: 0 },
      ticketKey: TICKET_KEY,
    });
    try {
      const token = await signCredential(issuer.key, {
        audience: strict.resource,
        subject: 'agent:desk',
        expiresIn: '3s',
      });
      const initialize = () =>
        post(strict.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INITIALIZE }), {
          Authorization: `Bearer ${token}`,
        });
      expect((await initialize()).status).toBe(200);
      expect((await initialize()).status).toBe(200);
      const refused = await waitFor('the expired token to be refused', 30_000, async () => {
        const r = await initialize();
        return r.status === 401 ? r : undefined;
      });
      expect(refused.headers.get('www-authenticate')).toMatch(/error="invalid_token".*expired/);
    } finally {
      await strict.close();
    }
  });
});

describe('tools per principal', () => {
  test('tools/list offers exactly what each principal may be granted, with the manifest description and schema', async () => {
    const desk = await open(await gatewayToken(issuer, gateway.resource, 'agent:desk'));
    const reader = await open(await gatewayToken(issuer, gateway.resource, 'someone', ['readers']));
    const stranger = await open(await gatewayToken(issuer, gateway.resource, 'nobody'));
    const deskTools = (await desk.listTools()).tools;
    expect(deskTools.map((t) => t.name).sort()).toEqual(
      [
        'crm__lookup_customer',
        'mail__send_email',
        'payments__refund',
        'tickets__close_ticket',
        'tickets__read_ticket',
      ].sort(),
    );
    const refund = deskTools.find((t) => t.name === 'payments__refund')!;
    const declared = manifest.tools.find((t) => t.id === 'tool://payments/refund')!;
    expect(refund.description).toBe(declared.description);
    expect(refund.inputSchema).toEqual(declared.input_schema);
    expect(refund._meta).toEqual({ 'toolplane/toolId': 'tool://payments/refund' });
    expect((await reader.listTools()).tools.map((t) => t.name).sort()).toEqual([
      'crm__lookup_customer',
      'tickets__read_ticket',
    ]);
    expect((await stranger.listTools()).tools).toEqual([]);
  });
});

describe('bad input is named, and nothing starts', () => {
  const rpc = (id: number, method: string, params: object) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

  async function session(subject: string, groups?: string[]) {
    const token = await gatewayToken(issuer, gateway.resource, subject, groups);
    const client = await open(token);
    return { token, client, sessionId: sessionIdOf(client) };
  }

  async function noRun(sessionId: string) {
    await expect(h.client.workflow.getHandle(`toolplane-mcp/${sessionId}`).describe()).rejects.toThrow(/not found/i);
  }

  test('malformed JSON: -32700', async () => {
    const { token, sessionId } = await session('agent:desk');
    const res = await post(gateway.url, '{"jsonrpc":"2.0", "id": 1, "method": ', {
      Authorization: `Bearer ${token}`,
      'Mcp-Session-Id': sessionId,
    });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ error: { code: -32700, message: expect.stringMatching(/not JSON/) } });
    await noRun(sessionId);
  });

  test('an unknown method: -32601 naming it', async () => {
    const { client } = await session('agent:desk');
    await expect(
      client.request({ method: 'tools/frobnicate', params: {} }, (await import('zod')).z.object({})),
    ).rejects.toMatchObject({
      code: -32601,
    });
  });

  test('a tool not offered to the principal, oversized arguments: -32602 naming what; a schema violation: isError naming the pointer', async () => {
    const { client: reader, sessionId: readerSession } = await session('someone', ['readers']);
    await expect(
      reader.callTool({ name: 'payments__refund', arguments: { account_id: 'a', amount_cents: 1, currency: 'EUR' } }),
    ).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/payments__refund.*someone/) });
    await expect(reader.callTool({ name: 'shell__exec', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    await noRun(readerSession);

    const { client: desk, sessionId: deskSession } = await session('agent:desk');
    await expect(
      desk.callTool({
        name: 'payments__refund',
        arguments: { account_id: 'x'.repeat(5000), amount_cents: 1, currency: 'EUR' },
      }),
    ).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(/params\.arguments of payments__refund is \d+ bytes.*4096/),
    });
    const invalid = await desk.callTool({
      name: 'payments__refund',
      arguments: { account_id: 'acct_alice_001', amount_cents: 0, currency: 'XYZ' },
    });
    expect(invalid.isError).toBe(true);
    const said = (invalid.content as { text: string }[])[0]!.text;
    expect(said).toContain('/amount_cents');
    expect(said).toContain('/currency');
    await noRun(deskSession);
  });

  test("another principal's session id is refused (403), naming why", async () => {
    const { sessionId } = await session('agent:desk');
    const otherToken = await gatewayToken(issuer, gateway.resource, 'someone', ['readers']);
    const res = await post(gateway.url, rpc(5, 'tools/list', {}), {
      Authorization: `Bearer ${otherToken}`,
      'Mcp-Session-Id': sessionId,
      'Mcp-Protocol-Version': '2025-11-25',
    });
    expect(res.status).toBe(403);
    expect(res.json).toMatchObject({ error: { message: expect.stringMatching(/not issued to someone/) } });
    const hijack = await mcpClient(gateway.url, otherToken, sessionId);
    opened.push(hijack);
    await expect(hijack.listTools()).rejects.toThrow(/403|not issued/);
  });
});

describe('calls', () => {
  const refundArgs = { account_id: 'acct_alice_001', amount_cents: 2500, currency: 'EUR' };
  const refundsTo = (account: string) => desk.payments.all().filter((p) => p.account === account);

  async function lookedUp(client: McpClient, email: string) {
    const found = await client.callTool({ name: 'crm__lookup_customer', arguments: { email } });
    expect(found.isError).toBeFalsy();
    return found;
  }

  test('a refund lands once; the same idempotencyKey from a new connection gets the same outcome and sends nothing', async () => {
    const token = await gatewayToken(issuer, gateway.resource, 'agent:desk');
    const first = await open(token);
    const sessionId = sessionIdOf(first);
    await lookedUp(first, 'alice@example.com');
    const call = { name: 'payments__refund', arguments: refundArgs, _meta: { idempotencyKey: 'refund-alice-1' } };
    const landed = await first.callTool(call);
    expect(landed.isError).toBeFalsy();
    expect(landed.structuredContent).toMatchObject({ status: 'refunded', duplicate: false });
    const effectKey = landed._meta?.['toolplane/effectKey'];
    expect(typeof effectKey).toBe('string');
    expect(refundsTo('acct_alice_001')).toHaveLength(1);

    // The connection dropped; the client reconnects to the same session and repeats the call.
    const second = await open(token, sessionId);
    const repeated = await second.callTool(call);
    expect(repeated.structuredContent).toEqual(landed.structuredContent);
    expect(repeated._meta?.['toolplane/effectKey']).toBe(effectKey);
    expect(refundsTo('acct_alice_001')).toHaveLength(1);
    expect(desk.payments.repeats()).toBe(0);
  });

  // Fails if the call's update id covers only the key: Temporal would answer the first call's result.
  test('the same key with other arguments is refused (KeyReused), not answered or sent', async () => {
    const client = await open(await gatewayToken(issuer, gateway.resource, 'agent:desk'));
    await lookedUp(client, 'alice@example.com');
    const call = { name: 'payments__refund', arguments: refundArgs, _meta: { idempotencyKey: 'refund-alice-2' } };
    expect((await client.callTool(call)).isError).toBeFalsy();
    const reused = await client.callTool({ ...call, arguments: { ...refundArgs, amount_cents: 9999 } });
    expect(reused.isError).toBe(true);
    expect(reused._meta?.['toolplane/code']).toBe('KeyReused');
  });

  test("a refund to an account that came from a ticket's text is refused with the rule, and nothing is sent", async () => {
    const client = await open(await gatewayToken(issuer, gateway.resource, 'agent:desk'));
    const ticket = await client.callTool({ name: 'tickets__read_ticket', arguments: { ticket_id: 'T-101' } });
    expect(JSON.stringify(ticket.structuredContent)).toContain('acct_attacker_991');
    const refused = await client.callTool({
      name: 'payments__refund',
      arguments: { account_id: 'acct_attacker_991', amount_cents: 95000, currency: 'EUR' },
      _meta: { idempotencyKey: 'injected' },
    });
    expect(refused.isError).toBe(true);
    expect(refused._meta?.['toolplane/status']).toBe('refused');
    expect((refused.content as { text: string }[])[0]!.text).toMatch(/\/account_id/);
    expect(refundsTo('acct_attacker_991')).toHaveLength(0);
  });

  test('the gateway closed and recreated mid-session accepts the next call on the same session id', async () => {
    const token = await gatewayToken(issuer, gateway.resource, 'agent:desk');
    const before = await open(token);
    const sessionId = sessionIdOf(before);
    await lookedUp(before, 'bob@example.com');
    const port = Number(new URL(gateway.url).port);
    const resource = gateway.resource;
    await gateway.close();
    gateway = await createGateway({
      client: h.client,
      taskQueue: h.taskQueue,
      manifest,
      identity: issuer.identity,
      ticketKey: TICKET_KEY,
      port,
      resource,
      maxArgumentBytes: 4096,
    });
    const after = await open(token, sessionId);
    const call = {
      name: 'payments__refund',
      arguments: { account_id: 'acct_bob_002', amount_cents: 1000, currency: 'EUR' },
      _meta: { idempotencyKey: 'refund-bob-1' },
    };
    // A pooled connection to the old process may fail the first send, as after any restart: the
    // client repeats the call under the same key, which is what makes that safe.
    const landed = await after.callTool(call).catch((err: Error) => {
      if (!/fetch failed/.test(err.message)) throw err;
      return after.callTool(call);
    });
    expect(landed.isError).toBeFalsy();
    expect(refundsTo('acct_bob_002')).toHaveLength(1);
    const workflow = await h.client.workflow.getHandle(`toolplane-mcp/${sessionId}`).describe();
    expect(workflow.status.name).toBe('RUNNING');
  });

  test('a session ended by its DELETE answers 404 to its next call', async () => {
    const token = await gatewayToken(issuer, gateway.resource, 'agent:desk');
    const client = await open(token);
    const sessionId = sessionIdOf(client);
    await lookedUp(client, 'chen@example.com');
    const del = await fetch(gateway.url, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${token}`, 'Mcp-Session-Id': sessionId, 'Mcp-Protocol-Version': '2025-11-25' },
    });
    expect(del.status).toBe(200);
    const res = await post(
      gateway.url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'crm__lookup_customer', arguments: { email: 'chen@example.com' } },
      }),
      { Authorization: `Bearer ${token}`, 'Mcp-Session-Id': sessionId, 'Mcp-Protocol-Version': '2025-11-25' },
    );
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ error: { code: -32001 } });
  });
});

describe("the AI SDK's MCP client driving a scripted model", () => {
  test("generateText with the gateway's tools: the refund lands once", async () => {
    const token = await gatewayToken(issuer, gateway.resource, 'agent:desk');
    const mcp = await createMCPClient({
      transport: { type: 'http', url: gateway.url, headers: { Authorization: `Bearer ${token}` } },
    });
    try {
      const tools = await mcp.tools();
      expect(Object.keys(tools).sort()).toContain('payments__refund');
      const script = [
        { tool_calls: [{ name: 'crm__lookup_customer', arguments: { email: 'chen@example.com' } }] },
        {
          tool_calls: [
            {
              name: 'payments__refund',
              arguments: { account_id: 'acct_chen_003', amount_cents: 700, currency: 'GBP' },
            },
          ],
        },
        { final: 'refunded' },
      ];
      const model = new MockLanguageModelV4({
        doGenerate: (options) => Promise.resolve(playScript({ ...options, providerOptions: { scripted: { script } } })),
      });
      const result = await generateText({
        model,
        tools,
        prompt: 'Refund 7 GBP to chen@example.com',
        stopWhen: isStepCount(5),
      });
      expect(result.text).toBe('refunded');
      const refund = result.steps.flatMap((s) => s.toolResults).find((r) => r.toolName === 'payments__refund');
      expect(JSON.stringify(refund?.output)).toContain('refunded');
      expect(desk.payments.all().filter((p) => p.account === 'acct_chen_003' && p.currency === 'GBP')).toHaveLength(1);
    } finally {
      await mcp.close();
    }
  });
});
