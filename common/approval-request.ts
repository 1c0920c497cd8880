// Pure and client-safe (types only from `ai`): a toolplane approval question as the AI SDK's tool
// approval request, and the approval id that leads an app's answer back to the waiting call.
import type { ToolApprovalRequestOutput, ToolSet, UIMessageChunk } from 'ai';
import { offerName } from '../catalog/tool-id';

/**
 * What a run tells about a call that waits for a person's approval: the escalation's own data, as the
 * `pendingEscalations` query answers it (a `PendingEscalation` is one) and as an `approval-requested`
 * event carries it.
 *
 * @experimental
 */
export interface ApprovalAsked {
  /** The tool's identity (`tool://payments/refund`). */
  toolId: string;
  /** The call's effect key: the approval id, and the key `approve`, `deny` and the CLI take. */
  effectKey: string;
  /** What the call sends once approved (after any declared redaction). */
  args?: unknown;
  /** Why a person is asked (the gate's rule and reason, where the gate questioned the call). */
  reason?: string;
  /** The model's id of the tool call, when a model made the call. */
  modelCallId?: string;
}

/** An effect key: `ek-` and 43 base64url characters (see common/effect-key.ts). */
const EFFECT_KEY = /^ek-[A-Za-z0-9_-]{43}$/;

/**
 * The approval id of a call waiting for approval: its effect key itself. Stable (the same call at the
 * same point of the same run has the same key, across restarts and replays), unique within the run,
 * and the key a person would give `toolplane approve` for the same question.
 */
export function approvalIdOf(asked: Pick<ApprovalAsked, 'effectKey'>): string {
  return asked.effectKey;
}

/** The effect key an approval id names, or undefined when it is no approval id toolplane gave. */
export function effectKeyOfApprovalId(approvalId: string): string | undefined {
  return EFFECT_KEY.test(approvalId) ? approvalId : undefined;
}

/**
 * A call waiting for approval as the AI SDK's `tool-approval-request` part (the shape `generateText`
 * puts in `result.content` and `streamText` in its full stream): `toolCall.toolName` is the name the
 * model was offered the tool under (`payments__refund`, as `agentRun` and `governedTools` offer it),
 * `toolCall.input` the arguments the call sends if approved, `toolCall.toolCallId` the model's id of
 * the call (the effect key for a call no model made). Pure: a streaming consumer converts each
 * `approval-requested` event with it, `approvalRequests` each pending approval.
 *
 * @experimental
 */
export function approvalRequestOf(asked: ApprovalAsked): ToolApprovalRequestOutput<ToolSet> {
  return {
    type: 'tool-approval-request',
    approvalId: approvalIdOf(asked),
    toolCall: {
      type: 'tool-call',
      toolCallId: asked.modelCallId ?? asked.effectKey,
      toolName: offerName(asked.toolId),
      input: asked.args ?? {},
    },
    ...(asked.reason !== undefined ? { reason: asked.reason } : {}),
  };
}

/**
 * A call waiting for approval as the AI SDK's UI message stream writes it (what `useChat` reads):
 * the tool call's input, then the approval request on it, so the app's message gets a tool part in
 * state `approval-requested` that its approval UI renders and answers with `addToolApprovalResponse`.
 * A stream that already wrote the model's tool call (a `streamText` UI stream) needs only the second chunk.
 *
 * @experimental
 */
export function approvalRequestChunks(asked: ApprovalAsked): UIMessageChunk[] {
  const { approvalId, toolCall, reason } = approvalRequestOf(asked);
  return [
    {
      type: 'tool-input-available',
      toolCallId: toolCall.toolCallId,
      toolName: toolCall.toolName,
      input: toolCall.input,
    },
    {
      type: 'tool-approval-request',
      approvalId,
      toolCallId: toolCall.toolCallId,
      ...(reason !== undefined ? { reason } : {}),
    },
  ];
}
