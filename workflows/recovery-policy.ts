// Workflow-safe: how the recovery state machine (recovery.ts) reads a failed send and what it decides
// from it, and the retry policy a tool's declaration gives its sends. Pure: no activity, no timer.
import { ActivityFailure, ApplicationFailure, TimeoutFailure, type RetryPolicy } from '@temporalio/workflow';
import { FailureType, RunFailureType } from '../catalog/failure-types';
import { durationMs } from '../catalog/duration';
import type { ToolDecl } from '../catalog/manifest';
import type { AdoptedFrom, RecoveryPath } from '../common/journal';
import type { PerformResult } from '../common/wire';
import { StepErrorCode } from './step-error';
import type { Refusal } from './call/refuse';

export type Failure = {
  kind: 'rejected' | 'failed_landed' | 'in_doubt' | 'unavailable' | 'output_unstored' | 'definition_changed';
  message: string;
  /**
   * The send was not finished by a worker: no answer within its start-to-close or heartbeat timeout
   * (the worker died or vanished, the server lost the task). Not the tool's own answer.
   */
  lost?: true;
  /** The activity marked the failure final (`ApplicationFailure.nonRetryable`): sending again cannot help. */
  final?: true;
};

/** How a call ended without an output: refused before anything was sent, or failed, in doubt or aborted. */
export type Ended =
  | ({ outcome: 'refused' } & Refusal)
  | { outcome: 'failed' | 'in_doubt' | 'aborted'; error: { code: StepErrorCode; message: string; rule?: string } };

/** The call's output, with what the tool reported beside it. */
export type Returned = { outcome: 'ok'; output: unknown; adoptedFrom?: AdoptedFrom } & Pick<
  PerformResult,
  'events' | 'origins'
>;

/** Of a call's sends, those the tool itself failed and those no worker finished; absent while 0. */
export interface SendCounts {
  /** Sends the tool answered with a failure: what `retry.maximum_attempts` counts. */
  toolFailures?: number;
  /** Sends no worker finished (it died, or the server lost the task): what `retry.infrastructure_attempts` counts. */
  lostSends?: number;
}

/**
 * What the recovery step did with one call: `sends`, the perform activities it scheduled (each may
 * have reached the tool; Temporal's retries of one are that one send), the recovery path it took, and
 * how the call ended. workflows/call/pipeline.ts writes it into the journal entry.
 */
export type Recovered = { sends: number; recovery: RecoveryPath } & SendCounts & (Returned | Ended);

/** The state machine's counts so far, and the path it has taken. */
export interface Progress {
  sends: number;
  rejections: number;
  reconciles: number;
  /** Sends again after the provider said the call did not land. */
  resends: number;
  recovery: RecoveryPath;
  /** Failed sends the tool answered (`retry` tools, on the sends-counted path). */
  failed?: number;
  /** Sends no worker finished. */
  lost?: number;
}

/** The counts a journal entry shows beside `sends`: only those that are not 0. */
export function sendCounts(n: Pick<Progress, 'failed' | 'lost'>): SendCounts {
  const c: SendCounts = {};
  if (n.failed) c.toolFailures = n.failed;
  if (n.lost) c.lostSends = n.lost;
  return c;
}

export function classify(err: unknown): Failure {
  if (err instanceof ActivityFailure) {
    const cause = err.cause;
    if (cause instanceof ApplicationFailure) {
      const message = cause.message;
      const f = classifyApplication(cause.type, message);
      if (cause.nonRetryable) f.final = true;
      return f;
    }
    if (cause instanceof TimeoutFailure) {
      const lost = cause.timeoutType === 'HEARTBEAT' || cause.timeoutType === 'START_TO_CLOSE';
      const f: Failure = {
        kind: 'in_doubt',
        message: `no answer within the activity's ${cause.timeoutType === 'HEARTBEAT' ? 'heartbeat' : 'start-to-close'} timeout (worker lost or tool hung)`,
      };
      if (lost) f.lost = true;
      return f;
    }
    return { kind: 'in_doubt', message: cause?.message ?? err.message };
  }
  return { kind: 'in_doubt', message: (err as Error)?.message ?? String(err) };
}

