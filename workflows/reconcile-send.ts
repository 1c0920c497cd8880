// Workflow-safe: one reconcile round of the recovery state machine (recovery.ts): asks the provider,
// by the call's idempotency key, whether an in-doubt call landed. A reconcile that fails says unknown.
import { isCancellation, proxyActivities } from '@temporalio/workflow';
import { FailureType } from '../catalog/failure-types';
import type { ToolDecl } from '../catalog/manifest';
import { reconcileActivityId } from '../common/effect-key';
import type { PerformRequest, ReconcileRequest, Reconciliation, ToolActivities } from '../common/wire';
import { classify } from './recovery-policy';

// Every call sets its own id, summary, timeouts and retry policy.
const tools = proxyActivities<ToolActivities>({ startToCloseTimeout: '30s' });

export interface ReconcileInput {
  decl: ToolDecl;
  request: PerformRequest;
  effectKey: string;
  summary: string;
}

export async function reconcileSend(input: ReconcileInput, round: number): Promise<Reconciliation> {
  const { decl, request } = input;
  const req: ReconcileRequest = {
    toolId: request.toolId,
    ...(request.principal !== undefined ? { principal: request.principal } : {}),
    ...(request.ticket !== undefined ? { ticket: request.ticket } : {}),
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
