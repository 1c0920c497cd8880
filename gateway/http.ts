// The gateway's HTTP door: the Host and Origin check, Protected Resource Metadata, the bearer check, the
// revision a request speaks (2026-07-28 is served by modern.ts), and for 2025-11-25 the session id check
// and MCP over Streamable HTTP through the SDK's transport (a fresh stateless transport per request:
// the session lives in its run, so any gateway process holding the key answers any of its requests).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  isInitializeRequest,
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  type JSONRPCErrorResponse,
  type JSONRPCResultResponse,
} from '@modelcontextprotocol/sdk/types.js';
import { PRM_PATH, type BearerVerifier, type HttpRefusal, type ProtectedResourceMetadata } from './bearer';
import { mcpServerFor, SESSION_NOT_FOUND, type RequestScope, type ServerDeps } from './mcp-server';
import type { RunIdentity } from '../common/ticket';
import { declaredRequest } from './host-request';
import { eraOf, handleModern } from './modern';
import { refusedOrigin, type OriginPolicy } from './origin';
import { elicitedDecision } from './elicitation';
import { sessionTakes } from '../activities/identity/session-pass';
import { WorkflowUpdateFailedError } from '@temporalio/client';

export interface HttpDeps extends ServerDeps {
  /** The Host and Origin values the gateway answers (DNS rebinding). */
  origins: OriginPolicy;
  verifier: BearerVerifier;
  metadata: ProtectedResourceMetadata;
  mcpPath: string;
  /** The largest request body read: the argument limit and room for the envelope. */
  maxBodyBytes: number;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(body));
}

function rpcError(status: number, code: number, message: string): HttpRefusal {
  return { status, headers: {}, body: { jsonrpc: '2.0', id: null, error: { code, message } } };
}

function refuse(res: ServerResponse, r: HttpRefusal): void {
  send(res, r.status, r.body, r.headers);
}

/** The body as text, or undefined when it is longer than `max` bytes (the rest is not read). */
async function readBody(req: IncomingMessage, max: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The session a request names, checked against its bearer; or why it is refused. */
function sessionOf(deps: HttpDeps, req: IncomingMessage, who: RunIdentity): string | HttpRefusal {
  const sid = req.headers['mcp-session-id'];
  if (typeof sid !== 'string' || sid.length === 0)
    return rpcError(400, -32600, 'Bad Request: the Mcp-Session-Id header is required after initialize');
  return deps.sessions.owns(sid, who)
    ? sid
    : rpcError(
        403,
        SESSION_NOT_FOUND,
        `Forbidden: Mcp-Session-Id ${sid} was not issued to ${who.principal} (another principal's session, or not one this gateway issued)`,
      );
}

async function handlePost(deps: HttpDeps, req: IncomingMessage, res: ServerResponse, who: RunIdentity): Promise<void> {
  const text = await readBody(req, deps.maxBodyBytes);
  if (text === undefined)
    return refuse(res, rpcError(413, -32600, `Payload Too Large: the request body exceeds ${deps.maxBodyBytes} bytes`));
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return refuse(res, rpcError(400, -32700, `Parse error: the request body is not JSON (${(err as Error).message})`));
  }
  const era = eraOf(req, parsed);
  if (era.era === 'refused') return refuse(res, era.refusal);
  if (era.era === 'modern') return handleModern(deps, req, res, who, parsed);
  const declared = declaredRequest(req);
  if (!declared.ok) return refuse(res, declared.refusal);
  const messages: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
  const initialize = messages.find((m) => isInitializeRequest(m));
  let sessionId: string | undefined;
  if (initialize) {
    // What the client takes travels in its session id: the gateway keeps no session in memory.
    const elicitation = initialize.params.capabilities.elicitation !== undefined;
    sessionId = deps.sessions.newSessionId(who, { elicitation });
    res.setHeader('Mcp-Session-Id', sessionId);
  } else {
    const checked = sessionOf(deps, req, who);
    if (typeof checked !== 'string') return refuse(res, checked);
    sessionId = checked;
    if (messages.length > 0 && messages.every(isJsonRpcResponse))
      return answerElicitations(deps, res, sessionId, messages);
  }
  const calls = messages.some((m) => (m as { method?: unknown } | null)?.method === 'tools/call');
  const elicits = calls && !initialize && sessionTakes(sessionId).elicitation === true;
  const scope: RequestScope = {
    identity: who,
    sessionId: initialize ? undefined : sessionId,
    ended: false,
    ...(declared.given !== undefined ? { given: declared.given } : {}),
    ...(elicits ? { elicits } : {}),
  };
  const wantsProgress = messages.some((m) => progressTokenOf(m) !== undefined);
  // JSON responses, except for a call that asked for progress, or that may ask its principal: those stream.
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: !wantsProgress && !elicits,
  });
  const server = mcpServerFor(deps, scope);
  // A call that found its session's run ended answers 404, so the client opens a new session.
  const writeHead = res.writeHead.bind(res) as (...a: unknown[]) => ServerResponse;
  res.writeHead = (status: number, ...rest: unknown[]) => writeHead(scope.ended ? 404 : status, ...rest);
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, parsed);
}