/** What a failure the activity typed says happened. */
function classifyApplication(type: string | undefined | null, message: string): Failure {
  switch (type) {
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

/**
 * Every send is one Temporal attempt: the workflow counts and repeats them itself (`afterRetryFailure`
 * for a `retry` tool), so that an attempt no worker finished is not counted as one the tool failed.
 * Histories written before `Patch.SendsCounted` were sent with the declared policy (Temporal retried a
 * `retry` tool's send); the schedule command's retry policy is not compared on replay.
 */
export function activityRetry(_decl: ToolDecl): RetryPolicy {
  return { maximumAttempts: 1 };
}

/** How many lost sends a call may have when `retry.infrastructure_attempts` is absent. */
export const DEFAULT_INFRASTRUCTURE_ATTEMPTS = 10;

/** The lost sends after which a call ends: `retry.infrastructure_attempts`, 0 for no limit. */
export function lostSendsAllowed(decl: ToolDecl): number {
  const n = decl.retry.infrastructure_attempts ?? DEFAULT_INFRASTRUCTURE_ATTEMPTS;
  return n === 0 ? Number.MAX_SAFE_INTEGER : n;
}

/** Failures a `retry` tool's send may be repeated after: the tool answered, and not finally. */
function resendable(failure: Failure): boolean {
  if (failure.final) return false;
  return failure.kind === 'rejected' || failure.kind === 'in_doubt' || failure.kind === 'failed_landed';
}

/**
 * A `retry` tool's send failed (on the sends-counted path, `Patch.SendsCounted`): send again under the
 * same idempotency key after this many milliseconds, or end. A send no worker finished (`lost`) counts
 * against `retry.infrastructure_attempts` and is sent again at once; a failure the tool answered counts
 * against `retry.maximum_attempts` and is sent again after the declared backoff. `recordSend` counted
 * the send already.
 */
export function afterRetryFailure(decl: ToolDecl, toolId: string, failure: Failure, n: Progress): Recovered | number {
  if (failure.lost) {
    const lost = n.lost ?? 0;
    if (lost >= lostSendsAllowed(decl))
      return endedAt(
        { ...n, recovery: 'retried' },
        'in_doubt',
        decl.safety === 'read_only' ? StepErrorCode.Failed : StepErrorCode.InDoubt,
        `${toolId}: no worker finished ${lost} sends (retry.infrastructure_attempts): ${failure.message}`,
      );
    n.recovery = 'retried';
    return 0;
  }
  const failed = n.failed ?? 0;
  if (!resendable(failure) || failed >= maxAttempts(decl)) return finalFailure(decl, toolId, failure, n)!;
  n.recovery = 'retried';
  return backoffMs(decl, failed);
}

/**
 * The provider says a send no worker finished did not land: it is sent again without counting against
 * `retry.maximum_attempts` (undefined), until the call's lost sends reach `retry.infrastructure_attempts`.
 */
export function afterLostNotLanded(
  decl: ToolDecl,
  toolId: string,
  failure: Failure,
  n: Progress,
): Recovered | undefined {
  const lost = n.lost ?? 0;
  if (lost < lostSendsAllowed(decl)) {
    n.recovery = 'reconciled_resent';
    return undefined;
  }
  const why = `not landed, and no worker finished ${lost} sends (retry.infrastructure_attempts)`;
  return endedAt(n, 'failed', StepErrorCode.Failed, `${toolId}: ${why}: ${failure.message}`);
}

/**
 * A `retry` tool's effect whose outcome a reset left unknown: sent again (undefined) only where that is
 * safe, a read-only tool or a provider that keeps the key; otherwise the call ends in doubt, unsent.
 */
export function afterUnknownAtReset(
  decl: ToolDecl,
  toolId: string,
  reason: string,
  n: Progress,
): Recovered | undefined {
  if (decl.safety === 'read_only' || decl.honours_idempotency_key) return undefined;
  return endedAt(n, 'in_doubt', StepErrorCode.InDoubt, `${toolId}: outcome unknown (${reason}); not resent`);
}

/** Counts a failed send as the tool's own failure or as a lost one; a send that sent nothing is neither. */
export function recordSend(failure: Failure, n: Progress): void {
  if (failure.lost) n.lost = (n.lost ?? 0) + 1;
  else if (failure.kind !== 'definition_changed' && failure.kind !== 'unavailable') n.failed = (n.failed ?? 0) + 1;
}

export function backoffMs(decl: ToolDecl, attempt: number): number {
  const base = durationMs(decl.retry.initial_interval) * Math.pow(decl.retry.backoff_coefficient, attempt - 1);
  return Math.min(base, durationMs(decl.retry.maximum_interval));
}

export function maxAttempts(decl: ToolDecl): number {
  return decl.retry.maximum_attempts === 0 ? Number.MAX_SAFE_INTEGER : decl.retry.maximum_attempts;
}
