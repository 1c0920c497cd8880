// The MCP server one request is answered by: the SDK's `Server`, with the tools the request's
// principal is offered and its calls run in the request's session. Built per request (the gateway
// keeps no session in memory: the session is the run, and the session id carries whose it is).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  ErrorCode as RpcCode,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { RunIdentity } from '../common/ticket';
import { handleCall, type CallLimits } from './call';
import { listing, type OfferedTool } from './offer';
import { SessionEnded, type SessionClient } from './session-client';

/** The JSON-RPC code of "this session has ended": the SDK's own "Session not found". */
export const SESSION_NOT_FOUND = -32001;

export interface RequestScope {
  identity: RunIdentity;
  /** Undefined on the initialize request, which opens the session. */
  sessionId: string | undefined;
  /** Set when a call found the session's run ended: the HTTP answer becomes 404. */
  ended: boolean;
  /** The principal's request the host declared on this HTTP request (`Toolplane-Request`), if any. */
  given?: unknown;
}

export interface ServerDeps {
  sessions: SessionClient;
  offered: (identity: RunIdentity) => Map<string, OfferedTool>;
  limits: CallLimits;
  version: string;
}

const INSTRUCTIONS =
  "Every tools/call is a governed, durable call in this session's toolplane run. Send `_meta.idempotencyKey` " +
  'with each call and repeat a call under the same key after a dropped connection: you get its one outcome, ' +
  'never a second send. A call that waits for a person is decided by a declared approver, never by you.';

export function mcpServerFor(deps: ServerDeps, scope: RequestScope): Server {
  const server = new Server(
    { name: 'toolplane', version: deps.version },
    { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [...deps.offered(scope.identity).values()].map(listing),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const sessionId = scope.sessionId;
    if (!sessionId)
      throw new McpError(RpcCode.InvalidRequest, 'tools/call needs the Mcp-Session-Id of an initialized session');
    const token = request.params._meta?.progressToken;
    const progress =
      token === undefined
        ? undefined
        : (n: number, message: string) =>
            extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress: n, message },
            });
    try {
      return await handleCall(
        deps,
        {
          sessionId,
          identity: scope.identity,
          fallbackKey: String(extra.requestId),
          ...(scope.given !== undefined ? { given: scope.given } : {}),
          signal: extra.signal,
          ...(progress ? { progress } : {}),
        },
        request.params,
      );
    } catch (err) {
      if (!(err instanceof SessionEnded)) throw err;
      scope.ended = true;
      throw new McpError(SESSION_NOT_FOUND, err.message);
    }
  });
  return server;
}
