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

export async function askApproval(
  call: ToolCall,
  verdict: GateVerdict,
  effectKey: string,
  position: number,
  escalator: Escalator,
  /** The arguments the call would send, as the run's stream shows them to whoever approves. */
  args?: unknown,
  publish?: (event: EffectEvent) => void,
): Promise<Approval | Denial> {
  const question = verdict.allow
    ? `${call.toolId} needs a person's approval`
    : `${call.toolId} was refused (${verdict.rule}: ${verdict.reason}); a person may approve it`;
  const rule = verdict.rule ?? 'approval';
  const deadline = Date.now() + durationMs(verdict.deadline ?? call.decl.escalation?.deadline ?? '24h');
  const asked = { position, toolId: call.toolId, effectKey };
  publish?.({ type: 'approval-requested', ...asked, args, reason: question, rule, deadline });
  const answer = await escalator.await({
    effectKey,
    toolId: call.toolId,
    position,
    reason: question,
    deadline,
    kind: 'approval',
    rule,
  });
  const by = answer?.by ?? 'a person';
  publish?.({
    type: 'approval-decided',
    ...asked,
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