/** A JSON-RPC response (an answer to a request the gateway sent): an id, a result or an error, no method. */
const isJsonRpcResponse = (m: unknown): m is JSONRPCResultResponse | JSONRPCErrorResponse =>
  isJSONRPCResultResponse(m) || isJSONRPCErrorResponse(m);

/**
 * The client's answers to the gateway's `elicitation/create` (2025-11-25): each id is the MACed question
 * this gateway's key made for this session, relayed to the session's run as the principal's decision.
 * An id the key did not make for this session is refused and nothing is answered.
 */
async function answerElicitations(
  deps: HttpDeps,
  res: ServerResponse,
  sessionId: string,
  responses: (JSONRPCResultResponse | JSONRPCErrorResponse)[],
): Promise<void> {
  const questions = responses.map((r) => ({ r, q: deps.sessions.readRequestState(sessionId, r.id) }));
  const unknown = questions.find((x) => !x.q);
  if (unknown)
    return refuse(
      res,
      rpcError(
        400,
        -32600,
        `Bad Request: response id ${JSON.stringify(unknown.r.id)} answers no question this gateway asked in this session`,
      ),
    );
  for (const { r, q } of questions) {
    const decision = elicitedDecision(
      ('result' in r ? r.result : undefined) as { action?: unknown; content?: unknown } | undefined,
    );
    if (!decision) {
      deps.sessions.answered.settle(sessionId, q!.effectKey);
      continue;
    }
    try {
      await deps.sessions.answer(sessionId, q!, decision);
    } catch (err) {
      // Answered meanwhile, or the call ended: the call itself says its outcome.
      if (!(err instanceof WorkflowUpdateFailedError)) throw err;
    }
  }
  res.writeHead(202).end();
}

function progressTokenOf(m: unknown): unknown {
  if (m === null || typeof m !== 'object') return undefined;
  const params = (m as { params?: { _meta?: { progressToken?: unknown } } }).params;
  return params?._meta?.progressToken;
}

async function handleMcp(deps: HttpDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const bearer = await deps.verifier.verify(req.headers.authorization);
  if (!bearer.ok) return refuse(res, bearer.refusal);
  const who = bearer.identity;
  if (req.method === 'POST') return handlePost(deps, req, res, who);
  if (req.method === 'DELETE') {
    const checked = sessionOf(deps, req, who);
    if (typeof checked !== 'string') return refuse(res, checked);
    await deps.sessions.end(checked);
    res.writeHead(200).end();
    return;
  }
  // No server-initiated stream: every message the gateway sends answers a request.
  return send(res, 405, rpcError(405, -32000, 'Method Not Allowed: use POST (and DELETE to end a session)').body, {
    Allow: 'POST, DELETE',
  });
}

/** The node:http request listener of a gateway. */
export function gatewayListener(deps: HttpDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const path = new URL(req.url ?? '/', 'http://gateway').pathname;
    const answer = async () => {
      const refused = refusedOrigin(deps.origins, req);
      if (refused) return refuse(res, refused);
      if (path === PRM_PATH || path.startsWith(`${PRM_PATH}/`)) {
        if (req.method !== 'GET') return send(res, 405, { error: 'method not allowed' }, { Allow: 'GET' });
        return send(res, 200, deps.metadata, { 'Cache-Control': 'max-age=300' });
      }
      if (path !== deps.mcpPath) return send(res, 404, { error: `not found: the MCP endpoint is ${deps.mcpPath}` });
      return handleMcp(deps, req, res);
    };
    answer().catch((err: unknown) => {
      if (res.headersSent) return void res.end();
      refuse(res, rpcError(500, -32603, `Internal error: ${(err as Error).message}`));
    });
  };
}
