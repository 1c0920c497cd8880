// Workflow-safe: the recovery state machine. What happens when a call's outcome is unknown is
// decided here, by the tool's declared `recovery`, and never by a blind resend.
import { isCancellation, proxyActivities, sleep, type ActivityOptions } from '@temporalio/workflow';
import { FailureType } from '../catalog/failure-types';
import { durationMs } from '../catalog/duration';
import type { ToolDecl } from '../catalog/manifest';
import type { PerformRequest, PerformResult, ReconcileRequest, Reconciliation, ToolActivities } from '../common/wire';
import { performActivityId, reconcileActivityId } from '../common/effect-key';
import { storedHandle } from '../common/stored-output';
import type { EscalationDecision, PendingEscalation } from './escalation';
import type { JournalEntry } from '../common/journal';
import { StepError, StepErrorCode } from './step-error';
import { activityRetry, backoffMs, classify, maxAttempts, type Failure } from './recovery-policy';

export { classify, activityRetry } from './recovery-policy';

// Every call sets its own id, summary, timeouts and retry policy.
const tools = proxyActivities<ToolActivities>({ startToCloseTimeout: '30s' });

export interface Escalator {
  /** Waits for a person's decision, or undefined when the deadline passes first. */
  await(pending: PendingEscalation): Promise<EscalationDecision | undefined>;
}

export interface RecoveryInput {
  decl: ToolDecl;
  request: PerformRequest;
  effectKey: string;
  position: number;
  entry: JournalEntry;
  summary: string;
  escalator: Escalator;
  onEvents?: (events: NonNullable<PerformResult['events']>) => void;
  onOrigins?: (origins: NonNullable<PerformResult['origins']>) => void;
}

function requestFor(input: RecoveryInput, scheduleCount: number): PerformRequest {
  return scheduleCount === 0 ? input.request : { ...input.request, recoveryPath: input.entry.recovery };
}

function performOptions(input: RecoveryInput, scheduleCount: number): ActivityOptions {
  const { decl } = input;
  return {
    activityId: performActivityId(input.effectKey, scheduleCount),
    summary: input.summary,
    startToCloseTimeout: decl.timeouts.start_to_close,
    heartbeatTimeout: decl.timeouts.heartbeat,
    retry: activityRetry(decl),
  };
}

async function reconcile(input: RecoveryInput, round: number): Promise<Reconciliation> {
  const { decl, request } = input;
  const req: ReconcileRequest = {
    toolId: request.toolId,
    principal: request.principal,
    ticket: request.ticket,
    ...(request.lease ? { lease: request.lease } : {}),
  };
  try {
    return await tools.reconcileTool.executeWithOptions(
      {
        activityId: reconcileActivityId(input.effectKey, round),
        summary: `reconcile ${input.summary}`,
        startToCloseTimeout: decl.timeouts.start_to_close,
        retry: {
          maximumAttempts: 10,
          initialInterval: '1s',
          maximumInterval: '30s',
          nonRetryableErrorTypes: [FailureType.Unavailable],
        },
      },
      [req],
    );
  } catch (err) {
    if (isCancellation(err)) throw err;
    return { status: 'unknown', reason: classify(err).message };
  }
}

/** How often a call was scheduled, rejected, reconciled and resent so far. */
interface Counts {
  schedules: number;
  rejections: number;
  reconciles: number;
  resends: number;
}

/** Send the call again: what a person or the provider said makes resending safe. */
const RESEND = Symbol('resend');
type Next = { output: unknown } | typeof RESEND;

/** Runs one prepared call to completion: output, or a typed StepError. */
export async function performWithRecovery(input: RecoveryInput): Promise<unknown> {
  const { decl, request, entry } = input;
  const n: Counts = { schedules: 0, rejections: 0, reconciles: 0, resends: 0 };
  for (;;) {
    entry.attempts = ++n.schedules;
    let failure: Failure;
    try {
      const result: PerformResult = await tools.performTool.executeWithOptions(performOptions(input, n.schedules - 1), [
        requestFor(input, n.schedules - 1),
      ]);
      entry.outcome = 'ok';
      if (result.events) input.onEvents?.(result.events);
      if (result.origins) input.onOrigins?.(result.origins);
      return result.stored ? storedHandle(result.stored) : result.output;
    } catch (err) {
      if (isCancellation(err)) throw err;
      failure = classify(err);
    }
    failIfFinal(input, failure, n.schedules);
    if (failure.kind === 'rejected') {
      // Nothing was sent: trying again cannot duplicate anything.
      if (++n.rejections >= maxAttempts(decl)) {
        entry.outcome = 'failed';
        throw new StepError(
          StepErrorCode.Failed,
          `${request.toolId}: rejected ${n.rejections} times: ${failure.message}`,
        );
      }
      entry.recovery = 'retried';
      await sleep(backoffMs(decl, n.rejections));
      continue;
    }
    const next = await unknownOutcome(input, failure, n);
    if (next !== RESEND) return next.output;
  }
}

