// Workflow-safe, step 5 of a call: the effect key, the request the worker receives, and the
// recovery state machine (or a delegated child, for tools that run independently).
import { shortDigest } from '../../catalog/digest';
import type { Policy } from '../../catalog/policy';
import type { ToolCall } from '../../catalog/tool-call';
import type { CitedOrigin, PerformRequest, RemainingBudget } from '../../common/wire';
import type { LedgerDecision } from '../../ledger/ref';
import { effectKey } from '../../common/effect-key';
import type { JournalEntry } from '../journal';
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
  policy: Policy;
  escalator: Escalator;
  modelCallId?: string;
  lease?: string;
  delegate?: Delegate;
  /** Called with what the worker reported (an extension starting). */
  onStarted?: () => void;
}

export async function performCall(
  entry: JournalEntry,
  call: ToolCall,
  args: Record<string, unknown>,
  c: PerformContext,
): Promise<unknown> {
  const key = effectKey({ tool: call.toolId, args }, entry.position);
  entry.effectKey = key;
  if (c.delegate) return delegated(entry, call.toolId, args, c.delegate);
  const request: PerformRequest = {
    toolId: call.toolId,
    args,
    principal: c.principal,
    digest: shortDigest(call.digest),
    ...(c.ledger.decision !== 'ungoverned' ? { decision: c.ledger.decision } : {}),
    ...(c.ledger.trustedArgs ? { trustedArgs: true } : {}),
    ...(c.budget && Object.keys(c.budget).length > 0 ? { budget: c.budget } : {}),
    ...(call.decl.requires_ledger ? { requiresLedger: true } : {}),
    ...(call.decl.retries_landed ? { retriesLanded: true } : {}),
    ...(c.modelCallId ? { modelCallId: c.modelCallId } : {}),
    ...(c.lease ? { lease: c.lease } : {}),
    ...(c.policy.allow === '*' && !c.policy.deny?.length ? {} : { policy: c.policy }),
  };
  try {
    return await performWithRecovery({
      decl: call.decl,
      request,
      effectKey: key,
      position: entry.position,
      entry,
      summary: `${call.toolId.replace(/^tool:\/\//, '')} #${entry.position}`,
      escalator: c.escalator,
      onEvents: (events) => {
        if (events.some((e) => e.kind === 'extension.started')) c.onStarted?.();
      },
      onOrigins: c.onOrigins,
    });
  } catch (err) {
    if (StepError.is(err)) entry.error = { code: err.code, message: err.message };
    throw err;
  }
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
    const message = (err as Error).message;
    entry.error = { code, message };
    throw new StepError(code, `${toolId} (delegated): ${message}`, StepError.is(err) ? err.rule : undefined);
  }
}
