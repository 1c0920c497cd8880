// MCP 2026-07-28 on the gateway: the stateless wire. No initialize and no Mcp-Session-Id: every request
// carries its protocol version (header and `_meta`), `server/discover` advertises both revisions, and a
// conversation is named by the host's `Toolplane-Conversation` header, bound to the bearer's subject
// (the same name from another subject is another run). One conversation is one `mcpSession` run, as one
// 2025-11-25 session is; a call is keyed by its `_meta.idempotencyKey` (a retry on this revision gets a
// new request id, so a call without one is a new call each time).
//
// @modelcontextprotocol/sdk 1.32.2 implements 2025-11-25 only, so this revision's few methods are served
// here, reusing the same call path (call.ts), listing (offer.ts) and results (results.ts).
import { CONFIRM_INPUT, confirmationElicitation, elicitedDecision } from './elicitation';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpError, type CallToolRequest, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode } from '../catalog/error-codes';
import { ToolplaneError } from '../catalog/errors';
import type { RunIdentity } from '../common/ticket';
import { handleCall } from './call';
import { conversationOf, declaredRequest } from './host-request';
import type { HttpRefusal } from './bearer';
import type { ServerDeps } from './mcp-server';
import { listing } from './offer';
import { CONFIRMATION_META } from './results';
import type { ConfirmationQuestion } from '../common/gateway-protocol';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { SessionEnded } from './session-client';

/** The stateless revision. */
export const MODERN_VERSION = '2026-07-28';
/** The handshake revision the SDK serves. */
export const LEGACY_VERSION = '2025-11-25';
/** What `server/discover` and an UnsupportedProtocolVersion error advertise, newest first. */
export const SUPPORTED_VERSIONS = [MODERN_VERSION, LEGACY_VERSION] as const;

/** 2026-07-28's error codes (its reserved range). */
export const ModernCode = { HeaderMismatch: -32020, UnsupportedProtocolVersion: -32022 } as const;

const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
} as const;

const INSTRUCTIONS =
  "Every tools/call is a governed, durable call in this conversation's toolplane run. Send `_meta.idempotencyKey` " +
  'with each call and repeat a call under the same key after a broken connection: you get its one outcome, never ' +
  'a second send. A call that waits for a person is decided by a declared approver, never by you.';

type Era = { era: 'modern' } | { era: 'legacy' } | { era: 'refused'; refusal: HttpRefusal };

interface RpcMessage {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: { _meta?: Record<string, unknown>; name?: unknown; [k: string]: unknown };
}

function rpcError(status: number, id: unknown, code: number, message: string, data?: unknown): HttpRefusal {
  const error = { code, message, ...(data !== undefined ? { data } : {}) };
  const rpcId = typeof id === 'string' || typeof id === 'number' ? id : null;
  return { status, headers: {}, body: { jsonrpc: '2.0', id: rpcId, error } };
}

function asMessage(m: unknown): RpcMessage | undefined {
  return m !== null && typeof m === 'object' && !Array.isArray(m) ? m : undefined;
}

/**
 * Which revision a POST speaks, as a dual-era server tells: `MCP-Protocol-Version: 2026-07-28` (or that
 * version in the body's `_meta`) is the stateless wire; a later unknown version is refused with the
 * supported ones (the client retries with one of them); anything else is the handshake revision.
 */
export function eraOf(req: IncomingMessage, parsed: unknown): Era {
  const header = req.headers['mcp-protocol-version'];
  const m = asMessage(parsed);
  const inBody = m?.params?._meta?.[META.protocolVersion];
  const version = typeof header === 'string' ? header : typeof inBody === 'string' ? inBody : undefined;
  if (version === MODERN_VERSION) return { era: 'modern' };
  if (version !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(version) && version > LEGACY_VERSION)
    return {
      era: 'refused',
      refusal: rpcError(
        400,
        m?.id,
        ModernCode.UnsupportedProtocolVersion,
        `Unsupported protocol version ${version}: this gateway speaks ${SUPPORTED_VERSIONS.join(' and ')}`,
        { supported: [...SUPPORTED_VERSIONS], requested: version },
      ),
    };
  return { era: 'legacy' };
}

