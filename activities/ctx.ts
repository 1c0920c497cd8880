// Builds the in-process tool's Ctx from Temporal's activity context.
import { Context } from '@temporalio/activity';
import { ALLOW_ALL, type Policy } from '../catalog/policy';
import type { Ctx, LedgerRef } from './tool';
import type { ToolEvent } from '../common/wire';
import { Cancelled } from './tool-errors';
import { sendIndexOfActivityId } from '../common/effect-key';

export interface CtxFields {
  idempotencyKey: string;
  lease?: string;
  effectKey: string;
  toolId: string;
  principal: string;
  policy?: Policy;
  budget?: Ctx['budget'];
  onEvent?: (event: ToolEvent) => void;
  /** Receives what the tool cites (see `Ctx.cite`); citing is ignored without it. */
  onCite?: (producedBy: LedgerRef | undefined, args: Record<string, unknown>) => void;
}

/** When each running attempt began on this worker, by its activity context. */
const attemptStarts = new WeakMap<Context, number>();

/**
 * The moment this attempt began executing here (the first time its context is seen, at the top of the
 * activity). Temporal counts start-to-close from the attempt's start, not from when it was scheduled: a call
 * that waited in the task queue (no worker, a backlog, a restarted server) still has its whole time. Measured
 * on this worker's clock, so the server's clock never shortens it either.
 */
function attemptStartedAt(activity: Context): number {
  let at = attemptStarts.get(activity);
  if (at === undefined) {
    at = Date.now();
    attemptStarts.set(activity, at);
  }
  return at;
}

export function ctxFromActivity(fields: CtxFields): Ctx {
  const activity = Context.current();
  const info = activity.info;
  const deadline = info.startToCloseTimeoutMs ? attemptStartedAt(activity) + info.startToCloseTimeoutMs : undefined;
  const signal = activity.cancellationSignal;
  return {
    idempotencyKey: fields.idempotencyKey,
    lease: fields.lease,
    workflowId: info.workflowExecution?.workflowId ?? '',
    runId: info.workflowExecution?.runId ?? '',
    effectKey: fields.effectKey,
    toolId: fields.toolId,
    principal: fields.principal,
    attempt: sendIndexOfActivityId(info.activityId) + info.attempt,
    deadline,
    budget: fields.budget ?? {},
    policy: fields.policy ?? ALLOW_ALL,
    signal,
    check() {
      if (signal.aborted) throw new Cancelled(`call ${fields.effectKey} was cancelled`);
      if (deadline !== undefined && Date.now() > deadline)
        throw new Cancelled(`call ${fields.effectKey} passed its deadline`);
    },
    emit(event) {
      fields.onEvent?.(event);
      activity.log.info(`tool event ${event.kind}`, {
        toolId: fields.toolId,
        effectKey: fields.effectKey,
        ...event.detail,
      });
    },
    heartbeat(detail) {
      activity.heartbeat(detail);
    },
    cite(producedBy, args) {
      fields.onCite?.(producedBy, args);
    },
  };
}

/** A Ctx for tests and scripts outside an activity. */
export function detachedCtx(fields: CtxFields & { signal?: AbortSignal; workflowId?: string; runId?: string }): Ctx {
  const signal = fields.signal ?? new AbortController().signal;
  return {
    idempotencyKey: fields.idempotencyKey,
    workflowId: fields.workflowId ?? '',
    runId: fields.runId ?? '',
    effectKey: fields.effectKey,
    toolId: fields.toolId,
    principal: fields.principal,
    attempt: 1,
    deadline: undefined,
    budget: fields.budget ?? {},
    policy: fields.policy ?? ALLOW_ALL,
    signal,
    check() {
      if (signal.aborted) throw new Cancelled();
    },
    emit(event) {
      fields.onEvent?.(event);
    },
    heartbeat() {},
    cite(producedBy, args) {
      fields.onCite?.(producedBy, args);
    },
  };
}
