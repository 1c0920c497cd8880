// Client side of the AI SDK's tool approval protocol: a run's calls that wait for approval as
// `tool-approval-request` parts, and an app's `tool-approval-response` parts (or the `tool` message
// that holds them) answered through the run's `resolveEscalation` update, as `approve` and `deny` do.
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { ModelMessage, ToolApprovalRequestOutput, ToolApprovalResponse, ToolSet } from 'ai';
import { ToolplaneError } from '../catalog/errors';
import { approvalRequestOf, effectKeyOfApprovalId } from '../common/approval-request';
import {
  DECISION_REJECTED,
  DecisionRejectedReason,
  pendingEscalations,
  resolveEscalation,
  type EscalationDecision,
  type PendingEscalation,
} from '../workflows/escalation';
import { ErrorCode } from '../catalog/error-codes';

/**
 * Why an app's approval response was refused before it decided anything.
 *
 * @experimental
 */
export const ApprovalResponseRefusedReason = {
  /** No call of the run waits for approval under this approval id: unknown, or already decided. */
  NotPending: 'not_pending',
  /** What was given holds no `tool-approval-response` part. */
  NoResponse: 'no_response',
  /** The same approval id is answered twice in what was given. */
  AnsweredTwice: 'answered_twice',
} as const;
/**
 * Why an app's approval response decided nothing (`ApprovalResponseRefused`'s `data.reason`).
 *
 * @experimental
 */
export type ApprovalResponseRefusedReason =
  (typeof ApprovalResponseRefusedReason)[keyof typeof ApprovalResponseRefusedReason];

/**
 * An app's approval response that decided nothing, typed by `reason` and naming the approval id. A
 * response that does reach the run and is refused there (no credential, not a declared approver, ...)
 * is not this error: it fails as `approve` and `deny` fail, a `WorkflowUpdateFailedError` whose cause
 * is a `DecisionRejected` failure.
 *
 * @experimental
 */
export class ApprovalResponseRefused extends ToolplaneError<
  typeof ErrorCode.ApprovalResponseRefused,
  { workflowId: string; approvalId?: string; reason: ApprovalResponseRefusedReason }
> {
  constructor(workflowId: string, reason: ApprovalResponseRefusedReason, approvalId?: string, cause?: unknown) {
    super(
      ErrorCode.ApprovalResponseRefused,
      reason === ApprovalResponseRefusedReason.NoResponse
        ? `no tool-approval-response part to answer run ${workflowId} with`
        : reason === ApprovalResponseRefusedReason.AnsweredTwice
          ? `approval ${approvalId} is answered twice for run ${workflowId}`
          : `approval ${approvalId} is not waiting in run ${workflowId} (unknown, or already decided)`,
      { workflowId, reason, ...(approvalId !== undefined ? { approvalId } : {}) },
    );
    if (cause !== undefined) this.cause = cause;
  }
}

/**
 * The calls of a run that wait for a person's approval, as the AI SDK's `tool-approval-request` parts
 * (see `approvalRequestOf`). In-doubt questions (retry, landed, abort) have no yes-or-no form in the
 * AI SDK's protocol and are not among them; `pendingDecisions` lists them.
 *
 * @experimental
 */
export async function approvalRequests(
  client: Client,
  workflowId: string,
): Promise<ToolApprovalRequestOutput<ToolSet>[]> {
  const pending = await client.workflow.getHandle(workflowId).query(pendingEscalations);
  return pending.filter((p) => p.kind === 'approval').map(approvalRequestOf);
}

/**
 * What an app answers with: one part, the `tool` message that holds its parts, or several of either.
 *
 * @experimental
 */
export type ApprovalResponseInput =
  | Pick<ToolApprovalResponse, 'type' | 'approvalId' | 'approved' | 'reason'>
  | ModelMessage
  | readonly (Pick<ToolApprovalResponse, 'type' | 'approvalId' | 'approved' | 'reason'> | ModelMessage)[];

/**
 * The credential an approval response is decided with, given the part and the question it answers.
 *
 * @experimental
 */
export type ApprovalCredential =
  string | ((response: ToolApprovalResponse, asked: PendingEscalation) => string | Promise<string>);

/**
 * Who answers an app's approval responses, as `DecisionOptions` carries it for `approve` and `deny`.
 *
 * @experimental
 */
export interface ApprovalResponseOptions {
  /**
   * The approver's own credential (a JWT from an issuer the worker trusts), required by a worker with
   * an identity. A credential decides one call of a run: to answer several approvals at once, give a
   * function that returns each response its own.
   */
  credential?: ApprovalCredential;
  /** Who decides, as `approve` takes it: on a worker with an identity, left out or the credential's subject. */
  by?: string;
}

/**
 * One approval response as the run took it.
 *
 * @experimental
 */
export interface ApprovalAnswered {
  /** The response's approval id. */
  approvalId: string;
  /** The waiting call's effect key. */
  effectKey: string;
  /** `approve` for `approved: true`, `deny` for `approved: false`. */
  decision: 'approve' | 'deny';
  /** Whom the run recorded as deciding (the verified subject, where verified). */
  by?: string;
}

