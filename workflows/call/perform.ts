// Workflow-safe, step 5 of a call: the request the worker receives, and the recovery state machine
// (or a delegated child, for tools that run independently).
import { shortDigest } from '../../catalog/digest';
import type { Policy } from '../../catalog/policy';
import type { ToolCall } from '../../catalog/tool-call';
import { permitMac, toolPermit, type RunTicket } from '../../common/ticket';
import type { CitedOrigin, PerformRequest, RemainingBudget } from '../../common/wire';
import type { LedgerDecision } from '../../common/ledger-ref';
import type { JournalEntry } from '../../common/journal';
import { performWithRecovery, type Escalator } from '../recovery';
import { StepError, StepErrorCode } from '../step-error';

/** Performs the governed call elsewhere (a child workflow for independent tools). */
export type Delegate = (toolId: string, args: Record<string, unknown>, position: number) => Promise<unknown>;

export interface PerformContext {
  /** How the run decided the call, for the ledger reference the worker signs. */
  ledger: { decision: LedgerDecision; trustedArgs: boolean };
  budget?: RemainingBudget;
  onOrigins?: (origins: CitedOrigin[]) => void;
  principal: string;
  /** The run's ticket: the request presents its MAC for the tool. */
  ticket: RunTicket;
  policy: Policy;
  escalator: Escalator;
  modelCallId?: string;
  lease?: string;
  delegate?: Delegate;
  /** In an MCP session: the gateway's MAC of the call. */
  mcpCall?: { key: string; mac: string };
  /** Called with what the worker reported (an extension starting). */
  onStarted?: () => void;
}

/** The request written to history with the call: only what the worker does not already know. */
function requestOf(call: ToolCall, args: Record<string, unknown>, c: PerformContext): PerformRequest {
  return {
    toolId: call.toolId,
    args,
    principal: c.principal,
    ticket: permitMac(c.ticket, toolPermit(call.toolId)) ?? '',
    digest: shortDigest(call.digest),
    ...(c.ledger.decision !== 'ungoverned' ? { decision: c.ledger.decision } : {}),
    ...(c.ledger.trustedArgs ? { trustedArgs: true } : {}),
    ...(c.budget && Object.keys(c.budget).length > 0 ? { budget: c.budget } : {}),
    ...(call.decl.requires_ledger ? { requiresLedger: true } : {}),
    ...(call.decl.retries_landed ? { retriesLanded: true } : {}),
    ...(c.modelCallId ? { modelCallId: c.modelCallId } : {}),
    ...(c.lease ? { lease: c.lease } : {}),
    ...(c.mcpCall ? { mcpCall: c.mcpCall } : {}),
    ...(c.policy.allow === '*' && !c.policy.deny?.length ? {} : { policy: c.policy }),
  };
}

/** Sends the call under its effect key: the recovery state machine decides what an unknown outcome means. */
export function performCall(
  entry: JournalEntry,
  call: ToolCall,
  args: Record<string, unknown>,
  effectKey: string,
  c: PerformContext,
): Promise<unknown> {
  if (c.delegate) return delegated(entry, call.toolId, args, c.delegate);
  return performWithRecovery({
    decl: call.decl,
    request: requestOf(call, args, c),
    effectKey,
    position: entry.position,
    entry,
    summary: `${call.toolId.replace(/^tool:\/\//, '')} #${entry.position}`,
    escalator: c.escalator,
    onEvents: c.onStarted
      ? (events) => {
          if (events.some((e) => e.kind === 'extension.started')) c.onStarted?.();
        }
      : undefined,
    onOrigins: c.onOrigins,
  });
}

async function delegated(
  entry: JournalEntry,
  toolId: string,
  args: Record<string, unknown>,
  delegate: Delegate,
): Promise<unknown> {
  entry.attempts = 1;
  try {
    const output = await delegate(toolId, args, entry.position);
    entry.outcome = 'ok';
    return output;
  } catch (err) {
    // The child's own verdict (InDoubt, Refused, ...) is kept, not flattened to Failed.
    const code = StepError.is(err) ? err.code : StepErrorCode.Failed;
    entry.outcome = code === StepErrorCode.InDoubt ? 'in_doubt' : 'failed';
    throw new StepError(
      code,
      `${toolId} (delegated): ${(err as Error).message}`,
      StepError.is(err) ? err.rule : undefined,
    );
  }
}
