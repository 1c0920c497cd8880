// Workflow-safe: how the recovery state machine (recovery.ts) reads a failed send, and the retry
// policy a tool's declaration gives its sends.
import { ActivityFailure, ApplicationFailure, TimeoutFailure, type RetryPolicy } from '@temporalio/workflow';
import { FailureType, RunFailureType } from '../catalog/failure-types';
import { durationMs } from '../catalog/duration';
import type { ToolDecl } from '../catalog/manifest';

export type Failure = {
  kind: 'rejected' | 'failed_landed' | 'in_doubt' | 'unavailable' | 'output_unstored' | 'definition_changed';
  message: string;
};

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