/** The headers 2026-07-28 mirrors from the body must match it; a mismatch is refused before anything runs. */
function headerMismatch(req: IncomingMessage, m: RpcMessage): HttpRefusal | undefined {
  const mismatch = (what: string) => rpcError(400, m.id, ModernCode.HeaderMismatch, `Header mismatch: ${what}`);
  const inBody = m.params?._meta?.[META.protocolVersion];
  if (req.headers['mcp-protocol-version'] !== MODERN_VERSION)
    return mismatch(`the MCP-Protocol-Version header must be ${MODERN_VERSION} on this revision`);
  if (inBody !== MODERN_VERSION)
    return mismatch(`_meta["${META.protocolVersion}"] must equal the MCP-Protocol-Version header (${MODERN_VERSION})`);
  const method = req.headers['mcp-method'];
  if (method !== undefined && method !== m.method)
    return mismatch(
      `Mcp-Method header value ${JSON.stringify(method)} does not match body value ${JSON.stringify(m.method)}`,
    );
  const name = req.headers['mcp-name'];
  if (m.method === 'tools/call' && typeof name === 'string' && decodeHeaderValue(name) !== m.params?.name)
    return mismatch(
      `Mcp-Name header value ${JSON.stringify(name)} does not match body value ${JSON.stringify(m.params?.name)}`,
    );
  return undefined;
}

/** A header value, decoding 2026-07-28's Base64 sentinel (`=?base64?…?=`). */
function decodeHeaderValue(v: string): string {
  const b64 = /^=\?base64\?(.*)\?=$/i.exec(v);
  return b64 ? Buffer.from(b64[1]!, 'base64').toString('utf8') : v;
}

function complete<T extends object>(deps: ServerDeps, result: T & { _meta?: Record<string, unknown> }) {
  return {
    ...result,
    resultType: 'complete',
    _meta: { ...result._meta, [META.serverInfo]: { name: 'toolplane', version: deps.version } },
  };
}

/**
 * What a call's result becomes on this revision. A call that waits for its principal to confirm a value,
 * from a client that takes elicitations, answers `input_required`: one form elicitation (a yes/no on the
 * exact value) and a MACed `requestState` naming the question; the client's retry of the same
 * `tools/call` carries the answer back (`answerCarried`). Anything else is a complete result (a call
 * waiting for an approver is the `waiting` tool error, as on 2025-11-25).
 */
function callResult(deps: ServerDeps, m: RpcMessage, sessionId: string, result: CallToolResult) {
  const question = result._meta?.[CONFIRMATION_META] as ConfirmationQuestion | undefined;
  const effectKey = result._meta?.['toolplane/effectKey'];
  if (!question || typeof effectKey !== 'string' || !takesElicitation(m)) return complete(deps, result);
  const requestState = deps.sessions.requestState({ sessionId, effectKey, value: question.value });
  return {
    resultType: 'input_required',
    inputRequests: { [CONFIRM_INPUT]: confirmationElicitation(question) },
    requestState,
    _meta: { [META.serverInfo]: { name: 'toolplane', version: deps.version }, 'toolplane/effectKey': effectKey },
  };
}

/** Did the client declare elicitation in this request's capabilities? */
function takesElicitation(m: RpcMessage): boolean {
  const caps = m.params?._meta?.[META.clientCapabilities] as { elicitation?: unknown } | undefined;
  return caps?.elicitation !== undefined && caps.elicitation !== null;
}

/**
 * The principal's answer a retried `tools/call` carries (`inputResponses` for the `requestState` this
 * gateway gave), relayed to the session's run. A state this gateway did not make for this conversation
 * is refused; an answer the run no longer waits for (answered meanwhile) leaves the call to say its outcome.
 */
