// One `tools/call`: checked (offered to the principal, within the size limit, conforming to the
// schema) before anything starts; keyed for exactly-once; run in the session's run; its outcome
// mapped to an MCP result. A call that waits for a person is held open with progress notifications
// when the client sent a progressToken, else answered "waiting" at once.
import { createHash } from 'node:crypto';
import {
  ErrorCode as RpcCode,
  McpError,
  type CallToolRequest,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson } from '../catalog/digest';
import type { RunIdentity } from '../common/ticket';
import { schemaViolations, type OfferedTool } from './offer';
import { invalidArgumentsResult, toolResult, waitingText } from './results';
import { SessionLimitReached, type SessionCall, type SessionClient } from './session-client';

/** The JSON-RPC error of a new session refused at its principal's bound of open sessions. */
export const SESSION_LIMIT = -32003;
import { KEYLESS_KEY_PREFIX, type McpCallOutcome } from '../common/gateway-protocol';

export interface CallLimits {
  maxArgumentBytes: number;
  /** How long a call holds a request open waiting for a person when the client asked for progress. */
  progressWaitMs: number;
  /** How often a held call asks the run again. */
  progressPollMs: number;
}

/** Where the call comes from: the session, who holds it, and the request's own identity and channel. */
export interface CallContext {
  sessionId: string;
  identity: RunIdentity;
  /** What names a keyless call on this connection: the JSON-RPC request id on 2025-11-25, a fresh id on 2026-07-28. */
  fallbackKey: string;
  /** The principal's request the host declared with this request (`Toolplane-Request`), if any. */
  given?: unknown;
  /** Restart the session's run when it ended (a 2026-07-28 conversation). */
  restartEnded?: boolean;
  signal: AbortSignal;
  progress?: (progress: number, message: string) => Promise<void>;
}

/**
 * The call's key in the session: the client's `_meta.idempotencyKey` when it sends one, else its
 * JSON-RPC request id (2025-11-25; on 2026-07-28, where a retry gets a new request id, a fresh
 * one) with a digest of the tool and canonical arguments (`rpc:<id>:<digest>`). A repeat
 * under the same key gets the first call's outcome, never a second send; so does a keyless call that
 * repeats an earlier one's tool and arguments within the tool's window (the session's run decides,
 * workflows/mcp/same-call.ts). Request ids restart with each connection, so a keyless id reused for
 * another call is another key, not `KeyReused`.
 */
export function callKey(params: CallToolRequest['params'], fallback: string): string {
  const k = params._meta?.idempotencyKey;
  if (k !== undefined && (typeof k !== 'string' || k.length === 0 || k.length > 200))
    throw new McpError(RpcCode.InvalidParams, 'params._meta.idempotencyKey must be a string of 1 to 200 characters');
  if (typeof k === 'string') return `k:${k}`;
  const what = createHash('sha256')
    .update(canonicalJson([params.name, params.arguments ?? {}]))
    .digest('base64url')
    .slice(0, 16);
  return `${KEYLESS_KEY_PREFIX}${fallback}:${what}`;
}

function argumentBytes(args: unknown): number {
  return Buffer.byteLength(JSON.stringify(args ?? {}), 'utf8');
}

type CallDeps = {
  sessions: SessionClient;
  offered: (identity: RunIdentity) => Map<string, OfferedTool>;
  limits: CallLimits;
};

/**
 * A `tools/call` checked before anything starts: offered to the principal, within the size limit (else
 * an `McpError`), conforming to the schema (else the invalid-arguments result the client is answered).
 */
export function prepareCall(
  deps: CallDeps,
  ctx: CallContext,
  params: CallToolRequest['params'],
): { call: SessionCall } | { invalid: CallToolResult } {
  const tool = deps.offered(ctx.identity).get(params.name);
  if (!tool)
    throw new McpError(
      RpcCode.InvalidParams,
      `params.name: no tool named ${JSON.stringify(params.name)} is offered to ${ctx.identity.principal} (see tools/list)`,
    );
  const args = params.arguments ?? {};
  const bytes = argumentBytes(args);
  if (bytes > deps.limits.maxArgumentBytes)
    throw new McpError(
      RpcCode.InvalidParams,
      `params.arguments of ${params.name} is ${bytes} bytes; this gateway accepts at most ${deps.limits.maxArgumentBytes}`,
    );
  const problems = schemaViolations(tool)(args);
  if (problems.length > 0) return { invalid: invalidArgumentsResult(params.name, problems) };
  return {
    call: {
      key: callKey(params, ctx.fallbackKey),
      toolId: tool.decl.id,
      args,
      ...(ctx.given !== undefined ? { given: ctx.given } : {}),
    },
  };
}

/** Sends a prepared call (or its repeat, under its key) to the session's run: its one outcome, or `waiting`. */
export async function sendCall(deps: CallDeps, ctx: CallContext, call: SessionCall): Promise<McpCallOutcome> {
  try {
    return await deps.sessions.call(ctx.sessionId, ctx.identity, call, { restartEnded: ctx.restartEnded === true });
  } catch (err) {
    if (err instanceof SessionLimitReached)
      throw new McpError(SESSION_LIMIT, err.message, { code: err.code, ...err.data });
    throw err;
  }
}

export async function handleCall(
  deps: CallDeps,
  ctx: CallContext,
  params: CallToolRequest['params'],
): Promise<CallToolResult> {
  const prepared = prepareCall(deps, ctx, params);
  if ('invalid' in prepared) return prepared.invalid;
  let outcome = await sendCall(deps, ctx, prepared.call);
  if (outcome.status === 'waiting' && ctx.progress) outcome = await waitForPerson(deps, ctx, prepared.call, outcome);
  return toolResult(ctx.sessionId, outcome);
}

/**
 * Holds the request open while the call waits for a person (up to `progressWaitMs`), asking the run
 * again under the same key, with a progress notification before each ask when the client asked for them.
 */
export async function waitForPerson(
  deps: CallDeps,
  ctx: CallContext,
  call: SessionCall,
  first: McpCallOutcome & { status: 'waiting' },
): Promise<McpCallOutcome> {
  const until = Date.now() + deps.limits.progressWaitMs;
  let outcome: McpCallOutcome = first;
  for (let n = 1; outcome.status === 'waiting' && Date.now() < until && !ctx.signal.aborted; n++) {
    await ctx.progress?.(n, waitingText(ctx.sessionId, outcome));
    await pause(deps.limits.progressPollMs, ctx.signal);
    if (ctx.signal.aborted) break;
    outcome = await sendCall(deps, ctx, call);
  }
  return outcome;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
