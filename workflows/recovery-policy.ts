// Workflow-safe: how the recovery state machine (recovery.ts) reads a failed send and what it decides
// from it, and the retry policy a tool's declaration gives its sends. Pure: no activity, no timer.
import { ActivityFailure, ApplicationFailure, TimeoutFailure, type RetryPolicy } from '@temporalio/workflow';
import { FailureType, RunFailureType } from '../catalog/failure-types';
import { durationMs } from '../catalog/duration';
import type { ToolDecl } from '../catalog/manifest';
import type { RecoveryPath } from '../common/journal';
import type { PerformResult } from '../common/wire';
import { StepErrorCode } from './step-error';
import type { Refusal } from './call/refuse';

export type Failure = {
  kind: 'rejected' | 'failed_landed' | 'in_doubt' | 'unavailable' | 'output_unstored' | 'definition_changed';
  message: string;
};

/** How a call ended without an output: refused before anything was sent, or failed, in doubt or aborted. */
export type Ended =
  | ({ outcome: 'refused' } & Refusal)
  | { outcome: 'failed' | 'in_doubt' | 'aborted'; error: { code: StepErrorCode; message: string; rule?: string } };

/** The call's output, with what the tool reported beside it. */
export type Returned = { outcome: 'ok'; output: unknown } & Pick<PerformResult, 'events' | 'origins'>;

/**
 * What the recovery step did with one call: `sends`, the perform activities it scheduled (each may
 * have reached the tool; Temporal's retries of one are that one send), the recovery path it took, and
 * how the call ended. workflows/call/pipeline.ts writes it into the journal entry.
 */
export type Recovered = { sends: number; recovery: RecoveryPath } & (Returned | Ended);

/** The state machine's counts so far, and the path it has taken. */
export interface Progress {
  sends: number;
  rejections: number;
  reconciles: number;
  /** Sends again after the provider said the call did not land. */
  resends: number;
  recovery: RecoveryPath;
}

export function classify(err: unknown): Failure {
  if (err instanceof ActivityFailure) {
    const cause = err.cause;
    if (cause instanceof ApplicationFailure) {
      const message = cause.message;
      switch (cause.type) {
        case FailureType.Rejected:
          return { kind: 'rejected', message };
        case FailureType.FailedLanded:
          return { kind: 'failed_landed', message };
        case FailureType.DefinitionChanged:
          return { kind: 'definition_changed', message };
        case FailureType.Unavailable:
        case FailureType.Invalid:
        case RunFailureType.IdentityRefused:
          return { kind: 'unavailable', message };
        case FailureType.OutputUnstored:
          return { kind: 'output_unstored', message };
        default:
          return { kind: 'in_doubt', message };
      }
    }
    if (cause instanceof TimeoutFailure) {
      return {
        kind: 'in_doubt',
        message: `no answer within the activity's ${cause.timeoutType === 'HEARTBEAT' ? 'heartbeat' : 'start-to-close'} timeout (worker lost or tool hung)`,
      };
    }
    return { kind: 'in_doubt', message: cause?.message ?? err.message };
  }
  return { kind: 'in_doubt', message: (err as Error)?.message ?? String(err) };
}

const ended = (outcome: 'failed' | 'in_doubt' | 'aborted', code: StepErrorCode, message: string): Ended => ({
  outcome,
  error: { code, message },
});

/** The call ends without an output, after the sends and on the path the state machine took so far. */
export function endedAt(
  n: Pick<Progress, 'sends' | 'recovery'>,
  outcome: 'failed' | 'in_doubt' | 'aborted',
  code: StepErrorCode,
  message: string,
): Recovered {
  return { sends: n.sends, recovery: n.recovery, ...ended(outcome, code, message) };
}

/** Failures that end the call as they are: nothing was sent, it landed, or Temporal already retried. */
export function finalFailure(decl: ToolDecl, toolId: string, failure: Failure, n: Progress): Recovered | undefined {
  const { sends, recovery } = n;
  switch (failure.kind) {
    case 'definition_changed':
      // Nothing was sent: the source serves another definition than the pinned one.
      return {
        sends,
        recovery,
        outcome: 'refused',
        refused: { code: StepErrorCode.Refused, rule: 'digest', reason: failure.message },
      };
    case 'output_unstored':
      // It landed: resending would do it twice. The person reading the journal learns the output is lost.
      return endedAt(n, 'failed', StepErrorCode.OutputLost, failure.message);
    case 'unavailable':
      return endedAt(n, 'failed', StepErrorCode.Failed, failure.message);
    case 'failed_landed':
      return endedAt(
        n,
        'failed',
        StepErrorCode.Failed,
        `${toolId} failed after reaching its provider: ${failure.message}`,
      );
  }
  if (decl.recovery !== 'retry') return undefined;
  // Temporal already retried as the policy allows; what remains is final.
  const inDoubt = failure.kind === 'in_doubt';
  return endedAt(
    { sends, recovery: sends > 1 || inDoubt ? 'retried' : recovery },
    inDoubt ? 'in_doubt' : 'failed',
    inDoubt && decl.safety !== 'read_only' ? StepErrorCode.InDoubt : StepErrorCode.Failed,
    `${toolId}: retries exhausted: ${failure.message}`,
  );
}

/** A rejection sent nothing, so trying again cannot duplicate anything: wait this long, or give up. */
export function afterRejection(decl: ToolDecl, toolId: string, failure: Failure, n: Progress): Recovered | number {
  if (++n.rejections >= maxAttempts(decl))
    return endedAt(n, 'failed', StepErrorCode.Failed, `${toolId}: rejected ${n.rejections} times: ${failure.message}`);
  n.recovery = 'retried';
  return backoffMs(decl, n.rejections);
}

/** Temporal's own retries are used only where resending is harmless. */
export function activityRetry(decl: ToolDecl): RetryPolicy {
  const resendable = decl.recovery === 'retry';
  if (!resendable) return { maximumAttempts: 1 };
  // Which failures are final is marked on the failure by the activity (see tool-activities.ts),
  // which keeps this policy, written to history with every call, short.
  return {
    initialInterval: decl.retry.initial_interval,
    backoffCoefficient: decl.retry.backoff_coefficient,
    maximumInterval: decl.retry.maximum_interval,
    maximumAttempts: decl.retry.maximum_attempts,
  };
}

export function backoffMs(decl: ToolDecl, attempt: number): number {
  const base = durationMs(decl.retry.initial_interval) * Math.pow(decl.retry.backoff_coefficient, attempt - 1);
  return Math.min(base, durationMs(decl.retry.maximum_interval));
}

export function maxAttempts(decl: ToolDecl): number {
  return decl.retry.maximum_attempts === 0 ? Number.MAX_SAFE_INTEGER : decl.retry.maximum_attempts;
}