/** Failures that end the call as they are: nothing was sent, it landed, or Temporal already retried. */
function failIfFinal(input: RecoveryInput, failure: Failure, schedules: number): void {
  const { decl, request, entry } = input;
  if (failure.kind === 'definition_changed') {
    // Nothing was sent: the source serves another definition than the pinned one.
    Object.assign(entry, { decision: 'refused', rule: 'digest', reason: failure.message, outcome: 'refused' });
    throw new StepError(StepErrorCode.Refused, failure.message, 'digest');
  }
  if (failure.kind === 'output_unstored') {
    // It landed: resending would do it twice. The person reading the journal learns the output is lost.
    entry.outcome = 'failed';
    throw new StepError(StepErrorCode.OutputLost, failure.message);
  }
  if (failure.kind === 'unavailable') {
    entry.outcome = 'failed';
    throw new StepError(StepErrorCode.Failed, failure.message);
  }
  if (failure.kind === 'failed_landed') {
    entry.outcome = 'failed';
    throw new StepError(
      StepErrorCode.Failed,
      `${request.toolId} failed after reaching its provider: ${failure.message}`,
    );
  }
  if (decl.recovery === 'retry') {
    // Temporal already retried as the policy allows; what remains is final.
    entry.recovery = schedules > 1 || failure.kind === 'in_doubt' ? 'retried' : entry.recovery;
    entry.outcome = failure.kind === 'in_doubt' ? 'in_doubt' : 'failed';
    throw new StepError(
      failure.kind === 'in_doubt' && decl.safety !== 'read_only' ? StepErrorCode.InDoubt : StepErrorCode.Failed,
      `${request.toolId}: retries exhausted: ${failure.message}`,
    );
  }
}

/** The outcome is unknown: reconcile with the provider, fail, or ask a person, as the tool declares. */
async function unknownOutcome(input: RecoveryInput, failure: Failure, n: Counts): Promise<Next> {
  const { decl, request, entry } = input;
  let unknownReason = failure.message;
  if (decl.recovery === 'reconcile') {
    const answer = await reconcile(input, n.reconciles++);
    if (answer.status === 'landed') {
      entry.recovery = 'reconciled_landed';
      entry.outcome = 'ok';
      return { output: answer.output };
    }
    if (answer.status === 'not_landed') {
      if (++n.resends >= maxAttempts(decl)) {
        entry.outcome = 'failed';
        throw new StepError(
          StepErrorCode.Failed,
          `${request.toolId}: not landed after ${n.resends} sends: ${failure.message}`,
        );
      }
      entry.recovery = 'reconciled_resent';
      return RESEND;
    }
    entry.recovery = 'reconcile_unknown';
    unknownReason = `reconcile could not tell: ${answer.reason ?? 'no answer'}`;
    if (!decl.escalation) {
      entry.outcome = 'in_doubt';
      throw new StepError(StepErrorCode.InDoubt, `${request.toolId}: outcome unknown (${unknownReason})`);
    }
  }
  if (decl.recovery === 'fail') {
    entry.recovery = 'in_doubt_failed';
    entry.outcome = 'in_doubt';
    throw new StepError(
      StepErrorCode.InDoubt,
      `${request.toolId}: outcome unknown (${unknownReason}); recovery is "fail", so it is not resent`,
    );
  }
  return escalate(input, unknownReason);
}

/** Escalate (declared, or a reconcile that could not tell and declares an escalation): a person decides. */
async function escalate(input: RecoveryInput, unknownReason: string): Promise<Next> {
  const { decl, request, entry } = input;
  const decision = await input.escalator.await({
    effectKey: input.effectKey,
    toolId: request.toolId,
    position: input.position,
    reason: unknownReason,
    // Date.now() in a workflow is Temporal's deterministic clock.
    deadline: Date.now() + durationMs(decl.escalation?.deadline ?? '24h'),
    kind: 'in_doubt',
  });
  if (!decision) {
    entry.recovery = 'escalation_expired';
    entry.outcome = 'in_doubt';
    throw new StepError(
      StepErrorCode.InDoubt,
      `${request.toolId}: nobody decided within ${decl.escalation?.deadline ?? '24h'}`,
    );
  }
  if (decision.decision === 'landed') {
    entry.recovery = 'escalated_landed';
    entry.outcome = 'ok';
    return { output: decision.output };
  }
  if (decision.decision === 'abort') {
    entry.recovery = 'escalated_abort';
    entry.outcome = 'aborted';
    throw new StepError(
      StepErrorCode.Aborted,
      `${request.toolId}: aborted by ${decision.by ?? 'a person'}${decision.reason ? `: ${decision.reason}` : ''}`,
    );
  }
  entry.recovery = 'escalated_retry';
  return RESEND;
}
