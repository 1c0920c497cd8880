// The MCP server one request is answered by: the SDK's `Server`, with the tools the request's
// principal is offered and its calls run in the request's session. Built per request (the gateway
// keeps no session in memory: the session is the run, and the session id carries whose it is).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListToolsRequestSchema,
  ErrorCode as RpcCode,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { RunIdentity } from '../common/ticket';
import { handleCall, sendCall, type CallContext, type CallLimits } from './call';
import { callTaskResult, createCallTask, getCallTask, TASKS_CAPABILITY } from './tasks';
import { listing, type OfferedTool } from './offer';
import { SessionEnded, type SessionClient } from './session-client';
import { confirmationElicitation } from './elicitation';
import { CONFIRMATION_META, toolResult } from './results';
import type { ConfirmationQuestion } from '../common/gateway-protocol';

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
  /** The session's client answers `elicitation/create` (it said so at initialize), and this response streams. */
  elicits?: boolean;
}

/** How long a call asking its principal in-band waits for the answer before it answers `waiting` (the client's own timeout is 60 s). */
export const ELICITATION_WAIT_MS = 50_000;

/**
 * Puts a waiting call's question to the principal as `elicitation/create` on the call's response stream,
 * its id the MACed question (any gateway holding the key relays the answer), and waits for the answer to
 * be relayed. True once asked and answered (or given up on): the caller asks the run for the outcome.
 */
async function elicited(
  deps: ServerDeps,
  server: Server,
  sessionId: string,
  result: CallToolResult,
  extra: { requestId: string | number; signal: AbortSignal },
): Promise<boolean> {
  const question = result._meta?.[CONFIRMATION_META] as ConfirmationQuestion | undefined;
  const effectKey = result._meta?.['toolplane/effectKey'];
  if (!question || typeof effectKey !== 'string' || !server.transport) return false;
  const id = deps.sessions.requestState({ sessionId, effectKey, value: question.value });
  const answered = deps.sessions.answered.wait(sessionId, effectKey, ELICITATION_WAIT_MS, extra.signal);
  await server.transport.send(
    { jsonrpc: '2.0', id, ...confirmationElicitation(question) },
    { relatedRequestId: extra.requestId },
  );
  await answered;
  return !extra.signal.aborted;
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

type Extra = { requestId: string | number; signal: AbortSignal; sendNotification: Server['notification'] };

/** The call's context in this request: its session, who holds it, and the request's own channel. */
function callContext(scope: RequestScope, extra: Extra, progressToken: string | number | undefined): CallContext {
  const sessionId = scope.sessionId;
  if (!sessionId)
    throw new McpError(RpcCode.InvalidRequest, 'this request needs the Mcp-Session-Id of an initialized session');
  const progress =
    progressToken === undefined
      ? undefined
      : (n: number, message: string) =>
          extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: n, message } });
  return {
    sessionId,
    identity: scope.identity,
    fallbackKey: String(extra.requestId),
    ...(scope.given !== undefined ? { given: scope.given } : {}),
    signal: extra.signal,
    ...(progress ? { progress } : {}),
  };
}

/** Runs `answer`, and turns a session found ended into the SDK's "Session not found" (HTTP 404). */
async function inSession<T>(scope: RequestScope, answer: () => Promise<T>): Promise<T> {
  try {
    return await answer();
  } catch (err) {
    if (!(err instanceof SessionEnded)) throw err;
    scope.ended = true;
    throw new McpError(SESSION_NOT_FOUND, err.message);
  }
}

export function mcpServerFor(deps: ServerDeps, scope: RequestScope): Server {
  const server = new Server(
    { name: 'toolplane', version: deps.version },
    { capabilities: { tools: { listChanged: false }, tasks: TASKS_CAPABILITY }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [...deps.offered(scope.identity).values()].map((t) => ({
      ...listing(t),
      execution: { taskSupport: 'optional' as const },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    inSession(scope, async () => {
      const ctx = callContext(scope, extra, request.params._meta?.progressToken);
      if (request.params.task) return createCallTask(deps, ctx, request.params);
      const result = await handleCall(deps, ctx, request.params);
      // A client that takes elicitations is asked in this very request; its answer comes in a POST of its own.
      if (!scope.elicits || !(await elicited(deps, server, ctx.sessionId, result, extra))) return result;
      return await handleCall(deps, ctx, request.params);
    }),
  );
  server.setRequestHandler(GetTaskRequestSchema, (request, extra) =>
    inSession(scope, () => getCallTask(deps, callContext(scope, extra, undefined), request.params.taskId)),
  );
  server.setRequestHandler(GetTaskPayloadRequestSchema, (request, extra) =>
    inSession(scope, async () => {
      const ctx = callContext(scope, extra, undefined);
      const { call, outcome, related } = await callTaskResult(deps, ctx, request.params.taskId);
      let result = toolResult(ctx.sessionId, outcome);
      // The principal is asked in this request when the client takes elicitations, as a plain call would ask.
      if (scope.elicits && (await elicited(deps, server, ctx.sessionId, result, extra)))
        result = toolResult(ctx.sessionId, await sendCall(deps, ctx, call));
      return { ...result, _meta: { ...result._meta, ...related } };
    }),
  );
  return server;
}
