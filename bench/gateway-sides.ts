// The gateway bench's four sides (bench/gateway.ts): how each opens one client and makes one call of
// the same tool. Every call is checked to have completed: a refusal is fast, and not a figure.
import { randomUUID } from 'node:crypto';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Client } from '@temporalio/client';
import { offerName } from '../catalog/tool-id';
import { mcpSessionWorkflowId } from '../common/gateway-protocol';
import type { RunIdentity } from '../common/ticket';
import type { Gateway } from '../gateway/gateway';
import type { SessionClient } from '../gateway/session-client';
import { signCredential, type IssuerKey } from '../identity/mint';
import { plainCallUpdate, plainEndSignal } from './gateway-workflows';
import { HAND_ROLLED_TOOL, type HandRolledServer } from './hand-rolled-mcp';

export const GATEWAY_SIDES = ['plain', 'direct', 'gateway', 'handRolled'] as const;
export type GatewaySide = (typeof GATEWAY_SIDES)[number];

const CRM = 'tool://crm/lookup_customer';
const PRINCIPAL = 'agent:bench';
export const ISSUER = 'https://issuer.bench';
const EMAILS = ['alice@example.com', 'bob@example.com', 'chen@example.com'];
const emailOf = (i: number) => ({ email: EMAILS[i % EMAILS.length]! });

/** One client of a side: its session (or workflow, or connection), calls made one after another. */
export interface Caller {
  call(i: number): Promise<void>;
  close(): Promise<void>;
  /** The workflows whose histories hold this client's calls (its session's run, or one per call). */
  workflowIds(): string[];
}

export interface World {
  client: Client;
  taskQueue: string;
  sessions: SessionClient;
  gateway: Gateway;
  issuer: IssuerKey;
  hand: HandRolledServer;
}

async function mcpCaller(
  url: string,
  headers: Record<string, string>,
  call: (c: McpClient, i: number) => Promise<void>,
  workflowIds: (sessionId: string | undefined) => string[],
): Promise<Caller> {
  const c = new McpClient({ name: 'toolplane-bench', version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await c.connect(transport);
  const sessionId = transport.sessionId;
  return {
    call: (i: number) => call(c, i),
    workflowIds: () => workflowIds(sessionId),
    async close() {
      if (transport.sessionId) await transport.terminateSession();
      await c.close();
    },
  };
}

function failedCall(side: GatewaySide, what: unknown): Error {
  return new Error(`a ${side} call did not complete: ${JSON.stringify(what).slice(0, 300)}`);
}

/** How each side opens one client. Every call is checked to have completed: a refusal is not a figure. */
export function openers(w: World): Record<GatewaySide, () => Promise<Caller>> {
  const identity: RunIdentity = { principal: PRINCIPAL, groups: [], issuer: ISSUER };
  const gatewayTool = offerName(CRM);
  return {
    async plain() {
      const handle = await w.client.workflow.start('plainSession', {
        taskQueue: w.taskQueue,
        workflowId: `bench-plain-session-${randomUUID()}`,
      });
      return {
        async call(i) {
          if (!(await handle.executeUpdate(plainCallUpdate, { args: [emailOf(i)] }))) throw failedCall('plain', i);
        },
        close: () => handle.signal(plainEndSignal),
        workflowIds: () => [handle.workflowId],
      };
    },
    async direct() {
      const sessionId = w.sessions.newSessionId(identity);
      return {
        async call(i) {
          const call = { key: `k:${randomUUID()}`, toolId: CRM, args: emailOf(i) };
          const outcome = await w.sessions.call(sessionId, identity, call);
          if (outcome.status !== 'completed') throw failedCall('direct', outcome);
        },
        close: () => w.sessions.end(sessionId),
        workflowIds: () => [mcpSessionWorkflowId(sessionId)],
      };
    },
    async gateway() {
      const token = await signCredential(w.issuer, {
        audience: w.gateway.resource,
        subject: PRINCIPAL,
        expiresIn: '50m',
      });
      const call = async (c: McpClient, i: number) => {
        const r = await c.callTool({
          name: gatewayTool,
          arguments: emailOf(i),
          _meta: { idempotencyKey: randomUUID() },
        });
        if (r.isError) throw failedCall('gateway', r);
      };
      return mcpCaller(w.gateway.url, { Authorization: `Bearer ${token}` }, call, (sid) =>
        sid ? [mcpSessionWorkflowId(sid)] : [],
      );
    },
    handRolled() {
      const from = w.hand.started.length;
      const call = async (c: McpClient, i: number) => {
        const r = await c.callTool({ name: HAND_ROLLED_TOOL, arguments: emailOf(i) });
        if (r.isError) throw failedCall('handRolled', r);
      };
      // Sequential callers only: concurrent ones would share the server's list.
      return mcpCaller(w.hand.url, {}, call, () => w.hand.started.slice(from));
    },
  };
}
