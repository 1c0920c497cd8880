// Workflow-safe, step 3 of a call: where the gate asks for a person, the call waits for an
// `approve` or `deny` through the resolveEscalation update, with a deadline.
import { durationMs } from '../../catalog/duration';
import type { ToolCall } from '../../catalog/tool-call';
import type { EffectEvent } from '../../common/run-events';
import type { Escalator } from '../recovery';
import { StepErrorCode } from '../step-error';
import type { GateVerdict } from './gate';
import type { Refusal } from './refuse';

export interface Approval {
  approved: { by: string; rule: string; reason: string };
}

/** A denial is a refusal the person (or the deadline) made: `by` is who, when a person answered. */
export type Denial = Refusal & { deniedBy?: string };

/** The call as the person is asked about it: where it stands, what it sends, and the model's call it answers. */
export interface ApprovalQuestion {
  effectKey: string;
  position: number;
  /** The arguments the call sends if approved. */
  sent: unknown;
  modelCallId?: string;
}

export async function askApproval(
  call: ToolCall,
  verdict: GateVerdict,
  asked: ApprovalQuestion,
  escalator: Escalator,
  publish?: (event: EffectEvent) => void,
): Promise<Approval | Denial> {
  const { effectKey, position, sent, modelCallId } = asked;
  const question = verdict.allow
    ? `${call.toolId} needs a person's approval`
    : `${call.toolId} was refused (${verdict.rule}: ${verdict.reason}); a person may approve it`;
  const rule = verdict.rule ?? 'approval';
  const deadline = Date.now() + durationMs(verdict.deadline ?? call.decl.escalation?.deadline ?? '24h');
  const ref = { position, toolId: call.toolId, effectKey };
  const fromModel = modelCallId !== undefined ? { modelCallId } : {};
  publish?.({ type: 'approval-requested', ...ref, args: sent, reason: question, rule, deadline, ...fromModel });
  const answer = await escalator.await({
    effectKey,
    toolId: call.toolId,
    position,
    reason: question,
    deadline,
    kind: 'approval',
    rule,
    args: sent,
    ...fromModel,
  });
  const by = answer?.by ?? 'a person';
  publish?.({
    type: 'approval-decided',
    ...ref,
    decision: answer === undefined ? 'expired' : answer.decision === 'approve' ? 'approve' : 'deny',
    ...(answer?.by !== undefined ? { by: answer.by } : {}),
    ...(answer && 'reason' in answer && answer.reason ? { reason: answer.reason } : {}),
  });
  if (answer?.decision === 'approve')
    return {
      approved: { by, rule, reason: `${question}; approved by ${by}${answer.reason ? `: ${answer.reason}` : ''}` },
    };
  const why = answer
    ? `denied by ${by}${answer.decision === 'deny' && answer.reason ? `: ${answer.reason}` : ''}`
    : 'nobody approved it in time';
  return {
    refused: { code: StepErrorCode.Refused, rule, reason: `${question}; ${why}` },
    ...(answer ? { deniedBy: by } : {}),
  };
}
