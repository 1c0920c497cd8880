// An operator resets an MCP gateway session's run (issue 50's bad input). Temporal copies the session's
// history to the reset point and reapplies the calls (updates) the session took after it: the reset
// session must send none of them again, whatever the tool keeps, and go on serving the client.
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { randomUUID } from 'node:crypto';
import { mcpSessionWorkflowId } from '../../common/gateway-protocol';
import type { Gateway } from '../../gateway/gateway';
import { supportDesk } from '../support/desk';
import { harness, testDir, type Harness } from '../support/env';
import { testIssuer, type TestIssuer } from '../support/identity';
import { keylessRefunds, resetTo } from '../support/reset';
import { waitFor } from '../support/wait';
import { deskBehindGateway, deskManifest, gatewayToken, mcpClient, sessionIdOf } from './support';

const ACCOUNT = 'acct_alice_001';
const TICKET_KEY = Buffer.alloc(32, 5).toString('base64url');

/** The desk behind the gateway, its refund provider keeping no keys: a resend is a second refund. */
const manifest = keylessRefunds(deskManifest());

let h: Harness;
let issuer: TestIssuer;
let gateway: Gateway;
let client: McpClient | undefined;
const desk = supportDesk(testDir('gateway-reset'));

beforeAll(async () => {
  h = await harness(`gateway-reset-${randomUUID()}`);
  issuer = await testIssuer();
  gateway = await deskBehindGateway(h, { manifest, issuer, tools: desk.tools, ticketKey: TICKET_KEY });
});
afterAll(async () => {
  await client?.close();
  await gateway?.close();
  await h?.close();
});

const landed = (amount: number) =>
  desk.payments.all().filter((p) => p.account === ACCOUNT && p.amountCents === amount).length;
const received = () => desk.payments.all().length + desk.payments.repeats();

test('a reset session sends none of its calls again, and serves the next one', async () => {
  const token = await gatewayToken(issuer, gateway.resource, 'agent:desk');
  client = await mcpClient(gateway.url, token);
  const found = await client.callTool({ name: 'crm__lookup_customer', arguments: { email: 'alice@example.com' } });
  expect(found.isError).toBeFalsy();
  const refund = (amount_cents: number) =>
    client!.callTool({
      name: 'payments__refund',
      arguments: { account_id: ACCOUNT, amount_cents, currency: 'EUR' },
    });
  expect((await refund(2500)).isError).toBeFalsy();
  expect(received()).toBe(1);

  const workflowId = mcpSessionWorkflowId(sessionIdOf(client));
  const base = await h.client.workflow.getHandle(workflowId).describe();
  const resetRun = await resetTo(h.client, workflowId, base.runId, { task: 0 });
  // The reset session takes the calls Temporal reapplied, and decides them before the next call.
  const resetEvents = async () => (await h.client.workflow.getHandle(workflowId, resetRun).fetchHistory()).events ?? [];
  await waitFor('the reset session to take its reapplied calls', 30_000, async () => {
    const taken = (await resetEvents()).filter((e) => e.workflowExecutionUpdateCompletedEventAttributes).length;
    return taken >= 2;
  });
  // Both adopted from the base: the run asked its worker once and scheduled no send.
  const scheduled = (await resetEvents()).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name);
  expect(scheduled.filter((t) => t === 'readBaseBranch')).toHaveLength(1);
  expect(scheduled.filter((t) => t === 'performTool')).toHaveLength(0);
  expect(received()).toBe(1);

  // The session goes on: the client's next call is served by the reset run, once.
  expect((await refund(1000)).isError).toBeFalsy();
  expect({ first: landed(2500), next: landed(1000), received: received() }).toEqual({ first: 1, next: 1, received: 2 });
});