async function answerCarried(deps: ServerDeps, m: RpcMessage, sessionId: string): Promise<void> {
  const state = m.params?.requestState;
  const responses = m.params?.inputResponses as Record<string, { action?: unknown; content?: unknown }> | undefined;
  if (state === undefined && responses === undefined) return;
  const question = deps.sessions.readRequestState(sessionId, state);
  if (!question)
    throw new McpError(
      -32602,
      'params.requestState is not one this gateway issued for this conversation; send the call again without it',
    );
  const decision = elicitedDecision(responses?.[CONFIRM_INPUT]);
  if (!decision) return;
  try {
    await deps.sessions.answer(sessionId, question, decision);
  } catch (err) {
    if (!(err instanceof WorkflowUpdateFailedError)) throw err;
  }
}

async function answer(deps: ServerDeps, req: IncomingMessage, who: RunIdentity, m: RpcMessage): Promise<unknown> {
  switch (m.method) {
    case 'server/discover':
      return complete(deps, {
        supportedVersions: [...SUPPORTED_VERSIONS],
        capabilities: { tools: { listChanged: false } },
        instructions: INSTRUCTIONS,
        ttlMs: 300_000,
        cacheScope: 'private',
      });
    case 'tools/list':
      return complete(deps, {
        tools: [...deps.offered(who).values()].map(listing),
        ttlMs: 60_000,
        cacheScope: 'private',
      });
    case 'tools/call': {
      const conversation = conversationOf(req);
      if (typeof conversation !== 'string') throw new RefusedRequest(conversation);
      const declared = declaredRequest(req);
      if (!declared.ok) throw new RefusedRequest(declared.refusal);
      const sessionId = deps.sessions.conversationSessionId(who, conversation);
      await answerCarried(deps, m, sessionId);
      const result = await handleCall(
        deps,
        {
          sessionId,
          identity: who,
          fallbackKey: `once-${randomUUID()}`,
          ...(declared.given !== undefined ? { given: declared.given } : {}),
          restartEnded: true,
          signal: new AbortController().signal,
        },
        (m.params ?? {}) as CallToolRequest['params'],
      );
      return callResult(deps, m, sessionId, result);
    }
    default:
      throw new RefusedRequest(
        rpcError(
          404,
          m.id,
          -32601,
          `Method not found: ${String(m.method)} (this gateway serves tools on ${MODERN_VERSION})`,
        ),
      );
  }
}

/** A request refused with an HTTP status of its own. */
class RefusedRequest extends ToolplaneError<typeof ErrorCode.McpRequestRefused, HttpRefusal> {
  constructor(readonly refusal: HttpRefusal) {
    super(ErrorCode.McpRequestRefused, refusal.body.error.message, refusal);
  }
}

function send(res: ServerResponse, r: HttpRefusal | { status: number; body: unknown }): void {
  res.writeHead(r.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(r.body));
}

/** Answers one 2026-07-28 POST (already authenticated as `who`, its body parsed). */
export async function handleModern(
  deps: ServerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  who: RunIdentity,
  parsed: unknown,
): Promise<void> {
  const m = asMessage(parsed);
  if (!m || m.jsonrpc !== '2.0' || typeof m.method !== 'string')
    return send(res, rpcError(400, m?.id, -32600, 'Invalid Request: one JSON-RPC 2.0 request per POST on 2026-07-28'));
  const mismatch = headerMismatch(req, m);
  if (mismatch) return send(res, mismatch);
  if (m.id === undefined || m.id === null) return void res.writeHead(202).end(); // no notification is served
  try {
    const result = await answer(deps, req, who, m);
    send(res, { status: 200, body: { jsonrpc: '2.0', id: m.id, result } });
  } catch (err) {
    if (err instanceof RefusedRequest)
      return send(res, rpcError(err.refusal.status, m.id, err.refusal.body.error.code, err.refusal.body.error.message));
    if (err instanceof McpError) return send(res, rpcError(200, m.id, err.code, err.message, err.data));
    if (err instanceof SessionEnded) return send(res, rpcError(404, m.id, -32001, err.message));
    throw err;
  }
}
