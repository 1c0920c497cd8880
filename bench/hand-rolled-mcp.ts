// The bench's "hand-rolled" baseline: what a team writes without toolplane to put a Temporal activity
// behind MCP. The SDK's low-level `Server` over stateless Streamable HTTP (a server and transport per
// request), whose `tools/call` starts one workflow per call that runs one plain activity, and answers
// its result. No bearer check, no session, no gate, no key: a floor for the plumbing, not a product.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export const HAND_ROLLED_TOOL = 'lookup_customer';

export interface HandRolledServer {
  url: string;
  /** The workflow ids its calls started, in order. */
  started: string[];
  close(): Promise<void>;
}

function mcpServer(client: Client, taskQueue: string, started: string[]): Server {
  const server = new Server({ name: 'hand-rolled', version: '0.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      {
        name: HAND_ROLLED_TOOL,
        description: 'Look a customer up in the CRM by email address.',
        inputSchema: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const workflowId = `hand-rolled-${randomUUID()}`;
    started.push(workflowId);
    const result = await client.workflow.execute('handRolledCall', {
      taskQueue,
      workflowId,
      args: [request.params.arguments ?? {}],
    });
    return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: { result } };
  });
  return server;
}

/** Serves the hand-rolled MCP server on a free port of 127.0.0.1 until `close()`. */
export async function startHandRolled(client: Client, taskQueue: string): Promise<HandRolledServer> {
  const started: string[] = [];
  const httpServer = http.createServer((req, res) => {
    // As the gateway answers: JSON responses, not an SSE stream per call.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = mcpServer(client, taskQueue, started);
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    server
      .connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500).end(String(err));
      });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    started,
    close: () =>
      new Promise<void>((resolve, reject) => {
        httpServer.close((err) => (err ? reject(err) : resolve()));
        httpServer.closeAllConnections();
      }),
  };
}
