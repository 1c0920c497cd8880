// The principal confirms through the gateway (issue 43 item 2): a recipient the MCP client typed after a
// result entered the session is put to the session's principal instead of refused. On 2026-07-28, a
// client that takes elicitations gets `input_required` and answers in its retry; on 2025-11-25 the call
// waits and the principal answers out of band with their own credential. A yes sends the mail once; a
// no, a tampered request state or another person's token sends nothing.
import { randomUUID } from 'node:crypto';
import type { Manifest } from '../../catalog/manifest';
import { confirm } from '../../client';
import { mcpSessionWorkflowId } from '../../common/gateway-protocol';
import type { Gateway } from '../../gateway/gateway';
import { harness, testDir, type Harness } from '../support/env';
import { supportDesk } from '../support/desk';
import { testIssuer, type TestIssuer } from '../support/identity';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { deskBehindGateway, deskManifest, gatewayToken, mcpClient, post, sessionIdOf } from './support';

const TICKET_KEY = Buffer.alloc(32, 23).toString('base64url');
let h: Harness;
let issuer: TestIssuer;
let gateway: Gateway;
let desk: ReturnType<typeof supportDesk>;

/** The desk, where a mail recipient nothing in the session holds is put to the principal. */
function confirmingManifest(): Manifest {
  const base = deskManifest();
  return {
    ...base,
    tools: base.tools.map((t) =>
      t.id === 'tool://mail/send_email'
        ? {
            ...t,
            protected_fields: t.protected_fields.map((f) =>
              f.pointer === '/to' && 'from_sources' in f ? { ...f, principal_confirms: 'unknown' as const } : f,
            ),
          }
        : t,
    ),
  };
}

beforeAll(async () => {
  h = await harness(`gateway-confirm-${randomUUID()}`);
  issuer = await testIssuer();
  desk = supportDesk(testDir('gateway-confirm'));
  gateway = await deskBehindGateway(h, {
    manifest: confirmingManifest(),
    issuer,
    tools: desk.tools,
    ticketKey: TICKET_KEY,
  });
});

afterAll(async () => {
  await gateway?.close();
  await h?.close();
});

const token = (subject: string) => gatewayToken(issuer, gateway.resource, subject);
const mailsTo = (to: string) => desk.outbox.all().filter((m) => m.to === to);

let ids = 1;
/** One 2026-07-28 request, from a client that declares elicitation. */
async function modern(bearer: string, conversation: string, params: Record<string, unknown>) {
  const meta = {
    ...(params._meta as object | undefined),
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'careful-host', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
  };
  const body = JSON.stringify({ jsonrpc: '2.0', id: ids++, method: 'tools/call', params: { ...params, _meta: meta } });
  const r = await post(gateway.url, body, {
    Authorization: `Bearer ${bearer}`,
    'MCP-Protocol-Version': '2026-07-28',
    'Mcp-Method': 'tools/call',
    'Mcp-Name': String(params.name),
    'Toolplane-Conversation': conversation,
  });
  return r.json as { result?: Record<string, unknown>; error?: { code: number; message: string } };
}

const lookup = { name: 'crm__lookup_customer', arguments: { email: 'bob@example.com' } };
const mail = (to: string, key: string) => ({
  name: 'mail__send_email',
  arguments: { to, subject: 'Hello', body: 'Welcome aboard.' },
  _meta: { idempotencyKey: key },
});

describe('2026-07-28: input_required carries the question, the retry carries the answer', () => {
  test('a careful user’s yes to the address they meant sends it once; their no to another sends nothing', async () => {
    const bearer = await token('agent:desk');
    const conv = `conv-${randomUUID()}`;
    await modern(bearer, conv, lookup);

    const asked = (await modern(bearer, conv, mail('new.partner@example.org', 'm-yes'))).result!;
    expect(asked.resultType).toBe('input_required');
    const [id, request] = Object.entries(
      asked.inputRequests as Record<string, { method: string; params: { message: string } }>,
    )[0]!;
    expect(request.method).toBe('elicitation/create');
    expect(request.params.message).toContain('new.partner@example.org');
    expect(mailsTo('new.partner@example.org')).toHaveLength(0);

    // A state the client changed is refused; nothing is answered or sent.
    const tampered = await modern(bearer, conv, {
      ...mail('new.partner@example.org', 'm-yes'),
      inputResponses: { [id]: { action: 'accept', content: { confirm: true } } },
      requestState: `${String(asked.requestState).slice(0, -2)}xx`,
    });
    expect(tampered.error?.message).toMatch(/requestState/);
    expect(mailsTo('new.partner@example.org')).toHaveLength(0);

    const done = (
      await modern(bearer, conv, {
        ...mail('new.partner@example.org', 'm-yes'),
        inputResponses: { [id]: { action: 'accept', content: { confirm: true } } },
        requestState: asked.requestState,
      })
    ).result!;
    expect(done).toMatchObject({ resultType: 'complete' });
    expect(done.isError).toBeFalsy();
    expect(mailsTo('new.partner@example.org')).toHaveLength(1);

    const other = (await modern(bearer, conv, mail('attacker@evil.example', 'm-no'))).result!;
    expect(other.resultType).toBe('input_required');
    const no = (
      await modern(bearer, conv, {
        ...mail('attacker@evil.example', 'm-no'),
        inputResponses: { [Object.keys(other.inputRequests as object)[0]!]: { action: 'decline' } },
        requestState: other.requestState,
      })
    ).result!;
    expect(no).toMatchObject({ isError: true, _meta: { 'toolplane/status': 'refused' } });
    expect(mailsTo('attacker@evil.example')).toHaveLength(0);
  });

  test('another principal’s conversation cannot carry the answer', async () => {
    const conv = `conv-${randomUUID()}`;
    const bearer = await token('agent:desk');
    await modern(bearer, conv, lookup);
    const asked = (await modern(bearer, conv, mail('carol@example.org', 'm-c'))).result!;
    expect(asked.resultType).toBe('input_required');
    const intruder = await modern(await token('mallory'), conv, {
      ...mail('carol@example.org', 'm-c'),
      inputResponses: { x: { action: 'accept', content: { confirm: true } } },
      requestState: asked.requestState,
    });
    expect(intruder.error ?? intruder.result?.isError).toBeTruthy();
    expect(mailsTo('carol@example.org')).toHaveLength(0);
  });
});

