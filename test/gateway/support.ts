// The gateway suites' world: the support desk with two principals, a test issuer whose tokens name
// the gateway's resource, and MCP SDK clients connected with a bearer token.
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Tool } from '../../activities/tool';
import type { Manifest } from '../../catalog/manifest';
import { createGateway, type Gateway, type GatewayOptions } from '../../gateway/gateway';
import { signCredential } from '../../identity/mint';
import { exampleManifest, type Harness } from '../support/env';
import type { TestIssuer } from '../support/identity';

/**
 * The support desk behind a gateway. `agent:desk` may be granted every tool; the group `readers` only
 * the two reads. The refund admits the amount and currency the client writes (an MCP client has no
 * prompt: after the first result, everything it sends is of unknown origin), while the account must
 * still come from the CRM.
 */
export function deskManifest(): Manifest {
  const base = exampleManifest();
  return {
    ...base,
    tools: base.tools.map((t) =>
      t.id === 'tool://payments/refund'
        ? {
            ...t,
            protected_fields: [
              ...t.protected_fields,
              { pointer: '/amount_cents', accepts_untrusted: true },
              { pointer: '/currency', accepts_untrusted: true },
            ],
          }
        : t,
    ),
    principals: {
      'agent:desk': { tools: '*', capabilities: [], models: '*', share_facts_with: [] },
      'group:readers': {
        tools: ['tool://crm/lookup_customer', 'tool://tickets/read_ticket'],
        capabilities: [],
        models: '*',
        share_facts_with: [],
      },
    },
  };
}

/** A bearer token for the gateway: the resource URI is its audience, and it names no workflow. */
export function gatewayToken(
  issuer: TestIssuer,
  resource: string,
  subject: string,
  groups?: string[],
): Promise<string> {
  return signCredential(issuer.key, { audience: resource, subject, groups, expiresIn: '30m' });
}

/** The MCP SDK's own client over Streamable HTTP; with `sessionId`, it resumes that session without initializing. */
export async function mcpClient(
  url: string,
  token: string,
  sessionId?: string,
  headers: Record<string, string> = {},
): Promise<McpClient> {
  const client = new McpClient({ name: 'toolplane-gateway-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}`, ...headers } },
    ...(sessionId ? { sessionId } : {}),
  });
  await client.connect(transport);
  return client;
}

export function sessionIdOf(client: McpClient): string {
  const id = (client.transport as StreamableHTTPClientTransport | undefined)?.sessionId;
  if (!id) throw new Error('the client holds no session id');
  return id;
}

/** A raw JSON-RPC POST to the gateway (for what no well-behaved client sends). */
export async function post(
  url: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Headers; json: unknown }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body,
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, headers: res.headers, json };
}

/** A worker serving `manifest` with the support desk's tools, verifying `issuer`'s tokens, and a gateway in front of it. */
export async function deskBehindGateway(
  h: Harness,
  o: { manifest: Manifest; issuer: TestIssuer; tools: Tool[]; ticketKey: string } & Partial<GatewayOptions>,
): Promise<Gateway> {
  const { manifest, issuer, tools, ticketKey, ...gatewayOptions } = o;
  await h.runWorker({ manifest, tools, identity: issuer.identity, insecureAssertedPrincipals: false, ticketKey });
  return createGateway({
    client: h.client,
    taskQueue: h.taskQueue,
    manifest,
    identity: issuer.identity,
    ticketKey,
    ...gatewayOptions,
  });
}