function isResponsePart(part: unknown): part is ToolApprovalResponse {
  return (
    typeof part === 'object' &&
    part !== null &&
    (part as { type?: unknown }).type === 'tool-approval-response' &&
    typeof (part as { approvalId?: unknown }).approvalId === 'string' &&
    typeof (part as { approved?: unknown }).approved === 'boolean'
  );
}

/** The `tool-approval-response` parts of what an app answered with, in order. */
export function approvalResponsesOf(input: ApprovalResponseInput): ToolApprovalResponse[] {
  const items: readonly unknown[] = Array.isArray(input) ? input : [input];
  return items.flatMap((item): ToolApprovalResponse[] => {
    if (isResponsePart(item)) return [item];
    const message = item as { role?: unknown; content?: unknown };
    return message.role === 'tool' && Array.isArray(message.content) ? message.content.filter(isResponsePart) : [];
  });
}

/** The run's `NotWaiting` refusal: the call was decided (or its deadline passed) since it was listed. */
function notWaiting(err: unknown): boolean {
  if (!(err instanceof WorkflowUpdateFailedError) || !(err.cause instanceof ApplicationFailure)) return false;
  const failure = err.cause;
  const details = failure.details?.[0] as { reason?: unknown } | undefined;
  return failure.type === DECISION_REJECTED && details?.reason === DecisionRejectedReason.NotWaiting;
}

/**
 * Answers a run's approval requests with an AI SDK app's responses: `approved: true` approves the
 * call, `approved: false` denies it (its `reason` is the denial's). Each response is a decision of its
 * own, taken by the run as `approve` or `deny` takes it, in order.
 *
 * Before anything is decided, every approval id must name a call of the run that waits for approval,
 * once: otherwise `ApprovalResponseRefused` names it (`not_pending`, `answered_twice`), as it does a
 * run decided meanwhile; nothing given holding a response is `no_response`. A response the run refuses
 * (no credential, a credential that does not verify, no declared approver) fails exactly as `approve`
 * does, with a `DecisionRejected` cause; the call keeps waiting, and the responses before it stand.
 *
 * @example
 * ```ts
 * // The `tool` message an AI SDK app holds after its approval UI answered (useChat's addToolApprovalResponse,
 * // then convertToModelMessages):
 * const message: ModelMessage = {
 *   role: 'tool',
 *   content: [{ type: 'tool-approval-response', approvalId, approved: false, reason: 'not a customer' }],
 * };
 * await respondToApprovals(client, workflowId, message, { credential: approverToken });
 * ```
 *
 * @experimental
 */
export async function respondToApprovals(
  client: Client,
  workflowId: string,
  input: ApprovalResponseInput,
  opts: ApprovalResponseOptions = {},
): Promise<ApprovalAnswered[]> {
  const responses = approvalResponsesOf(input);
  if (responses.length === 0) throw new ApprovalResponseRefused(workflowId, ApprovalResponseRefusedReason.NoResponse);
  const handle = client.workflow.getHandle(workflowId);
  const waiting = new Map(
    (await handle.query(pendingEscalations)).filter((p) => p.kind === 'approval').map((p) => [p.effectKey, p]),
  );
  const seen = new Set<string>();
  const questions = responses.map((response) => {
    const key = effectKeyOfApprovalId(response.approvalId);
    const asked = key === undefined ? undefined : waiting.get(key);
    if (!asked)
      throw new ApprovalResponseRefused(workflowId, ApprovalResponseRefusedReason.NotPending, response.approvalId);
    if (seen.has(response.approvalId))
      throw new ApprovalResponseRefused(workflowId, ApprovalResponseRefusedReason.AnsweredTwice, response.approvalId);
    seen.add(response.approvalId);
    return { response, asked };
  });

  const answered: ApprovalAnswered[] = [];
  for (const { response, asked } of questions) {
    const credential = typeof opts.credential === 'function' ? await opts.credential(response, asked) : opts.credential;
    const decision: EscalationDecision = {
      effectKey: asked.effectKey,
      decision: response.approved ? 'approve' : 'deny',
      ...(opts.by !== undefined ? { by: opts.by } : {}),
      ...(credential !== undefined ? { credential } : {}),
      ...(response.reason ? { reason: response.reason } : {}),
    };
    let by: string | undefined;
    try {
      ({ by } = await handle.executeUpdate(resolveEscalation, { args: [decision] }));
    } catch (err) {
      if (notWaiting(err))
        throw new ApprovalResponseRefused(
          workflowId,
          ApprovalResponseRefusedReason.NotPending,
          response.approvalId,
          err,
        );
      throw err;
    }
    answered.push({
      approvalId: response.approvalId,
      effectKey: asked.effectKey,
      decision: response.approved ? 'approve' : 'deny',
      ...(by !== undefined ? { by } : {}),
    });
  }
  return answered;
}
