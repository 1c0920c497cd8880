// The worker side of the MCP gateway's sessions, as the HTTP server uses them: a session id bound to
// its principal, each `tools/call` sent to the session's run as an update (the run started by the
// first, with the gateway's session pass), and the session ended. Holds the worker's ticket key.
import { createHash, randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import { canonicalJson } from '../catalog/digest';
import { loadTicketKey } from '../activities/identity/tickets';
import {
  callSignature,
  endSignature,
  confirmationMac,
  confirmationState,
  openSealedCall,
  sealCall,
  type SealedCall,
  readConfirmationState,
  type ConfirmationState,
  conversationSessionId,
  issueSessionPass,
  sessionIdFor,
  sessionOwnedBy,
  type SessionTakes,
} from '../activities/identity/session-pass';
import {
  MCP_SESSION_WORKFLOW,
  mcpCallUpdate,
  mcpEndUpdate,
  mcpSessionWorkflowId,
  type McpCallOutcome,
  type McpCallRequest,
  type McpSessionInput,
} from '../common/gateway-protocol';
import { PRINCIPAL } from '../common/search-attributes';
import { AnswerSignals } from './answer-signals';
import { DEFAULT_MAX_OPEN_SESSIONS_PER_PRINCIPAL, SessionLimitReached } from './session-limit';

import { ended, notRunning, SessionEnded } from './session-ended';

export { DEFAULT_MAX_OPEN_SESSIONS_PER_PRINCIPAL, SessionEnded, SessionLimitReached };
import { callSubject } from '../common/session-proof';
import type { RunIdentity } from '../common/ticket';
import { resolveEscalation } from '../workflows/escalation';

export interface SessionClientOptions {
  client: Client;
  /** The task queue the worker serving `mcpSession` polls. */
  taskQueue: string;
  /** The worker's ticket key (base64url or hex, at least 32 bytes; as `ToolplanePlugin`'s `ticketKey`), or the key itself. */
  ticketKey?: string | Buffer;
  /** End a session after this long without a call (default 30 minutes). */
  idleTimeoutMs?: number;
  /** How long a session pass may wait to be spent by the run it starts (default 5 minutes). */
  passTtlMs?: number;
  /** Pin the manifest digest: a worker with another manifest refuses the session's run. */
  manifestDigest?: string;
  /**
   * The most sessions one principal may hold open (default 20): a new session beyond it is refused
   * (`SessionLimitReached`) before its run starts. Counted with Temporal's visibility (running
   * `mcpSession` runs by `ToolplanePrincipal`), so a burst of starts may pass it by the visibility lag.
   */
  maxOpenSessionsPerPrincipal?: number;
}

/** One `tools/call`, as the gateway keys it (`k:<idempotencyKey>` or `rpc:<request id>`). */
export interface SessionCall {
  key: string;
  toolId: string;
  args: unknown;
  /** The principal's request the host declared with this call (`Toolplane-Request`), if any. */
  given?: unknown;
}

/** How a call reaches its session's run. */
export interface CallRouting {
  /**
   * A stateless conversation (2026-07-28): a run that ended (idled out) is followed by a new one under
   * the same id, as a conversation has no DELETE and no new session to open. Default: a session whose
   * run ended refuses (`SessionEnded`), and its client initializes a new one.
   */
  restartEnded?: boolean;
}

const DEFAULT_PASS_TTL_MS = 5 * 60_000;

export class SessionClient {
  private readonly key: Buffer;

  constructor(private readonly opts: SessionClientOptions) {
    this.key = Buffer.isBuffer(opts.ticketKey) ? opts.ticketKey : loadTicketKey(opts.ticketKey);
  }

  /** Answers relayed by this process: a call waiting on its elicitation wakes (gateway/answer-signals.ts). */
  readonly answered = new AnswerSignals();

  /** A new session id for `identity`'s principal (no run exists until its first call), carrying what its client takes. */
  newSessionId(identity: RunIdentity, takes: SessionTakes = {}): string {
    return sessionIdFor(this.key, identity.principal, takes);
  }

  /** The session id of `identity`'s conversation `conversation` (2026-07-28): the same id on every request. */
  conversationSessionId(identity: RunIdentity, conversation: string): string {
    return conversationSessionId(this.key, identity.principal, conversation);
  }

  /** Was `sessionId` issued (by any gateway holding this key) to `identity`'s principal? */
  owns(sessionId: string, identity: RunIdentity): boolean {
    return sessionOwnedBy(this.key, sessionId, identity.principal);
  }

  /**
   * Sends one call to the session's run, starting the run with a fresh pass when it has none yet.
   * A repeat of `call.key` answers the call's one outcome. Throws `SessionEnded` when the run ended.
   */
  async call(
    sessionId: string,
    identity: RunIdentity,
    call: SessionCall,
    routing: CallRouting = {},
  ): Promise<McpCallOutcome> {
    const workflowId = mcpSessionWorkflowId(sessionId);
    const input: McpSessionInput = {
      pass: issueSessionPass(this.key, workflowId, identity, this.opts.passTtlMs ?? DEFAULT_PASS_TTL_MS),
      ...(this.opts.idleTimeoutMs !== undefined ? { idleTimeoutMs: this.opts.idleTimeoutMs } : {}),
      ...(this.opts.manifestDigest !== undefined ? { manifestDigest: this.opts.manifestDigest } : {}),
    };
    const startWorkflowOperation = new WithStartWorkflowOperation(MCP_SESSION_WORKFLOW, {
      workflowId,
      taskQueue: this.opts.taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: routing.restartEnded ? 'ALLOW_DUPLICATE' : 'REJECT_DUPLICATE',
      staticSummary: `MCP session of ${identity.principal}`,
      // Listed by its principal from its start, so the open sessions of a principal are counted at once.
      typedSearchAttributes: [{ key: PRINCIPAL, value: identity.principal }],
    });
    const { given, ...keyed } = call;
    const issuedAt = Date.now();
    const request = {
      ...keyed,
      ...(given !== undefined ? { given } : {}),
      issuedAt,
      sig: callSignature(this.key, workflowId, callSubject(call, issuedAt)),
    };
    try {
      // A session already open is asked directly; only a session without a run counts against the bound.
      const open = await this.openCall(workflowId, callUpdateId(workflowId, keyed), request);
      if (open) return open;
      await this.refuseBeyondBound(sessionId, identity);
      const outcome = await this.opts.client.workflow.executeUpdateWithStart(mcpCallUpdate, {
        updateId: callUpdateId(workflowId, keyed),
        args: [request],
        startWorkflowOperation,
      });
      if (outcome.status !== 'waiting') return outcome;
      // Temporal answers a repeated update id with its first result, which said `waiting`: asked again under
      // a one-off id, the session's call memo answers what the call is now (still waiting, or its outcome).
      return await this.opts.client.workflow.getHandle(workflowId).executeUpdate(mcpCallUpdate, {
        updateId: `${callUpdateId(workflowId, keyed)}.${randomUUID()}`,
        args: [request],
      });
    } catch (err) {
      throw ended(sessionId, err) ?? err;
    }
  }

  /** The call's answer from the session's running run, or undefined when the session has no running run. */
  private async openCall(
    workflowId: string,
    updateId: string,
    request: McpCallRequest,
  ): Promise<McpCallOutcome | undefined> {
    try {
      const outcome = await this.opts.client.workflow
        .getHandle(workflowId)
        .executeUpdate(mcpCallUpdate, { updateId, args: [request] });
      if (outcome.status !== 'waiting') return outcome;
      return await this.opts.client.workflow
        .getHandle(workflowId)
        .executeUpdate(mcpCallUpdate, { updateId: `${updateId}.${randomUUID()}`, args: [request] });
    } catch (err) {
      if (notRunning(err)) return undefined;
      throw err;
    }
  }

  /** Refuses a new session of `identity`'s principal when it holds the most open sessions allowed. */
  private async refuseBeyondBound(sessionId: string, identity: RunIdentity): Promise<void> {
    const limit = this.opts.maxOpenSessionsPerPrincipal ?? DEFAULT_MAX_OPEN_SESSIONS_PER_PRINCIPAL;
    const principal = quoted(identity.principal);
    const { count } = await this.opts.client.workflow.count(
      `WorkflowType = '${MCP_SESSION_WORKFLOW}' AND ExecutionStatus = 'Running' AND TaskQueue = '${quoted(this.opts.taskQueue)}' AND ${PRINCIPAL.name} = '${principal}'`,
    );
    if (count >= limit) throw new SessionLimitReached({ sessionId, principal: identity.principal, open: count, limit });
  }

  /** The `requestState` of a result that asks the session's principal about `value` (2026-07-28 input_required). */
  requestState(s: ConfirmationState): string {
    return confirmationState(this.key, s);
  }

  /** The id of a `tools/call` run as a task (2025-11-25): the call itself, sealed for `sessionId`. */
  taskId(sessionId: string, call: SealedCall): string {
    return sealCall(this.key, sessionId, call);
  }

  /** The call a task id this gateway's key sealed for `sessionId` runs, or undefined. */
  callOfTask(sessionId: string, taskId: unknown): SealedCall | undefined {
    return openSealedCall(this.key, sessionId, taskId);
  }

  /** The question a client's `requestState` carries back, if this gateway's key made it for `sessionId`. */
  readRequestState(sessionId: string, state: unknown): ConfirmationState | undefined {
    return readConfirmationState(this.key, sessionId, state);
  }

  /**
   * Relays the session's principal's answer to the question under `effectKey` (they answered in their own
   * request, authenticated by its bearer): the run's worker checks the MAC and records the principal as who
   * answered. Throws the run's refusal (another value, nothing waiting) as `WorkflowUpdateFailedError`.
   */
  async answer(sessionId: string, q: ConfirmationState, decision: 'confirm' | 'reject'): Promise<void> {
    const workflowId = mcpSessionWorkflowId(sessionId);
    const relay = confirmationMac(
      this.key,
      workflowId,
      q.effectKey,
      decision,
      decision === 'confirm' ? q.value : undefined,
    );
    const answer =
      decision === 'confirm'
        ? { effectKey: q.effectKey, decision, value: q.value, relay }
        : { effectKey: q.effectKey, decision, relay, reason: 'declined in the MCP client' };
    try {
      await this.opts.client.workflow.getHandle(workflowId).executeUpdate(resolveEscalation, { args: [answer] });
    } catch (err) {
      throw ended(sessionId, err) ?? err;
    } finally {
      this.answered.settle(sessionId, q.effectKey);
    }
  }

  /** Ends the session's run (its DELETE). A session that never called, or already ended, ends quietly. */
  async end(sessionId: string): Promise<void> {
    try {
      const workflowId = mcpSessionWorkflowId(sessionId);
      const issuedAt = Date.now();
      await this.opts.client.workflow
        .getHandle(workflowId)
        .executeUpdate(mcpEndUpdate, { args: [{ issuedAt, sig: endSignature(this.key, workflowId, issuedAt) }] });
    } catch (err) {
      if (!ended(sessionId, err)) throw err;
    }
  }
}

/**
 * The update id of a call in session `workflowId`: Temporal dedupes a repeat within a run. It covers the
 * tool and the arguments too, so the same key with other ones reaches the session's call memo, which
 * refuses it (`KeyReused`), instead of Temporal answering with the first call's result.
 */
export function callUpdateId(workflowId: string, call: Pick<SessionCall, 'key' | 'toolId' | 'args'>): string {
  return createHash('sha256')
    .update(canonicalJson([workflowId, call.key, call.toolId, call.args ?? null]))
    .digest('base64url');
}

/** A string as a visibility query's quoted literal holds it. */
const quoted = (text: string): string => text.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