describe('2025-11-25: the call waits, the principal confirms with their own credential', () => {
  test('the waiting result names the value and the command; the principal’s yes lands the repeat once', async () => {
    const client = await mcpClient(gateway.url, await token('agent:desk'));
    try {
      await client.callTool(lookup);
      const first = await client.callTool(mail('dora@example.org', 'legacy-1'));
      expect(first.isError).toBe(true);
      const meta = first._meta as Record<string, unknown>;
      expect(meta['toolplane/status']).toBe('waiting');
      expect(meta['toolplane/confirmation']).toMatchObject({ pointer: '/to', value: 'dora@example.org' });
      expect(JSON.stringify(first.content)).toContain('toolplane confirm');
      const workflowId = mcpSessionWorkflowId(sessionIdOf(client));
      const effectKey = String(meta['toolplane/effectKey']);
      // Someone else's token does not confirm the principal's value.
      await expect(
        confirm(h.client, workflowId, effectKey, 'dora@example.org', {
          credential: await issuer.approverCredential('mallory'),
        }),
      ).rejects.toThrow();
      await confirm(h.client, workflowId, effectKey, 'dora@example.org', {
        credential: await issuer.approverCredential('agent:desk'),
      });
      const repeat = await client.callTool(mail('dora@example.org', 'legacy-1'));
      expect(repeat.isError).toBeFalsy();
      expect(mailsTo('dora@example.org')).toHaveLength(1);
    } finally {
      await client.close();
    }
  });
});

describe('2025-11-25: a client that declared elicitation is asked in the call itself', () => {
  /** A host whose user answers each elicitation as a careful user: yes only to the address they meant. */
  async function elicitingClient(meant: string) {
    const asked: string[] = [];
    const client = new McpClient({ name: 'careful-host', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message);
      return request.params.message.includes(JSON.stringify(meant))
        ? { action: 'accept', content: { confirm: true } }
        : { action: 'decline' };
    });
    const transport = new StreamableHTTPClientTransport(new URL(gateway.url), {
      requestInit: { headers: { Authorization: `Bearer ${await token('agent:desk')}` } },
    });
    await client.connect(transport);
    return { client, asked, transport };
  }

  test('a yes lands the mail in one tools/call; a no refuses the other in one, and nothing is sent to it', async () => {
    const { client, asked } = await elicitingClient('erin@example.org');
    try {
      await client.callTool(lookup);
      const yes = await client.callTool(mail('erin@example.org', 'elicit-yes'));
      expect(yes.isError).toBeFalsy();
      expect((yes._meta as Record<string, unknown>)['toolplane/status']).toBe('completed');
      expect(mailsTo('erin@example.org')).toHaveLength(1);
      expect(asked).toEqual([expect.stringContaining('"erin@example.org" as /to')]);

      const no = await client.callTool(mail('attacker@evil.example', 'elicit-no'));
      expect(no).toMatchObject({ isError: true, _meta: { 'toolplane/status': 'refused' } });
      expect(mailsTo('attacker@evil.example')).toHaveLength(0);
      expect(asked).toHaveLength(2);

      // The run recorded the principal as who answered, each time.
      const workflowId = mcpSessionWorkflowId(sessionIdOf(client));
      await (client.transport as StreamableHTTPClientTransport).terminateSession();
      const ended = (await h.client.workflow.getHandle(workflowId).result()) as {
        journal: { effectKey?: string; confirmations?: { answer: string; by?: string }[] }[];
      };
      const answers = ended.journal.flatMap((e) => e.confirmations ?? []).map((c) => [c.answer, c.by]);
      expect(answers).toEqual([
        ['confirmed', 'agent:desk'],
        ['rejected', 'agent:desk'],
      ]);
    } finally {
      await client.close();
    }
  });

  test('a response naming a question the gateway never asked answers nothing', async () => {
    const { client } = await elicitingClient('nobody@example.org');
    try {
      await client.callTool(lookup);
      const r = await post(
        gateway.url,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 'forged-state',
          result: { action: 'accept', content: { confirm: true } },
        }),
        {
          Authorization: `Bearer ${await token('agent:desk')}`,
          'Mcp-Session-Id': sessionIdOf(client),
          'MCP-Protocol-Version': '2025-11-25',
        },
      );
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.json)).toContain('answers no question this gateway asked in this session');
    } finally {
      await client.close();
    }
  });
});
