// Workflow-safe: the recovery state machine, the inner part of a call's send. What happens when a
// call's outcome is unknown is decided here, by the tool's declared `recovery`, and never by a blind
// resend. Like the pipeline's other steps it returns what happened (the sends it made, the path it
// took, how the call ended); workflows/call/pipeline.ts alone writes that into the journal entry.
import { isCancellation, patched, proxyActivities, sleep, type ActivityOptions } from '@temporalio/workflow';
import { durationMs } from '../catalog/duration';
import type { ToolDecl } from '../catalog/manifest';
import type { PerformRequest, PerformResult, ToolActivities } from '../common/wire';
import { performActivityId } from '../common/effect-key';
import { storedHandle } from '../common/stored-output';
import type { RecoveryPath } from '../common/journal';
import { Patch } from '../common/names';
import type { EscalationDecision, PendingEscalation } from './escalation';
import { StepErrorCode } from './step-error';
import type { BaseBranch } from '../common/base-branch';
import { baseBranch, isBranchPromise, isResetRun, priorOf } from './base-branch';
import { reconcileSend } from './reconcile-send';
import { sendOptionsOf } from './send-options';
import {
  afterRejection,
  afterRetryFailure,
  classify,
  endedAt,
  finalFailure,
  afterLostNotLanded,
  afterUnknownAtReset,
  maxAttempts,
  recordSend,
  sendCounts,
  type Failure,
  type Progress,
  type Recovered,
  type SendCounts,
} from './recovery-policy';

export { classify, activityRetry, type Recovered } from './recovery-policy';

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
  summary: string;
  escalator: Escalator;
  /**
   * Told, while the call runs, the sends made so far and the path taken so far: before each send, and
   * before it waits for a person, so a run's journal shows a call under way as it stands.
   */
  onProgress?: (sofar: { sends: number; recovery: RecoveryPath } & SendCounts) => void;
}

function requestFor(input: RecoveryInput, n: Progress): PerformRequest {
  return n.sends === 0 ? input.request : { ...input.request, recoveryPath: n.recovery };
}

function performOptions(input: RecoveryInput, sendIndex: number): ActivityOptions {
  const o = sendOptionsOf(input.decl);
  const options: ActivityOptions = {
    activityId: performActivityId(input.effectKey, sendIndex),
    startToCloseTimeout: o.startToCloseTimeout,
    heartbeatTimeout: o.heartbeatTimeout,
    retry: o.retry,
  };
  // The timeline labels what an operator looks for: a call that changes the world, and every resend.
  // A read-only call's first send shows its tool in its input.
  if (sendIndex > 0 || input.decl.safety !== 'read_only') options.summary = input.summary;
  return options;
}

/** Send the call again: what a person or the provider said makes resending safe. */
const RESEND = Symbol('resend');
type Next = Recovered | typeof RESEND;

/** The call as it stands, for the journal of a run that is queried while the call runs. */
const tell = (input: RecoveryInput, n: Progress) =>
  input.onProgress?.({ sends: n.sends, recovery: n.recovery, ...sendCounts(n) });

/**
 * One send: schedules the perform activity and hands back its promise as it is, nothing wrapped
 * around it (a failure to schedule is a failed send too).
 */
function send(input: RecoveryInput, n: Progress): Promise<PerformResult> {
  const request = requestFor(input, n);
  n.sends++;
  tell(input, n);
  try {
    return tools.performTool.executeWithOptions(performOptions(input, n.sends - 1), [request]);
  } catch (err) {
    return Promise.reject(err);
  }
}

/** A send the tool answered: its output, as the call ends with it. */
function returned(n: Progress, result: PerformResult): Recovered {
  // Written field by field: the workflow bundle's target (es2017) turns an object spread into a helper call.
  const r: Recovered = {
    sends: n.sends,
    recovery: n.recovery,
    outcome: 'ok',
    output: result.stored ? storedHandle(result.stored) : result.output,
  };
  if (result.events) r.events = result.events;
  if (result.origins) r.origins = result.origins;
  return r;
}

/**
 * What the caller does when the send is over: `ended` with what happened (an output or how the call
 * ended without one), `threw` with what the send let out (a cancellation). Whatever either returns or
 * throws is what the call comes to.
 */
