// Workflow-safe, shared by the MCP gateway (gateway/) and the session workflow (workflows/mcp/): an
// MCP session is one run of `mcpSession`, started lazily by its first `tools/call` and asked through
// the updates below. The gateway holds the worker's ticket key: it issues the run a session pass (who
// the session is for, and the public key its messages are signed with) and signs each call and the
// end (common/session-proof.ts); the run's validators check the signatures before an update enters
// history, and the worker checks the pass and each call's signature again against the ids Temporal reports.
import { defineUpdate } from '@temporalio/workflow';
import type { RunIdentity, TicketCarry } from './ticket';

/** The workflow type of an MCP session. */
export const MCP_SESSION_WORKFLOW = 'mcpSession';

/** The workflow id of the session `sessionId`. */
export const mcpSessionWorkflowId = (sessionId: string) => `toolplane-mcp/${sessionId}`;

/**
 * Who a session is for, vouched for by the gateway that verified the bearer token:
 * `mac = HMAC(ticketKey, "toolplane-mcp-session" ‖ workflowId ‖ canonical(identity) ‖ expiresAt)`.
 * Spent once by the run it starts; the token itself is never written to a history.
 */
export interface SessionPass {
  /** Who the session is for: the bearer token's subject, groups and issuer, as the gateway verified them. */
  identity: RunIdentity;
  /** Epoch milliseconds. */
  expiresAt: number;
  /**
   * The public half of the gateway's signing key (Ed25519, raw, base64url): the run's validators check
   * every call and end against it. Covered by `mac`; absent in a pass from before signed messages.
   */
  callKey?: string;
  /** Base64url, 22 characters. */
  mac: string;
}

/** One key's record in the session's call memo, as carried across continue-as-new. */
export interface McpMemoEntry {
  /** The call's key, as the request gave it. */
  key: string;
  /** The tool the key was first used for. */
  toolId: string;
  /** Digest of the call's canonical arguments: the same key with other arguments is `KeyReused`. */
  argsDigest: string;
  /** The call's effect key, fixed when its key was first seen. */
  effectKey?: string;
  /** Absent while the call is in flight (a continued session never carries an unfinished call). */
  outcome?: McpCallOutcome;
  /** When the call's outcome was settled (workflow time, epoch ms): a keyless repeat's window starts here. */
  settledAt?: number;
  /** A keyless repeat answered with an earlier call's outcome: that call's key (nothing was sent for this one). */
  sameAs?: string;
}

/**
 * The key prefix of a call whose client sent no `_meta.idempotencyKey` (the JSON-RPC request id keys it).
 * Such a call that repeats an earlier one of the session (same tool, same canonical arguments) within the
 * tool's `keyless_repeat_window` is answered that call's outcome (workflows/mcp/same-call.ts).
 */
export const KEYLESS_KEY_PREFIX = 'rpc:';

/**
 * What a session carries when it continues as new (set by the run itself; a run a client starts with it
 * is refused). The workflow's own state is opaque here: only the session workflow reads it.
 */
export interface McpSessionState {
  /** `step.state()` of the run it continues. */
  step: unknown;
  /** The session's provenance (the labels of every result it returned). */
  provenance: unknown;
  /** The calls' usage so far, counted against the worker's caps. */
  usage: unknown;
  /** The run's stream, where its offsets go on. */
  stream?: unknown;
  /** The last keys with their outcomes, oldest first (none in flight: a session continues between calls). */
  memo: McpMemoEntry[];
  /** Digests of older keys: a repeat of one is refused as too old to repeat. */
  forgotten: string[];
  /** Whether any result has entered the session (after it, what the client sends is of unknown origin). */
  resultSeen: boolean;
  /** When the session started (epoch ms). */
  startedAt: number;
  /** The public key the session's first pass named: the run goes on checking messages against it. */
  callKey?: string;
}

/** The input of an `mcpSession` run: the gateway sends `pass` (and its options); the run itself the rest. */
export interface McpSessionInput {
  /** The gateway's pass for the first run of a session. */
  pass?: SessionPass;
  /** The ticket of the run this one continues. */
  carry?: TicketCarry;
  /** What the run it continues held. */
  state?: McpSessionState;
  /** End the session after this long without a call (default 30 minutes). */
  idleTimeoutMs?: number;
  /** The manifest digest the gateway pinned; a worker with another manifest refuses the run. */
  manifestDigest?: string;
  /** Tests only: continue as new after this many calls, whatever Temporal suggests. */
  continueAsNewAfterCalls?: number;
}

/** One `tools/call`: `key` is its identity in the session (`k:<idempotencyKey>` or `rpc:<request id>`). */
export interface McpCallRequest {
  /** The call's identity in the session: the same key answers the same outcome. */
  key: string;
  /** The tool's identity (`tool://server/name`), as the manifest declares it. */
  toolId: string;
  /** The arguments as the client sent them; the tool's input schema is checked in the run. */
  args: unknown;
  /**
   * The gateway's Ed25519 signature (base64url) over the session's workflow id, `key`, `toolId`, the
   * digests of the canonical `args` and `given`, and `issuedAt` (common/session-proof.ts).
   */
  sig?: string;
  /** When the gateway signed the call (epoch ms): a signature older than ten minutes is refused. */
  issuedAt?: number;
  /** A gateway before signed calls: `HMAC(ticketKey, "toolplane-mcp-call" ‖ workflowId ‖ key ‖ toolId)`; no longer taken. */
  mac?: string;
  /**
   * The principal's request as the host declared it (the `Toolplane-Request` header of the request that
   * carried this call, sent with the bearer of the session's own principal): its values count as
   * `user://prompt` from this call on, as `StepCtx.open({ given })`. Absent when the host declared none.
   */
  given?: unknown;
}

/** What a call waiting on the session's principal asks them: the argument, the exact value, where it came from. */
export interface ConfirmationQuestion {
  pointer: string;
  value: string | number;
  origin: string;
}

/**
 * A call's one outcome; a repeat of its key answers the same. `sameCallAs` is set on the answer of a keyless
 * repeat: the key of the earlier call whose outcome it is (nothing was sent for the repeat).
 */
export type McpCallOutcome = (
  | { status: 'completed'; output: unknown; effectKey: string }
  | { status: 'refused'; code: string; rule?: string; reason: string; effectKey?: string }
  | {
      status: 'waiting';
      effectKey: string;
      reason: string;
      /** Who may decide. */
      approvers: string;
      /** The session's principal is asked to vouch for this value (`principal_confirms`), not an approver. */
      question?: ConfirmationQuestion;
    }
  | { status: 'failed'; code: string; message: string; effectKey?: string }
) & { sameCallAs?: string };

/** One `tools/call`: answers the call's outcome, or `waiting` as soon as the call waits for a person. */
export const mcpCallUpdate = defineUpdate<McpCallOutcome, [McpCallRequest]>('toolplane.mcp.call');
/** An end, as the gateway signs it (common/session-proof.ts `endProofFields`). */
export interface McpEndRequest {
  issuedAt: number;
  sig: string;
}

/** Ends the session (its DELETE): calls being sent finish, and the run completes. */
export const mcpEndUpdate = defineUpdate<void, [McpEndRequest]>('toolplane.mcp.end');
