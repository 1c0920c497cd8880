// A host narrows a gateway call to what the principal asked for (issue 52 item 5, on the gateway): a tool
// that `requires_request` runs without a question only when the request the host declared with the call
// (`Toolplane-Request`) names it in its `tools`, as a run's `grants` name it on agentRun. The same call
// under a request that names nothing, or names another tool, waits for the principal; nothing is sent.
import { randomUUID } from 'node:crypto';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { defaultPayloadConverter } from '@temporalio/common';
import type { Manifest } from '../../catalog/manifest';
import { Patch } from '../../common/names';
import { encodeDeclaredRequest, REQUEST_HEADER } from '../../gateway/host-request';
import type { Gateway } from '../../gateway/gateway';
import { mcpSessionWorkflowId } from '../../common/gateway-protocol';
import { harness, testDir, type Harness } from '../support/env';
import { supportDesk } from '../support/desk';
import { historyOf } from '../support/history';
import { testIssuer, type TestIssuer } from '../support/identity';
import { deskBehindGateway, deskManifest, gatewayToken, mcpClient, sessionIdOf } from './support';

const MAIL = 'tool://mail/send_email';
let h: Harness;
let issuer: TestIssuer;
let gateway: Gateway;
let desk: ReturnType<typeof supportDesk>;

/** The desk, its mail an action the principal must have asked for. */
function askedForMail(): Manifest {
  const base = deskManifest();
  return { ...base, tools: base.tools.map((t) => (t.id === MAIL ? { ...t, requires_request: true } : t)) };
}

beforeAll(async () => {
  h = await harness(`gateway-declared-${randomUUID()}`);
  issuer = await testIssuer();
  desk = supportDesk(testDir('gateway-declared-request'));
  gateway = await deskBehindGateway(h, {
    manifest: askedForMail(),
    issuer,
    tools: desk.tools,
    ticketKey: Buffer.alloc(32, 29).toString('base64url'),
  });
});

afterAll(async () => {
  await gateway?.close();
  await h?.close();
});

const lookup = { name: 'crm__lookup_customer', arguments: { email: 'bob@example.com' } };
const mail = (subject: string) => ({
  name: 'mail__send_email',
  arguments: { to: 'bob@example.com', subject, body: 'Your refund is on its way.' },
  _meta: { idempotencyKey: `m-${randomUUID()}` },
});
const mailsWith = (subject: string) => desk.outbox.all().filter((m) => m.subject === subject);

/** A session whose host declares `request` with every call. */
async function hostDeclaring(request: unknown): Promise<McpClient> {
  return mcpClient(gateway.url, await gatewayToken(issuer, gateway.resource, 'agent:desk'), undefined, {
    [REQUEST_HEADER]: encodeDeclaredRequest(request),
  });
}

test('a declared request naming the tool sends the mail without a question', async () => {
  const subject = `named-${randomUUID()}`;
  const client = await hostDeclaring({ request: 'Tell Bob his refund is on its way.', tools: [MAIL] });
  try {
    await client.callTool(lookup);
    const sent = await client.callTool(mail(subject));
    expect(sent.isError).toBeFalsy();
    expect(mailsWith(subject)).toHaveLength(1);
    // The decision is recorded in the session's history: the marker of the rule that let it through.
    const events = await historyOf(h.client, mcpSessionWorkflowId(sessionIdOf(client)));
    const patches = events
      .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
      .map((e) => {
        const data = e.markerRecordedEventAttributes!.details!['patch-data']!.payloads![0]!;
        return defaultPayloadConverter.fromPayload<{ id: string }>(data).id;
      });
    expect(patches).toContain(Patch.DeclaredRequestNamesTools);
  } finally {
    await client.close();
  }
});

test.each([
  ['names no tools', 'Tell Bob his refund is on its way.'],
  ['names another tool', { request: 'Look Bob up.', tools: ['tool://crm/lookup_customer'] }],
])('a declared request that %s: the mail waits for the principal and nothing is sent', async (_what, request) => {
  const subject = `unnamed-${randomUUID()}`;
  const client = await hostDeclaring(request);
  try {
    await client.callTool(lookup);
    const waiting = await client.callTool(mail(subject));
    expect(waiting.isError).toBe(true);
    const meta = waiting._meta as Record<string, unknown>;
    expect(meta['toolplane/status']).toBe('waiting');
    expect(meta['toolplane/confirmation']).toMatchObject({ pointer: '', value: MAIL });
    expect(mailsWith(subject)).toHaveLength(0);
  } finally {
    await client.close();
  }
});
