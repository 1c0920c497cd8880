// Workflow-safe, step 5 of a call: the request the worker receives, and the recovery state machine
// (or a delegated child, for tools that run independently). Returns what happened; writes nothing.
import type { Policy } from '../../catalog/policy';
import type { ToolCall } from '../../catalog/tool-call';
import { permitMac, toolPermit, type RunTicket } from '../../common/ticket';
import type { PerformRequest, RemainingBudget } from '../../common/wire';
import type { LedgerDecision } from '../../common/ledger-ref';
import { performWithRecovery, type AfterSend, type Escalator, type Recovered, type RecoveryInput } from '../recovery';
import { StepError, StepErrorCode } from '../step-error';
import type { McpCallProof } from '../../common/session-proof';

/** Performs the governed call elsewhere (a child workflow for independent tools). */
export type Delegate = (toolId: string, args: Record<string, unknown>, position: number) => Promise<unknown>;

export interface PerformContext {
  /** How the run decided the call, for the ledger reference the worker signs. */
  ledger: { decision: LedgerDecision; trustedArgs: boolean };
  budget?: RemainingBudget;
  principal: string;
  /** The principal is the run's first opening's: the request leaves it out unless it carries its ticket. */
  principalInOpening?: boolean;
  /** The run's ticket: the request presents its MAC for the tool. */
  ticket: RunTicket;
  policy: Policy;
  escalator: Escalator;
  modelCallId?: string;
  lease?: string;
  delegate?: Delegate;
  /** In an MCP session: the gateway's MAC of the call. */
  mcpCall?: McpCallProof;
  /** Told the sends so far and the recovery path so far, while the call runs. */
  onProgress?: RecoveryInput['onProgress'];
}

/**
 * The request written to history with the call: only what the worker cannot find itself. Its ticket
 * and its declaration of the tool are in the run's opening (the worker reads them from the run's
 * history); a call the worker signs a ledger reference for carries them, and how the run decided, since
 * the reference is verified against its history entry alone.
 */
function requestOf(call: ToolCall, args: Record<string, unknown>, c: PerformContext): PerformRequest {
  return {
    toolId: call.toolId,
    args,
    // A ledger reference is verified against the history entry alone: it keeps its principal with its ticket.
    ...(c.principalInOpening && !call.decl.requires_ledger ? {} : { principal: c.principal }),
    ...(call.decl.requires_ledger
      ? {
          // What a ledger reference is verified against, from the history entry alone.
          ticket: permitMac(c.ticket, toolPermit(call.toolId)) ?? '',
          requiresLedger: true,
          ...(c.ledger.decision !== 'ungoverned' ? { decision: c.ledger.decision } : {}),
          ...(c.ledger.trustedArgs ? { trustedArgs: true } : {}),
        }
      : {}),
    ...(c.budget && Object.keys(c.budget).length > 0 ? { budget: c.budget } : {}),
    ...(call.decl.retries_landed ? { retriesLanded: true } : {}),
    ...(c.modelCallId ? { modelCallId: c.modelCallId } : {}),
    ...(c.lease ? { lease: c.lease } : {}),
    ...(c.mcpCall ? { mcpCall: c.mcpCall } : {}),
    ...(c.policy.allow === '*' && !c.policy.deny?.length ? {} : { policy: c.policy }),
  };
}

/**
 * Sends the call under its effect key and hands what happened to `after` (the recovery state machine
 * decides what an unknown outcome means); the pipeline writes it into the journal entry. A send that
 * succeeds awaits its activity and nothing else.
 */
export function performCall<T>(
  call: ToolCall,
  args: Record<string, unknown>,
  effectKey: string,
  position: number,
  c: PerformContext,
  after: AfterSend<T>,
): Promise<T> {
  if (c.delegate) return delegated(call.toolId, args, position, c.delegate).then((r) => after.ended(r));
  return performWithRecovery(
    {
      decl: call.decl,
      request: requestOf(call, args, c),
      effectKey,
      position,
      summary: `${call.toolId.replace(/^tool:\/\//, '')} #${position}`,
      escalator: c.escalator,
      onProgress: c.onProgress,
    },
    after,
  );
}

/**
 * The child run sends the call, and its own journal counts its sends: this run sent nothing itself.
 * The child's verdict (InDoubt, Refused, ...) is kept, not flattened to Failed.
 */
async function delegated(
  toolId: string,
  args: Record<string, unknown>,
  position: number,
  delegate: Delegate,
): Promise<Recovered> {
  try {
    return { sends: 0, recovery: 'none', outcome: 'ok', output: await delegate(toolId, args, position) };
  } catch (err) {
    const code = StepError.is(err) ? err.code : StepErrorCode.Failed;
    const rule = StepError.is(err) ? err.rule : undefined;
    return {
      sends: 0,
      recovery: 'none',
      outcome: code === StepErrorCode.InDoubt ? 'in_doubt' : 'failed',
      error: { code, message: `${toolId} (delegated): ${(err as Error).message}`, ...(rule ? { rule } : {}) },
    };
  }
}