export interface AfterSend<T> {
  ended(r: Recovered): T | PromiseLike<T>;
  threw(err: unknown): T | PromiseLike<T>;
}

/**
 * Runs one prepared call to completion and hands what happened to `after`. A send that succeeds costs
 * one promise beyond its activity's: the `.then` that calls `after.ended`. Only a failed send waits on
 * anything else (a backoff, a reconcile, a person), and only then does the state machine run.
 */
export function performWithRecovery<T>(input: RecoveryInput, after: AfterSend<T>): Promise<T> {
  const n: Progress = { sends: 0, rejections: 0, reconciles: 0, resends: 0, recovery: 'none' };
  // A run never reset goes straight to the send; a reset run first learns what its base branch did.
  const base = baseBranch();
  if (base === undefined) return sendThen(input, n, after);
  if (!isBranchPromise(base)) return fromBase(input, base, n, after);
  return base.then(
    (b) => fromBase(input, b, n, after),
    (err: unknown) => after.threw(err),
  );
}

/** A reset run's effect, beside what its base branch did with the same key (workflows/base-branch.ts `priorOf`). */
function fromBase<T>(input: RecoveryInput, base: BaseBranch, n: Progress, after: AfterSend<T>): Promise<T> {
  const prior = priorOf(base, input.effectKey, input.request.args);
  if (prior === undefined) return sendThen(input, n, after);
  if ('adopted' in prior) {
    const r = returned(n, prior.adopted.result);
    if (r.outcome === 'ok') r.adoptedFrom = { runId: prior.adopted.runId, eventId: prior.adopted.eventId };
    return Promise.resolve(after.ended(r));
  }
  // Unknown: the tool's declared recovery decides, as after a lost send; a `retry` tool only where it is safe.
  const { decl, request } = input;
  const next: Promise<Next> =
    decl.recovery === 'retry'
      ? Promise.resolve(afterUnknownAtReset(decl, request.toolId, prior.unknown, n) ?? RESEND)
      : unknownOutcome(input, { kind: 'in_doubt', message: prior.unknown }, n);
  return next.then(
    (r) => (r === RESEND ? resend(input, n, after) : after.ended(counted(r, n))),
    (e: unknown) => after.threw(e),
  );
}

function sendThen<T>(input: RecoveryInput, n: Progress, after: AfterSend<T>): Promise<T> {
  return send(input, n).then(
    (result) => after.ended(counted(returned(n, result), n)),
    (err: unknown) => {
      if (isCancellation(err)) return after.threw(err);
      const failure = classify(err);
      recordSend(failure, n);
      return afterFailure(input, failure, n).then(
        (next) => (next === RESEND ? resend(input, n, after) : after.ended(counted(next, n))),
        (e: unknown) => after.threw(e),
      );
    },
  );
}

/** The call's ending, with how many of its sends the tool failed and how many no worker finished. */
function counted(r: Recovered, n: Progress): Recovered {
  if (n.failed || n.lost) Object.assign(r, sendCounts(n));
  return r;
}

/** Sends again; what fails before the send is scheduled is the caller's to handle, as on the first send. */
function resend<T>(input: RecoveryInput, n: Progress, after: AfterSend<T>): T | PromiseLike<T> {
  try {
    // A reset run may have begun this call before its reset point: the base may have completed a later send.
    const base = isResetRun() && patched(Patch.ResetResends) ? baseBranch() : undefined;
    if (base === undefined) return sendThen(input, n, after);
    const adoptOrSend = (b: BaseBranch) => {
      const prior = priorOf(b, input.effectKey, input.request.args);
      if (!prior || !('adopted' in prior) || prior.adopted.result === undefined) return sendThen(input, n, after);
      const r = returned(n, prior.adopted.result);
      if (r.outcome === 'ok') r.adoptedFrom = { runId: prior.adopted.runId, eventId: prior.adopted.eventId };
      return after.ended(counted(r, n));
    };
    return isBranchPromise(base) ? base.then(adoptOrSend, (e: unknown) => after.threw(e)) : adoptOrSend(base);
  } catch (err) {
    return after.threw(err);
  }
}

