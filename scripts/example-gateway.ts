/**
 * `npm run example:gateway`: toolplane as an MCP server, end to end. Starts (or reuses) the dev
 * server, a worker with the support-desk tools, and the gateway beside it; connects the MCP SDK's own
 * client with a demo issuer's bearer token; lists the tools; looks a customer up and refunds her;
 * repeats the refund under the same idempotency key (the same outcome, no second refund); prints the
 * session's run in the Web UI. Exits when done.
 */
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createGateway, loadManifest, type Manifest } from '../index';
import { generateIssuerKey, signCredential } from '../client';
import { createTools } from '../examples/support-desk/tools';
import { createWorker } from '../worker';
import { mcpSessionWorkflowId } from '../common/gateway-protocol';
import { connectOrStart, EAGER_ACTIVITIES, runUrl, serverConnectOptions } from './dev-server';

const desk = path.resolve(__dirname, '..', 'examples', 'support-desk');

function textOf(result: Record<string, unknown>): string {
  const first = (result.content as { type: string; text?: string }[] | undefined)?.[0];
  return first?.text ?? '';
}

/**
 * The desk's manifest, with the refund admitting the amount and currency the MCP client writes. A
 * client has no prompt the gateway could read: after the first result entered the session, whatever
 * it sends is of unknown origin, so a mutating tool takes it only where a field rule admits it. The
 * account stays protected: it must be a value the CRM returned in this session (docs/gateway.md).
 */
function withClientAmounts(manifest: Manifest): { manifest: Manifest } {
  const tools = manifest.tools.map((t) =>
    t.id !== 'tool://payments/refund'
      ? t
      : {
          ...t,
          protected_fields: [
            ...t.protected_fields,
            { pointer: '/amount_cents', accepts_untrusted: true as const },
            { pointer: '/currency', accepts_untrusted: true as const },
          ],
        },
  );
  return { manifest: { ...manifest, tools } };
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const server = await connectOrStart({ dynamicConfig: EAGER_ACTIVITIES });
  try {
    const options = serverConnectOptions(server);
    const native = await NativeConnection.connect(options);
    const client = new Client({ connection: await Connection.connect(options), namespace: server.namespace });
    const { manifest } = withClientAmounts(loadManifest(path.join(desk, 'manifest.yaml')).manifest);
    const taskQueue = `toolplane-gateway-example-${process.pid}`;
    // The demo is its own issuer; a team trusts its identity provider the same way (docs/gateway.md).
    const issuer = await generateIssuerKey('toolplane-demo', 'demo-1');
    const identity = { issuers: [{ issuer: issuer.issuer, audience: 'toolplane-demo-worker', jwks: issuer.jwks }] };
    const worker = await createWorker({
      connection: native,
      namespace: server.namespace,
      taskQueue,
      manifest,
      tools: createTools(),
      identity,
    });
    await worker.runUntil(async () => {
      const gateway = await createGateway({ client, taskQueue, manifest, identity });
      try {
        await demo(gateway, issuer, server);
      } finally {
        await gateway.close();
      }
    });
    await client.connection.close();
    await native.close();
  } finally {
    await server.stop();
  }
}

async function demo(
  gateway: { url: string; resource: string },
  issuer: Awaited<ReturnType<typeof generateIssuerKey>>,
  server: { uiUrl?: string; namespace: string },
): Promise<void> {
  console.log(`MCP endpoint ${gateway.url} (resource ${gateway.resource})`);
  const token = await signCredential(issuer, { audience: gateway.resource, subject: 'agent:support-desk' });
  const mcp = new McpClient({ name: 'toolplane-example', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(gateway.url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await mcp.connect(transport);
  const { tools } = await mcp.listTools();
  console.log(`tools/list: ${tools.map((t) => t.name).join(', ')}`);
  const found = await mcp.callTool({ name: 'crm__lookup_customer', arguments: { email: 'alice@example.com' } });
  console.log(`crm__lookup_customer -> ${textOf(found)}`);
  const account = (found.structuredContent as { account_id?: string } | undefined)?.account_id ?? 'acct_alice_001';
  const refund = {
    name: 'payments__refund',
    arguments: { account_id: account, amount_cents: 2500, currency: 'EUR' },
    _meta: { idempotencyKey: 'refund-alice-25eur' },
  };
  const first = await mcp.callTool(refund);
  console.log(`payments__refund -> ${first.isError ? 'error: ' : ''}${textOf(first)}`);
  const again = await mcp.callTool(refund);
  console.log(
    `payments__refund again, same idempotencyKey -> ${textOf(again)} (effect key ${String(again._meta?.['toolplane/effectKey'])})`,
  );
  const ticket = await mcp.callTool({ name: 'tickets__read_ticket', arguments: { ticket_id: 'T-101' } });
  console.log(`tickets__read_ticket T-101 -> ${textOf(ticket).slice(0, 120)}…`);
  const injected = await mcp.callTool({
    name: 'payments__refund',
    arguments: { account_id: 'acct_attacker_991', amount_cents: 95000, currency: 'EUR' },
    _meta: { idempotencyKey: 'refund-from-ticket-text' },
  });
  console.log(`payments__refund to the ticket's account -> ${textOf(injected)}`);
  const workflowId = mcpSessionWorkflowId(transport.sessionId!);
  await transport.terminateSession();
  await mcp.close();
  const url = runUrl(server, workflowId);
  console.log(`session run ${workflowId}`);
  console.log(url ? `Web UI: ${url}` : 'Web UI: set TEMPORAL_UI_URL to print a link to this run');
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
