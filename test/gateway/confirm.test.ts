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