/** A send failed: the call ends as it is, waits and sends again (`RESEND`), or recovers as the tool declares. */
async function afterFailure(input: RecoveryInput, failure: Failure, n: Progress): Promise<Next> {
  const { decl, request } = input;
  // A `retry` tool's sends are one Temporal attempt each; the workflow repeats them, counting the
  // tool's own failures apart from the sends no worker finished. Before the patch, Temporal retried.
  if (decl.recovery === 'retry' && patched(Patch.SendsCounted)) {
    const wait = afterRetryFailure(decl, request.toolId, failure, n);
    if (typeof wait !== 'number') return wait;
    tell(input, n);
    if (wait > 0) await sleep(wait);
    return RESEND;
  }
  const ended = finalFailure(decl, request.toolId, failure, n);
  if (ended) return ended;
  if (failure.kind === 'rejected') {
    const wait = afterRejection(decl, request.toolId, failure, n);
    if (typeof wait !== 'number') return wait;
    tell(input, n);
    await sleep(wait);
    return RESEND;
  }
  return unknownOutcome(input, failure, n);
}

/** The outcome is unknown: reconcile with the provider, fail, or ask a person, as the tool declares. */
async function unknownOutcome(input: RecoveryInput, failure: Failure, n: Progress): Promise<Next> {
  const { decl, request } = input;
  let unknownReason = failure.message;
  if (decl.recovery === 'reconcile') {
    const answer = await reconcileSend(input, n.reconciles++);
    if (answer.status === 'landed')
      return { sends: n.sends, recovery: 'reconciled_landed', outcome: 'ok', output: answer.output };
    if (answer.status === 'not_landed') {
      // Not landed after a send no worker finished: the worker's death is not the tool's failure.
      if (failure.lost && patched(Patch.SendsCounted))
        return afterLostNotLanded(decl, request.toolId, failure, n) ?? RESEND;
      if (++n.resends >= maxAttempts(decl))
        return endedAt(
          n,
          'failed',
          StepErrorCode.Failed,
          `${request.toolId}: not landed after ${n.resends} sends: ${failure.message}`,
        );
      n.recovery = 'reconciled_resent';
      return RESEND;
    }
    n.recovery = 'reconcile_unknown';
    unknownReason = `reconcile could not tell: ${answer.reason ?? 'no answer'}`;
    if (!decl.escalation)
      return endedAt(n, 'in_doubt', StepErrorCode.InDoubt, `${request.toolId}: outcome unknown (${unknownReason})`);
  }
  if (decl.recovery === 'fail') {
    n.recovery = 'in_doubt_failed';
    return endedAt(
      n,
      'in_doubt',
      StepErrorCode.InDoubt,
      `${request.toolId}: outcome unknown (${unknownReason}); recovery is "fail", so it is not resent`,
    );
  }
  return escalate(input, unknownReason, n);
}

/** Escalate (declared, or a reconcile that could not tell and declares an escalation): a person decides. */
async function escalate(input: RecoveryInput, unknownReason: string, n: Progress): Promise<Next> {
  const { decl, request } = input;
  tell(input, n);
  const decision = await input.escalator.await({
    effectKey: input.effectKey,
    toolId: request.toolId,
    position: input.position,
    reason: unknownReason,
    // Date.now() in a workflow is Temporal's deterministic clock.
    deadline: Date.now() + durationMs(decl.escalation?.deadline ?? '24h'),
    kind: 'in_doubt',
  });
  const sends = n.sends;
  if (!decision) {
    const message = `${request.toolId}: nobody decided within ${decl.escalation?.deadline ?? '24h'}`;
    return endedAt({ sends, recovery: 'escalation_expired' }, 'in_doubt', StepErrorCode.InDoubt, message);
  }
  if (decision.decision === 'landed')
    return { sends, recovery: 'escalated_landed', outcome: 'ok', output: decision.output };
  if (decision.decision === 'abort') {
    const why = `${decision.by ?? 'a person'}${decision.reason ? `: ${decision.reason}` : ''}`;
    const message = `${request.toolId}: aborted by ${why}`;
    return endedAt({ sends, recovery: 'escalated_abort' }, 'aborted', StepErrorCode.Aborted, message);
  }
  n.recovery = 'escalated_retry';
  return RESEND;
}
